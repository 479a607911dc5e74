//! The rules for tags in the body: "in body", the table modes, and inline SVG.

use std::borrow::Cow;

use super::Quirks;
use super::{Bail, Builder, Mode, Step, breaks_out, is_table_part};
use super::{CLOSES_P, FORMATTING, HEADING, MARKER, SPECIAL, VOID, kind};
use crate::visit::Visitor;

impl<'a, V: Visitor> Builder<'a, '_, V> {
    pub(super) fn body_start(&mut self, name: Cow<'a, str>, self_closing: bool) -> Step {
        if self.in_foreign() {
            return self.foreign_start(name, self_closing);
        }
        match self.mode() {
            Mode::Body => self.in_body_start(name, self_closing),
            Mode::Cell if is_table_part(&name) => {
                self.close_cell()?;
                self.body_start(name, self_closing)
            }
            Mode::Template if is_table_part(&name) => Err(Bail("table parts in a template")),
            Mode::Cell | Mode::Template => self.in_body_start(name, self_closing),
            Mode::Table | Mode::TableBody | Mode::Row => self.table_start(name, self_closing),
        }
    }

    fn table_start(&mut self, name: Cow<'a, str>, self_closing: bool) -> Step {
        let mode = self.mode();
        match (mode, name.as_ref()) {
            (_, "style") | (_, "script") => self.raw(name, false),
            (Mode::Table, "tbody" | "thead" | "tfoot") | (Mode::TableBody, "tr") => {
                self.insert(name, true, true)
            }
            (Mode::Row, "td" | "th") => self.insert(name, true, true),
            (Mode::Table, "tr" | "td" | "th") => {
                self.implied("tbody")?;
                self.body_start(name, self_closing)
            }
            (Mode::TableBody, "td" | "th") => {
                self.implied("tr")?;
                self.body_start(name, self_closing)
            }
            (Mode::TableBody, "tbody" | "thead" | "tfoot")
            | (Mode::Row, "tr" | "tbody" | "thead" | "tfoot") => {
                // The open row or body ends; the tag starts the next one.
                self.pop();
                self.body_start(name, self_closing)
            }
            _ => Err(Bail("content in a table outside its cells")),
        }
    }

    /// Closes the open `td` or `th` (a table part's start or end tag ends it).
    fn close_cell(&mut self) -> Step {
        let i = self
            .stack
            .iter()
            .rposition(|o| o.html && matches!(o.name.as_ref(), "td" | "th"))
            .ok_or(Bail("no cell to close"))?;
        self.generate_implied(None);
        self.pop_to(i)
    }

    fn in_body_start(&mut self, name: Cow<'a, str>, self_closing: bool) -> Step {
        let k = kind(&name);
        match name.as_ref() {
            "html" | "body" | "frameset" | "head" | "caption" | "col" | "colgroup" | "frame"
            | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr" | "image" | "select"
            | "plaintext" | "math" | "rb" | "rp" | "rt" | "rtc" | "option" | "optgroup"
            | "isindex" => Err(Bail("a tag the streaming pass does not model")),
            "base" | "basefont" | "bgsound" | "link" | "meta" => self.void(name, true),
            "title" | "textarea" => self.raw(name, true),
            "style" | "noframes" | "noscript" | "iframe" | "noembed" | "script" => {
                self.raw(name, false)
            }
            "xmp" => {
                self.close_p()?;
                self.raw(name, false)
            }
            "li" => self.list_item(name, &["li"]),
            "dd" | "dt" => self.list_item(name, &["dd", "dt"]),
            "pre" | "listing" => {
                self.close_p()?;
                self.skip_lf = true;
                self.insert(name, true, true)
            }
            "form" => {
                if self.form || self.templates > 0 {
                    return Err(Bail("a nested form, or a form in a template"));
                }
                self.close_p()?;
                self.form = true;
                self.insert(name, true, true)
            }
            "button" | "nobr" if self.named_in_scope(&name, &[]) => {
                Err(Bail("a nested button or nobr"))
            }
            "a" if self.formatting_open("a") => self.link_in_link(name),
            "table" => {
                if self.named_in_scope("p", &["button"]) {
                    match self.quirks.unwrap_or(Quirks::Yes) {
                        Quirks::No => self.close_p()?,
                        Quirks::Yes => {}
                        Quirks::Unknown => return Err(Bail("a table in a p, in an unknown mode")),
                    }
                }
                self.insert(name, true, true)
            }
            "svg" => {
                self.insert(name, false, true)?;
                if self_closing {
                    self.pop();
                }
                Ok(())
            }
            _ if k & HEADING != 0 => {
                self.close_p()?;
                if self
                    .current()
                    .is_some_and(|o| o.html && o.kind & HEADING != 0)
                {
                    self.pop();
                }
                self.insert_kind(name, true, k, true)
            }
            _ if k & VOID != 0 => {
                if k & CLOSES_P != 0 {
                    self.close_p()?;
                }
                self.insert_kind(name, true, k, true)?;
                self.pop();
                Ok(())
            }
            _ => {
                if k & CLOSES_P != 0 {
                    self.close_p()?;
                }
                self.insert_kind(name, true, k, true)
            }
        }
    }

    /// `li`, `dd`, `dt`: an open item of the same list ends first.
    fn list_item(&mut self, name: Cow<'a, str>, same: &[&str]) -> Step {
        for i in (0..self.stack.len()).rev() {
            let o = &self.stack[i];
            if o.html && same.contains(&o.name.as_ref()) {
                let found = o.name.clone();
                self.generate_implied(Some(&found));
                self.pop_until(&found)?;
                break;
            }
            if o.html
                && o.kind & SPECIAL != 0
                && !matches!(o.name.as_ref(), "address" | "div" | "p")
            {
                break;
            }
        }
        self.close_p()?;
        self.insert(name, true, true)
    }

    /// `<a>` inside an open link: the adoption agency's simple case closes that link
    /// first, as `</a>` would (or the page goes to the tree), then the new one opens.
    fn link_in_link(&mut self, name: Cow<'a, str>) -> Step {
        self.formatting_end("a")?;
        self.insert(name, true, true)
    }

    /// An open formatting element `name` since the last marker.
    fn formatting_open(&self, name: &str) -> bool {
        for o in self.stack.iter().rev() {
            if o.html && o.name == name {
                return true;
            }
            if o.html && o.kind & MARKER != 0 {
                return false;
            }
        }
        false
    }

    fn foreign_start(&mut self, name: Cow<'a, str>, self_closing: bool) -> Step {
        if breaks_out(&name) {
            return Err(Bail("HTML, or a script, inside SVG"));
        }
        self.insert(name, false, true)?;
        if self_closing {
            self.pop();
        }
        Ok(())
    }

    pub(super) fn body_end(&mut self, name: &str) -> Step {
        if self.in_foreign() {
            return if self
                .current()
                .is_some_and(|o| o.name.eq_ignore_ascii_case(name))
            {
                self.pop();
                Ok(())
            } else {
                Err(Bail("an SVG element closed out of turn"))
            };
        }
        match self.mode() {
            Mode::Table | Mode::TableBody | Mode::Row => match name {
                "table" | "tbody" | "thead" | "tfoot" | "tr" if self.in_table_scope(name) => {
                    self.pop_until(name)
                }
                _ => Err(Bail("an end tag in a table outside its cells")),
            },
            Mode::Cell => match name {
                "td" | "th" if self.in_table_scope(name) => {
                    self.generate_implied(None);
                    self.pop_until(name)
                }
                "table" | "tbody" | "thead" | "tfoot" | "tr" if self.in_table_scope(name) => {
                    self.close_cell()?;
                    self.body_end(name)
                }
                "td" | "th" | "table" | "tbody" | "thead" | "tfoot" | "tr" | "body" | "caption"
                | "col" | "colgroup" | "html" => Err(Bail("an unusual end tag in a table cell")),
                _ => self.in_body_end(name),
            },
            Mode::Body | Mode::Template => self.in_body_end(name),
        }
    }

    fn in_body_end(&mut self, name: &str) -> Step {
        let k = kind(name);
        match name {
            "template" if self.templates > 0 => self.pop_until("template"),
            "template" => Ok(()),
            "body" | "html" if self.named_in_scope("body", &[]) => Ok(()),
            "p" if self.named_in_scope("p", &["button"]) => {
                self.generate_implied(Some("p"));
                self.pop_until("p")
            }
            "li" if self.named_in_scope("li", &["ol", "ul"]) => {
                self.generate_implied(Some("li"));
                self.pop_until("li")
            }
            "dd" | "dt" if self.named_in_scope(name, &[]) => {
                self.generate_implied(Some(name));
                self.pop_until(name)
            }
            "li" | "dd" | "dt" => Ok(()),
            "form" => self.form_end(),
            "body" | "html" | "p" | "br" | "select" | "option" | "optgroup" => {
                Err(Bail("an end tag the streaming pass does not model"))
            }
            _ if k & HEADING != 0 => {
                if !self.in_scope(|o| o.kind & HEADING != 0, &[]) {
                    return Ok(());
                }
                self.generate_implied(None);
                let i = self
                    .stack
                    .iter()
                    .rposition(|o| o.html && o.kind & HEADING != 0)
                    .ok_or(Bail("no heading"))?;
                self.pop_to(i)
            }
            _ if k & FORMATTING != 0 => self.formatting_end(name),
            _ if k & (CLOSES_P | MARKER) != 0 || name == "button" => {
                if self.named_in_scope(name, &[]) {
                    self.generate_implied(None);
                    self.pop_until(name)?;
                }
                Ok(())
            }
            _ => self.any_other_end(name),
        }
    }

    fn form_end(&mut self) -> Step {
        if !std::mem::take(&mut self.form) || !self.named_in_scope("form", &[]) {
            return Ok(());
        }
        self.generate_implied(None);
        if self.current_is("form") {
            self.pop();
            Ok(())
        } else {
            Err(Bail("a form closed out of turn"))
        }
    }

    /// The end tag of a formatting element: the adoption agency's simple case (the
    /// element and what is above it are popped), or a bail.
    fn formatting_end(&mut self, name: &str) -> Step {
        let mut found = None;
        for (i, o) in self.stack.iter().enumerate().rev() {
            if o.html && o.name == name {
                found = Some(i);
                break;
            }
            if o.html && o.kind & MARKER != 0 {
                break;
            }
        }
        let Some(i) = found else {
            return self.any_other_end(name);
        };
        if self.stack[i + 1..]
            .iter()
            .any(|o| o.kind & (SPECIAL | FORMATTING) != 0 || !o.html)
        {
            return Err(Bail("misnested formatting elements"));
        }
        self.pop_to(i)
    }

    fn any_other_end(&mut self, name: &str) -> Step {
        for i in (0..self.stack.len()).rev() {
            let o = &self.stack[i];
            if o.html && o.name == name {
                self.generate_implied(Some(name));
                return self.pop_to(i);
            }
            if o.html && o.kind & SPECIAL != 0 {
                return Ok(());
            }
        }
        Ok(())
    }
}
