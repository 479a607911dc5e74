//! The reconciler: failures in, an index of the docs that may stand for them, verdicts out.
//!
//! Use it in three steps, which is what lets memory grow with the failures rather than
//! with the docs:
//!
//! 1. [`Reconciler::index`] takes every error document ([`Failed`]): its URL, its key,
//!    the link text it carried, its status and last error code.
//! 2. [`Index::add_doc`] is shown every doc (only its key fields, see [`Index::doc_fields`]).
//!    A doc is kept, as a URL and a name, only when its key is the key of some failure;
//!    a link it recorded is kept, as a text, only when it points at a failed URL.
//! 3. [`Index::verdicts`] gives one [`Resolution`] per failure, in the order given.
//!
//! A failure is `capturedElsewhere` when exactly one doc matches: a doc whose `resolves`
//! names the failed URL, or else a doc with the same key (and, when a name is configured,
//! a name equal to one of the link texts that pointed at the failed URL). With more than
//! one match it stays `missing` with the candidates listed; nothing is guessed. With no
//! single match, the first `dead` rule that holds makes it `dead`; otherwise `missing`.

use regex::Regex;
use rip_core::{ErrorDoc, Resolution};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

use crate::config::{
    ConfigError, DeadRuleConfig, KeyConfig, NameConfig, NameSource, ReconcilerConfig, regex,
};
use crate::pick;

/// A compiled reconciler configuration.
#[derive(Debug, Clone, Default)]
pub struct Reconciler {
    key: Option<KeyRule>,
    name: Option<NameRule>,
    concepts: Vec<String>,
    dead: Vec<DeadRule>,
}

#[derive(Debug, Clone)]
enum KeySource {
    Pattern(Regex),
    PathTail,
}

#[derive(Debug, Clone)]
struct KeyRule {
    source: KeySource,
    doc_field: Option<String>,
}

#[derive(Debug, Clone)]
struct NameRule {
    doc_field: String,
    doc_pattern: Option<Regex>,
    from_link_text: bool,
    from_doc_links: bool,
    links_field: String,
    href: String,
    text: String,
    case_sensitive: bool,
}

#[derive(Debug, Clone)]
struct DeadRule {
    status: Vec<u16>,
    code: Vec<String>,
    url: Option<Regex>,
    reason: String,
}

impl Reconciler {
    /// The default reconciler: every failure is `missing`.
    pub fn default_reconciler() -> Self {
        Self::default()
    }

    /// Compiles a configuration; `origin` (the file) names it in errors.
    pub fn from_config(config: &ReconcilerConfig, origin: &str) -> Result<Self, ConfigError> {
        let key = config
            .key
            .as_ref()
            .map(|k| KeyRule::compile(k, origin))
            .transpose()?;
        let name = match &config.name {
            Some(_) if key.is_none() => {
                return Err(invalid(
                    origin,
                    "name",
                    "a name is matched together with a key: add a `key` section",
                ));
            }
            Some(n) => Some(NameRule::compile(n, origin)?),
            None => None,
        };
        let dead = config
            .dead
            .iter()
            .enumerate()
            .map(|(i, d)| DeadRule::compile(i, d, origin))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            key,
            name,
            concepts: config.concepts.clone(),
            dead,
        })
    }

    /// True when docs must be read at all (a key is configured).
    pub fn needs_docs(&self) -> bool {
        self.key.is_some()
    }

    /// The identity key of a URL, when the key rule finds one.
    pub fn url_key(&self, url: &str) -> Option<String> {
        let rule = self.key.as_ref()?;
        match &rule.source {
            KeySource::Pattern(re) => {
                let caps = re.captures(url)?;
                let m = caps
                    .name("key")
                    .or_else(|| caps.get(1))
                    .or_else(|| caps.get(0))?;
                Some(m.as_str().to_owned())
            }
            KeySource::PathTail => path_tail(url),
        }
    }

    /// Step 1: an index for these failures (error documents, in output order).
    pub fn index<'r>(&'r self, failures: impl IntoIterator<Item = &'r ErrorDoc>) -> Index<'r> {
        let mut index = Index {
            reconciler: self,
            failed: Vec::new(),
            by_key: HashMap::new(),
            by_url: HashMap::new(),
        };
        for f in failures {
            index.push(f);
        }
        index
    }

    /// An empty index, to which failures are added one by one with [`Index::push`].
    pub fn empty_index(&self) -> Index<'_> {
        self.index(std::iter::empty())
    }

    fn normalize_name(&self, s: &str) -> String {
        let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
        match &self.name {
            Some(n) if n.case_sensitive => collapsed,
            _ => collapsed.to_lowercase(),
        }
    }

    fn dead_reason(&self, f: &Failed) -> Option<&str> {
        self.dead
            .iter()
            .find(|d| {
                (d.status.is_empty() || f.status.is_some_and(|s| d.status.contains(&s)))
                    && (d.code.is_empty()
                        || f.last_code.as_ref().is_some_and(|c| d.code.contains(c)))
                    && d.url.as_ref().is_none_or(|re| re.is_match(&f.url))
            })
            .map(|d| d.reason.as_str())
    }
}

/// The error for a value of `field` in `origin` that makes no sense.
fn invalid(origin: &str, field: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        path: origin.to_owned(),
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

impl KeyRule {
    /// The `key` section: a URL pattern or the path's tail, not both.
    fn compile(k: &KeyConfig, origin: &str) -> Result<Self, ConfigError> {
        let source = match (&k.url_pattern, k.path_tail) {
            (Some(p), false) => KeySource::Pattern(regex(origin, "key.urlPattern", p)?),
            (None, true) => KeySource::PathTail,
            (Some(_), true) => {
                return Err(invalid(
                    origin,
                    "key",
                    "give either `urlPattern` or `pathTail`, not both",
                ));
            }
            (None, false) => {
                return Err(invalid(
                    origin,
                    "key",
                    "needs `urlPattern` (a regex) or `pathTail: true`",
                ));
            }
        };
        Ok(Self {
            source,
            doc_field: k.doc_field.clone(),
        })
    }
}

impl NameRule {
    /// The `name` section: where names come from, and the doc field they must equal.
    fn compile(n: &NameConfig, origin: &str) -> Result<Self, ConfigError> {
        if n.from.is_empty() {
            return Err(invalid(
                origin,
                "name.from",
                "must list `linkText`, `docLinks` or both",
            ));
        }
        Ok(Self {
            doc_field: n.doc_field.clone(),
            doc_pattern: n
                .doc_pattern
                .as_deref()
                .map(|p| regex(origin, "name.docPattern", p))
                .transpose()?,
            from_link_text: n.from.contains(&NameSource::LinkText),
            from_doc_links: n.from.contains(&NameSource::DocLinks),
            links_field: n.links.field.clone(),
            href: n.links.href.clone(),
            text: n.links.text.clone(),
            case_sensitive: n.case_sensitive,
        })
    }
}

impl DeadRule {
    /// The `i`-th `dead` rule: at least one condition, and its reason.
    fn compile(i: usize, d: &DeadRuleConfig, origin: &str) -> Result<Self, ConfigError> {
        if d.status.is_empty() && d.code.is_empty() && d.url.is_none() {
            return Err(invalid(
                origin,
                &format!("dead[{i}]"),
                "needs at least one condition: `status`, `code` or `url`",
            ));
        }
        Ok(Self {
            status: d.status.clone(),
            code: d.code.clone(),
            url: d
                .url
                .as_deref()
                .map(|p| regex(origin, &format!("dead[{i}].url"), p))
                .transpose()?,
            reason: d.reason.clone(),
        })
    }
}

/// The last non-empty path segment of a URL without its extension.
fn path_tail(url: &str) -> Option<String> {
    let path = match url::Url::parse(url) {
        Ok(u) => u.path().to_owned(),
        Err(_) => url.split(['?', '#']).next().unwrap_or("").to_owned(),
    };
    let segment = path.rsplit('/').find(|s| !s.is_empty())?;
    let stem = match segment.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => segment,
    };
    Some(stem.to_owned())
}

/// A URL in the form links are compared in: parsed, fragment dropped; the text itself
/// when it does not parse.
fn normalize_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.into()
        }
        Err(_) => url.to_owned(),
    }
}

/// What the reconciler keeps of one error document.
#[derive(Debug, Clone)]
pub struct Failed {
    url: String,
    key: Option<String>,
    names: BTreeSet<String>,
    status: Option<u16>,
    last_code: Option<String>,
    candidates: Vec<Candidate>,
    resolved_by: Vec<String>,
}

/// A doc with a failure's key: its URL and the (normalised) names it answers to. Names
/// are checked in [`Index::verdicts`], once every link text is known.
#[derive(Debug, Clone)]
struct Candidate {
    url: String,
    names: Vec<String>,
}

/// The failures, and what the docs said about them (see the module docs).
#[derive(Debug)]
pub struct Index<'r> {
    reconciler: &'r Reconciler,
    failed: Vec<Failed>,
    by_key: HashMap<String, Vec<usize>>,
    by_url: HashMap<String, Vec<usize>>,
}

impl Index<'_> {
    /// Adds one failure (step 1).
    pub fn push(&mut self, e: &ErrorDoc) {
        let r = self.reconciler;
        let mut names = BTreeSet::new();
        if let (Some(n), Some(text)) = (&r.name, &e.context.link_text)
            && n.from_link_text
            && !text.trim().is_empty()
        {
            names.insert(r.normalize_name(text));
        }
        let f = Failed {
            url: e.url.clone(),
            key: r.url_key(&e.url),
            names,
            status: e.status,
            last_code: e.errors.last().map(|x| x.code.clone()),
            candidates: Vec::new(),
            resolved_by: Vec::new(),
        };
        let i = self.failed.len();
        if let Some(k) = &f.key {
            self.by_key.entry(k.clone()).or_default().push(i);
        }
        self.by_url
            .entry(normalize_url(&f.url))
            .or_default()
            .push(i);
        self.failed.push(f);
    }

    /// The number of failures indexed.
    pub fn len(&self) -> usize {
        self.failed.len()
    }

    /// True when no failure is indexed.
    pub fn is_empty(&self) -> bool {
        self.failed.is_empty()
    }

    /// The top-level doc fields [`Index::add_doc`] reads; pass them to [`pick::pick`].
    pub fn doc_fields(&self) -> Vec<String> {
        let r = self.reconciler;
        let mut fields = vec![
            "url".to_owned(),
            "resolves".to_owned(),
            "concept".to_owned(),
        ];
        if let Some(k) = &r.key
            && let Some(f) = &k.doc_field
        {
            fields.push(pick::top_field(f));
        }
        if let Some(n) = &r.name {
            fields.push(pick::top_field(&n.doc_field));
            if n.from_doc_links {
                fields.push(n.links_field.clone());
            }
        }
        fields
    }

    /// Step 2: shows the index one doc's picked fields.
    pub fn add_doc(&mut self, doc: &Map<String, Value>) {
        let Some(url) = doc.get("url").and_then(Value::as_str) else {
            return;
        };
        self.note_resolves(url, doc);
        self.note_link_names(url, doc);
        self.note_key_candidate(url, doc);
    }

    /// A doc whose `resolves` names a failed URL stands for it.
    fn note_resolves(&mut self, url: &str, doc: &Map<String, Value>) {
        if let Some(target) = doc.get("resolves").and_then(Value::as_str)
            && let Some(ids) = self.by_url.get(&normalize_url(target))
        {
            for &i in ids {
                push_unique(&mut self.failed[i].resolved_by, url);
            }
        }
    }

    /// The texts of the doc's links to failed URLs are names of those failures.
    fn note_link_names(&mut self, url: &str, doc: &Map<String, Value>) {
        let r = self.reconciler;
        let Some(n) = &r.name else { return };
        let Some(Value::Array(links)) = doc.get(&n.links_field) else {
            return;
        };
        if !n.from_doc_links {
            return;
        }
        let base = url::Url::parse(url).ok();
        for link in links {
            let (Some(href), Some(text)) = (
                link.get(&n.href).and_then(Value::as_str),
                link.get(&n.text).and_then(Value::as_str),
            ) else {
                continue;
            };
            let target = match &base {
                Some(b) => b
                    .join(href)
                    .map(String::from)
                    .unwrap_or_else(|_| href.to_owned()),
                None => href.to_owned(),
            };
            if let Some(ids) = self.by_url.get(&normalize_url(&target))
                && !text.trim().is_empty()
            {
                let name = r.normalize_name(text);
                for &i in ids {
                    self.failed[i].names.insert(name.clone());
                }
            }
        }
    }

    /// A doc (of a configured concept) with a failure's key, at another URL, is a
    /// candidate for it, with the names it answers to.
    fn note_key_candidate(&mut self, url: &str, doc: &Map<String, Value>) {
        let r = self.reconciler;
        let Some(rule) = &r.key else { return };
        if !r.concepts.is_empty() {
            let concept = doc.get("concept").and_then(Value::as_str).unwrap_or("");
            if !r.concepts.iter().any(|c| c == concept) {
                return;
            }
        }
        let key = match &rule.doc_field {
            Some(field) => match pick::lookup(doc, field) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            },
            None => r.url_key(url),
        };
        let Some(ids) = key.and_then(|k| self.by_key.get(&k)) else {
            return;
        };
        let names: Vec<String> = match &r.name {
            None => Vec::new(),
            Some(n) => doc_names(pick::lookup(doc, &n.doc_field), n.doc_pattern.as_ref())
                .into_iter()
                .map(|s| r.normalize_name(&s))
                .collect(),
        };
        for &i in ids {
            let f = &mut self.failed[i];
            if normalize_url(url) == normalize_url(&f.url) {
                continue;
            }
            if !f.candidates.iter().any(|c| c.url == url) {
                f.candidates.push(Candidate {
                    url: url.to_owned(),
                    names: names.clone(),
                });
            }
        }
    }

    /// Step 3: one verdict per failure, in the order the failures were given.
    pub fn verdicts(&self) -> Vec<Resolution> {
        self.failed.iter().map(|f| self.verdict(f)).collect()
    }

    fn verdict(&self, f: &Failed) -> Resolution {
        let r = self.reconciler;
        let mut matches: Vec<String> = if f.resolved_by.is_empty() {
            f.candidates
                .iter()
                .filter(|c| r.name.is_none() || c.names.iter().any(|n| f.names.contains(n)))
                .map(|c| c.url.clone())
                .collect()
        } else {
            f.resolved_by.clone()
        };
        if matches.len() == 1 {
            return Resolution::CapturedElsewhere {
                at: matches.remove(0),
            };
        }
        if let Some(reason) = r.dead_reason(f) {
            return Resolution::Dead {
                reason: reason.to_owned(),
            };
        }
        Resolution::Missing {
            candidates: matches,
        }
    }
}

fn push_unique(list: &mut Vec<String>, s: &str) {
    if !list.iter().any(|x| x == s) {
        list.push(s.to_owned());
    }
}

/// The names a doc answers to: its field's string (or strings, for an array), through the
/// pattern's capture when there is one.
fn doc_names(value: Option<&Value>, pattern: Option<&Regex>) -> Vec<String> {
    let raw: Vec<&str> = match value {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    raw.into_iter()
        .filter_map(|s| match pattern {
            None => Some(s.to_owned()),
            Some(re) => {
                let caps = re.captures(s)?;
                let m = caps
                    .name("name")
                    .or_else(|| caps.get(1))
                    .or_else(|| caps.get(0))?;
                Some(m.as_str().to_owned())
            }
        })
        .filter(|s| !s.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rip_core::{Context, ErrorEntry};

    fn error(url: &str, link_text: Option<&str>, status: u16, code: &str) -> ErrorDoc {
        ErrorDoc {
            url: url.into(),
            errors: vec![ErrorEntry::new(code, format!("HTTP {status}"), "rip-fetch")],
            status: Some(status),
            category: None,
            phase: None,
            attempt: 1,
            context: Context {
                link_text: link_text.map(Into::into),
                ..Context::default()
            },
            resolution: None,
            captured_at: None,
            extra: Map::new(),
        }
    }

    fn doc(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    fn reconciler(json: &str) -> Reconciler {
        Reconciler::from_config(&ReconcilerConfig::parse(json, "t").unwrap(), "t").unwrap()
    }

    #[test]
    fn path_tail_strips_extension_and_query() {
        assert_eq!(
            path_tail("http://h/classes/77.html?x=1#y").as_deref(),
            Some("77")
        );
        assert_eq!(path_tail("http://h/items/").as_deref(), Some("items"));
        assert_eq!(path_tail("http://h/.hidden").as_deref(), Some(".hidden"));
        assert_eq!(path_tail("http://h/").as_deref(), None);
    }

    #[test]
    fn key_capture_prefers_the_named_group() {
        let r = reconciler(r#"{"key":{"urlPattern":"(?P<cat>\\w+)\\.aspx\\?ID=(?P<key>\\d+)"}}"#);
        assert_eq!(
            r.url_key("https://x/Classes.aspx?ID=77").as_deref(),
            Some("77")
        );
        assert_eq!(r.url_key("https://x/Home.aspx"), None);
    }

    #[test]
    fn id_only_is_ambiguous_and_lists_candidates() {
        let r = reconciler(r#"{"key":{"pathTail":true}}"#);
        let e = error(
            "http://h/classes/77.html",
            Some("Catfolk"),
            404,
            "httpError.permanent",
        );
        let mut ix = r.index([&e]);
        ix.add_doc(&doc(
            r#"{"url":"http://h/ancestries/77.html","name":"Catfolk"}"#,
        ));
        ix.add_doc(&doc(
            r#"{"url":"http://h/spells/77.html","name":"Gust of Wind"}"#,
        ));
        ix.add_doc(&doc(r#"{"url":"http://h/spells/8.html","name":"Light"}"#));
        assert_eq!(
            ix.verdicts(),
            vec![Resolution::Missing {
                candidates: vec![
                    "http://h/ancestries/77.html".into(),
                    "http://h/spells/77.html".into()
                ]
            }]
        );
    }

    #[test]
    fn names_from_doc_links_and_title_pattern() {
        let r = reconciler(
            r#"{"key":{"pathTail":true},
                "name":{"docField":"/meta/title","docPattern":"^(.+?) \\|","from":["docLinks"]}}"#,
        );
        let e = error("http://h/classes/77.html", None, 404, "httpError.permanent");
        let mut ix = r.index([&e]);
        ix.add_doc(&doc(
            r#"{"url":"http://h/ancestries/77.html","meta":{"title":"Catfolk | Ancestries | S"}}"#,
        ));
        ix.add_doc(&doc(
            r#"{"url":"http://h/spells/77.html","meta":{"title":"Gust of Wind | Spells | S"}}"#,
        ));
        // The link is relative and has a fragment; the listing recorded it.
        ix.add_doc(&doc(
            r##"{"url":"http://h/classes/","links":[{"href":"77.html#top","text":" catfolk "}]}"##,
        ));
        assert_eq!(
            ix.verdicts(),
            vec![Resolution::CapturedElsewhere {
                at: "http://h/ancestries/77.html".into()
            }]
        );
    }

    #[test]
    fn dead_rules_apply_when_nothing_matches() {
        let r = reconciler(
            r#"{"key":{"pathTail":true},"dead":[
                {"status":[410],"reason":"removed upstream"},
                {"code":["wiki.missing"],"url":"/lore/","reason":"lore only"}]}"#,
        );
        let gone = error("http://h/a/1", None, 410, "httpError.permanent");
        let lore = error("http://h/lore/2", None, 404, "wiki.missing");
        let other = error("http://h/b/2", None, 404, "wiki.missing");
        let ix = r.index([&gone, &lore, &other]);
        assert_eq!(
            ix.verdicts(),
            vec![
                Resolution::Dead {
                    reason: "removed upstream".into()
                },
                Resolution::Dead {
                    reason: "lore only".into()
                },
                Resolution::Missing { candidates: vec![] },
            ]
        );
    }

    #[test]
    fn a_doc_resolving_the_failed_url_wins() {
        let r = Reconciler::default_reconciler();
        let e = error("http://h/classes/77.html", None, 404, "httpError.permanent");
        let mut ix = r.index([&e]);
        ix.add_doc(&doc(
            r#"{"url":"http://h/ancestries/77.html","resolves":"http://h/classes/77.html"}"#,
        ));
        assert_eq!(
            ix.verdicts(),
            vec![Resolution::CapturedElsewhere {
                at: "http://h/ancestries/77.html".into()
            }]
        );
    }

    #[test]
    fn bad_configs_name_the_field() {
        let bad = |json: &str| {
            Reconciler::from_config(&ReconcilerConfig::parse(json, "f.json").unwrap(), "f.json")
                .unwrap_err()
                .to_string()
        };
        assert!(bad(r#"{"key":{"urlPattern":"("}}"#).contains("`key.urlPattern`: bad regex"));
        assert!(bad(r#"{"key":{}}"#).contains("needs `urlPattern`"));
        assert!(bad(r#"{"name":{}}"#).contains("add a `key` section"));
        assert!(bad(r#"{"dead":[{"reason":"x"}]}"#).contains("`dead[0]`"));
    }
}
