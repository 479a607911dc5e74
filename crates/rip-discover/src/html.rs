//! What the crawl asks of a response before reading its links: is it HTML, and in which
//! charset (link extraction itself is [`rip_links`]).

use encoding_rs::Encoding;

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
mod tests {
    use super::*;

    #[test]
    fn html_detection() {
        assert!(is_html(Some("text/html"), b""));
        assert!(is_html(Some("Text/HTML; charset=utf-8"), b""));
        assert!(!is_html(Some("image/png"), b"<html>"));
        assert!(is_html(None, b"\n  <!DOCTYPE html><html>"));
        assert!(!is_html(None, b"\x89PNG"));
    }

    #[test]
    fn charset_from_bom_header_meta() {
        assert_eq!(charset_for(None, b"\xFF\xFE<"), encoding_rs::UTF_16LE);
        assert_eq!(
            charset_for(Some("text/html; charset=ISO-8859-1"), b""),
            encoding_rs::WINDOWS_1252
        );
        assert_eq!(
            charset_for(Some("text/html"), b"<meta charset=\"windows-1252\">"),
            encoding_rs::WINDOWS_1252
        );
        assert_eq!(charset_for(None, b"<p>"), encoding_rs::UTF_8);
    }
}
