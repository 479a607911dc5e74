//! What the server serves when no fault replaces it: in-memory files over a directory, a
//! generated [`LinkGraph`], or nothing.

mod dir;
mod graph;
mod mime;

use std::collections::HashMap;
use std::time::SystemTime;

use bytes::Bytes;

pub use graph::{LinkGraph, LinkStyle};
pub use mime::content_type_for;

pub(crate) use dir::DirSite;
pub use dir::SITE_ORIGIN;

/// The date sent as `Last-Modified` for generated and in-memory content:
/// 2024-01-01T00:00:00Z.
pub const FIXED_LAST_MODIFIED_SECS: u64 = 1_704_067_200;

pub(crate) fn fixed_last_modified() -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(FIXED_LAST_MODIFIED_SECS)
}

/// One resolved resource: what a plain server would answer.
#[derive(Clone, Debug)]
pub(crate) struct Resource {
    pub status: u16,
    pub content_type: String,
    pub body: Bytes,
    pub last_modified: Option<SystemTime>,
    /// For the 301 a directory without its trailing slash gets.
    pub location: Option<String>,
}

impl Resource {
    pub fn ok(content_type: impl Into<String>, body: impl Into<Bytes>) -> Self {
        Resource {
            status: 200,
            content_type: content_type.into(),
            body: body.into(),
            last_modified: Some(fixed_last_modified()),
            location: None,
        }
    }

    pub fn error(status: u16) -> Self {
        let reason = crate::http::reason(status);
        Resource {
            status,
            content_type: "text/html; charset=utf-8".into(),
            body: Bytes::from(format!(
                "<!doctype html>\n<html><head><title>{status} {reason}</title></head>\
                 <body><h1>{status} {reason}</h1></body></html>\n"
            )),
            last_modified: None,
            location: None,
        }
    }

    pub fn redirect(location: String) -> Self {
        Resource {
            location: Some(location),
            ..Resource::error(301)
        }
    }
}

/// The content behind the in-memory files.
#[derive(Clone, Debug, Default)]
pub(crate) enum Backing {
    /// Only the in-memory files; everything else is 404.
    #[default]
    Empty,
    Dir(DirSite),
    Graph(LinkGraph),
}

/// The site: in-memory files (exact paths) first, then the backing.
#[derive(Clone, Debug, Default)]
pub(crate) struct Site {
    pub files: HashMap<String, Resource>,
    pub backing: Backing,
}

impl Site {
    /// Resolves a raw (still percent-encoded) request path. `origin` is `http://` plus the
    /// request's Host, for generated absolute URLs (sitemaps, robots.txt).
    pub async fn resolve(&self, path: &str, query: Option<&str>, origin: &str) -> Resource {
        if let Some(file) = self.files.get(path) {
            return file.clone();
        }
        match &self.backing {
            Backing::Empty => Resource::error(404),
            Backing::Dir(dir) => dir.resolve(path, query, origin).await,
            Backing::Graph(graph) => graph.resolve(path, origin),
        }
    }
}
