//! A page's links, their strings kept in one buffer.
//!
//! The Rust documentation's pages carry about a hundred links each: as three `String`s a
//! link (href, text, rel), a page's links were some three hundred allocations, freed
//! together when the doc had been written, the costliest way for the allocator. Here a
//! page's links are ranges into one string, filled as the links are read: a link's slot
//! is taken when it opens (links keep the order they open in, even nested in a tree) and
//! its text is added when it closes.

use std::cell::Cell;
use std::ops::Range;

/// A link of the page, as written in a doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Link<'a> {
    /// The `href`, resolved against the base URL.
    pub href: &'a str,
    /// The link's text, whitespace collapsed.
    pub text: &'a str,
    /// The `rel` attribute (e.g. `nofollow`), when not blank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<&'a str>,
}

/// Where a link's strings are in [`Links`]' buffer.
#[derive(Debug, Clone, Default)]
struct Slot {
    href: Range<usize>,
    text: Range<usize>,
    rel: Option<Range<usize>>,
}

/// A page's links, in the order they open.
#[derive(Debug, Default)]
pub struct Links {
    buf: String,
    slots: Vec<Slot>,
}

thread_local! {
    /// The buffers of the last page's links on this thread, for the next page's.
    static SPARE: Cell<Links> = const {
        Cell::new(Links {
            buf: String::new(),
            slots: Vec::new(),
        })
    };
}

/// Bytes of links' strings past which a page's buffer is not kept for the next one.
const SPARE_MAX: usize = 1 << 20;

impl Links {
    /// No links yet, in the buffers [`Links::recycle`] left on this thread (if any).
    pub fn from_spare() -> Self {
        SPARE.take()
    }

    /// Leaves the buffers, emptied, for the next page's links on this thread (unless
    /// they are large): a page's links are a few kilobytes freed at the end of every
    /// page, which the allocator would return to the system and take back again.
    pub fn recycle(mut self) {
        if self.buf.capacity() <= SPARE_MAX {
            self.buf.clear();
            self.slots.clear();
            SPARE.set(self);
        }
    }

    /// The number of links.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No links.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The links, in order.
    pub fn iter(&self) -> impl Iterator<Item = Link<'_>> {
        self.slots.iter().map(|s| Link {
            href: &self.buf[s.href.clone()],
            text: &self.buf[s.text.clone()],
            rel: s.rel.clone().map(|r| &self.buf[r]),
        })
    }

    /// Room for `bytes` of links' strings in all.
    pub fn reserve(&mut self, bytes: usize) {
        self.buf.reserve(bytes.saturating_sub(self.buf.len()));
    }

    /// The bytes of the links' strings.
    pub fn text_len(&self) -> usize {
        self.buf.len()
    }

    /// A link with its text: [`Links::open`] and [`Links::close`] at once.
    pub fn push(&mut self, link: Link<'_>) {
        let slot = self.open(link.href, link.rel);
        self.close(slot, link.text);
    }

    /// A link opens with its resolved `href` and its `rel` attribute (left out when
    /// blank): its slot, for [`Links::close`].
    pub fn open(&mut self, href: &str, rel: Option<&str>) -> usize {
        let slot = self.open_resolved(
            |buf| {
                buf.push_str(href);
                true
            },
            rel,
        );
        slot.expect("an href given resolves")
    }

    /// A link opens whose `href` `resolve` appends to the buffer (false: it does not
    /// resolve, and the link is left out), with its `rel` attribute: its slot.
    pub fn open_resolved(
        &mut self,
        resolve: impl FnOnce(&mut String) -> bool,
        rel: Option<&str>,
    ) -> Option<usize> {
        let start = self.buf.len();
        if !resolve(&mut self.buf) {
            self.buf.truncate(start);
            return None;
        }
        let href = start..self.buf.len();
        let rel = rel.filter(|r| !r.trim().is_empty()).map(|r| self.add(r));
        self.slots.push(Slot {
            href,
            text: 0..0,
            rel,
        });
        Some(self.slots.len() - 1)
    }

    /// The link in `slot` closes with its text.
    pub fn close(&mut self, slot: usize, text: &str) {
        let text = self.add(text);
        self.slots[slot].text = text;
    }

    fn add(&mut self, s: &str) -> Range<usize> {
        let start = self.buf.len();
        self.buf.push_str(s);
        start..self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recycled_links_come_back_empty_with_their_room() {
        let mut links = Links::from_spare();
        links.push(Link {
            href: "http://h/a",
            text: "A",
            rel: Some("x"),
        });
        let room = links.buf.capacity();
        links.recycle();
        let again = Links::from_spare();
        assert!(again.is_empty() && again.buf.is_empty());
        assert_eq!(again.buf.capacity(), room);
        // Taken: the next one starts with nothing (until this one is recycled).
        assert_eq!(Links::from_spare().buf.capacity(), 0);
    }

    #[test]
    fn links_keep_their_order_and_strings_nested_or_not() {
        let mut links = Links::default();
        let outer = links.open("http://h/a", Some("nofollow"));
        let inner = links.open("http://h/b", Some(" \t"));
        links.close(inner, "B");
        links.push(Link {
            href: "http://h/c",
            text: "",
            rel: None,
        });
        links.close(outer, "A b");
        let got: Vec<Link<'_>> = links.iter().collect();
        assert_eq!(
            got,
            [
                Link {
                    href: "http://h/a",
                    text: "A b",
                    rel: Some("nofollow")
                },
                Link {
                    href: "http://h/b",
                    text: "B",
                    rel: None
                },
                Link {
                    href: "http://h/c",
                    text: "",
                    rel: None
                },
            ]
        );
        assert_eq!(links.len(), 3);
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            r#"[{"href":"http://h/a","text":"A b","rel":"nofollow"},{"href":"http://h/b","text":"B"},{"href":"http://h/c","text":""}]"#
        );
    }
}
