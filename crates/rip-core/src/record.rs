//! The [`Record`] enum: one NDJSON line, tagged by `_type`.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::accounting::{Ledger, Summary};
use crate::fetch::{Failure, Page, Ref};
use crate::outcome::{Doc, ErrorDoc, Expected};

/// One line of a stage's input or output. The `_type` field names the variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "_type", rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)] // records are built one at a time, never stored in bulk
pub enum Record {
    /// `ref`: a URL to fetch.
    Ref(Ref),
    /// `page`: a fetched response.
    Page(Page),
    /// `failure`: a failure as data.
    Failure(Failure),
    /// `doc`: an extracted document.
    Doc(Doc),
    /// `error`: an error document.
    Error(ErrorDoc),
    /// `expected`: a known gap.
    Expected(Expected),
    /// `ledger`: URLs that entered the pipeline.
    Ledger(Ledger),
    /// `summary`: a stage's closing account.
    Summary(Summary),
}

impl Record {
    /// The kind of this record.
    pub fn kind(&self) -> Kind {
        match self {
            Self::Ref(_) => Kind::Ref,
            Self::Page(_) => Kind::Page,
            Self::Failure(_) => Kind::Failure,
            Self::Doc(_) => Kind::Doc,
            Self::Error(_) => Kind::Error,
            Self::Expected(_) => Kind::Expected,
            Self::Ledger(_) => Kind::Ledger,
            Self::Summary(_) => Kind::Summary,
        }
    }

    /// The URL a record accounts for, for the kinds that account for one.
    pub fn url(&self) -> Option<&str> {
        match self {
            Self::Ref(r) => Some(&r.url),
            Self::Page(p) => Some(&p.url),
            Self::Failure(f) => Some(&f.url),
            Self::Doc(d) => Some(&d.url),
            Self::Error(e) => Some(&e.url),
            Self::Expected(e) => Some(&e.url),
            Self::Ledger(_) | Self::Summary(_) => None,
        }
    }
}

macro_rules! from_variant {
    ($($ty:ident => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for Record {
            fn from(r: $ty) -> Self {
                Self::$variant(r)
            }
        }
    )*};
}

from_variant!(
    Ref => Ref,
    Page => Page,
    Failure => Failure,
    Doc => Doc,
    ErrorDoc => Error,
    Expected => Expected,
    Ledger => Ledger,
    Summary => Summary,
);

/// The `_type` of a line, known or not.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `ref`
    Ref,
    /// `page`
    Page,
    /// `failure`
    Failure,
    /// `doc`
    Doc,
    /// `error`
    Error,
    /// `expected`
    Expected,
    /// `ledger`
    Ledger,
    /// `summary`
    Summary,
    /// A kind this version does not know; it passes through every stage unchanged.
    Other(String),
}

impl Kind {
    /// The kind named by a `_type` value.
    pub fn from_type(name: &str) -> Self {
        match name {
            "ref" => Self::Ref,
            "page" => Self::Page,
            "failure" => Self::Failure,
            "doc" => Self::Doc,
            "error" => Self::Error,
            "expected" => Self::Expected,
            "ledger" => Self::Ledger,
            "summary" => Self::Summary,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The `_type` value.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Ref => "ref",
            Self::Page => "page",
            Self::Failure => "failure",
            Self::Doc => "doc",
            Self::Error => "error",
            Self::Expected => "expected",
            Self::Ledger => "ledger",
            Self::Summary => "summary",
            Self::Other(name) => name,
        }
    }

    /// True for the kinds that end a URL's journey: `doc`, `error`, `expected`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Doc | Self::Error | Self::Expected)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
