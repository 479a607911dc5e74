//! Values whose text only the wiki knows: the template calls in them, and their text once
//! the wiki has expanded those calls.
//!
//! A template displays what its page on the wiki says, which differs from wiki to wiki
//! (this crate's table of common templates is a guess for any one of them), and a parser
//! function needs the wiki's parser. So a value holding a template call is exact only once
//! the wiki has expanded the call (`action=expandtemplates`); [`template_calls`] lists what
//! to ask, and [`expanded_text`] renders the value with the answers in place.

use std::collections::HashSet;
use std::ops::Range;

use crate::inline;
use crate::preprocess::{Node, preprocess};
use crate::render::Renderer;

/// Magic words that the page's title answers exactly (`{{PAGENAME}}`): never asked.
const TITLE_WORDS: &[&str] = &[
    "PAGENAME",
    "PAGENAMEE",
    "FULLPAGENAME",
    "BASEPAGENAME",
    "SUBPAGENAME",
    "ROOTPAGENAME",
];

/// The template calls the wiki must expand for `wikitext`'s text to be exact: each
/// top-level `{{…}}` as written (parser functions included; in link labels too), in order,
/// each once. Calls inside comments and extension tags (a `<ref>` displays no text here)
/// are left out, as are the title's magic words (`{{PAGENAME}}`).
///
/// ```
/// let calls = rip_wikitext::template_calls(
///     "{{Coin|gp=12|sp=5}} ([[Shop|{{Nowrap|at the shop}}]])<ref>{{Cite book|title=X}}</ref>",
/// );
/// assert_eq!(calls, ["{{Coin|gp=12|sp=5}}", "{{Nowrap|at the shop}}"]);
/// assert!(rip_wikitext::template_calls("[[Ember Fen]] {{PAGENAME}}").is_empty());
/// ```
pub fn template_calls(wikitext: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    calls_in(wikitext, &preprocess(wikitext))
        .into_iter()
        .map(|span| wikitext[span].to_owned())
        .filter(|call| seen.insert(call.clone()))
        .collect()
}

/// The text of a value as an infobox field shows it, each template call replaced by its
/// expansion (`expansion(call)`, the wiki's answer for the call as [`template_calls`] wrote
/// it). `Err` lists the calls that have no expansion (each once, in order).
///
/// ```
/// let text = rip_wikitext::expanded_text("Ash Bow", "{{Coin|gp=12|sp=5}} at [[Ember Fen]]", |call| {
///     (call == "{{Coin|gp=12|sp=5}}").then_some("12 gp&nbsp;5 sp")
/// });
/// assert_eq!(text.unwrap(), "12 gp 5 sp at Ember Fen");
/// let missing = rip_wikitext::expanded_text("Ash Bow", "{{Coin|gp=1}}", |_| None);
/// assert_eq!(missing.unwrap_err(), ["{{Coin|gp=1}}"]);
/// ```
pub fn expanded_text<'e>(
    title: &str,
    wikitext: &str,
    expansion: impl Fn(&str) -> Option<&'e str>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(wikitext.len());
    let mut missing: Vec<String> = Vec::new();
    let mut at = 0;
    for span in calls_in(wikitext, &preprocess(wikitext)) {
        let call = &wikitext[span.clone()];
        out.push_str(&wikitext[at..span.start]);
        match expansion(call) {
            Some(text) => out.push_str(text),
            None if missing.iter().any(|m| m == call) => {}
            None => missing.push(call.to_owned()),
        }
        at = span.end;
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    out.push_str(&wikitext[at..]);
    Ok(value_text(title, &out))
}

/// The text of a value as an infobox field shows it (templates reduced by this crate's
/// table of common templates: see [`template_calls`] for when that is a guess).
pub fn value_text(title: &str, wikitext: &str) -> String {
    let nodes = preprocess(wikitext);
    let r = Renderer {
        src: wikitext,
        title,
    };
    inline::clean_line(&r.render_string(&nodes))
}

/// Where the calls of [`template_calls`] are in `src`, in order.
fn calls_in(src: &str, nodes: &[Node]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    collect_calls(src, nodes, &mut out);
    out
}

fn collect_calls(src: &str, nodes: &[Node], out: &mut Vec<Range<usize>>) {
    for node in nodes {
        match node {
            Node::Template { span, parts } => {
                let name = src[parts[0].span.clone()].trim();
                if !(parts.len() == 1 && TITLE_WORDS.contains(&name)) {
                    out.push(span.clone());
                }
            }
            Node::Link { parts, .. } => {
                for part in parts {
                    collect_calls(src, &part.nodes, out);
                }
            }
            Node::Text(_) | Node::Comment(_) | Node::Argument { .. } | Node::Ext(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_without_calls_renders_as_the_infobox_does() {
        let page = crate::parse(
            "Ash Wyrm",
            "{{Infobox creature\n| habitat = [[Storm Barrow]], [[Rust Reach|the reach]]<!-- x -->\
             <ref name=\"b\"/>\n| caption = A '''wyrm''' &amp; more\n}}",
        );
        let ib = page.infobox.unwrap();
        for key in ["habitat", "caption"] {
            assert!(template_calls(&ib.wikitext[key]).is_empty());
            assert_eq!(value_text("Ash Wyrm", &ib.wikitext[key]), ib.fields[key]);
            let expanded = expanded_text("Ash Wyrm", &ib.wikitext[key], |_| None);
            assert_eq!(expanded.as_deref(), Ok(ib.fields[key].as_str()));
        }
    }

    #[test]
    fn calls_are_listed_once_and_replaced_everywhere() {
        let src = "{{#if:{{{x|}}}|a|b}} {{Yes}} / {{Yes}} {{ PAGENAME }} {{PAGENAME|x}}";
        assert_eq!(
            template_calls(src),
            ["{{#if:{{{x|}}}|a|b}}", "{{Yes}}", "{{PAGENAME|x}}"]
        );
        let text = expanded_text("T", src, |call| match call {
            "{{#if:{{{x|}}}|a|b}}" => Some("b"),
            "{{Yes}}" => Some("'''Yes'''"),
            _ => None,
        });
        assert_eq!(text.unwrap_err(), ["{{PAGENAME|x}}"]);
        let text = expanded_text("T", "{{Yes}} and {{Yes}}", |_| Some("'''Yes'''"));
        assert_eq!(text.unwrap(), "Yes and Yes");
    }

    #[test]
    fn unclosed_braces_are_text_not_calls() {
        assert!(template_calls("{{Coin|gp=1").is_empty());
        assert_eq!(value_text("T", "{{Coin|gp=1"), "{{Coin|gp=1");
    }
}
