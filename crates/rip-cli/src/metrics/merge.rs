//! One exposition made of several: `ripperoni run` serves its stages' metrics (each a
//! process of its own) on one address. Every family is said once, with the samples of
//! every text (theirs differ by their `step` label, [`relabel`]), and `# EOF` once.

use std::collections::BTreeMap;

/// Merges texts in the format [`render`](super::render) writes: the families in the order
/// first seen, each with its `# HELP`/`# TYPE`/`# UNIT` lines once and every text's samples.
pub fn merge<S: AsRef<str>>(texts: &[S]) -> String {
    let mut order: Vec<String> = Vec::new();
    let mut families: BTreeMap<String, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for text in texts {
        let mut current: Option<String> = None;
        for line in text.as_ref().lines() {
            if line == "# EOF" || line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# ") {
                let name = rest.split(' ').nth(1).unwrap_or_default().to_owned();
                if !families.contains_key(&name) {
                    order.push(name.clone());
                }
                let family = families.entry(name.clone()).or_default();
                if !family.0.contains(&line) {
                    family.0.push(line);
                }
                current = Some(name);
            } else if let Some(name) = &current {
                families.entry(name.clone()).or_default().1.push(line);
            }
        }
    }
    let mut out = String::new();
    for name in order {
        let (head, samples) = &families[&name];
        for line in head.iter().chain(samples) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("# EOF\n");
    out
}

/// `text` with the label `key="value"` added to every sample (first, before its own).
pub fn relabel(text: &str, key: &str, value: &str) -> String {
    let label = format!("{key}=\"{value}\"");
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            out.push_str(line);
        } else if let Some((name, rest)) = line.split_once('{') {
            let comma = if rest.starts_with('}') { "" } else { "," };
            out.push_str(&format!("{name}{{{label}{comma}{rest}"));
        } else if let Some((name, rest)) = line.split_once(' ') {
            out.push_str(&format!("{name}{{{label}}} {rest}"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_added_to_every_sample() {
        let text = "# TYPE x counter\nx_total{stage=\"a\"} 1\ny 2\n# EOF\n";
        assert_eq!(
            relabel(text, "step", "02-rip-fetch"),
            "# TYPE x counter\nx_total{step=\"02-rip-fetch\",stage=\"a\"} 1\n\
             y{step=\"02-rip-fetch\"} 2\n# EOF\n"
        );
    }

    #[test]
    fn each_family_is_said_once_with_every_sample() {
        let a = "# HELP x X.\n# TYPE x counter\nx_total{stage=\"a\"} 1\n\
                 # HELP m M.\n# TYPE m gauge\nm{program=\"a\"} 5\n# EOF\n";
        let b = "# HELP x X.\n# TYPE x counter\nx_total{stage=\"b\"} 2\n# EOF\n";
        let c = "# HELP y Y.\n# TYPE y gauge\ny{stage=\"c\"} 3\n# EOF\n";
        assert_eq!(
            merge(&[a, b, c]),
            "# HELP x X.\n# TYPE x counter\nx_total{stage=\"a\"} 1\nx_total{stage=\"b\"} 2\n\
             # HELP m M.\n# TYPE m gauge\nm{program=\"a\"} 5\n\
             # HELP y Y.\n# TYPE y gauge\ny{stage=\"c\"} 3\n# EOF\n"
        );
    }
}
