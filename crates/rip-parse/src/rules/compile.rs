//! From a [`RulesFile`] to [`Rules`]: every regex, selector and schema compiled,
//! every name checked, `extends` resolved. Problems are collected, not returned at
//! the first, so a user fixes a file in one round.

use indexmap::IndexMap;
use regex::Regex;
use scraper::Selector;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

use super::jsonld_path::JsonLdPath;
use super::model::{ConceptSpec, FieldSpec, MatchSpec, RulesFile};
use super::{
    Concept, Extract, Field, Matcher, OnSchemaError, Problem, Rules, RulesError, Source, ValueType,
    WikiSource,
};
use crate::stream::select::StreamSelector;

/// The name of the fallback concept.
pub const UNKNOWN: &str = "unknown";

/// Field names a rule may use although the doc reserves them: they fill the doc's
/// fixed `id` and `name`.
const FIXED_FIELDS: &[&str] = &["id", "name"];

struct Ctx<'a> {
    text: &'a str,
    dir: &'a Path,
    problems: Vec<(usize, Problem)>,
}

impl Ctx<'_> {
    fn problem(&mut self, span: Range<usize>, message: impl Into<String>) {
        let start = span.start.min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let line = self.text[..start].matches('\n').count() + 1;
        let column = self.text[line_start..start].chars().count() + 1;
        self.problems.push((
            start,
            Problem {
                line,
                column,
                message: message.into(),
                source_line: self.text[line_start..line_end]
                    .trim_end_matches('\r')
                    .to_owned(),
            },
        ));
    }
}

pub(super) fn compile(text: &str, path: &Path) -> Result<Rules, RulesError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut ctx = Ctx {
        text,
        dir,
        problems: Vec::new(),
    };
    let file: RulesFile = match toml::from_str(text) {
        Ok(file) => file,
        Err(e) => {
            let message = e.message().trim_end().to_owned();
            ctx.problem(e.span().unwrap_or(0..0), message);
            return Err(invalid(path, ctx));
        }
    };
    let (by_name, compiled) = name_and_compile(&mut ctx, &file);
    let mut parents = parents(&mut ctx, &file, &by_name);
    break_cycles(&mut ctx, &file, &mut parents);
    if !ctx.problems.is_empty() {
        return Err(invalid(path, ctx));
    }
    Ok(assemble(path, &file, &parents, &compiled))
}

/// Each concept's own definition compiled, and its name indexed (a name given twice,
/// or empty, is a problem).
fn name_and_compile<'f>(
    ctx: &mut Ctx<'_>,
    file: &'f RulesFile,
) -> (HashMap<&'f str, usize>, Vec<Own>) {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut compiled: Vec<Own> = Vec::with_capacity(file.concepts.len());
    for (i, spec) in file.concepts.iter().enumerate() {
        let name = spec.name.get_ref().as_str();
        if name.trim().is_empty() {
            ctx.problem(spec.name.span(), "a concept's `name` cannot be empty");
        } else if let Some(&first) = by_name.get(name) {
            let line = line_of(ctx.text, file.concepts[first].name.span().start);
            ctx.problem(
                spec.name.span(),
                format!("concept `{name}` is defined twice (first at line {line})"),
            );
        } else {
            by_name.insert(name, i);
        }
        compiled.push(own(ctx, spec));
    }
    (by_name, compiled)
}

/// Each concept's parent (`extends`), which must be defined.
fn parents(
    ctx: &mut Ctx<'_>,
    file: &RulesFile,
    by_name: &HashMap<&str, usize>,
) -> Vec<Option<usize>> {
    let mut parents: Vec<Option<usize>> = vec![None; file.concepts.len()];
    for (i, spec) in file.concepts.iter().enumerate() {
        let Some(ext) = &spec.extends else { continue };
        match by_name.get(ext.get_ref().as_str()) {
            Some(&p) => parents[i] = Some(p),
            None => {
                let known: Vec<&str> = file
                    .concepts
                    .iter()
                    .map(|c| c.name.get_ref().as_str())
                    .collect();
                ctx.problem(
                    ext.span(),
                    format!(
                        "concept `{}` extends `{}`, which is not defined (hint: defined concepts: {})",
                        spec.name.get_ref(),
                        ext.get_ref(),
                        known.join(", ")
                    ),
                );
            }
        }
    }
    parents
}

/// Reports each cycle of `extends` at its concepts, and cuts it.
fn break_cycles(ctx: &mut Ctx<'_>, file: &RulesFile, parents: &mut [Option<usize>]) {
    for (i, spec) in file.concepts.iter().enumerate() {
        let mut seen = vec![i];
        let mut at = parents[i];
        while let Some(p) = at {
            if p == i {
                let chain: Vec<&str> = seen
                    .iter()
                    .chain(std::iter::once(&i))
                    .map(|&k| file.concepts[k].name.get_ref().as_str())
                    .collect();
                let span = spec
                    .extends
                    .as_ref()
                    .map_or(spec.name.span(), Spanned::span);
                ctx.problem(
                    span,
                    format!("`extends` forms a cycle: {}", chain.join(" → ")),
                );
                parents[i] = None;
                break;
            }
            if seen.contains(&p) {
                break; // a cycle further up, reported at its own concepts
            }
            seen.push(p);
            at = parents[p];
        }
    }
}

/// The rules: every concept that is not abstract with its ancestors merged in, and the
/// `unknown` fallback (as defined, or the default one).
fn assemble(path: &Path, file: &RulesFile, parents: &[Option<usize>], compiled: &[Own]) -> Rules {
    let mut concepts = Vec::new();
    let mut unknown = None;
    for (i, spec) in file.concepts.iter().enumerate() {
        let mut chain = vec![i];
        while let Some(p) = parents[*chain.last().unwrap_or(&i)] {
            chain.push(p);
        }
        let concept = resolve(&file.concepts, &chain, compiled);
        if concept.name == UNKNOWN {
            unknown = Some(concept);
        } else if !spec.is_abstract {
            concepts.push(concept);
        }
    }
    Rules {
        path: path.to_owned(),
        concepts,
        unknown: unknown.unwrap_or_else(|| Concept {
            name: UNKNOWN.to_owned(),
            matcher: None,
            generic: true,
            id: None,
            name_field: None,
            fields: Vec::new(),
            schema: None,
            on_schema_error: OnSchemaError::Skip,
        }),
    }
}

fn invalid(path: &Path, ctx: Ctx<'_>) -> RulesError {
    let mut problems = ctx.problems;
    problems.sort_by_key(|(at, _)| *at);
    RulesError::Invalid {
        path: path.to_owned(),
        problems: problems.into_iter().map(|(_, p)| p).collect(),
    }
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// What a concept defines itself, compiled, before inheritance.
struct Own {
    matcher: Option<Matcher>,
    url_id: bool,
    fields: IndexMap<String, Field>,
    schema: Option<Arc<jsonschema::Validator>>,
}

fn own(ctx: &mut Ctx<'_>, spec: &ConceptSpec) -> Own {
    let cname = spec.name.get_ref();
    check_routing(ctx, spec);
    let (matcher, url_id) = match &spec.matcher {
        Some(m) => matcher(ctx, cname, m),
        None => (None, false),
    };
    Own {
        matcher,
        url_id,
        fields: own_fields(ctx, spec),
        schema: own_schema(ctx, spec),
    }
}

/// A concept is routed to by its `match`: `unknown` (the fallback) has none and is not
/// abstract, an abstract concept has none, any other has one.
fn check_routing(ctx: &mut Ctx<'_>, spec: &ConceptSpec) {
    let cname = spec.name.get_ref();
    let is_unknown = cname == UNKNOWN;
    match (&spec.matcher, spec.is_abstract, is_unknown) {
        (Some(m), _, true) => ctx.problem(
            m.span(),
            "concept `unknown` is the fallback for pages no other concept takes: it cannot \
             have a `match` (hint: give this concept another name)",
        ),
        (Some(m), true, false) => ctx.problem(
            m.span(),
            format!(
                "concept `{cname}` is abstract (never routed to), so its `match` would never \
                 be used (hint: remove `abstract = true` or the `match`)"
            ),
        ),
        (None, false, false) => ctx.problem(
            spec.name.span(),
            format!(
                "concept `{cname}` has no `match`, so no page can be routed to it (hint: add \
                 `match.url`, `match.selector` or `match.text`, or mark it `abstract = true` \
                 to use it only through `extends`)"
            ),
        ),
        _ => {}
    }
    if is_unknown && spec.is_abstract {
        ctx.problem(
            spec.name.span(),
            "concept `unknown` (the fallback) cannot be abstract",
        );
    }
}

/// The concept's own fields, compiled; a field with an empty or reserved name is a
/// problem.
fn own_fields(ctx: &mut Ctx<'_>, spec: &ConceptSpec) -> IndexMap<String, Field> {
    let cname = spec.name.get_ref();
    let mut fields = IndexMap::new();
    for (key, fspec) in &spec.fields {
        let fname = key.get_ref();
        let what = format!("concept `{cname}`, field `{fname}`");
        if fname.is_empty() {
            ctx.problem(
                key.span(),
                format!("concept `{cname}`: a field name cannot be empty"),
            );
            continue;
        }
        if rip_core::DOC_RESERVED_FIELDS.contains(&fname.as_str())
            && !FIXED_FIELDS.contains(&fname.as_str())
        {
            ctx.problem(
                key.span(),
                format!(
                    "{what}: `{fname}` is a name the doc reserves for itself (reserved: {}; \
                     `id` and `name` are allowed and fill the doc's own) (hint: rename the field)",
                    rip_core::DOC_RESERVED_FIELDS.join(", ")
                ),
            );
            continue;
        }
        if let Some(field) = field(ctx, &what, fname, key.span(), fspec.get_ref()) {
            fields.insert(fname.clone(), field);
        }
    }
    fields
}

/// The concept's own schema: `schema` (inline) or `schemaFile`, not both.
fn own_schema(ctx: &mut Ctx<'_>, spec: &ConceptSpec) -> Option<Arc<jsonschema::Validator>> {
    let cname = spec.name.get_ref();
    match (&spec.schema, &spec.schema_file) {
        (Some(_), Some(f)) => {
            ctx.problem(
                f.span(),
                format!(
                    "concept `{cname}`: `schema` and `schemaFile` are both given (hint: keep one)"
                ),
            );
            None
        }
        (Some(s), None) => compile_schema(ctx, cname, s.span(), s.get_ref(), None),
        (None, Some(f)) => schema_file(ctx, cname, f),
        (None, None) => None,
    }
}

fn matcher(ctx: &mut Ctx<'_>, cname: &str, m: &Spanned<MatchSpec>) -> (Option<Matcher>, bool) {
    let spec = m.get_ref();
    if spec.url.is_none()
        && spec.selector.is_none()
        && spec.text.is_none()
        && spec.category.is_none()
        && spec.infobox.is_none()
    {
        ctx.problem(
            m.span(),
            format!(
                "concept `{cname}`: `match` needs at least one of `url`, `selector`, `text`, \
                 `category` or `infobox`"
            ),
        );
        return (None, false);
    }
    let what = format!("concept `{cname}`, `match`");
    let url = spec.url.as_ref().and_then(|u| regex(ctx, &what, "url", u));
    let selector = spec.selector.as_ref().and_then(|s| selector(ctx, &what, s));
    for (key, value) in [
        ("text", &spec.text),
        ("category", &spec.category),
        ("infobox", &spec.infobox),
    ] {
        if let Some(t) = value
            && t.get_ref().trim().is_empty()
        {
            ctx.problem(t.span(), format!("{what}: `{key}` cannot be empty"));
        }
    }
    if spec.selector.is_some()
        && (spec.category.is_some() || spec.infobox.is_some())
        && let Some(s) = &spec.selector
    {
        ctx.problem(
            s.span(),
            format!(
                "{what}: `selector` matches HTML and `category`/`infobox` MediaWiki pages, so \
                 together they match nothing (hint: write two concepts)"
            ),
        );
    }
    let category = spec.category.as_ref().map(|c| {
        let name = c.get_ref().trim();
        let name = match name.split_once(':') {
            Some((p, rest)) if p.trim().eq_ignore_ascii_case("category") => rest,
            _ => name,
        };
        rip_wikitext::normalize_title(name)
    });
    let url_id = url
        .as_ref()
        .is_some_and(|re| re.capture_names().any(|n| n == Some("id")));
    (
        Some(Matcher {
            url,
            stream_selector: spec
                .selector
                .as_ref()
                .and_then(|s| StreamSelector::parse(s.get_ref())),
            selector,
            text: spec.text.as_ref().map(|t| t.get_ref().clone()),
            category,
            infobox: spec
                .infobox
                .as_ref()
                .map(|k| k.get_ref().trim().to_lowercase()),
        }),
        url_id,
    )
}

fn regex(ctx: &mut Ctx<'_>, what: &str, key: &str, re: &Spanned<String>) -> Option<Regex> {
    match Regex::new(re.get_ref()) {
        Ok(re) => Some(re),
        Err(e) => {
            let detail = e.to_string();
            let detail = detail
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .trim_start_matches("error: ");
            ctx.problem(
                re.span(),
                format!(
                    "{what}: bad regex in `{key}`: `{}`: {detail} (hint: Rust regex syntax; no \
                     look-around or backreferences)",
                    re.get_ref()
                ),
            );
            None
        }
    }
}

fn selector(ctx: &mut Ctx<'_>, what: &str, sel: &Spanned<String>) -> Option<Selector> {
    match Selector::parse(sel.get_ref()) {
        Ok(s) => Some(s),
        Err(e) => {
            ctx.problem(
                sel.span(),
                format!(
                    "{what}: bad CSS selector `{}`: {} (hint: selectors as in a browser's \
                     querySelectorAll; jQuery extensions such as :contains() do not exist)",
                    sel.get_ref(),
                    selector_error(&e)
                ),
            );
            None
        }
    }
}

/// A readable message for a selector error: scraper's own says "please report this"
/// for every error it does not name, with a Rust debug dump.
fn selector_error(e: &scraper::error::SelectorErrorKind) -> String {
    use scraper::error::SelectorErrorKind as K;
    match e {
        K::UnexpectedSelectorParseError(inner) => {
            let debug = format!("{inner:?}");
            let (name, arg) = match debug.find('(') {
                Some(i) => (
                    &debug[..i],
                    Some(debug[i..].trim_matches(|c| c == '(' || c == ')')),
                ),
                None => (debug.as_str(), None),
            };
            let mut words = String::new();
            for (i, c) in name.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    words.push(' ');
                }
                words.push(c.to_ascii_lowercase());
            }
            match arg {
                Some(a) if !a.is_empty() => format!("{words}: {a}"),
                _ => words,
            }
        }
        other => other.to_string().to_lowercase(),
    }
}

fn field(
    ctx: &mut Ctx<'_>,
    what: &str,
    name: &str,
    key: Range<usize>,
    spec: &FieldSpec,
) -> Option<Field> {
    let before = ctx.problems.len();
    let extract = spec.extract.unwrap_or(if spec.attr.is_some() {
        Extract::Attr
    } else {
        Extract::Text
    });
    let at = FieldAt { what, key, spec };
    let wiki = at.wiki_source(ctx);
    let wiki_given = spec.infobox.is_some() || spec.section.is_some() || spec.wiki.is_some();
    if wiki_given {
        at.check_wiki(ctx, extract);
    }
    let jsonld = at.jsonld(ctx, extract, wiki_given);
    at.check_source(ctx, extract, wiki_given || spec.jsonld.is_some());
    at.check_extract(ctx, extract, name);
    let selector = spec.selector.as_ref().and_then(|s| selector(ctx, what, s));
    let regex = spec
        .regex
        .as_ref()
        .and_then(|r| regex(ctx, what, "regex", r));
    if ctx.problems.len() > before {
        return None;
    }
    Some(Field {
        name: name.to_owned(),
        source: spec.source,
        stream_selector: spec
            .selector
            .as_ref()
            .and_then(|s| StreamSelector::parse(s.get_ref())),
        selector,
        wiki,
        jsonld,
        extract,
        attr: spec.attr.as_ref().map(|a| a.get_ref().clone()),
        list: spec.list,
        regex,
        value_type: if extract == Extract::Exists {
            ValueType::Boolean
        } else {
            spec.value_type
        },
        default: spec.default.clone(),
        required: spec.required,
    })
}

/// A field's spec, with what names it in messages and where its key is.
struct FieldAt<'a> {
    /// `concept `…`, field `…``.
    what: &'a str,
    key: Range<usize>,
    spec: &'a FieldSpec,
}

impl FieldAt<'_> {
    fn problem(&self, ctx: &mut Ctx<'_>, message: impl std::fmt::Display) {
        ctx.problem(self.key.clone(), format!("{}: {message}", self.what));
    }

    /// What the field reads of a MediaWiki page: one of `infobox`, `section`, `wiki`.
    fn wiki_source(&self, ctx: &mut Ctx<'_>) -> Option<WikiSource> {
        let spec = self.spec;
        match (&spec.infobox, &spec.section, spec.wiki) {
            (Some(k), None, None) => Some(WikiSource::Infobox(k.get_ref().trim().to_owned())),
            (None, Some(t), None) => Some(WikiSource::Section(t.get_ref().trim().to_owned())),
            (None, None, Some(v)) => Some(WikiSource::Page(v)),
            (None, None, None) => None,
            _ => {
                self.problem(
                    ctx,
                    "give one of `infobox`, `section` or `wiki`, not several",
                );
                None
            }
        }
    }

    /// A `jsonld` field's path; it takes no selector, source, MediaWiki key or `extract`.
    fn jsonld(&self, ctx: &mut Ctx<'_>, extract: Extract, wiki_given: bool) -> Option<JsonLdPath> {
        let path = self.spec.jsonld.as_ref()?;
        let spec = self.spec;
        if spec.selector.is_some() || spec.source == Source::Url || wiki_given {
            self.problem(
                ctx,
                "`jsonld` reads the page's JSON-LD: it takes no `selector`, `source`, \
                 `infobox`, `section` or `wiki` (hint: write one field per source)",
            );
        }
        if extract != Extract::Text {
            self.problem(ctx, "a `jsonld` field takes no `extract` or `attr`");
        }
        match JsonLdPath::parse(path.get_ref()) {
            Ok(p) => Some(p),
            Err(e) => {
                ctx.problem(path.span(), format!("{}: {e}", self.what));
                None
            }
        }
    }

    /// A MediaWiki field takes no HTML source, no `extract` but `exists`, and names a
    /// parameter or section.
    fn check_wiki(&self, ctx: &mut Ctx<'_>, extract: Extract) {
        let spec = self.spec;
        if spec.selector.is_some() || spec.source == Source::Url {
            self.problem(
                ctx,
                "`infobox`, `section` and `wiki` read MediaWiki pages: they take no \
                 `selector` or `source` (hint: write one field per source)",
            );
        }
        if !matches!(extract, Extract::Text | Extract::Exists) {
            self.problem(
                ctx,
                "a MediaWiki field takes no `extract` other than `exists`",
            );
        }
        for (k, v) in [("infobox", &spec.infobox), ("section", &spec.section)] {
            if let Some(v) = v
                && v.get_ref().trim().is_empty()
            {
                ctx.problem(v.span(), format!("{}: `{k}` cannot be empty", self.what));
            }
        }
    }

    /// An HTML field needs a `selector`; a URL field takes none, nor an `extract`.
    fn check_source(&self, ctx: &mut Ctx<'_>, extract: Extract, wiki_given: bool) {
        let spec = self.spec;
        match spec.source {
            Source::Html if spec.selector.is_none() && !wiki_given => self.problem(
                ctx,
                "needs a `selector` (or `source = \"url\"` to read the page's URL, or \
                 `infobox`, `section` or `wiki` for MediaWiki pages)",
            ),
            Source::Url if spec.selector.is_some() => self.problem(
                ctx,
                "`source = \"url\"` reads the URL, so `selector` is not used (hint: remove it)",
            ),
            Source::Url if extract != Extract::Text => {
                self.problem(ctx, "`source = \"url\"` takes no `extract` or `attr`");
            }
            _ => {}
        }
    }

    /// `attr` goes with `extract = "attr"`; `exists` gives a boolean; the doc's `id` and
    /// `name` are single strings.
    fn check_extract(&self, ctx: &mut Ctx<'_>, extract: Extract, name: &str) {
        let spec = self.spec;
        match (extract, &spec.attr) {
            (Extract::Attr, None) => {
                self.problem(
                    ctx,
                    "`extract = \"attr\"` needs `attr`, the attribute's name",
                );
            }
            (e, Some(a)) if e != Extract::Attr => ctx.problem(
                a.span(),
                format!(
                    "{}: `attr` is only used with `extract = \"attr\"`",
                    self.what
                ),
            ),
            _ => {}
        }
        if extract == Extract::Exists
            && (spec.list
                || spec.regex.is_some()
                || !matches!(spec.value_type, ValueType::String | ValueType::Boolean))
        {
            self.problem(
                ctx,
                "`extract = \"exists\"` gives a boolean: it takes no `list`, `regex` or `type`",
            );
        }
        if FIXED_FIELDS.contains(&name) && (spec.list || spec.value_type != ValueType::String) {
            self.problem(
                ctx,
                format!("the doc's `{name}` is a single string: no `list` or `type`"),
            );
        }
    }
}

fn schema_file(
    ctx: &mut Ctx<'_>,
    cname: &str,
    file: &Spanned<String>,
) -> Option<Arc<jsonschema::Validator>> {
    let path = ctx.dir.join(file.get_ref());
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            ctx.problem(
                file.span(),
                format!(
                    "concept `{cname}`: cannot read schema file {}: {e}",
                    path.display()
                ),
            );
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(value) => compile_schema(ctx, cname, file.span(), &value, Some(&path)),
        Err(e) => {
            ctx.problem(
                file.span(),
                format!(
                    "concept `{cname}`: schema file {}:{}:{}: not JSON: {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ),
            );
            None
        }
    }
}

fn compile_schema(
    ctx: &mut Ctx<'_>,
    cname: &str,
    span: Range<usize>,
    schema: &serde_json::Value,
    file: Option<&Path>,
) -> Option<Arc<jsonschema::Validator>> {
    let whose = match file {
        Some(f) => format!("schema file {}", f.display()),
        None => "`schema`".to_owned(),
    };
    match crate::schema::compile(schema) {
        Ok(v) => Some(Arc::new(v)),
        Err(why) => {
            ctx.problem(span, format!("concept `{cname}`: {whose} {why}"));
            None
        }
    }
}

/// A concept with its ancestors' fields and options merged in (`chain` is the
/// concept itself, then its parent, and so on).
fn resolve(specs: &[ConceptSpec], chain: &[usize], compiled: &[Own]) -> Concept {
    let spec = &specs[chain[0]];
    let own = &compiled[chain[0]];
    let mut fields: IndexMap<String, Field> = IndexMap::new();
    for &k in chain.iter().rev() {
        for (name, f) in &compiled[k].fields {
            fields.insert(name.clone(), f.clone());
        }
    }
    let name = spec.name.get_ref().clone();
    let id = fields.shift_remove("id").or_else(|| {
        own.url_id.then(|| Field {
            name: "id".into(),
            source: Source::Url,
            selector: None,
            stream_selector: None,
            wiki: None,
            jsonld: None,
            extract: Extract::Text,
            attr: None,
            list: false,
            regex: own.matcher.as_ref().and_then(|m| m.url.clone()),
            value_type: ValueType::String,
            default: None,
            required: false,
        })
    });
    let name_field = fields.shift_remove("name");
    Concept {
        generic: chain
            .iter()
            .find_map(|&k| specs[k].generic)
            .unwrap_or(name == UNKNOWN),
        name,
        matcher: own.matcher.clone(),
        id,
        name_field,
        fields: fields.into_values().collect(),
        schema: chain.iter().find_map(|&k| compiled[k].schema.clone()),
        on_schema_error: chain
            .iter()
            .find_map(|&k| specs[k].on_schema_error)
            .unwrap_or_default(),
    }
}
