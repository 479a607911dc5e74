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
    pub async fn resolve(&self, raw_path: &str, query: Option<&str>) -> Resource {
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
        Resource {
            status: 200,
            content_type: content_type_for(&file).into(),
            body: body.into(),
            last_modified: meta.modified().ok(),
            location: None,
        }
    }
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
