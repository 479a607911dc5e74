//! One page in, one outcome out: the work each parallel task does.
//!
//! The order of things for a page: decode the record; read the body (HTML or not);
//! parse the HTML within limits; route it to a concept (or take the generic path);
//! extract the fields; validate against the concept's schema. Anything that goes
//! wrong becomes a `failure` record carrying the page's context, never a panic.

use chrono::Utc;
use rip_core::{Doc, ErrorCategory, ErrorEntry, Failure, Page, Phase};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dom::{self, ParseLimits};
use crate::extract::{self, BrokenRules, Extracted, PageView, RulesWalk};
use crate::generic;
use crate::page::{self, Body, BodyError};
use crate::rules::{Concept, OnSchemaError, Rules};
use crate::schema::OutputSchema;
use crate::stream::Bail;
use crate::wiki;

/// The `operation` of the error entries this stage writes.
pub const OPERATION: &str = "rip-parse";

/// The code of the failure a page that is not HTML becomes (unless `keep_other`).
pub const NOT_HTML: &str = "parse.notHtml";

/// The concept of docs made without rules.
pub const GENERIC_CONCEPT: &str = "page";

/// How pages are turned into docs.
#[derive(Debug, Clone)]
pub struct ExtractOptions {
    /// Rules to route and extract with; generic extraction when `None`.
    pub rules: Option<Arc<Rules>>,
    /// Add the main content as Markdown to generic docs.
    pub markdown: bool,
    /// Limits on parsing one page.
    pub limits: ParseLimits,
    /// Bodies larger than this (bytes, decoded) are refused.
    pub max_body: usize,
    /// Pages that are not HTML (nor wikitext) become `unknown` docs with `contentType`
    /// and `bytes`, instead of `parse.notHtml` failures (`--keep-other`).
    pub keep_other: bool,
    /// A JSON Schema every doc must satisfy (`--output-schema`), checked after the
    /// concept's own.
    pub output_schema: Option<OutputSchema>,
    /// Read pages in one streaming pass where they allow it ([`crate::stream`]);
    /// `false` (`--no-stream`) builds a tree for every page.
    pub stream: bool,
    /// How many pages were read each way.
    pub paths: Arc<ParsePaths>,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        Self {
            rules: None,
            markdown: false,
            limits: ParseLimits::default(),
            max_body: 32 << 20,
            keep_other: false,
            output_schema: None,
            stream: true,
            paths: Arc::default(),
        }
    }
}

/// How many HTML pages were read in the streaming pass, and how many from a tree
/// (the streaming pass gave them up, rules needed a tree, or `--no-stream`).
#[derive(Debug, Default)]
pub struct ParsePaths {
    /// Read in one streaming pass.
    pub streamed: AtomicU64,
    /// Read from a tree.
    pub tree: AtomicU64,
}

impl ParsePaths {
    fn count(&self, streamed: bool) {
        let n = if streamed { &self.streamed } else { &self.tree };
        n.fetch_add(1, Ordering::Relaxed);
    }
}

/// What became of one `page` line.
#[derive(Debug)]
pub enum Outcome {
    /// A doc; `warnings` are schema violations let through by `onSchemaError = "warn"`.
    Doc {
        /// The doc.
        doc: Box<Doc>,
        /// Its `headings` and `links`, when they are kept typed, out of `doc.fields`, until
        /// it is written ([`generic::Generic::into_fields_and_typed`]);
        /// [`Outcome::into_doc`] puts them back.
        typed: generic::Typed,
        /// Messages for stderr.
        warnings: Vec<String>,
    },
    /// A failure with `phase: parse`; `halt` when `onSchemaError = "halt"` asks the
    /// run to stop.
    Failure {
        /// The failure.
        failure: Box<Failure>,
        /// Stop the run after writing it.
        halt: bool,
    },
    /// The line is not a page record and has no `url` to account it under: reported
    /// as a bad input line.
    BadRecord(String),
}

impl Outcome {
    /// A doc as a whole (its typed fields in its fields), if the outcome is one.
    pub fn into_doc(self) -> Option<Doc> {
        match self {
            Outcome::Doc { mut doc, typed, .. } => {
                typed.put_into(&mut doc.fields);
                Some(*doc)
            }
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct UrlOnly {
    url: String,
}

/// Turns one `page` line into its outcome.
pub fn page_line(opts: &ExtractOptions, text: &str) -> Outcome {
    match crate::record::page(text) {
        Ok(page) => page_outcome(opts, page),
        Err(e) => match serde_json::from_str::<UrlOnly>(text) {
            // A page we cannot read but can name: account for its URL with a failure.
            Ok(UrlOnly { url }) => {
                let entry = entry("parse.record", format!("not a valid `page` record: {e}"), 1);
                let mut f = Failure::new(url, ErrorCategory::Validation, Phase::Parse, entry);
                f.failed_at = Some(Utc::now());
                Outcome::Failure {
                    failure: Box::new(f),
                    halt: false,
                }
            }
            Err(_) => Outcome::BadRecord(format!("bad `page` record: {e}")),
        },
    }
}

/// The outcome for a page whose processing panicked (a bug): a failure when the
/// line names a URL, so that the URL is still accounted for.
pub fn panicked(text: &str, panic: &(dyn std::any::Any + Send)) -> Outcome {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    let message = format!("internal error while parsing (please report it): {what}");
    match serde_json::from_str::<Page>(text) {
        Ok(page) => fail(page, ErrorCategory::Unknown, "parse.internal", message),
        Err(_) => match serde_json::from_str::<UrlOnly>(text) {
            Ok(UrlOnly { url }) => {
                let e = entry("parse.internal", message, 1);
                Outcome::Failure {
                    failure: Box::new(Failure::new(url, ErrorCategory::Unknown, Phase::Parse, e)),
                    halt: false,
                }
            }
            Err(_) => Outcome::BadRecord(message),
        },
    }
}

fn entry(code: &str, message: String, round: u32) -> ErrorEntry {
    let mut e = ErrorEntry::new(code, message, OPERATION);
    e.attempt = Some(round);
    e
}

/// A failure of `page` in this stage, carrying its context and error history.
pub fn failure(page: Page, category: ErrorCategory, code: &str, message: String) -> Failure {
    let round = page.attempt + 1;
    let mut f = Failure::new(
        page.url,
        category,
        Phase::Parse,
        entry(code, message, round),
    );
    f.errors = page.errors.into_iter().chain(f.errors).collect();
    f.status = Some(page.status);
    f.attempt = round;
    f.http_attempts = page.http_attempts;
    f.context = page.context;
    f.final_url = Some(page.final_url);
    f.content_type = page.content_type;
    f.failed_at = Some(Utc::now());
    f
}

fn fail(page: Page, category: ErrorCategory, code: &str, message: String) -> Outcome {
    Outcome::Failure {
        failure: Box::new(failure(page, category, code, message)),
        halt: false,
    }
}

fn doc(
    page: Page,
    concept: &str,
    id: Option<String>,
    name: Option<String>,
    fields: Map<String, Value>,
) -> Doc {
    Doc {
        url: page.url,
        concept: concept.to_owned(),
        id,
        name,
        context: page.context,
        attempt: page.attempt,
        http_attempts: Some(page.http_attempts),
        elapsed_ms: Some(page.elapsed_ms),
        site_fetch: page.site_fetch,
        errors: page.errors,
        fields,
    }
}

/// Turns a decoded page into its outcome, its doc checked against the output schema.
pub fn page_outcome(opts: &ExtractOptions, page: Page) -> Outcome {
    let Some(schema) = &opts.output_schema else {
        return outcome(opts, page);
    };
    let meta = Meta {
        status: page.status,
        final_url: page.final_url.clone(),
        content_type: page.content_type.clone(),
    };
    match outcome(opts, page) {
        Outcome::Doc {
            mut doc,
            typed,
            warnings,
        } => {
            typed.put_into(&mut doc.fields);
            let what = format!(
                "concept `{}`: the doc breaks the output schema {}",
                doc.concept,
                schema.path.display()
            );
            check(
                &schema.validator,
                schema.on_error,
                &what,
                *doc,
                meta,
                warnings,
            )
        }
        other => other,
    }
}

/// Turns a decoded page into its outcome, before the output schema.
fn outcome(opts: &ExtractOptions, page: Page) -> Outcome {
    let body = match page::body(&page, opts.max_body) {
        Ok(b) => b,
        Err(e) => {
            let category = match e {
                BodyError::TooLarge { .. } => ErrorCategory::Resource,
                _ => ErrorCategory::Validation,
            };
            let message = e.to_string();
            return fail(page, category, "parse.body", message);
        }
    };
    let text = match body {
        Body::Html(text) => text,
        Body::Wiki(text) => {
            let text = text.into_owned();
            return wiki_outcome(opts, page, &text);
        }
        Body::Other { media_type, bytes } => return other_outcome(opts, page, media_type, bytes),
    };
    let Ok(page_url) = page::page_url(&page) else {
        return bad_url(page);
    };
    if opts.stream {
        match streamed_outcome(opts, &page, &page_url, &text) {
            Streamed::Generic(g) => {
                opts.paths.count(true);
                return generic_doc(page, g);
            }
            Streamed::Rules(concept, extracted, generic) => {
                opts.paths.count(true);
                return concept_outcome(page, concept, extracted, generic);
            }
            Streamed::TooSlow => {
                let e = dom::DomError::TooSlow(opts.limits.time_budget);
                return fail(page, ErrorCategory::Validation, "parse.html", e.to_string());
            }
            Streamed::Tree(why) => tracing::debug!(url = %page.url, "read from a tree: {why}"),
        }
    }
    opts.paths.count(false);
    let html = match dom::parse(&text, opts.limits) {
        Ok(h) => h,
        Err(e) => return fail(page, ErrorCategory::Validation, "parse.html", e.to_string()),
    };
    drop(text);
    match &opts.rules {
        Some(rules) => rules_outcome(opts, rules, page, &page_url, html),
        None => {
            let g = generic::extract(&html, &page_url, opts.markdown);
            drop(html); // the DOM is many times the page's size: free it before building JSON
            generic_doc(page, g)
        }
    }
}

/// The doc of generic extraction.
fn generic_doc(page: Page, mut g: generic::Generic) -> Outcome {
    let title = g.title.take();
    let (fields, typed) = g.into_fields_and_typed();
    Outcome::Doc {
        doc: Box::new(doc(page, GENERIC_CONCEPT, None, title, fields)),
        typed,
        warnings: Vec::new(),
    }
}

/// A page that is not HTML nor wikitext: a `parse.notHtml` failure, or with
/// `keep_other` an `unknown` doc of its media type and size.
fn other_outcome(opts: &ExtractOptions, page: Page, media_type: String, bytes: usize) -> Outcome {
    if !opts.keep_other {
        let message = format!(
            "the page is {media_type} ({bytes} bytes), not HTML: nothing to extract \
             (hint: rip-parse --keep-other makes it an `unknown` doc; a rip-route rule \
             with code = \"parse.notHtml\" and route = \"expected\" records it as a \
             known gap)"
        );
        return fail(page, ErrorCategory::Validation, NOT_HTML, message);
    }
    let mut fields = Map::new();
    fields.insert("contentType".into(), Value::String(media_type));
    fields.insert("bytes".into(), Value::from(bytes));
    Outcome::Doc {
        doc: Box::new(doc(page, crate::rules::UNKNOWN, None, None, fields)),
        typed: generic::Typed::default(),
        warnings: Vec::new(),
    }
}

/// The URL rules route by and read: `finalUrl`, or `url` when it is empty.
fn route_url(page: &Page) -> String {
    if page.final_url.is_empty() {
        page.url.clone()
    } else {
        page.final_url.clone()
    }
}

/// The failure of a page whose URLs do not parse.
fn bad_url(page: Page) -> Outcome {
    let message = format!(
        "neither finalUrl `{}` nor url `{}` is a valid URL",
        page.final_url, page.url
    );
    fail(page, ErrorCategory::Validation, "parse.url", message)
}

/// An HTML page with rules: routed to a concept, its fields extracted (and the generic
/// ones, when the concept asks), checked against the concept's schema.
fn rules_outcome(
    opts: &ExtractOptions,
    rules: &Rules,
    page: Page,
    page_url: &url::Url,
    html: scraper::Html,
) -> Outcome {
    let route_url = route_url(&page);
    let mut view = PageView::new(&html, &route_url, generic::base_url(&html, page_url));
    let concept = rules.route(&route_url, &mut view);
    let extracted = extract::apply(concept, &view);
    let generic = (extracted.is_ok() && concept.generic)
        .then(|| generic::extract(&html, page_url, opts.markdown));
    drop(view);
    drop(html);
    concept_outcome(page, concept, extracted, generic)
}

/// What the streaming pass made of a page.
enum Streamed<'r> {
    /// Generic extraction's fields.
    Generic(generic::Generic),
    /// The concept the rules routed the page to, its fields, and the generic ones
    /// when it asks for them.
    Rules(
        &'r Concept,
        Result<Extracted, BrokenRules>,
        Option<generic::Generic>,
    ),
    /// Past the time budget.
    TooSlow,
    /// The page needs a tree, for this reason.
    Tree(Bail),
}

/// Reads a page in the streaming pass, with or without rules.
fn streamed_outcome<'r>(
    opts: &'r ExtractOptions,
    page: &Page,
    page_url: &url::Url,
    text: &str,
) -> Streamed<'r> {
    let Some(rules) = &opts.rules else {
        return match generic::extract_streaming(text, page_url, opts.markdown, opts.limits) {
            Ok(g) => Streamed::Generic(g),
            Err(Bail::TOO_SLOW) => Streamed::TooSlow,
            Err(why) => Streamed::Tree(why),
        };
    };
    let route_url = route_url(page);
    let Some(plan) = rules.stream_plan(&route_url) else {
        return Streamed::Tree(Bail("a concept needs a tree (`--check-rules` says which)"));
    };
    let with_generic = plan.iter().any(|c| c.generic);
    let mut walk = (
        RulesWalk::new(&plan, page_url),
        with_generic.then(|| generic::GenericWalk::new(page_url, opts.markdown)),
    );
    match crate::stream::walk(text, opts.limits, &mut walk) {
        Ok(()) => {}
        Err(Bail::TOO_SLOW) => return Streamed::TooSlow,
        Err(why) => return Streamed::Tree(why),
    }
    let (rules_walk, generic_walk) = walk;
    if rules_walk.late_base {
        return Streamed::Tree(Bail("a <base> after Markdown was read"));
    }
    let found = rules_walk.finish();
    let mut view = PageView::streamed(&found, &route_url, found.base.clone());
    let concept = rules.route(&route_url, &mut view);
    let extracted = extract::apply(concept, &view);
    let generic = match generic_walk.filter(|_| concept.generic && extracted.is_ok()) {
        Some(g) => match g.finish(text, opts.limits) {
            Ok(g) => Some(g),
            Err(why) => return Streamed::Tree(why),
        },
        None => None,
    };
    Streamed::Rules(concept, extracted, generic)
}

/// The doc (or failure) of a page routed to `concept`.
fn concept_outcome(
    page: Page,
    concept: &Concept,
    extracted: Result<Extracted, BrokenRules>,
    generic: Option<generic::Generic>,
) -> Outcome {
    let mut extracted = match extracted {
        Ok(x) => x,
        Err(broken) => return broken_rules(page, concept, &broken),
    };
    if let Some(mut g) = generic {
        if extracted.name.is_none() {
            extracted.name = g.title.take();
        }
        for (k, v) in g.into_fields() {
            extracted.fields.entry(k).or_insert(v);
        }
    }
    concept_doc(page, concept, extracted)
}

/// The `parse.rule` failure of a page that breaks its concept's rules.
fn broken_rules(page: Page, concept: &Concept, broken: &BrokenRules) -> Outcome {
    let message = format!("concept `{}`: {broken}", concept.name);
    fail(page, ErrorCategory::Validation, "parse.rule", message)
}

/// A MediaWiki page: its wikitext parsed, routed and extracted (see [`crate::wiki`]).
fn wiki_outcome(opts: &ExtractOptions, mut page: Page, wikitext: &str) -> Outcome {
    let title = wiki::title_of(&page);
    let mut parsed = rip_wikitext::parse(&title, wikitext);
    let round = page.attempt + 1;
    for message in wiki::expand_infobox(&mut parsed, &page) {
        page.errors.push(entry(wiki::UNEXPANDED, message, round));
    }
    let Some(rules) = &opts.rules else {
        let fields = wiki::generic(&parsed, &page);
        return Outcome::Doc {
            doc: Box::new(doc(page, GENERIC_CONCEPT, None, Some(title), fields)),
            typed: generic::Typed::default(),
            warnings: Vec::new(),
        };
    };
    let route_url = route_url(&page);
    let Ok(base) = page::page_url(&page) else {
        return bad_url(page);
    };
    let concept = rules.route_wiki(&route_url, &parsed);
    let mut extracted = match wiki::apply(concept, &parsed, &route_url, &base) {
        Ok(x) => x,
        Err(broken) => return broken_rules(page, concept, &broken),
    };
    if concept.generic {
        if extracted.name.is_none() {
            extracted.name = Some(title);
        }
        for (k, v) in wiki::generic(&parsed, &page) {
            extracted.fields.entry(k).or_insert(v);
        }
    }
    concept_doc(page, concept, extracted)
}

/// The doc of `concept` made of what was extracted from `page`, checked against its schemas.
fn concept_doc(page: Page, concept: &Concept, extracted: Extracted) -> Outcome {
    let meta = Meta {
        status: page.status,
        final_url: page.final_url.clone(),
        content_type: page.content_type.clone(),
    };
    let doc = doc(
        page,
        &concept.name,
        extracted.id,
        extracted.name,
        extracted.fields,
    );
    validate(concept, doc, meta)
}

/// What a failure made from a doc keeps of its page.
struct Meta {
    status: u16,
    final_url: String,
    content_type: Option<String>,
}

/// Checks a doc against its concept's schema and applies `onSchemaError`.
fn validate(concept: &Concept, doc: Doc, meta: Meta) -> Outcome {
    let Some(schema) = &concept.schema else {
        return Outcome::Doc {
            doc: Box::new(doc),
            typed: generic::Typed::default(),
            warnings: Vec::new(),
        };
    };
    let what = format!("concept `{}`: the doc breaks its schema", concept.name);
    check(
        schema,
        concept.on_schema_error,
        &what,
        doc,
        meta,
        Vec::new(),
    )
}

/// Checks a doc against `schema`; a doc that breaks it becomes what `on` says, with a
/// message `<what>: <violations>`. `warnings` are those the doc already has.
fn check(
    schema: &jsonschema::Validator,
    on: OnSchemaError,
    what: &str,
    mut doc: Doc,
    meta: Meta,
    mut warnings: Vec<String>,
) -> Outcome {
    let value = serde_json::to_value(&doc).expect("a doc serialises");
    let violations = crate::schema::violations(schema, &value);
    if violations.is_empty() {
        return Outcome::Doc {
            doc: Box::new(doc),
            typed: generic::Typed::default(),
            warnings,
        };
    }
    let message = format!("{what}: {}", violations.join("; "));
    let round = doc.attempt + 1;
    match on {
        OnSchemaError::Warn => {
            doc.errors
                .push(entry("parse.schema", message.clone(), round));
            warnings.push(format!("{}: {message}", doc.url));
            Outcome::Doc {
                doc: Box::new(doc),
                typed: generic::Typed::default(),
                warnings,
            }
        }
        on => {
            let mut f = Failure::new(
                doc.url,
                ErrorCategory::Validation,
                Phase::Parse,
                entry("parse.schema", message, round),
            );
            f.errors = doc.errors.into_iter().chain(f.errors).collect();
            f.status = Some(meta.status);
            f.attempt = round;
            f.http_attempts = doc.http_attempts.unwrap_or(0);
            f.context = doc.context;
            f.final_url = Some(meta.final_url);
            f.content_type = meta.content_type;
            f.failed_at = Some(Utc::now());
            Outcome::Failure {
                failure: Box::new(f),
                halt: on == OnSchemaError::Halt,
            }
        }
    }
}
