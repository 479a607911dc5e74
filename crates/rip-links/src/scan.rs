//! The link scanner: an [`html5gum`] emitter that keeps only what the crawler needs
//! (`<a>`, `<base>`, `<meta>` and an `<img>`'s `alt` inside a link) and drops every other
//! token as the tokenizer produces it, without building a token, a tree or an output.
//!
//! A tokenizer alone does not know that `<script>` or `<textarea>` hold raw text: the
//! tree builder tells it. The scanner does the part of that which matters for links:
//! after a start tag it switches the tokenizer to the state the HTML spec gives the
//! element (script data, raw text, RCDATA, plaintext), except inside `<svg>` and `<math>`,
//! whose elements are not HTML (an SVG `<script/>` does not swallow the rest of the page),
//! and their HTML integration points (`<foreignObject>`, `<desc>`, `<title>`,
//! `<annotation-xml>`), which are.

use html5gum::{Emitter, Error, State};

use super::Extracted;
use super::collect::{Attr, Collector, MAX_NAME, RawContent, Tag, Values};

/// The tag being read.
#[derive(Debug, Default)]
struct CurrentTag {
    end: bool,
    self_closing: bool,
    name: Vec<u8>,
    /// The name went past [`MAX_NAME`].
    long: bool,
    kind: Tag,
    attr_name: Vec<u8>,
    attr_value: Vec<u8>,
    /// The current attribute is one of the kept ones: its value is being copied.
    keep_value: bool,
    in_attr: bool,
    values: Values<'static>,
}

impl CurrentTag {
    fn reset(&mut self, end: bool) {
        self.end = end;
        self.self_closing = false;
        self.name.clear();
        self.long = false;
        self.kind = Tag::Other;
        self.in_attr = false;
        self.keep_value = false;
        self.values = Values::default();
    }

    /// Files the attribute just read, if it is kept (the first of a name wins, as in HTML).
    fn end_attr(&mut self) {
        if !self.in_attr {
            return;
        }
        self.in_attr = false;
        if !self.end
            && let Some(a) = Attr::of(self.kind, &self.attr_name)
        {
            let value = &self.attr_value;
            self.values
                .keep(a, || String::from_utf8_lossy(value).into_owned().into());
        }
        self.attr_name.clear();
        self.attr_value.clear();
        self.keep_value = false;
    }
}

#[derive(Debug, Default)]
pub(super) struct Scanner {
    found: Collector<'static>,
    tag: CurrentTag,
    last_start: Vec<u8>,
    /// In a raw-text element's content (script, style, textarea, …).
    raw: bool,
    done: bool,
}

impl Scanner {
    fn start_tag(&mut self) -> Option<State> {
        // The name becomes the last start tag; its buffer is reused for the next tag.
        std::mem::swap(&mut self.last_start, &mut self.tag.name);
        self.found.start_tag(self.tag.kind, &mut self.tag.values);
        if self.tag.long {
            self.raw = false;
            return None;
        }
        let state = self
            .found
            .enter_content(&self.last_start, self.tag.self_closing)
            .map(tokenizer_state);
        self.raw = state.is_some();
        state
    }

    fn end_tag(&mut self) {
        if self.raw && !self.tag.long && self.tag.name == self.last_start {
            self.raw = false;
        }
        self.found.end_tag(self.tag.kind, &self.tag.name);
    }
}

/// The tokenizer state for a raw-text element's content.
fn tokenizer_state(raw: RawContent) -> State {
    match raw {
        RawContent::RcData => State::RcData,
        RawContent::PlainText => State::PlainText,
        RawContent::ScriptData => State::ScriptData,
        RawContent::RawText => State::RawText,
    }
}

impl Emitter for Scanner {
    type Token = Extracted;

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.last_start = last_start_tag.unwrap_or_default().to_vec();
    }

    fn emit_eof(&mut self) {
        self.done = true;
    }

    fn emit_error(&mut self, _: Error) {}

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<Extracted> {
        if self.done {
            self.done = false;
            Some(self.found.finish())
        } else {
            None
        }
    }

    fn emit_string(&mut self, s: &[u8]) {
        if !self.raw {
            self.found.text(s);
        }
    }

    fn init_start_tag(&mut self) {
        self.tag.reset(false);
    }

    fn init_end_tag(&mut self) {
        self.tag.reset(true);
    }

    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        self.tag.end_attr();
        if self.tag.end {
            self.end_tag();
            None
        } else {
            self.start_tag()
        }
    }

    fn emit_current_comment(&mut self) {}

    fn emit_current_doctype(&mut self) {}

    fn set_self_closing(&mut self) {
        self.tag.self_closing = true;
    }

    fn set_force_quirks(&mut self) {}

    fn push_tag_name(&mut self, s: &[u8]) {
        let t = &mut self.tag;
        if t.long || t.name.len() + s.len() > MAX_NAME {
            t.long = true;
            t.kind = Tag::Other;
            return;
        }
        t.name.extend_from_slice(s);
        t.kind = Tag::of(&t.name);
    }

    fn push_comment(&mut self, _: &[u8]) {}

    fn push_doctype_name(&mut self, _: &[u8]) {}

    fn init_doctype(&mut self) {}

    fn init_attribute(&mut self) {
        self.tag.end_attr();
        self.tag.in_attr = true;
    }

    fn init_attribute_value(&mut self) {
        let t = &mut self.tag;
        t.keep_value = !t.end && Attr::of(t.kind, &t.attr_name).is_some();
    }

    fn push_attribute_name(&mut self, s: &[u8]) {
        let t = &mut self.tag;
        // Kept names are short; a long one is kept from matching by a byte no name has.
        if t.kind != Tag::Other && t.attr_name.len() <= MAX_NAME {
            t.attr_name.extend_from_slice(s);
            if t.attr_name.len() > MAX_NAME {
                t.attr_name.truncate(MAX_NAME);
                t.attr_name.push(0);
            }
        }
    }

    fn push_attribute_value(&mut self, s: &[u8]) {
        if self.tag.keep_value {
            self.tag.attr_value.extend_from_slice(s);
        }
    }

    fn set_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn set_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.tag.end
            && !self.tag.long
            && !self.last_start.is_empty()
            && self.tag.name == self.last_start
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&mut self) -> bool {
        self.found.foreign()
    }
}
