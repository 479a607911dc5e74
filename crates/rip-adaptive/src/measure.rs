//! One pass of an HTML tokenizer over a fetched page, measuring what [`crate::judge`]
//! decides on: visible text, scripts, the application root's text, JSON data islands,
//! the endpoints inline scripts ask for, and list containers and items with nothing in
//! them.
//!
//! A tokenizer (html5gum, WHATWG's tokenizer, which never gives up on a page) and a small
//! stack of open elements, not a tree: the figures need only which element a piece of
//! text is in, and an end tag closes what it names (and what was left open inside it), as
//! a browser closes it for the elements measured here.

use html5gum::{DefaultEmitter, Token, Tokenizer};
use rip_core::PageFigures;

/// Element ids (and Angular's `app-root` tag) that frameworks mount their application on.
const APP_ROOT_IDS: [&str; 9] = [
    "app",
    "root",
    "__next",
    "__nuxt",
    "___gatsby",
    "svelte",
    "application",
    "app-root",
    "main-app",
];

/// Elements with no content and no end tag: never pushed.
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];

/// Elements that count as content in an item even without text.
const MEDIA: [&str; 6] = ["img", "svg", "video", "picture", "canvas", "iframe"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Other,
    AppRoot,
    Container,
    Item,
}

#[derive(Debug)]
struct Frame {
    name: Vec<u8>,
    role: Role,
    /// Text characters (not white space) inside it.
    text: u32,
    /// An image, a form control or the like inside it.
    media: bool,
    /// Items directly or indirectly inside it (for a container).
    items: u32,
}

/// What raw-text element the tokenizer is in (its content comes as text tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Raw {
    None,
    /// A script that runs.
    Script,
    /// A JSON data island.
    Island,
    /// `<noscript>`.
    Noscript,
    /// `<style>`, `<title>`, `<textarea>`, a data script that is not JSON, …: not text.
    Other,
}

/// Measures `html`.
pub fn measure(html: &str) -> PageFigures {
    let mut emitter = DefaultEmitter::default();
    emitter.naively_switch_states(true);
    let mut m = Measure::default();
    for token in Tokenizer::new_with_emitter(html, emitter).flatten() {
        match token {
            Token::StartTag(tag) => m.start(&tag),
            Token::EndTag(tag) => m.end(&tag.name),
            Token::String(s) => m.text(&s.value),
            _ => {}
        }
    }
    while !m.stack.is_empty() {
        m.pop();
    }
    m.figures
}

#[derive(Debug)]
struct Measure {
    figures: PageFigures,
    stack: Vec<Frame>,
    raw: Raw,
    /// Inside `<template>` (inert content: not the page's).
    template: u32,
}

impl Default for Measure {
    fn default() -> Self {
        Self {
            figures: PageFigures::default(),
            stack: Vec::new(),
            raw: Raw::None,
            template: 0,
        }
    }
}

impl Measure {
    fn start(&mut self, tag: &html5gum::StartTag<()>) {
        let name = tag.name.as_slice();
        let attr = |n: &str| {
            tag.attributes
                .get(n.as_bytes())
                .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase())
        };
        if name == b"template" {
            self.template += 1;
            return;
        }
        if self.template > 0 {
            return;
        }
        self.raw = match name {
            b"script" => self.script(attr("type"), attr("id"), attr("src").is_some()),
            b"noscript" => Raw::Noscript,
            b"style" | b"title" | b"textarea" | b"xmp" | b"iframe" | b"noembed" => Raw::Other,
            _ => Raw::None,
        };
        if self.raw != Raw::None {
            return;
        }
        if name == b"link"
            && attr("rel").as_deref() == Some("preload")
            && attr("as").as_deref() == Some("fetch")
        {
            self.figures.endpoints += 1;
        }
        let placeholder = attr("class")
            .is_some_and(|class| class.split_ascii_whitespace().any(placeholder_class));
        if placeholder || attr("aria-busy").as_deref() == Some("true") {
            self.figures.placeholders += 1;
        }
        let tag_name = std::str::from_utf8(name).unwrap_or("");
        if (MEDIA.contains(&tag_name) || matches!(tag_name, "input" | "select" | "button"))
            && let Some(top) = self.stack.last_mut()
        {
            top.media = true;
        }
        if VOID.contains(&tag_name) || tag.self_closing && MEDIA.contains(&tag_name) {
            return;
        }
        self.close_implied(name);
        let id = attr("id");
        let role = match name {
            b"ul" | b"ol" | b"tbody" | b"dl" => Role::Container,
            b"li" | b"tr" | b"article" => Role::Item,
            b"app-root" => Role::AppRoot,
            _ if id.as_deref().is_some_and(|id| APP_ROOT_IDS.contains(&id)) => Role::AppRoot,
            _ => Role::Other,
        };
        if role == Role::Item {
            self.figures.items += 1;
        }
        self.stack.push(Frame {
            name: name.to_vec(),
            role,
            text: 0,
            media: false,
            items: u32::from(role == Role::Item),
        });
    }

    /// A `<script>`: a script that runs, a JSON data island, or other data.
    fn script(&mut self, kind: Option<String>, id: Option<String>, external: bool) -> Raw {
        let kind = kind.unwrap_or_default();
        let kind = kind.split(';').next().unwrap_or("").trim();
        let runs = matches!(
            kind,
            "" | "module" | "text/javascript" | "application/javascript" | "text/ecmascript"
        );
        if runs {
            self.figures.scripts += 1;
            return if external { Raw::Other } else { Raw::Script };
        }
        let json = kind == "application/json"
            || (kind.ends_with("+json") && kind != "application/ld+json")
            || id.as_deref() == Some("__next_data__");
        if json { Raw::Island } else { Raw::Other }
    }

    /// A new `li` closes an open `li` of the same list (a `tr` a `tr`, a `td` a `td`), as
    /// the HTML tree builder does.
    fn close_implied(&mut self, name: &[u8]) {
        let scope: &[&[u8]] = match name {
            b"li" => &[b"ul", b"ol"],
            b"tr" => &[b"table", b"tbody", b"thead", b"tfoot"],
            b"td" | b"th" => &[b"tr"],
            b"dt" | b"dd" => &[b"dl"],
            b"option" => &[b"select", b"datalist"],
            _ => return,
        };
        let same: &[&[u8]] = match name {
            b"td" | b"th" => &[b"td", b"th"],
            b"dt" | b"dd" => &[b"dt", b"dd"],
            _ => &[name],
        };
        for i in (0..self.stack.len()).rev() {
            let n = self.stack[i].name.as_slice();
            if scope.contains(&n) {
                return;
            }
            if same.contains(&n) {
                while self.stack.len() > i {
                    self.pop();
                }
                return;
            }
        }
    }

    fn end(&mut self, name: &[u8]) {
        if name == b"template" {
            self.template = self.template.saturating_sub(1);
            return;
        }
        if self.template > 0 {
            return;
        }
        if self.raw != Raw::None {
            self.raw = Raw::None;
            return;
        }
        if let Some(i) = self.stack.iter().rposition(|f| f.name == name) {
            while self.stack.len() > i {
                self.pop();
            }
        }
    }

    fn pop(&mut self) {
        let Some(f) = self.stack.pop() else { return };
        let empty = f.text == 0 && !f.media;
        match f.role {
            Role::AppRoot => {
                let chars = self.figures.app_root_chars.unwrap_or(0);
                self.figures.app_root_chars = Some(chars.max(f.text));
            }
            Role::Container if f.items == 0 && empty => self.figures.empty_containers += 1,
            Role::Item if empty => self.figures.empty_items += 1,
            _ => {}
        }
        if let Some(parent) = self.stack.last_mut() {
            parent.text += f.text;
            parent.media |= f.media;
            parent.items += f.items;
        }
    }

    fn text(&mut self, s: &[u8]) {
        if self.template > 0 {
            return;
        }
        let s = String::from_utf8_lossy(s);
        match self.raw {
            Raw::Script => {
                self.figures.script_bytes += s.len() as u32;
                self.figures.endpoints += endpoint_calls(&s);
            }
            Raw::Island => self.figures.island_chars += island_text(&s),
            Raw::Noscript => {
                self.figures.noscript_asks |= s.to_ascii_lowercase().contains("javascript");
            }
            Raw::Other => {}
            Raw::None => {
                let n = s.chars().filter(|c| !c.is_whitespace()).count() as u32;
                if n == 0 {
                    return;
                }
                let t = s.trim().trim_end_matches(['.', '…']).to_ascii_lowercase();
                if t == "loading" {
                    self.figures.placeholders += 1;
                }
                self.figures.text_chars += n;
                if let Some(top) = self.stack.last_mut() {
                    top.text += n;
                }
            }
        }
    }
}

/// A class naming a placeholder: `skeleton`, `placeholder`, `shimmer`, `spinner`,
/// `loading`, `is-loading`, … (a word of the class, not any substring: `unloading` is not).
fn placeholder_class(class: &str) -> bool {
    class.split(['-', '_']).any(|w| {
        matches!(
            w,
            "skeleton" | "placeholder" | "shimmer" | "spinner" | "loading"
        )
    })
}

/// Calls in a script that load data: `fetch(`, `XMLHttpRequest`, jQuery's `getJSON(`
/// and `ajax(`, `axios`.
fn endpoint_calls(script: &str) -> u32 {
    ["fetch(", "XMLHttpRequest", "getJSON(", ".ajax(", "axios."]
        .iter()
        .map(|needle| script.matches(needle).count() as u32)
        .sum()
}

/// The text a JSON data island holds: the characters of its string values that read as
/// text (three characters or more, a letter among them, not a URL or a path).
fn island_text(json: &str) -> u32 {
    fn walk(v: &serde_json::Value) -> u32 {
        match v {
            serde_json::Value::String(s) => {
                let text = s.chars().count() >= 3
                    && s.chars().any(char::is_alphabetic)
                    && !s.starts_with("http")
                    && !s.starts_with('/');
                if text {
                    s.chars().filter(|c| !c.is_whitespace()).count() as u32
                } else {
                    0
                }
            }
            serde_json::Value::Array(a) => a.iter().map(walk).sum(),
            serde_json::Value::Object(o) => o.values().map(walk).sum(),
            _ => 0,
        }
    }
    serde_json::from_str(json.trim()).map_or(0, |v| walk(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_counted_outside_scripts_styles_and_templates() {
        let f = measure(
            "<html><head><title>Title</title><style>p{}</style></head><body>\
             <p>Hello world</p><script>var a = 1;</script>\
             <template><li></li></template><noscript>Enable JavaScript</noscript></body>",
        );
        assert_eq!(f.text_chars, 10);
        assert_eq!(f.scripts, 1);
        assert_eq!(f.script_bytes, 10);
        assert_eq!(f.empty_items, 0, "a template's items are not the page's");
        assert!(f.noscript_asks);
    }

    #[test]
    fn an_app_root_and_empty_lists_and_items_are_measured() {
        let f = measure(
            "<body><div id=app><ul class=products></ul></div>\
             <ul><li>One<li><li><img src=a.png></ul>\
             <table><tbody></tbody></table><div class=\"card skeleton\"></div></body>",
        );
        assert_eq!(f.app_root_chars, Some(0));
        assert_eq!(f.empty_containers, 2, "{f:?}");
        assert_eq!(f.items, 3);
        assert_eq!(
            f.empty_items, 1,
            "an item with an image is not empty: {f:?}"
        );
        assert_eq!(f.placeholders, 1);
    }

    #[test]
    fn data_islands_and_endpoints_are_measured() {
        let f = measure(
            "<script id=\"__NEXT_DATA__\" type=\"application/json\">\
             {\"props\":{\"items\":[{\"name\":\"Ash wyrm\",\"url\":\"/a\",\"n\":3}]}}</script>\
             <script type=application/ld+json>{\"name\":\"not counted\"}</script>\
             <script>fetch('/api/items.json').then(r => r.json())</script>\
             <link rel=preload as=fetch href=/api/more.json>",
        );
        assert_eq!(f.island_chars, 7, "{f:?}");
        assert_eq!(f.scripts, 1, "data islands are not scripts");
        assert_eq!(f.endpoints, 2);
    }

    #[test]
    fn broken_markup_is_measured_without_a_panic() {
        for html in [
            "<ul><li>",
            "</div></ul><li",
            "<script>",
            "<div id=app>",
            "\u{0}<a",
        ] {
            let _ = measure(html);
        }
        assert_eq!(measure("<div id=app>").app_root_chars, Some(0));
    }
}
