//! Links on a page: `<a href>` with a real HTML parser ([`lol_html`], streaming), the
//! first `<base href>`, `rel=nofollow`, `<meta name=robots content=nofollow>`, and each
//! link's text (whitespace collapsed; an image's `alt` or the link's `title` when it has
//! no text).
//!
//! Hrefs are returned as written (entities decoded), not resolved: `<base href>` applies
//! to the whole document even when it comes after a link, so resolution happens once the
//! page is parsed ([`Extracted::base_url`]). Links inside `<script>`, `<style>`,
//! `<template>`'s raw text or comments are not links, and the parser knows it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::LazyLock;

use encoding_rs::Encoding;
use lol_html::html_content::{Element, TextChunk, TextType};
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};
use rip_url::Url;
use serde_json::{Map, Value};

/// The largest link text kept, in characters.
pub const MAX_LINK_TEXT: usize = 500;
/// Links read from one page at most; the rest are ignored (and counted).
pub const MAX_LINKS_PER_PAGE: usize = 100_000;

/// A link as found on the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawLink {
    /// The `href` attribute, entities decoded, not resolved.
    pub href: String,
    /// The link text, whitespace collapsed (or the `alt` of an image inside, or `title`).
    pub text: String,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
    /// Context found around the link by [context rules](crate::context).
    pub raw: Map<String, Value>,
}

/// What a page holds for the crawler.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extracted {
    /// The first `<base href>`, as written.
    pub base: Option<String>,
    /// The links, in document order.
    pub links: Vec<RawLink>,
    /// `<meta name="robots" content="nofollow">` (or `none`): no link on the page is followed.
    pub nofollow_page: bool,
    /// Links past [`MAX_LINKS_PER_PAGE`] that were ignored.
    pub dropped: usize,
}

impl Extracted {
    /// The URL links resolve against: `<base href>` resolved against the page URL when
    /// there is a valid one, else the page URL.
    pub fn base_url(&self, page: &Url) -> Url {
        self.base
            .as_deref()
            .and_then(|b| page.join(b.trim()).ok())
            .filter(|b| matches!(b.scheme(), "http" | "https"))
            .unwrap_or_else(|| page.clone())
    }
}

/// Collapses runs of whitespace into one space and trims, cutting at `MAX_LINK_TEXT`.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_LINK_TEXT));
    for (n, word) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > MAX_LINK_TEXT * 4 {
            break;
        }
    }
    match out.char_indices().nth(MAX_LINK_TEXT) {
        Some((i, _)) => out[..i].to_owned(),
        None => out,
    }
}

fn decode_entities(s: &str) -> String {
    html_escape::decode_html_entities(s).into_owned()
}

/// True when a `rel` value lists `nofollow`.
pub fn rel_nofollow(rel: Option<&str>) -> bool {
    rel.is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("nofollow"))
    })
}

/// True when a robots `<meta>` content forbids following links.
pub fn meta_nofollow(content: &str) -> bool {
    content.split(',').any(|t| {
        let t = t.trim();
        t.eq_ignore_ascii_case("nofollow") || t.eq_ignore_ascii_case("none")
    })
}

#[derive(Default)]
struct Acc {
    out: Extracted,
    /// The link whose text is being collected.
    open: Option<usize>,
    text: String,
    alt: Option<String>,
    title: Option<String>,
}

impl Acc {
    fn close(&mut self) {
        let Some(i) = self.open.take() else { return };
        let mut t = collapse_ws(&decode_entities(&self.text));
        if t.is_empty() {
            t = self
                .alt
                .take()
                .or(self.title.take())
                .map(|s| collapse_ws(&decode_entities(&s)))
                .unwrap_or_default();
        }
        self.out.links[i].text = t;
        self.text.clear();
        self.alt = None;
        self.title = None;
    }
}

/// Extracts links from an HTML body in `encoding` (any encoding: bodies in one that is
/// not ASCII-compatible are decoded to UTF-8 first).
pub fn extract(body: &[u8], encoding: &'static Encoding) -> Extracted {
    match AsciiCompatibleEncoding::new(encoding) {
        Some(enc) => extract_ascii(body, enc),
        None => {
            let (text, _) = encoding.decode_without_bom_handling(body);
            extract_ascii(text.as_bytes(), AsciiCompatibleEncoding::utf_8())
        }
    }
}

/// The selectors the extraction matches, parsed once: lol_html's `element!` and `text!`
/// parse theirs on every call, that is on every page.
struct Selectors {
    base: Selector,
    meta: Selector,
    a: Selector,
    a_img: Selector,
}

static SELECTORS: LazyLock<Selectors> = LazyLock::new(|| {
    let parse = |s: &str| s.parse().expect("the link selectors are valid CSS");
    Selectors {
        base: parse("base[href]"),
        meta: parse("meta[name][content]"),
        a: parse("a[href]"),
        a_img: parse("a[href] img[alt]"),
    }
});

fn extract_ascii(body: &[u8], encoding: AsciiCompatibleEncoding) -> Extracted {
    let sel = &*SELECTORS;
    let on = |selector: &'static Selector, handlers| (Cow::Borrowed(selector), handlers);
    let acc = Rc::new(RefCell::new(Acc::default()));
    let (a1, a2, a3, a4, a5) = (
        acc.clone(),
        acc.clone(),
        acc.clone(),
        acc.clone(),
        acc.clone(),
    );
    let settings = Settings::new()
        .with_encoding(encoding)
        .with_strict(false)
        .with_memory_settings(
            MemorySettings::new()
                .with_max_allowed_memory_usage(64 << 20)
                .with_graceful_bail_out_on_memory_limit_exceeded(true),
        )
        .append_element_content_handler(on(
            &sel.base,
            ElementContentHandlers::default().element(move |el: &mut Element| {
                let mut a = a1.borrow_mut();
                if a.out.base.is_none() {
                    a.out.base = el.get_attribute("href").map(|h| decode_entities(&h));
                }
                Ok(())
            }),
        ))
        .append_element_content_handler(on(
            &sel.meta,
            ElementContentHandlers::default().element(move |el: &mut Element| {
                let is_robots = el
                    .get_attribute("name")
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"));
                if is_robots
                    && el
                        .get_attribute("content")
                        .is_some_and(|c| meta_nofollow(&c))
                {
                    a2.borrow_mut().out.nofollow_page = true;
                }
                Ok(())
            }),
        ))
        .append_element_content_handler(on(
            &sel.a,
            ElementContentHandlers::default().element(move |el: &mut Element| {
                let mut a = a3.borrow_mut();
                a.close();
                if a.out.links.len() >= MAX_LINKS_PER_PAGE {
                    a.out.dropped += 1;
                    return Ok(());
                }
                let href = decode_entities(&el.get_attribute("href").unwrap_or_default());
                let nofollow = rel_nofollow(el.get_attribute("rel").as_deref());
                a.title = el.get_attribute("title");
                a.out.links.push(RawLink {
                    href,
                    nofollow,
                    ..RawLink::default()
                });
                a.open = Some(a.out.links.len() - 1);
                if el.can_have_content() {
                    let a = a3.clone();
                    if let Some(handlers) = el.end_tag_handlers() {
                        handlers.push(Box::new(move |_| {
                            a.borrow_mut().close();
                            Ok(())
                        }));
                    }
                } else {
                    a.close();
                }
                Ok(())
            }),
        ))
        .append_element_content_handler(on(
            &sel.a_img,
            ElementContentHandlers::default().element(move |el: &mut Element| {
                let mut a = a4.borrow_mut();
                if a.open.is_some() && a.alt.is_none() {
                    a.alt = el.get_attribute("alt");
                }
                Ok(())
            }),
        ))
        .append_element_content_handler(on(
            &sel.a,
            ElementContentHandlers::default().text(move |t: &mut TextChunk| {
                if t.text_type() == TextType::Data {
                    let mut a = a5.borrow_mut();
                    if a.open.is_some() && a.text.len() < MAX_LINK_TEXT * 8 {
                        a.text.push_str(t.as_str());
                    }
                }
                Ok(())
            }),
        ));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // A page that drives the parser into an error keeps the links found before it.
    let ok = rewriter.write(body).is_ok();
    if ok {
        let _ = rewriter.end();
    }
    let mut a = acc.borrow_mut();
    a.close();
    std::mem::take(&mut a.out)
}

/// The charset to parse a body with: a BOM, then the `Content-Type` charset, then
/// `<meta charset>` in the first 1024 bytes, else UTF-8.
pub fn charset_for(content_type: Option<&str>, body: &[u8]) -> &'static Encoding {
    if let Some((enc, _)) = Encoding::for_bom(body) {
        return enc;
    }
    content_type
        .and_then(rip_http::decode::header_charset)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| rip_http::decode::meta_charset(body))
        .unwrap_or(encoding_rs::UTF_8)
}

/// True when a response is HTML: by `Content-Type`, or, without one, by its first bytes.
pub fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match content_type {
        Some(ct) => {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("text/html")
                || mime.eq_ignore_ascii_case("application/xhtml+xml")
        }
        None => {
            let head = &body[..body.len().min(512)];
            let start = head
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(head.len());
            let lower: Vec<u8> = head[start..]
                .iter()
                .take(15)
                .map(u8::to_ascii_lowercase)
                .collect();
            lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html")
        }
    }
}

#[cfg(test)]
mod tests;
