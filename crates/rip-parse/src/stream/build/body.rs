//! The rules for tags in the body: "in body", the table modes, and inline SVG.

use std::borrow::Cow;

use super::Quirks;
use super::{Bail, Builder, Mode, Step, breaks_out, is_table_part};
use super::{CLOSES_P, FORMATTING, HEADING, MARKER, SPECIAL, VOID, kind};
use crate::tag::Tag;
use crate::visit::Visitor;

impl<'a, V: Visitor> Builder<'a, '_, V> {
    pub(super) fn body_start(&mut self, name: Cow<'a, str>, tag: Tag, self_closing: bool) -> Step {
        if self.in_foreign() {
            return self.foreign_start(name, tag, self_closing);
        }
        match self.mode() {
            Mode::Body => self.in_body_start(name, tag, self_closing),
            Mode::Cell if is_table_part(tag) => {
                self.close_cell()?;
                self.body_start(name, tag, self_closing)
            }
            Mode::Template if is_table_part(tag) => Err(Bail("table parts in a template")),
            Mode::Cell | Mode::Template => self.in_body_start(name, tag, self_closing),
            Mode::Table | Mode::TableBody | Mode::Row => self.table_start(name, tag, self_closing),
        }
    }

    fn table_start(&mut self, name: Cow<'a, str>, tag: Tag, self_closing: bool) -> Step {
        use Tag::*;
        let mode = self.mode();
        match (mode, tag) {
            (_, Style) | (_, Script) => self.raw(name, tag, false),
            (Mode::Table, Tbody | Thead | Tfoot) | (Mode::TableBody, Tr) => {
                self.insert(name, tag, true, true)
            }
            (Mode::Row, Td | Th) => self.insert(name, tag, true, true),
            (Mode::Table, Tr | Td | Th) => {
                self.implied(Tbody)?;
                self.body_start(name, tag, self_closing)
            }
            (Mode::TableBody, Td | Th) => {
                self.implied(Tr)?;
                self.body_start(name, tag, self_closing)
            }
            (Mode::TableBody, Tbody | Thead | Tfoot) | (Mode::Row, Tr | Tbody | Thead | Tfoot) => {
                // The open row or body ends; the tag starts the next one.
                self.pop();
                self.body_start(name, tag, self_closing)
            }
            _ => Err(Bail("content in a table outside its cells")),
        }
    }

    /// Closes the open `td` or `th` (a table part's start or end tag ends it).
    fn close_cell(&mut self) -> Step {
        let i = self
            .stack
            .iter()
            .rposition(|o| o.is(Tag::Td) || o.is(Tag::Th))
            .ok_or(Bail("no cell to close"))?;
        self.generate_implied(None);
        self.pop_to(i)
    }

    fn in_body_start(&mut self, name: Cow<'a, str>, tag: Tag, self_closing: bool) -> Step {
        use Tag::*;
        let k = kind(tag);
        match tag {
            Html | Body | Frameset | Head | Caption | Col | Colgroup | Frame | Tbody | Td
            | Tfoot | Th | Thead | Tr | Image | Select | Plaintext | Math | Rb | Rp | Rt | Rtc
            | Option | Optgroup | Isindex => Err(Bail("a tag the streaming pass does not model")),
            Base | Basefont | Bgsound | Link | Meta => self.void(name, tag),
            Title | Textarea => self.raw(name, tag, true),
            Style | Noframes | Noscript | Iframe | Noembed | Script => self.raw(name, tag, false),
            Xmp => {
                self.close_p()?;
                self.raw(name, tag, false)
            }
            Li => self.list_item(name, tag, &[Li]),
            Dd | Dt => self.list_item(name, tag, &[Dd, Dt]),
            Pre | Listing => {
                self.close_p()?;
                self.skip_lf = true;
                self.insert(name, tag, true, true)
            }
            Form => {
                if self.form || self.templates > 0 {
                    return Err(Bail("a nested form, or a form in a template"));
                }
                self.close_p()?;
                self.form = true;
                self.insert(name, tag, true, true)
            }
            Button | Nobr if self.named_in_scope(tag, &name, &[]) => {
                Err(Bail("a nested button or nobr"))
            }
            A if self.formatting_open(A) => self.link_in_link(name),
            Table => {
                if self.named_in_scope(P, "p", &[Button]) {
                    match self.quirks.unwrap_or(Quirks::Yes) {
                        Quirks::No => self.close_p()?,
                        Quirks::Yes => {}
                        Quirks::Unknown => return Err(Bail("a table in a p, in an unknown mode")),
                    }
                }
                self.insert(name, tag, true, true)
            }
            Svg => {
                self.insert(name, tag, false, true)?;
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
                self.insert(name, tag, true, true)
            }
            _ if k & VOID != 0 => {
                if k & CLOSES_P != 0 {
                    self.close_p()?;
                }
                self.insert(name, tag, true, true)?;
                self.pop();
                Ok(())
            }
            _ => {
                if k & CLOSES_P != 0 {
                    self.close_p()?;
                }
                self.insert(name, tag, true, true)
            }
        }
    }

    /// `li`, `dd`, `dt`: an open item of the same list ends first.
    fn list_item(&mut self, name: Cow<'a, str>, tag: Tag, same: &[Tag]) -> Step {
        for i in (0..self.stack.len()).rev() {
            let o = &self.stack[i];
            if o.html && same.contains(&o.tag) {
                let found = o.tag;
                self.generate_implied(Some(found));
                self.pop_until(found, found.name())?;
                break;
            }
            if o.html && o.kind & SPECIAL != 0 && !matches!(o.tag, Tag::Address | Tag::Div | Tag::P)
            {
                break;
            }
        }
        self.close_p()?;
        self.insert(name, tag, true, true)
    }

    /// `<a>` inside an open link: the adoption agency's simple case closes that link
    /// first, as `</a>` would (or the page goes to the tree), then the new one opens.
    fn link_in_link(&mut self, name: Cow<'a, str>) -> Step {
        self.formatting_end("a", Tag::A)?;
        self.insert(name, Tag::A, true, true)
    }

    /// An open formatting element `tag` since the last marker.
    fn formatting_open(&self, tag: Tag) -> bool {
        if self.none_open(tag) {
            return false;
        }
        for o in self.stack.iter().rev() {
            if o.is(tag) {
                return true;
            }
            if o.html && o.kind & MARKER != 0 {
                return false;
            }
        }
        false
    }

    fn foreign_start(&mut self, name: Cow<'a, str>, tag: Tag, self_closing: bool) -> Step {
        if breaks_out(tag) {
            return Err(Bail("HTML, or a script, inside SVG"));
        }
        self.insert(name, tag, false, true)?;
        if self_closing {
            self.pop();
        }
        Ok(())
    }

    pub(super) fn body_end(&mut self, name: &str, tag: Tag) -> Step {
        use Tag::*;
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
            Mode::Table | Mode::TableBody | Mode::Row => match tag {
                Table | Tbody | Thead | Tfoot | Tr if self.in_table_scope(tag) => {
                    self.pop_until(tag, name)
                }
                _ => Err(Bail("an end tag in a table outside its cells")),
            },
            Mode::Cell => match tag {
                Td | Th if self.in_table_scope(tag) => {
                    self.generate_implied(None);
                    self.pop_until(tag, name)
                }
                Table | Tbody | Thead | Tfoot | Tr if self.in_table_scope(tag) => {
                    self.close_cell()?;
                    self.body_end(name, tag)
                }
                Td | Th | Table | Tbody | Thead | Tfoot | Tr | Body | Caption | Col | Colgroup
                | Html => Err(Bail("an unusual end tag in a table cell")),
                _ => self.in_body_end(name, tag),
            },
            Mode::Body | Mode::Template => self.in_body_end(name, tag),
        }
    }

    fn in_body_end(&mut self, name: &str, tag: Tag) -> Step {
        use Tag::*;
        let k = kind(tag);
        match tag {
            Template if self.templates > 0 => self.pop_until(tag, name),
            Template => Ok(()),
            Body | Html if self.named_in_scope(Body, "body", &[]) => Ok(()),
            P if self.named_in_scope(P, name, &[Button]) => {
                self.generate_implied(Some(P));
                self.pop_until(P, name)
            }
            Li if self.named_in_scope(Li, name, &[Ol, Ul]) => {
                self.generate_implied(Some(Li));
                self.pop_until(Li, name)
            }
            Dd | Dt if self.named_in_scope(tag, name, &[]) => {
                self.generate_implied(Some(tag));
                self.pop_until(tag, name)
            }
            Li | Dd | Dt => Ok(()),
            Form => self.form_end(),
            Body | Html | P | Br | Select | Option | Optgroup => {
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
            _ if k & FORMATTING != 0 => self.formatting_end(name, tag),
            _ if k & (CLOSES_P | MARKER) != 0 || tag == Button => {
                if self.named_in_scope(tag, name, &[]) {
                    self.generate_implied(None);
                    self.pop_until(tag, name)?;
                }
                Ok(())
            }
            _ => self.any_other_end(name, tag),
        }
    }

    fn form_end(&mut self) -> Step {
        if !std::mem::take(&mut self.form) || !self.named_in_scope(Tag::Form, "form", &[]) {
            return Ok(());
        }
        self.generate_implied(None);
        if self.current_is(Tag::Form) {
            self.pop();
            Ok(())
        } else {
            Err(Bail("a form closed out of turn"))
        }
    }

    /// The end tag of a formatting element: the adoption agency's simple case (the
    /// element and what is above it are popped), or a bail.
    fn formatting_end(&mut self, name: &str, tag: Tag) -> Step {
        if self.none_open(tag) {
            // What any_other_end does when no such element is open.
            return Ok(());
        }
        let mut found = None;
        for (i, o) in self.stack.iter().enumerate().rev() {
            if o.is(tag) {
                found = Some(i);
                break;
            }
            if o.html && o.kind & MARKER != 0 {
                break;
            }
        }
        let Some(i) = found else {
            return self.any_other_end(name, tag);
        };
        if self.stack[i + 1..]
            .iter()
            .any(|o| o.kind & (SPECIAL | FORMATTING) != 0 || !o.html)
        {
            return Err(Bail("misnested formatting elements"));
        }
        self.pop_to(i)
    }

    fn any_other_end(&mut self, name: &str, tag: Tag) -> Step {
        if self.none_open(tag) {
            return Ok(());
        }
        for i in (0..self.stack.len()).rev() {
            let o = &self.stack[i];
            if o.is_named(tag, name) {
                self.generate_implied(Some(tag));
                return self.pop_to(i);
            }
            if o.html && o.kind & SPECIAL != 0 {
                return Ok(());
            }
        }
        Ok(())
    }
}
