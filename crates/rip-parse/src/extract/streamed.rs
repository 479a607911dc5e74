//! Rules in the streaming pass: every selector of the concepts a page may belong to
//! is matched on the stack of open elements as the page streams by, and what each
//! field reads (text, an attribute, Markdown, existence) is kept in document order.
//! Routing and field values are then worked out from that as [`super::apply`] works
//! them out from a tree, so both paths give the same doc.

use serde_json::Value;
use url::Url;

use super::{PageView, RuleBreak, finish, refine};
use crate::dom::{Skip, TextWalk};
use crate::markdown::Markdown;
use crate::rules::{Concept, Extract, Field, Matcher, Source};
use crate::stream::select::StreamSelector;
use crate::visit::{Depth, Elem, Visitor};

/// What a probe reads from each element its selector matches.
enum What<'r> {
    Exists,
    Attr(&'r str),
    Text,
    Markdown,
    /// A routing condition: some match's text contains this.
    Contains(&'r str),
}

/// One selector of a field or routing condition, and what it found.
struct Probe<'r> {
    /// The field or matcher it serves (its address).
    key: usize,
    selector: &'r StreamSelector,
    what: What<'r>,
    matched: bool,
    /// What each match read, in document order (`None`: empty).
    values: Vec<Option<String>>,
}

/// A match being read whole (its text or Markdown), until it closes.
struct Capture {
    probe: usize,
    slot: usize,
    depth: Depth,
    reader: Reader,
}

enum Reader {
    Text(TextWalk),
    Markdown(Box<Markdown>),
}

/// The streaming pass's visitor for rules: see the module.
pub struct RulesWalk<'r> {
    probes: Vec<Probe<'r>>,
    captures: Vec<Capture>,
    page_text: Option<TextWalk>,
    page_url: Url,
    base: Option<Url>,
    markdown_begun: bool,
    /// A `<base>` came after Markdown was written against the page URL.
    pub late_base: bool,
    /// The JSON-LD script bodies, when a field reads them, and the one being read.
    jsonld: Option<(Vec<String>, Option<String>)>,
}

fn key<T>(x: &T) -> usize {
    std::ptr::from_ref(x) as usize
}

impl<'r> RulesWalk<'r> {
    /// A walk reading what the concepts of `plan` ask of a page served from `page_url`.
    pub fn new(plan: &[&'r Concept], page_url: &Url) -> Self {
        let mut walk = Self {
            probes: Vec::new(),
            captures: Vec::new(),
            page_text: None,
            page_url: page_url.clone(),
            base: None,
            markdown_begun: false,
            late_base: false,
            jsonld: None,
        };
        for c in plan {
            if let Some(m) = &c.matcher {
                walk.add_matcher(m);
            }
            for f in c.id.iter().chain(&c.name_field).chain(&c.fields) {
                walk.add_field(f);
                if f.jsonld.is_some() && walk.jsonld.is_none() {
                    walk.jsonld = Some((Vec::new(), None));
                }
            }
        }
        walk
    }

    fn add_matcher(&mut self, m: &'r Matcher) {
        match (&m.stream_selector, &m.text) {
            (Some(selector), text) => self.probes.push(Probe {
                key: key(m),
                selector,
                what: text.as_deref().map_or(What::Exists, What::Contains),
                matched: false,
                values: Vec::new(),
            }),
            (None, Some(_)) => self.page_text = Some(TextWalk::new(Skip::Hidden)),
            (None, None) => {}
        }
    }

    fn add_field(&mut self, f: &'r Field) {
        let Some(selector) = &f.stream_selector else {
            return;
        };
        if f.wiki.is_some() || f.source != Source::Html {
            return;
        }
        let what = match f.extract {
            Extract::Exists => What::Exists,
            Extract::Attr => What::Attr(f.attr.as_deref().unwrap_or_default()),
            Extract::Markdown => What::Markdown,
            _ => What::Text,
        };
        self.probes.push(Probe {
            key: key(f),
            selector,
            what,
            matched: false,
            values: Vec::new(),
        });
    }

    /// What the walk found.
    pub fn finish(self) -> Found {
        Found {
            probes: self
                .probes
                .into_iter()
                .map(|p| (p.key, p.matched, p.values))
                .collect(),
            page_text: self.page_text.map(|w| w.buf.finish()).unwrap_or_default(),
            jsonld: self.jsonld.map(|j| j.0).unwrap_or_default(),
            base: self.base.unwrap_or(self.page_url),
        }
    }

    /// The first `<base>` whose `href` resolves sets the base URL.
    fn base_element(&mut self, el: &Elem<'_>) {
        if self.base.is_none()
            && el.html_name() == Some("base")
            && let Some(base) = el
                .attr("href")
                .and_then(|h| self.page_url.join(h.trim()).ok())
        {
            self.late_base |= self.markdown_begun;
            self.base = Some(base);
        }
    }

    fn start(&mut self, i: usize, el: &Elem<'_>) {
        let p = &mut self.probes[i];
        if !matches!(p.what, What::Contains(_)) {
            p.matched = true;
        }
        let reader = match p.what {
            What::Exists => return,
            What::Attr(name) => {
                let v = el.attr(name).map(str::trim).filter(|v| !v.is_empty());
                p.values.push(v.map(str::to_owned));
                return;
            }
            What::Text | What::Contains(_) => Reader::Text(TextWalk::new(Skip::Hidden)),
            What::Markdown => {
                self.markdown_begun = true;
                let base = self.base.clone().unwrap_or_else(|| self.page_url.clone());
                Reader::Markdown(Box::new(Markdown::new(base, Skip::Hidden)))
            }
        };
        self.captures.push(Capture {
            probe: i,
            slot: p.values.len(),
            depth: Depth::default(),
            reader,
        });
        p.values.push(None);
    }

    fn end(&mut self, c: Capture) {
        let text = match c.reader {
            Reader::Text(w) => w.buf.finish(),
            Reader::Markdown(md) => md.finish(),
        };
        let p = &mut self.probes[c.probe];
        if let What::Contains(needle) = p.what {
            p.matched |= text.contains(needle);
        }
        if !text.is_empty() {
            p.values[c.slot] = Some(text);
        }
    }
}

impl Visitor for RulesWalk<'_> {
    fn open(&mut self, el: &Elem<'_>) {
        self.base_element(el);
        if let Some((_, open)) = &mut self.jsonld
            && el.html
            && super::is_jsonld_script(el.name, el.attr("type"))
        {
            *open = Some(String::new());
        }
        for i in 0..self.probes.len() {
            if self.probes[i].selector.matches(el) {
                self.start(i, el);
            }
        }
        for c in &mut self.captures {
            c.depth.open();
            match &mut c.reader {
                Reader::Text(w) => _ = w.open(el),
                Reader::Markdown(md) => md.open(el),
            }
        }
        if let Some(w) = &mut self.page_text {
            w.open(el);
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, Some(body))) = &mut self.jsonld {
            body.push_str(text);
        }
        for c in &mut self.captures {
            match &mut c.reader {
                Reader::Text(w) => _ = w.text(text),
                Reader::Markdown(md) => md.text(text),
            }
        }
        if let Some(w) = &mut self.page_text {
            w.text(text);
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        if let Some((blocks, open)) = &mut self.jsonld
            && el.html
            && el.name == "script"
            && let Some(body) = open.take()
        {
            blocks.push(body);
        }
        let mut i = 0;
        while i < self.captures.len() {
            let c = &mut self.captures[i];
            match &mut c.reader {
                Reader::Text(w) => _ = w.close(el),
                Reader::Markdown(md) => md.close(el),
            }
            if c.depth.close() {
                let c = self.captures.remove(i);
                self.end(c);
            } else {
                i += 1;
            }
        }
        if let Some(w) = &mut self.page_text {
            w.close(el);
        }
    }
}

/// What the streaming pass found for each field and routing condition.
pub struct Found {
    probes: Vec<(usize, bool, Vec<Option<String>>)>,
    page_text: String,
    jsonld: Vec<String>,
    /// The URL relative references resolve against.
    pub base: Url,
}

impl Found {
    fn probe<T>(&self, x: &T) -> Option<&(usize, bool, Vec<Option<String>>)> {
        let k = key(x);
        self.probes.iter().find(|p| p.0 == k)
    }

    /// The bodies of the page's JSON-LD scripts, when a field reads them.
    pub fn jsonld(&self) -> &[String] {
        &self.jsonld
    }

    /// The page's whole text (hidden elements left out).
    pub fn page_text(&self) -> &str {
        &self.page_text
    }

    /// Whether a matcher's `selector` (and `text`) conditions hold; its `url` is
    /// checked by the caller.
    pub fn matcher_holds(&self, m: &Matcher) -> bool {
        match (&m.selector, &m.text) {
            (Some(_), _) => self.probe(m).is_some_and(|p| p.1),
            (None, Some(text)) => self.page_text.contains(text.as_str()),
            (None, None) => true,
        }
    }

    /// A field's value, as [`super::apply`] reads it from a tree.
    pub fn value(&self, f: &Field, page: &PageView<'_>) -> Result<Option<Value>, RuleBreak> {
        if f.wiki.is_some() {
            return finish(f, Vec::new(), &page.base);
        }
        if f.extract == Extract::Exists {
            return Ok(Some(Value::Bool(self.probe(f).is_some_and(|p| p.1))));
        }
        let found: Vec<String> = match f.source {
            Source::Url => refine(f, page.url.to_owned()).into_iter().collect(),
            Source::Html => {
                let values = self.probe(f).map(|p| p.2.as_slice()).unwrap_or_default();
                let mut refined = values
                    .iter()
                    .filter_map(|v| v.clone().and_then(|v| refine(f, v)));
                if f.list {
                    refined.collect()
                } else {
                    refined.next().into_iter().collect()
                }
            }
        };
        finish(f, found, &page.base)
    }
}
