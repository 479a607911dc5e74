//! Microdata items, read from the page's events as extruct gives them:
//! `{"type": "https://schema.org/Article", "id"?: …, "properties": {"headline": "…",
//! "author": {"type": …, "properties": {…}}}}`; a type or property given more than
//! once is an array.
//!
//! An element with `itemscope` opens an item; one with `itemprop` gives its item a
//! property: a nested item when it has `itemscope` too, else a value read from an
//! attribute (`content` of `meta`, `href` of `a`, `area` and `link`, `src` of media,
//! `data` of `object`, `value` of `data` and `meter`, `datetime` of `time`) or its
//! text. Only elements marked [`Info::ITEM`] are looked at, so a page without
//! microdata pays a bit test an element.

use serde_json::{Map, Value};

use crate::dom::{Info, TextBuf};
use crate::resolve::Resolver;
use crate::tag::Tag;
use crate::visit::Elem;

struct OpenItem {
    depth: usize,
    /// The property names it is the value of in the item around it.
    props: Vec<String>,
    types: Vec<String>,
    id: Option<String>,
    properties: Map<String, Value>,
}

struct OpenText {
    depth: usize,
    props: Vec<String>,
    /// The item it belongs to: its place in the stack of open items.
    item: usize,
    text: TextBuf,
}

/// The microdata reader: the open items and property texts, and the items read.
#[derive(Default)]
pub struct Microdata {
    open: Vec<OpenItem>,
    texts: Vec<OpenText>,
    /// The top-level items, in the order they close.
    pub items: Vec<Value>,
}

fn words(s: Option<&str>) -> Vec<String> {
    s.unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect()
}

fn add(props: &mut Map<String, Value>, name: String, value: Value) {
    match props.get_mut(&name) {
        None => {
            props.insert(name, value);
        }
        Some(Value::Array(a)) if a.first().is_some_and(|f| !f.is_array()) => a.push(value),
        Some(old) => *old = Value::Array(vec![old.take(), value]),
    }
}

impl Microdata {
    /// True inside an item or a property's text: every event counts.
    pub fn active(&self) -> bool {
        !self.open.is_empty() || !self.texts.is_empty()
    }

    /// True inside an item.
    pub fn in_item(&self) -> bool {
        !self.open.is_empty()
    }

    /// True while text goes somewhere.
    pub fn reading_text(&self) -> bool {
        !self.texts.is_empty()
    }

    /// An element opens at `depth` (its ancestors are `depth - 1`).
    pub fn open(&mut self, el: &Elem<'_>, depth: usize, base: &Resolver) {
        for t in &mut self.texts {
            t.text.brk(el.info.flow);
        }
        if !el.info.has(Info::ITEM) || !el.html {
            return;
        }
        let props = words(el.attr("itemprop"));
        let scope = el.attr("itemscope").is_some();
        if scope {
            self.open.push(OpenItem {
                depth,
                props: if self.open.is_empty() {
                    Vec::new()
                } else {
                    props
                },
                types: words(el.attr("itemtype")),
                id: el.attr("itemid").map(|i| i.trim().to_owned()),
                properties: Map::new(),
            });
            return;
        }
        let Some(item) = self.open.last_mut() else {
            return;
        };
        if props.is_empty() {
            return;
        }
        let url = |a: &str| {
            el.attr(a).map(|u| {
                let mut s = String::new();
                if base.join_onto(u.trim(), &mut s) {
                    s
                } else {
                    u.trim().to_owned()
                }
            })
        };
        let value = match el.tag {
            Tag::Meta => el.attr("content").map(str::to_owned),
            Tag::A | Tag::Area | Tag::Link => url("href"),
            Tag::Img | Tag::Embed | Tag::Iframe | Tag::Source | Tag::Track => url("src"),
            Tag::Other if matches!(el.name, "audio" | "video") => url("src"),
            Tag::Object => url("data"),
            Tag::Other if matches!(el.name, "data" | "meter") => {
                el.attr("value").map(str::to_owned)
            }
            Tag::Other if el.name == "time" => el.attr("datetime").map(str::to_owned),
            _ => None,
        };
        match value {
            Some(v) => {
                for p in props {
                    add(&mut item.properties, p, Value::String(v.clone()));
                }
            }
            None => self.texts.push(OpenText {
                depth,
                props,
                item: self.open.len() - 1,
                text: TextBuf::default(),
            }),
        }
    }

    /// Text, for the property texts open.
    pub fn text(&mut self, text: &str) {
        for t in &mut self.texts {
            t.text.push(text);
        }
    }

    /// The element opened at `depth` closes.
    pub fn close(&mut self, el: &Elem<'_>, depth: usize) {
        for t in &mut self.texts {
            t.text.brk(el.info.flow);
        }
        if self.texts.last().is_some_and(|t| t.depth == depth) {
            let t = self.texts.pop().expect("a text is open");
            if let Some(item) = self.open.get_mut(t.item) {
                let text = t.text.finish();
                for p in t.props {
                    add(&mut item.properties, p, Value::String(text.clone()));
                }
            }
        }
        if self.open.last().is_some_and(|i| i.depth == depth) {
            let item = self.open.pop().expect("an item is open");
            let props = item.props.clone();
            let value = item_value(item);
            match self.open.last_mut() {
                Some(parent) if !props.is_empty() => {
                    for p in props {
                        add(&mut parent.properties, p, value.clone());
                    }
                }
                _ => self.items.push(value),
            }
        }
    }

    /// The items, those still open closed.
    pub fn finish(mut self) -> Vec<Value> {
        while let Some(depth) = self.open.last().map(|i| i.depth) {
            self.texts.retain(|t| t.depth < depth);
            let item = self.open.pop().expect("an item is open");
            self.items.push(item_value(item));
        }
        self.items
    }
}

fn item_value(item: OpenItem) -> Value {
    let mut m = Map::new();
    match item.types.len() {
        0 => {}
        1 => {
            m.insert("type".into(), item.types.into_iter().next().into());
        }
        _ => {
            m.insert("type".into(), item.types.into());
        }
    }
    if let Some(id) = item.id.filter(|i| !i.is_empty()) {
        m.insert("id".into(), Value::String(id));
    }
    m.insert("properties".into(), Value::Object(item.properties));
    Value::Object(m)
}
