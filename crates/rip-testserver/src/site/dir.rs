//! Serving a directory without ever escaping it.

use std::io;
use std::path::{Path, PathBuf};

use super::{Resource, content_type_for};
use crate::http::percent_decode;

/// A directory served as a static site.
#[derive(Clone, Debug)]
pub(crate) struct DirSite {
    /// Canonical (absolute, symlinks resolved), so that resolved files can be checked to lie
    /// inside it.
    root: PathBuf,
}

/// Why a request path was refused before touching the file system.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A `%` not followed by two hex digits, or bytes that are not UTF-8 once decoded.
    Encoding,
    /// A NUL byte or a backslash.
    Character,
    /// A `..` segment (literal or encoded).
    DotDot,
}

impl DirSite {
    pub fn new(root: &Path) -> io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(DirSite { root })
    }

    /// 200 with the file; 301 to add the slash to a directory path; `index.html` for a
    /// directory path; 400 for a refused path; 404 for anything missing or outside the root.
    /// In `.html`, `.txt` and `.xml` files, [`SITE_ORIGIN`] is replaced by `origin`.
    pub async fn resolve(&self, raw_path: &str, query: Option<&str>, origin: &str) -> Resource {
        let Ok(relative) = safe_relative_path(raw_path) else {
            return Resource::error(400);
        };
        let Ok(found) = tokio::fs::canonicalize(self.root.join(&relative)).await else {
            return Resource::error(404);
        };
        // A symlink inside the root may point outside it.
        if !found.starts_with(&self.root) {
            return Resource::error(404);
        }
        let Ok(meta) = tokio::fs::metadata(&found).await else {
            return Resource::error(404);
        };
        let file = if meta.is_dir() {
            if !raw_path.ends_with('/') {
                let location = match query {
                    Some(q) => format!("{raw_path}/?{q}"),
                    None => format!("{raw_path}/"),
                };
                return Resource::redirect(location);
            }
            found.join("index.html")
        } else {
            found
        };
        let Ok(meta) = tokio::fs::metadata(&file).await else {
            return Resource::error(404);
        };
        if !meta.is_file() {
            return Resource::error(404);
        }
        let Ok(body) = tokio::fs::read(&file).await else {
            return Resource::error(404);
        };
        let body = substitute_origin(&file, body, origin);
        Resource {
            status: 200,
            content_type: content_type_for(&file).into(),
            body: body.into(),
            last_modified: meta.modified().ok(),
            location: None,
        }
    }
}

/// The placeholder that files of a served directory use for the server's own origin
/// (absolute URLs in sitemaps, robots.txt `Sitemap:` lines, canonical links), since the
/// port is only known once the server runs. Replaced byte for byte in `.html`, `.htm`,
/// `.txt` and `.xml` files by `http://` plus the request's `Host`.
pub const SITE_ORIGIN: &str = "http://SITE_ORIGIN";

fn substitute_origin(file: &Path, body: Vec<u8>, origin: &str) -> Vec<u8> {
    let text_like = file.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "html" | "htm" | "txt" | "xml"
        )
    });
    let needle = SITE_ORIGIN.as_bytes();
    if !text_like || !body.windows(needle.len()).any(|w| w == needle) {
        return body;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut rest = &body[..];
    while let Some(i) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(origin.as_bytes());
        rest = &rest[i + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Turns a raw request path into a relative path made only of normal segments, or refuses
/// it. Empty and `.` segments are dropped, so `//etc/passwd` is `etc/passwd` under the root.
pub(crate) fn safe_relative_path(raw_path: &str) -> Result<PathBuf, Refused> {
    let decoded = percent_decode(raw_path).ok_or(Refused::Encoding)?;
    let decoded = String::from_utf8(decoded).map_err(|_| Refused::Encoding)?;
    if decoded.contains(['\0', '\\']) {
        return Err(Refused::Character);
    }
    let mut relative = PathBuf::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(Refused::DotDot),
            normal => relative.push(normal),
        }
    }
    Ok(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_paths() {
        assert_eq!(safe_relative_path("/").unwrap(), PathBuf::new());
        assert_eq!(
            safe_relative_path("/a/b.html").unwrap(),
            PathBuf::from("a/b.html")
        );
        assert_eq!(
            safe_relative_path("//etc/./passwd").unwrap(),
            PathBuf::from("etc/passwd")
        );
        assert_eq!(
            safe_relative_path("/caf%C3%A9.html").unwrap(),
            PathBuf::from("café.html")
        );
        assert!(safe_relative_path("/a").unwrap().is_relative());
    }

    #[test]
    fn origin_placeholder_is_replaced_in_text_files_only() {
        let body = b"<a href=\"http://SITE_ORIGIN/x\">http://SITE_ORIGIN</a>".to_vec();
        let out = substitute_origin(Path::new("a.html"), body.clone(), "http://127.0.0.1:9");
        assert_eq!(
            out,
            b"<a href=\"http://127.0.0.1:9/x\">http://127.0.0.1:9</a>"
        );
        assert_eq!(
            substitute_origin(Path::new("a.png"), body.clone(), "http://h"),
            body
        );
        let bytes = b"caf\xe9 http://SITE_ORIGIN/s.xml".to_vec();
        assert_eq!(
            substitute_origin(Path::new("robots.TXT"), bytes, "http://h"),
            b"caf\xe9 http://h/s.xml"
        );
    }

    #[test]
    fn traversal_is_refused() {
        for bad in [
            "/../etc/passwd",
            "/a/../../b",
            "/%2e%2e/etc/passwd",
            "/%2E%2E%2Fetc",
            "/a/%2e%2e",
            "/..",
        ] {
            assert_eq!(safe_relative_path(bad), Err(Refused::DotDot), "{bad}");
        }
    }

    #[test]
    fn bad_bytes_are_refused() {
        assert_eq!(safe_relative_path("/a%00b"), Err(Refused::Character));
        assert_eq!(safe_relative_path("/a%5c..%5cb"), Err(Refused::Character));
        assert_eq!(safe_relative_path("/a%zz"), Err(Refused::Encoding));
        assert_eq!(safe_relative_path("/a%"), Err(Refused::Encoding));
        assert_eq!(safe_relative_path("/%ff"), Err(Refused::Encoding));
    }
}
