//! The state file, `<name>.state.json`: the run parameters of one scrape (the reference's
//! `RunStateSchema`), its types, its JSON Schema and its loading.
//!
//! The published schema (`docs/schemas/state.schema.json`, printed by `ripperoni schema`)
//! is generated from these types; a test keeps the committed copy equal to it. A state
//! file is checked against the schema *before* it is decoded, so that every problem is
//! named by its field ([`crate::validate`]), and then against itself for contradictions
//! ([`crate::validate::contradictions`]).
//!
//! Relative paths in a state file (`rules`, `policy`, `reconciler`, `outputSchema`,
//! `cache.dir`, `output.basePath`, `output.warc`) are relative to the state file's folder, so a state
//! file and its companions move together.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The run parameters of one scrape. The target's name is the state file's name without
/// `.state.json`: `emberfall.state.json` writes `<basePath>/emberfall/`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "ripperoni state file", rename = "State")]
pub struct State {
    /// The JSON Schema this file follows (editors use it; ripperoni ignores it).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,

    /// The site's root URL: where the crawl starts when `crawler.startUrls` is empty, and
    /// the base that relative `urls` are resolved against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url, regex(pattern = r"^https?://"))]
    pub base_url: Option<String>,

    /// A MediaWiki Action API endpoint (`.../api.php`): scrape the wiki's pages through
    /// the API instead of crawling HTML: every page of the main namespace (`rip-discover
    /// --mediawiki`; `crawler.maxPages` caps them), fetched 50 titles per API request.
    /// Excludes `urls` and `crawler.startUrls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url, regex(pattern = r"^https?://"))]
    pub api_url: Option<String>,

    /// With `apiUrl`: only the pages of these categories (with or without `Category:`;
    /// the union, each page once; subcategories are not descended), as `rip-discover
    /// --category` lists them, instead of every page of the main namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,

    /// An explicit page list (absolute URLs, or paths relative to `baseUrl`): these pages
    /// are fetched as they are and discovery is skipped. Excludes `crawler`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub urls: Option<Vec<String>>,

    /// The link crawler (`rip-discover`): where it starts and which links it follows and
    /// collects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawler: Option<Crawler>,

    /// Minimum gap between two requests to one host, in milliseconds (`rip-fetch
    /// --delay`).
    #[serde(default = "default_rate_limit_ms")]
    pub rate_limit_ms: u64,

    /// A random extra gap of up to this many milliseconds added to each request
    /// (`--jitter`).
    #[serde(default = "default_jitter_ms")]
    pub jitter_ms: u64,

    /// Failure-routing rounds after the first: a transient failure is fetched again up to
    /// this many times, each round a `rip-fetch | rip-route` pair of the pipeline
    /// (default: the policy file's `maxRetries`, else 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10))]
    pub max_retries: Option<u32>,

    /// First delay between HTTP attempts inside one round, in milliseconds
    /// (`--retry-base`).
    #[serde(default = "default_retry_base_delay_ms")]
    #[schemars(range(min = 1))]
    pub retry_base_delay_ms: u64,

    /// Largest delay between HTTP attempts, in milliseconds (`--retry-max`).
    #[serde(default = "default_retry_max_delay_ms")]
    #[schemars(range(min = 1))]
    pub retry_max_delay_ms: u64,

    /// Extra request headers, name → value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,

    /// The response cache shared by every stage; it is what makes a rerun resume without
    /// fetching again.
    #[serde(default)]
    pub cache: Cache,

    /// Where and how records are written.
    #[serde(default)]
    pub output: Output,

    /// Also keep each page's body as fetched, under `<target>/raw/` (`rip-write --raw`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_raw_content: bool,

    /// A rules file (TOML) for `rip-parse`: concepts and fields. Without it, generic docs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<PathBuf>,

    /// A failure policy file (TOML or JSON) for `rip-route`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PathBuf>,

    /// A reconciler configuration (JSON) for `rip-reconcile`. Without it every failure is
    /// `missing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciler: Option<PathBuf>,

    /// A JSON Schema file every doc must satisfy, whatever its concept
    /// (`rip-parse --output-schema`), checked after the concept's own schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<PathBuf>,

    /// What a doc that breaks `outputSchema` becomes (with `outputSchema` only;
    /// `rip-parse --on-schema-error`, default `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_schema_error: Option<OnSchemaError>,

    /// Pages fetched at once (`rip-fetch --concurrency`, also its per-host limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1024))]
    pub parallel_workers: Option<u32>,

    /// Spread the scrape over machines through a NATS JetStream broker: `ripperoni run`
    /// discovers and collects (the coordinator), `ripperoni worker` (on any number of
    /// machines, with this state file and its companions) fetches, parses and routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,

    /// Render pages in headless Chromium (`rip-render`) instead of fetching them: every
    /// page, or those whose URL matches `urls`, so that pages built by script come out with
    /// their content; or `"auto"` (also `{"auto": true, ...}`): every page is fetched, and
    /// those whose HTML shows that their content needs script are rendered (`rip-discover
    /// --render auto`, `rip-route --render auto`). Needs Debian's `chromium`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "render_section"
    )]
    #[schemars(with = "Option<RenderSection>")]
    pub render: Option<Render>,

    /// The network policy of every stage that fetches: which addresses requests may
    /// connect to. Loopback, private, link-local, unique-local and other special-use
    /// addresses are refused but for the networks of the start URLs (see
    /// docs/guide/conventions.md); this opens or closes more.
    #[serde(default, skip_serializing_if = "Network::is_empty")]
    pub network: Network,
}

/// Which addresses requests may connect to, besides the start URLs' networks.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Network {
    /// Networks let through (`--allow-network`): CIDRs such as `10.0.0.0/8`, or addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Networks refused whatever else allows them (`--deny-network`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Names resolved without DNS, name → addresses (`--resolve`); the addresses are held
    /// to the policy as any other.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resolve: BTreeMap<String, Vec<String>>,
}

impl Network {
    /// Nothing set: the default policy.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty() && self.resolve.is_empty()
    }
}

/// The two forms of `render`: `"auto"`, or the settings.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // read through `render_section`
enum RenderSection {
    /// `"auto"`: the pages whose content needs script.
    Mode(RenderMode),
    /// The settings.
    Settings(Render),
}

/// `render`'s one word.
#[derive(Deserialize, JsonSchema)]
enum RenderMode {
    /// The pages whose content needs script, as `{"auto": true}`.
    #[serde(rename = "auto")]
    Auto,
}

fn render_section<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Render>, D::Error> {
    Ok(Some(match RenderSection::deserialize(d)? {
        RenderSection::Mode(RenderMode::Auto) => Render {
            auto: true,
            ..Render::default()
        },
        RenderSection::Settings(r) => r,
    }))
}

/// Which pages go through the browser, and how it waits for them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Render {
    /// A regex: only the pages whose URL matches are rendered, the others fetched
    /// (`rip-render --only`). Default: every page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = ".+"))]
    pub urls: Option<String>,
    /// When a page is done: `settled` (the default: loaded, nothing in flight, and the
    /// page says it has no work pending), `load`, `network-idle` or `selector:CSS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(settled|load|network-idle|selector:.+)$"))]
    pub wait: Option<String>,
    /// Pages rendered at once: browser tabs (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub tabs: Option<u32>,
    /// The longest a page may take to settle, in milliseconds (default 30000); then it is
    /// a TIMEOUT failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub page_timeout_ms: Option<u64>,
    /// Pages share one browser session (`rip-render --session`): cookies and storage a
    /// page leaves are seen by the pages after it. Default: a fresh context per page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session: bool,
    /// Render only the pages whose fetched HTML shows that their content needs script
    /// (`"render": "auto"` says the same): every page is fetched; `rip-discover` and each
    /// round's `rip-route` judge it (`--render auto`), and a `rip-render --only-marked`
    /// renders those they send on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

/// The broker a scrape spread over machines goes through.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Queue {
    /// The broker's URL (`nats://host:4222`, `tls://host:4222`, several separated by
    /// commas), without credentials: they go in `credentialsFile`.
    #[schemars(regex(pattern = r"^(nats|tls|ws|wss)://[^@]+$"))]
    pub broker: String,
    /// A file whose first line is `user:password` or a token (relative to the state file's
    /// folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_file: Option<PathBuf>,
    /// The prefix of the streams' names, so that several scrapes share a broker.
    #[serde(default = "default_queue_prefix")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,32}$"))]
    pub prefix: String,
    /// Partitions by host of the pages to fetch: a host is fetched by one worker at a time,
    /// so `rateLimitMs` holds for the scrape however many workers there are.
    #[serde(default = "default_queue_partitions")]
    #[schemars(range(min = 1, max = 4096))]
    pub partitions: u32,
}

fn default_queue_prefix() -> String {
    "rip".to_owned()
}

fn default_queue_partitions() -> u32 {
    16
}

/// The link crawler's parameters: the reference's three regexes and its budgets.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Crawler {
    /// Start URLs (absolute, or relative to `baseUrl`); default: `baseUrl`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_urls: Vec<String>,
    /// A regex links must match to be considered at all (default: the start URLs'
    /// origins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r".+"))]
    pub domain: Option<String>,
    /// A regex: links that match are traversed (followed). Default: every considered link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r".+"))]
    pub delimiter: Option<String>,
    /// A regex: traversed links that match are collected and scraped. Default: every
    /// traversed link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r".+"))]
    pub target: Option<String>,
    /// Collect at most this many pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_pages: Option<u64>,
    /// Follow links up to this depth (the start URLs are depth 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// Pages crawled at once (`rip-discover --concurrency`, also its per-host limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1024))]
    pub concurrency: Option<u32>,
    /// The crawler's own gap between requests to a host (default: the top-level
    /// `rateLimitMs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_ms: Option<u64>,
    /// The crawler's own jitter (default: the top-level `jitterMs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<u64>,
    /// Also seed the crawl from the site's sitemaps.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sitemaps: bool,
    /// Also follow `rel="nofollow"` links.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follow_nofollow: bool,
}

/// The response cache.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cache {
    /// The cache folder (default: `<basePath>/.rip-cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// What the cache may do.
    #[serde(default)]
    pub mode: CacheMode,
    /// How long an entry is fresh, in milliseconds (default: forever).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub ttl_ms: Option<u64>,
}

impl Default for Cache {
    fn default() -> Self {
        Self {
            dir: None,
            mode: CacheMode::ReadWrite,
            ttl_ms: None,
        }
    }
}

/// What the cache may do (`--cache`): rip-core's, the same four names as every stage's
/// `--cache` flag.
pub use rip_core::CacheMode;

/// Where and how records are written.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Output {
    /// The output folder; the scrape writes `<basePath>/<target>/`, and the run history
    /// `<basePath>/runs.ndjson`.
    #[serde(default = "default_base_path")]
    pub base_path: PathBuf,
    /// `json`: one pretty-printed file per record; `jsonl`: `docs.jsonl`, `errors.jsonl`
    /// and `expected.jsonl`, one compact line per record.
    #[serde(default)]
    pub format: Format,
    /// Pretty-printed JSON (default: true for `json`, false for `jsonl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretty: Option<bool>,
    /// Where the record files (`json`) and raw bodies go: `flat`, directly in
    /// `<basePath>/<target>/` (`raw/`), or `sharded`, in 256 sub-folders `00` … `ff` (the
    /// first two hex digits of the SHA-256 of the file name's part before any `~`), for
    /// scrapes of 100,000 pages and more (`rip-write --layout`).
    #[serde(default, skip_serializing_if = "Layout::is_flat")]
    pub layout: Layout,
    /// Archive what went over the wire: every stage that fetches (`rip-discover`,
    /// `rip-fetch`, `rip-render` when the run renders) writes each request it sends and
    /// the response as WARC/1.1 records into this folder (`--warc`), each process its own
    /// `rip-*.warc.gz` files, kept across runs. Cache hits are not archived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc: Option<PathBuf>,
}

impl Default for Output {
    fn default() -> Self {
        Self {
            base_path: default_base_path(),
            format: Format::Json,
            pretty: None,
            layout: Layout::Flat,
            warc: None,
        }
    }
}

/// The output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One file per record.
    #[default]
    Json,
    /// One line per record.
    Jsonl,
}

/// How the record files lie in the output folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Directly in the folder.
    #[default]
    Flat,
    /// In sub-folders `00` … `ff`.
    Sharded,
}

impl Layout {
    fn is_flat(&self) -> bool {
        *self == Self::Flat
    }
}

/// What a doc that breaks the output schema becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnSchemaError {
    /// A VALIDATION failure (`parse.schema`) instead of the doc (the default).
    Skip,
    /// The doc, with the violations in its `errors` and a warning on stderr.
    Warn,
    /// That failure, then `rip-parse` stops: the run fails.
    Halt,
}

impl OnSchemaError {
    /// The value of `rip-parse --on-schema-error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Warn => "warn",
            Self::Halt => "halt",
        }
    }
}

fn default_rate_limit_ms() -> u64 {
    250
}
fn default_jitter_ms() -> u64 {
    100
}
fn default_retry_base_delay_ms() -> u64 {
    500
}
fn default_retry_max_delay_ms() -> u64 {
    30_000
}
fn default_base_path() -> PathBuf {
    PathBuf::from("out")
}

/// The failure-routing rounds after the first when neither the state file nor the policy
/// says (the reference's default failure policy).
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// The suffix of state file names.
pub const SUFFIX: &str = ".state.json";

/// The JSON Schema of state files, as committed in `docs/schemas/state.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(State);
    rip_core::published_schema::publish(serde_json::to_value(&schema).expect("a schema serialises"))
}

/// What a target's name may be, as error messages say it. The name becomes the output
/// folder's and the argument of `rip-write --name`; a leading `-` would read as an
/// option, a leading `.` as a hidden folder (and `.<target>.staging` is ripperoni's).
pub const TARGET_NAME_RULE: &str =
    "letters, digits, `-`, `_` and `.`, not starting with `-` or `.`";

/// Whether `name` follows [`TARGET_NAME_RULE`].
pub fn is_target_name(name: &str) -> bool {
    !name.starts_with(['-', '.'])
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The target's name of a state file: its file name without `.state.json` (or without
/// `.json`, for a file not named the usual way), when it follows [`TARGET_NAME_RULE`].
pub fn target_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(SUFFIX)
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(name);
    is_target_name(stem).then(|| stem.to_owned())
}

impl State {
    /// The URL an entry of `urls` or `crawler.startUrls` enters the pipeline as: an
    /// absolute URL as it is written (a `ref`'s URL is an identity, carried byte for
    /// byte), a relative one joined to `baseUrl`.
    pub fn entry_url(&self, u: &str) -> String {
        match (&self.base_url, url::Url::parse(u)) {
            (_, Ok(_)) | (None, _) => u.to_owned(),
            (Some(b), Err(_)) => url::Url::parse(b)
                .and_then(|b| b.join(u))
                .map_or_else(|_| u.to_owned(), |j| j.to_string()),
        }
    }

    /// The serialised form of a state file a person would write: the given fields only.
    pub fn to_pretty_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a state serialises");
        s.push('\n');
        s
    }
}
