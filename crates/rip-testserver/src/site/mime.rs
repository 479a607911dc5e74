//! `Content-Type` by file extension.

use std::path::Path;

/// The `Content-Type` the server sends for a file name, by its extension (case-insensitive).
/// HTML carries no charset parameter (as nginx serves it by default), so a page's own
/// `<meta charset>` decides; other text types carry `charset=utf-8`. Unknown extensions are
/// `application/octet-stream`.
pub fn content_type_for(path: impl AsRef<Path>) -> &'static str {
    let ext = path
        .as_ref()
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => "text/html",
        Some("txt") => "text/plain; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("ndjson" | "jsonl") => "application/x-ndjson",
        Some("xml") => "application/xml",
        Some("rss") => "application/rss+xml",
        Some("atom") => "application/atom+xml",
        Some("csv") => "text/csv; charset=utf-8",
        Some("md") => "text/markdown; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ico") => "image/x-icon",
        Some("pdf") => "application/pdf",
        Some("gz") => "application/gzip",
        Some("zip") => "application/zip",
        Some("wasm") => "application/wasm",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_extension() {
        assert_eq!(content_type_for("a/index.HTML"), "text/html");
        assert_eq!(content_type_for("robots.txt"), "text/plain; charset=utf-8");
        assert_eq!(content_type_for("sitemap.xml"), "application/xml");
        assert_eq!(content_type_for("sitemap.xml.gz"), "application/gzip");
        assert_eq!(content_type_for("x.png"), "image/png");
        assert_eq!(content_type_for("Makefile"), "application/octet-stream");
    }
}
