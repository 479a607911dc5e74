#![deny(missing_docs)]
//! `rip-parse`: `page` records in, `doc` records out.
//!
//! Each HTML page becomes one `doc`; a page that cannot be parsed, or whose doc breaks
//! a rule, becomes one `failure` with `phase: parse`. Every other record passes
//! through unchanged, and the output ends with a `summary`. The page's context
//! (`depth`, `parent`, `linkText`, `raw`, `title`, `resolves`), `attempt`,
//! `httpAttempts` and `errors` stay on the doc or failure.
//!
//! # Without rules: generic extraction
//!
//! Every HTML page gives a doc of concept `page` whose `name` is the `<title>` and whose
//! fields are `canonical`, `lang`, `description`, `keywords`, `headings`
//! (`[{level, text, id?}]`), `text` (the main content's text: the `<main>` element, or
//! the body less header, nav, footer and aside), `links` (`[{href, text, rel?}]`, every
//! `<a href>` of the page resolved against `<base href>` and the page URL) and, with
//! `markdown`, the main content as Markdown; and the article's metadata, `headline`,
//! `authors`, `published`, `modified`, `siteName`, `excerpt`, `image`, with the page's
//! `structured` data (JSON-LD, OpenGraph, Twitter cards, microdata). See [`generic`] and
//! [`generic::meta`].
//!
//! # With rules
//!
//! A TOML rules file ([`rules`]) routes each page to a concept (by URL regex, CSS
//! selector and/or text, in the order written, with an `unknown` fallback), extracts
//! the concept's fields (inheriting through `extends`), and checks the doc against the
//! concept's JSON Schema.
//!
//! # Output schema
//!
//! [`OutputSchema`] (`--output-schema FILE`, `--on-schema-error skip|warn|halt`) is a
//! JSON Schema every doc must satisfy, whatever its concept and with or without rules,
//! checked after the concept's own; see [`schema`].
//!
//! # MediaWiki pages
//!
//! A page whose `Content-Type` is `text/x-wiki` (a wiki page as `rip-fetch` writes it)
//! is parsed as wikitext ([`wiki`]): without rules, a doc of concept `page` named by the
//! page's title with `infobox`, `sections`, `categories`, `links` and `text`;
//! with rules, concepts match it by `category` or `infobox` and fields read `infobox`
//! parameters, `section`s or `wiki` page values.
//!
//! # Pages that are not HTML
//!
//! A page whose `Content-Type` is not HTML nor wikitext (an image, a PDF, JSON, plain
//! text; or, with no `Content-Type`, a body that does not start with markup) becomes a
//! failure `parse.notHtml` (VALIDATION, not retryable) whose message names the media
//! type and size. A site whose non-HTML pages are known gaps says so in the
//! `rip-route` policy (`code = "parse.notHtml"`, `route = "expected"`). With
//! `keep_other` (`--keep-other`) such a page becomes a doc of concept `unknown` with
//! `contentType` and `bytes` instead, and no rule applies to it. A page labelled HTML whose body is binary (NUL bytes) or not
//! valid base64, or is larger than `max_body`, is a failure (`parse.body`). A base64
//! HTML body is decoded by its charset (the page's `charset`, a BOM, or `<meta
//! charset>`); bytes invalid in that charset become U+FFFD, as in a browser.
//!
//! # Failures
//!
//! | code | category | when |
//! |---|---|---|
//! | `parse.record` | VALIDATION | the `page` record lacks a field (it has a `url` to account it under) |
//! | `parse.body` | VALIDATION, RESOURCE | binary or bad base64 body; over the size limit (RESOURCE) |
//! | `parse.notHtml` | VALIDATION | the page is not HTML nor wikitext (unless `keep_other`) |
//! | `parse.url` | VALIDATION | neither `finalUrl` nor `url` is a URL |
//! | `parse.html` | VALIDATION | pathological HTML: nesting past `max_depth`, or parsing past its time budget |
//! | `parse.rule` | VALIDATION | a required field is missing, or a value is not of its `type` |
//! | `parse.schema` | VALIDATION | the doc breaks its concept's JSON Schema or the output schema (`onSchemaError = "skip"` or `"halt"`) |
//!
//! # Parallelism
//!
//! Pages are parsed on a rayon pool ([`run`]), output in input order unless
//! `unordered`, with a bounded window of pages in flight.
//!
//! # Page flavours
//!
//! The flavour of a page is decided in [`page::body`]; extraction for HTML lives in
//! [`generic`], [`extract`] and [`markdown`] and works on a parsed tree; MediaWiki
//! wikitext is [`page::Body::Wiki`], read by [`wiki`]; both are dispatched in
//! [`process::page_outcome`].

pub mod dom;
pub mod extract;
pub mod generic;
pub mod markdown;
pub mod output;
pub mod page;
pub mod process;
mod record;
// `crate::resolve::join`: string joins of links against their base (rip-url).
use rip_url::join as resolve;
pub mod rules;
mod run;
pub mod schema;
pub mod stream;
pub mod tag;
pub mod visit;
pub mod wiki;

pub use process::{ExtractOptions, GENERIC_CONCEPT, NOT_HTML, Outcome};
pub use rules::{OnSchemaError, Rules, RulesError};
pub use run::{Config, OnProgress, Report, RunError, Stats, run};
pub use schema::{OutputSchema, SchemaError, SchemaFileError};
