//! Loading a state file: JSON, then the published schema, then contradictions, then the
//! files and regexes it names. Every problem is reported at once, each naming its field,
//! what was expected and what was found.

pub use crate::problem::Problem;
pub use crate::schema_errors::schema_problems;
use crate::state::{self, CacheMode, Format, State};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Why a state file was refused.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file could not be read.
    #[error("cannot read state file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not JSON.
    #[error("{path}:{line}:{column}: not valid JSON: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The name does not give a target name.
    #[error(
        "state file {0}: its name must be `<target>.state.json`, the target a plain name ({rule})",
        rule = crate::state::TARGET_NAME_RULE
    )]
    Name(PathBuf),
    /// Problems with the content.
    #[error("{}", render_problems(.path, .problems))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<Problem>,
    },
}

fn render_problems(path: &Path, problems: &[Problem]) -> String {
    let mut s = format!(
        "state file {} has {} problem{} (its schema: `ripperoni schema`):",
        path.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for p in problems {
        s.push_str("\n  - ");
        s.push_str(&p.to_string());
    }
    s
}

/// A state file that passed every check, with its paths resolved.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The state file.
    pub path: PathBuf,
    /// The target's name (the file name without `.state.json`).
    pub target: String,
    /// The parameters, with relative paths resolved against the state file's folder and
    /// defaults filled in (`maxRetries`, `cache.dir`).
    pub state: State,
    /// Failure-routing rounds after the first (`maxRetries`, resolved).
    pub max_retries: u32,
    /// The policy file has render rules: `rip-route` may send fetched pages on to the
    /// browser, so each round starts with a `rip-render` and one follows the last round.
    pub policy_renders: bool,
}

impl Loaded {
    /// `<basePath>/<target>`.
    pub fn target_dir(&self) -> PathBuf {
        self.state.output.base_path.join(&self.target)
    }
}

/// Reads, checks and resolves a state file.
pub fn load(path: &Path) -> Result<Loaded, StateError> {
    load_with(path, None)
}

/// [`load`], with `baseUrl` replaced by `base_url` when given (the same scrape against
/// another host: a staging copy, the test server), before any check.
pub fn load_with(path: &Path, base_url: Option<&str>) -> Result<Loaded, StateError> {
    let text = std::fs::read_to_string(path).map_err(|source| StateError::Read {
        path: path.to_owned(),
        source,
    })?;
    let target = state::target_name(path).ok_or_else(|| StateError::Name(path.to_owned()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| StateError::Json {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let mut value = value;
    if let (Some(b), Value::Object(m)) = (base_url, &mut value) {
        m.insert("baseUrl".into(), Value::String(b.to_owned()));
    }
    let invalid = |problems| StateError::Invalid {
        path: path.to_owned(),
        problems,
    };
    let problems = schema_problems(&value);
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let mut st: State = serde_json::from_value(value).map_err(|e| {
        invalid(vec![Problem {
            field: String::new(),
            message: e.to_string(),
        }])
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    resolve_paths(&mut st, base);
    let policy = st.policy.as_deref().and_then(policy_value);
    let (max_retries, mut problems) = policy_retries(&st, policy.as_ref());
    problems.extend(contradictions(&st));
    problems.extend(regex_problems(&st));
    problems.extend(file_problems(&st));
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    Ok(Loaded {
        path: path.to_owned(),
        target,
        state: st,
        max_retries,
        policy_renders: policy
            .as_ref()
            .and_then(|p| p.get("render")?.as_array().map(|a| !a.is_empty()))
            .unwrap_or(false),
    })
}

/// `base/p` with `x/..` pairs removed (lexically: `testdata/demo/../../out` is `out`).
fn join_clean(base: &Path, p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in base.join(p).components() {
        match c {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

fn resolve_paths(st: &mut State, base: &Path) {
    let fix = |p: &mut PathBuf| {
        if p.is_relative() {
            *p = join_clean(base, p);
        }
    };
    for p in [
        &mut st.rules,
        &mut st.policy,
        &mut st.reconciler,
        &mut st.output_schema,
    ]
    .into_iter()
    .flatten()
    {
        fix(p);
    }
    fix(&mut st.output.base_path);
    if let Some(w) = st.output.warc.as_mut() {
        fix(w);
    }
    if let Some(c) = st.queue.as_mut().and_then(|q| q.credentials_file.as_mut()) {
        fix(c);
    }
    match &mut st.cache.dir {
        Some(d) => fix(d),
        None => st.cache.dir = Some(st.output.base_path.join(".rip-cache")),
    }
}

/// The rounds after the first: the state file's `maxRetries`, else the policy file's,
/// else the default; both given and different is a contradiction.
fn policy_retries(st: &State, policy: Option<&Value>) -> (u32, Vec<Problem>) {
    let from_policy = policy
        .and_then(|p| p.get("maxRetries")?.as_u64())
        .and_then(|n| u32::try_from(n).ok());
    match (st.max_retries, from_policy) {
        (Some(a), Some(b)) if a != b => (
            a,
            vec![Problem {
                field: "maxRetries".into(),
                message: format!(
                    "is {a}, but the policy file {} says maxRetries = {b} (hint: say it in one place)",
                    st.policy.as_deref().unwrap_or(Path::new("")).display()
                ),
            }],
        ),
        (Some(a), _) => (a, Vec::new()),
        (None, Some(b)) => (b, Vec::new()),
        (None, None) => (state::DEFAULT_MAX_RETRIES, Vec::new()),
    }
}

/// A policy file as a JSON value, when it reads (the file is rip-route's to check).
fn policy_value(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).ok()
    } else {
        let t: toml::Value = toml::from_str(&text).ok()?;
        serde_json::to_value(t).ok()
    }
}

/// Settings that cannot hold together.
pub fn contradictions(st: &State) -> Vec<Problem> {
    let mut out = Refusals::default();
    sources(st, &mut out);
    start_urls(st, &mut out);
    if st.output_schema.is_none() && st.on_schema_error.is_some() {
        out.refuse(
            "onSchemaError",
            "says what to do with docs that break `outputSchema`, and there is none",
        );
    }
    cache_mode(st, &mut out);
    output_pretty(st, &mut out);
    if st.retry_base_delay_ms > st.retry_max_delay_ms {
        out.refuse(
            "retryBaseDelayMs",
            format!(
                "is {} ms, more than retryMaxDelayMs ({} ms)",
                st.retry_base_delay_ms, st.retry_max_delay_ms
            ),
        );
    }
    headers(st, &mut out);
    network(st, &mut out);
    if st
        .render
        .as_ref()
        .is_some_and(|r| r.auto && r.urls.is_some())
    {
        out.refuse(
            "render.urls",
            "says which pages to render, and `render` is `auto`, which judges every page \
             (hint: drop one)",
        );
    }
    if st.queue.is_some() && st.include_raw_content {
        out.refuse(
            "includeRawContent",
            "is not available with `queue`: pages are fetched on the workers' machines",
        );
    }
    let mut out = out.0;
    if let Some(urls) = &st.urls {
        out.extend(duplicate_urls(st, urls));
    }
    out
}

/// Problems found so far, in the order they are reported.
#[derive(Default)]
struct Refusals(Vec<Problem>);

impl Refusals {
    fn refuse(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(Problem {
            field: field.to_owned(),
            message: message.into(),
        });
    }
}

/// Where the pages come from: one of `apiUrl`, `urls` and `crawler`, and something.
fn sources(st: &State, out: &mut Refusals) {
    if st.api_url.is_some()
        && (st.urls.is_some()
            || st
                .crawler
                .as_ref()
                .is_some_and(|c| !c.start_urls.is_empty()))
    {
        out.refuse(
            "apiUrl",
            "`apiUrl` lists the wiki's pages through its API, `urls` and `crawler.startUrls` \
             name pages to start from: give one of them",
        );
    }
    if st.api_url.is_none() && !st.categories.is_empty() {
        out.refuse(
            "categories",
            "`categories` choose which pages of a wiki to list: give the wiki's `apiUrl`",
        );
    }
    if st.urls.is_some() && st.crawler.is_some() {
        out.refuse(
            "urls",
            "`urls` lists the pages and skips discovery, `crawler` configures discovery: \
             give one of them",
        );
    }
    if starts(st).is_empty() && st.base_url.is_none() && st.api_url.is_none() {
        out.refuse(
            "baseUrl",
            "nothing to scrape: give `baseUrl` (the crawl starts there), \
             `crawler.startUrls`, or `urls`",
        );
    }
}

/// The URLs a run starts from: `urls`, else `crawler.startUrls`.
fn starts(st: &State) -> Vec<&String> {
    match (&st.urls, &st.crawler) {
        (Some(u), _) => u.iter().collect(),
        (None, Some(c)) => c.start_urls.iter().collect(),
        (None, None) => Vec::new(),
    }
}

/// Each start URL: http(s), or relative with a `baseUrl` it resolves against.
fn start_urls(st: &State, out: &mut Refusals) {
    let field = if st.urls.is_some() {
        "urls"
    } else {
        "crawler.startUrls"
    };
    for (i, u) in starts(st).iter().enumerate() {
        let message = match url::Url::parse(u) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => continue,
            Ok(parsed) => format!(
                "expected an http(s) URL, found `{u}` (scheme `{}`)",
                parsed.scheme()
            ),
            Err(url::ParseError::RelativeUrlWithoutBase) => match &st.base_url {
                Some(b) if url::Url::parse(b).and_then(|b| b.join(u)).is_err() => {
                    format!("`{u}` does not resolve against baseUrl `{b}`")
                }
                Some(_) => continue,
                None => {
                    format!("`{u}` is relative, and there is no `baseUrl` to resolve it against")
                }
            },
            Err(e) => format!("expected a URL, found `{u}` ({e})"),
        };
        out.refuse(&format!("{field}[{i}]"), message);
    }
}

/// The network policy's networks and addresses, which the stages would refuse one by one.
fn network(st: &State, out: &mut Refusals) {
    let n = &st.network;
    for (field, nets) in [("network.allow", &n.allow), ("network.deny", &n.deny)] {
        for (i, net) in nets.iter().enumerate() {
            if !is_network(net) {
                out.refuse(
                    &format!("{field}[{i}]"),
                    format!(
                        "`{net}` is not a network (hint: a CIDR such as 10.0.0.0/8, or an address)"
                    ),
                );
            }
        }
    }
    for (host, addrs) in &n.resolve {
        if addrs.is_empty() || addrs.iter().any(|a| a.parse::<std::net::IpAddr>().is_err()) {
            out.refuse(
                &format!("network.resolve.{host}"),
                format!("{addrs:?} is not a list of IP addresses (hint: [\"192.168.1.5\"])"),
            );
        }
    }
}

/// `10.0.0.0/8`, `fd00::/8` or one address.
fn is_network(s: &str) -> bool {
    let (addr, len) = s.split_once('/').unwrap_or((s, ""));
    let Ok(ip) = addr.parse::<std::net::IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    len.is_empty() || len.parse::<u8>().is_ok_and(|l| l <= max)
}

/// The cache a run needs: raw content and a crawl both want one that is read and written.
fn cache_mode(st: &State, out: &mut Refusals) {
    let mode = st.cache.mode;
    if st.include_raw_content && mode == CacheMode::Off {
        out.refuse(
            "includeRawContent",
            "raw content is wanted but `cache.mode` is off: a rerun after an interruption \
             could only get the bodies again by fetching every page anew (hint: \
             `cache.mode: \"read-write\"`)",
        );
    }
    // A wiki's pages are listed through its API, not fetched by rip-discover.
    let crawls = st.api_url.is_none() && (st.urls.is_none() || st.crawler.is_some());
    if matches!(mode, CacheMode::Off | CacheMode::WriteOnly) && crawls {
        out.refuse(
            "cache.mode",
            format!(
                "is `{}`, but rip-discover hands every page to rip-fetch through the cache: \
                 every page would be fetched twice, and an interrupted run could not resume \
                 (hint: `read-write`, or `read-only` to replay a cache offline)",
                mode.as_arg()
            ),
        );
    }
}

/// `output.pretty` against the format: JSONL is compact, JSON files are pretty.
fn output_pretty(st: &State, out: &mut Refusals) {
    match (st.output.format, st.output.pretty) {
        (Format::Jsonl, Some(true)) => out.refuse(
            "output.pretty",
            "JSONL holds one record per line, which cannot be pretty-printed (hint: `format: \
             \"json\"` for pretty files)",
        ),
        (Format::Json, Some(false)) => out.refuse(
            "output.pretty",
            "rip-write writes record files pretty-printed (hint: `format: \"jsonl\"` for \
             compact lines)",
        ),
        _ => {}
    }
}

/// Each header: a token for a name and a one-line value.
fn headers(st: &State, out: &mut Refusals) {
    for (name, value) in &st.headers {
        let ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            && !value.contains(['\r', '\n']);
        if !ok {
            out.refuse(
                &format!("headers.{name}"),
                "expected an HTTP header name (a token) and a one-line value",
            );
        }
    }
}

/// Entries of `urls` that name a page listed before: the same URL once resolved against
/// `baseUrl` (fetched twice, one URL with two outcomes: the books cannot balance), or the
/// same page once canonicalised as rip-discover canonicalises links (fragment, case,
/// default port, escapes, `utm_*` parameters: fetched twice, two docs of one page).
fn duplicate_urls(st: &State, urls: &[String]) -> Vec<Problem> {
    let canonicalizer = rip_url::Canonicalizer::default();
    let (mut entries, mut pages) = (HashMap::new(), HashMap::new());
    let mut out = Vec::new();
    for (i, u) in urls.iter().enumerate() {
        let entry = st.entry_url(u);
        let page = canonicalizer
            .parse(&entry)
            .map_or_else(|_| entry.clone(), |c| c.to_string());
        let message = if let Some(&first) = entries.get(&entry) {
            Some(format!(
                "`{u}` is listed already, as `urls[{first}]` (`{}`): one URL, one page, one \
                 outcome (hint: list it once)",
                urls[first]
            ))
        } else {
            pages.get(&page).map(|&first| {
                format!(
                    "`{u}` is the same page as `urls[{first}]` (`{}`) once canonicalised \
                     (`{page}`): it would be fetched twice and give two docs (hint: list it \
                     once)",
                    urls[first]
                )
            })
        };
        if let Some(message) = message {
            out.push(Problem {
                field: format!("urls[{i}]"),
                message,
            });
        }
        entries.entry(entry).or_insert(i);
        pages.entry(page).or_insert(i);
    }
    out
}

fn regex_problems(st: &State) -> Vec<Problem> {
    let c = st.crawler.as_ref();
    let render = st.render.as_ref();
    [
        ("crawler.domain", c.and_then(|c| c.domain.as_ref())),
        ("crawler.delimiter", c.and_then(|c| c.delimiter.as_ref())),
        ("crawler.target", c.and_then(|c| c.target.as_ref())),
        ("render.urls", render.and_then(|r| r.urls.as_ref())),
    ]
    .into_iter()
    .filter_map(|(field, re)| {
        let re = re?;
        regex::Regex::new(re).err().map(|e| Problem {
            field: field.to_owned(),
            message: format!(
                "expected a regular expression, found `{re}`: {}",
                e.to_string().lines().last().unwrap_or_default()
            ),
        })
    })
    .collect()
}

fn file_problems(st: &State) -> Vec<Problem> {
    [
        ("rules", &st.rules),
        ("policy", &st.policy),
        ("reconciler", &st.reconciler),
        ("outputSchema", &st.output_schema),
        (
            "queue.credentialsFile",
            &st.queue.as_ref().and_then(|q| q.credentials_file.clone()),
        ),
    ]
    .into_iter()
    .filter_map(|(field, p)| {
        let p = p.as_ref()?;
        (!p.is_file()).then(|| Problem {
            field: field.to_owned(),
            message: format!(
                "expected a readable file, found nothing at {} (paths are relative to the \
                 state file's folder)",
                p.display()
            ),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::schema_errors::dotted;

    fn problems(v: Value) -> Vec<String> {
        schema_problems(&v).iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_minimal_state_passes_the_schema() {
        assert!(problems(json!({"baseUrl": "http://127.0.0.1:8080/"})).is_empty());
    }

    #[test]
    fn wrong_types_name_the_field_what_was_expected_and_found() {
        let p = problems(json!({
            "baseUrl": "http://x/",
            "crawler": {"maxPages": "ten"},
            "output": {"format": "xml"},
            "rateLimitMs": -5
        }));
        assert!(
            p.iter()
                .any(|m| m.starts_with("`crawler.maxPages`: expected")
                    && m.contains("found \"ten\" (a string)")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.starts_with("`output.format`: expected one of")
                    && m.contains("\"jsonl\"")
                    && m.contains("found \"xml\"")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.starts_with("`rateLimitMs`:") && m.contains("-5")),
            "{p:?}"
        );
    }

    #[test]
    fn a_typo_is_an_unknown_field_with_a_suggestion() {
        let p = problems(json!({"baseUrl": "http://x/", "crawler": {"maxPage": 3}}));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("`crawler.maxPage`: unknown field `maxPage` in `crawler`"));
        assert!(p[0].contains("did you mean `maxPages`?"), "{}", p[0]);
        let p = problems(json!({"baseURL": "http://x/"}));
        assert!(p[0].contains("did you mean `baseUrl`?"), "{p:?}");
    }

    #[test]
    fn urls_must_be_http() {
        let p = problems(json!({"baseUrl": "ftp://x/"}));
        assert!(p[0].starts_with("`baseUrl`: expected"), "{p:?}");
    }

    #[test]
    fn bad_networks_are_refused_naming_the_field_and_good_ones_pass() {
        let st: State = serde_json::from_value(json!({
            "baseUrl": "http://127.0.0.1:8080/",
            "network": {
                "allow": ["10.0.0.0/8", "192.168.1.5", "fd00::/8", "10.0.0.0/33"],
                "deny": ["lan"],
                "resolve": {"wiki.lan": ["192.168.1.5"], "bad.lan": ["nowhere"]}
            },
        }))
        .unwrap();
        let p: Vec<String> = contradictions(&st).iter().map(|p| p.to_string()).collect();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(
            p[0].contains("network.allow[3]") && p[0].contains("10.0.0.0/33"),
            "{p:?}"
        );
        assert!(
            p[1].contains("network.deny[0]") && p[1].contains("`lan`"),
            "{p:?}"
        );
        assert!(p[2].contains("network.resolve.bad.lan"), "{p:?}");
    }

    #[test]
    fn contradictions_are_named() {
        let st: State = serde_json::from_value(json!({
            "urls": ["/a.html"],
            "crawler": {},
            "includeRawContent": true,
            "cache": {"mode": "off"},
            "output": {"format": "jsonl", "pretty": true},
            "onSchemaError": "warn",
            "retryBaseDelayMs": 5000,
            "retryMaxDelayMs": 1000,
        }))
        .unwrap();
        let fields: Vec<String> = contradictions(&st).into_iter().map(|p| p.field).collect();
        for f in [
            "urls",
            "urls[0]",
            "includeRawContent",
            "cache.mode",
            "output.pretty",
            "onSchemaError",
            "retryBaseDelayMs",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} not in {fields:?}");
        }
    }

    #[test]
    fn render_auto_is_a_word_or_a_field_and_refused_with_urls() {
        let fields = |render: Value| -> Vec<String> {
            let st: State =
                serde_json::from_value(json!({"urls": ["http://h/a"], "render": render})).unwrap();
            assert!(st.render.as_ref().is_some_and(|r| r.auto));
            contradictions(&st).into_iter().map(|p| p.field).collect()
        };
        assert_eq!(fields(json!("auto")), Vec::<String>::new());
        assert_eq!(
            fields(json!({"auto": true, "tabs": 2})),
            Vec::<String>::new()
        );
        assert_eq!(
            fields(json!({"auto": true, "urls": "/app/"})),
            ["render.urls"]
        );
    }

    #[test]
    fn api_url_alone_is_a_source_and_refused_with_urls() {
        let st: State = serde_json::from_value(json!({"apiUrl": "http://wiki/api.php"})).unwrap();
        assert!(contradictions(&st).is_empty());
        let st: State = serde_json::from_value(
            json!({"apiUrl": "http://wiki/api.php", "urls": ["http://wiki/index.php/A"]}),
        )
        .unwrap();
        let p = contradictions(&st);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].message.contains("give one of them"), "{p:?}");
    }

    #[test]
    fn categories_need_an_api_url() {
        let st: State = serde_json::from_value(
            json!({"apiUrl": "http://wiki/api.php", "categories": ["Items", "Category:Places"]}),
        )
        .unwrap();
        assert!(contradictions(&st).is_empty());
        let st: State =
            serde_json::from_value(json!({"baseUrl": "http://site/", "categories": ["Items"]}))
                .unwrap();
        let p = contradictions(&st);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].field, "categories");
    }

    #[test]
    fn relative_paths_are_joined_lexically() {
        assert_eq!(
            join_clean(Path::new("testdata/demo"), Path::new("../../out")),
            PathBuf::from("out")
        );
        assert_eq!(
            join_clean(Path::new(""), Path::new("a.toml")),
            PathBuf::from("a.toml")
        );
        assert_eq!(
            join_clean(Path::new("/x/y"), Path::new("../z")),
            PathBuf::from("/x/z")
        );
        assert_eq!(
            join_clean(Path::new("a"), Path::new("..")),
            PathBuf::from(".")
        );
    }

    #[test]
    fn field_paths_are_dotted_with_indexes() {
        assert_eq!(
            dotted(&["crawler".into(), "startUrls".into(), "2".into()]),
            "crawler.startUrls[2]"
        );
    }
}
