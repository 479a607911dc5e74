//! Every relative link of the repository's Markdown documents resolves: the file or folder
//! it names exists, and a `#fragment` into a Markdown file names one of its headings (as
//! GitHub makes anchors of them). Links in code (fenced blocks, `code spans`) are not links;
//! links to other sites are not followed (a test never touches the internet).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Every `.md` file under `dir`, `target/` and hidden folders left out.
fn documents(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a folder entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            documents(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The text outside fenced code blocks.
fn unfenced(doc: &str) -> String {
    let mut text = String::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            text.push_str(line);
        }
        text.push('\n');
    }
    text
}

/// The text outside fenced code blocks, with code spans blanked (a span may cross lines).
fn prose(doc: &str) -> String {
    let text = unfenced(doc);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let ticks = rest[at..].len() - rest[at..].trim_start_matches('`').len();
        let fence = &rest[at..at + ticks];
        let after = &rest[at + ticks..];
        match find_run(after, fence) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(fence);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where a run of exactly `fence` backticks starts in `text`.
fn find_run(text: &str, fence: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(fence) {
        let at = from + i;
        let end = at + fence.len();
        let longer = text[end..].starts_with('`') || text[..at].ends_with('`');
        if !longer {
            return Some(at);
        }
        from = end + text[end..].len() - text[end..].trim_start_matches('`').len();
    }
    None
}

/// The targets of the inline links (`[text](target)`, images too) of a document's prose.
fn links(prose: &str) -> Vec<String> {
    prose
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .map(|t| t.split_whitespace().next().unwrap_or_default().to_owned())
        .collect()
}

/// The anchors GitHub gives a document's headings: lower case, letters, digits, `-` and `_`
/// kept, spaces to `-`; a repeated heading gets `-1`, `-2`, ….
fn anchors(doc: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in unfenced(doc).lines() {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 { slug } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// What is wrong with `target`, a link of `doc`, or None when it resolves.
fn broken(doc: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
        return None;
    }
    let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else {
        doc.parent().expect("a folder").join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no {}", file.display()));
    }
    if fragment.is_empty() || !path.is_empty() && !path.ends_with(".md") {
        return None;
    }
    let text = std::fs::read_to_string(&file).expect("a readable document");
    let anchors = anchors(&text);
    (!anchors.iter().any(|a| a == fragment))
        .then(|| format!("{target}: no heading `#{fragment}` (there: {anchors:?})"))
}

#[test]
fn every_relative_link_in_the_documents_resolves() {
    let repo = rip_testkit::repo();
    let mut docs = Vec::new();
    documents(&repo, &mut docs);
    assert!(docs.len() > 20, "found {} documents", docs.len());
    let mut problems = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("a readable document");
        for target in links(&prose(&text)) {
            if let Some(why) = broken(doc, &target) {
                let name = doc.strip_prefix(&repo).unwrap_or(doc);
                problems.push(format!("{}: {why}", name.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn links_in_code_are_not_links_and_anchors_are_githubs() {
    let doc = "# The `rip-x` stage: *fast*\n\nSee [a](b.md#c) and `[d](e)`, ``[f](`g`)``,\n\
               `multi\n[h](i) line`.\n```sh\n[j](k)\n```\n## Rules\n## Rules\n";
    assert_eq!(links(&prose(doc)), ["b.md#c"]);
    assert_eq!(anchors(doc), ["the-rip-x-stage-fast", "rules", "rules-1"]);
}
