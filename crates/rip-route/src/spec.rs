//! The policy file as written: the serde (and JSON Schema) shape of a TOML or JSON policy.
//!
//! [`PolicySpec`] is what a file holds; [`crate::Policy::from_spec`] checks it and compiles
//! its regexes. `docs/schemas/policy.schema.json` is generated from these types (a test
//! keeps the two equal).

use rip_core::{ErrorCategory, Phase};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A failure policy file.
///
/// ```toml
/// maxRetries = 2            # retry while the failure's round (1-based) is <= this
/// maxRetryAfter = "5m"      # longest Retry-After honoured; a longer hint is capped
///
/// [[rules]]                 # ordered: the first rule that matches decides
/// name = "removed upstream"
/// status = 410
/// route = "expected"
/// reason = "removed upstream"
///
/// [[rules]]
/// name = "mis-linked classes"
/// status = 404
/// url = "/classes/"         # a regex, searched in the URL
/// route = "resolve"
///
/// [resolve]
/// strategies = ["crossLocator", "canonical"]
/// categorySet = ["ancestries", "spells", "classes"]
/// budget = 2
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "rip-route failure policy")]
pub struct PolicySpec {
    /// Retry (or resolve) a failure only while its round, 1-based, is at most this
    /// (default 2). A pipeline with k rounds of `rip-fetch | rip-route` passes k - 1, so
    /// that the last `rip-route` captures what is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// The longest Retry-After hint honoured between rounds, e.g. `"5m"` (default 300 s);
    /// a longer hint is cut to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry_after: Option<String>,
    /// Ordered rules; the first that matches a failure decides its route. A failure no rule
    /// matches gets the default: retry when retryable and within `maxRetries`, else capture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSpec>,
    /// How the `resolve` route finds candidate URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolve: Option<ResolveSpec>,
    /// Rules over fetched pages: a page any rule matches is an empty shell its scripts
    /// would fill in, and is sent on to the browser as a `ref` marked `needsBrowser`
    /// (`rip-fetch | rip-route | rip-render`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub render: Vec<RenderRuleSpec>,
}

/// A render rule: which fetched HTML pages need a browser (every given matcher must match;
/// at least one is needed).
///
/// ```toml
/// [[render]]
/// name = "client-side app"
/// url = "/app/"                        # a regex searched in the URL
///
/// [[render]]
/// name = "list filled in by script"
/// bodyLacks = 'class="product"'        # a regex not found in the body
/// body = '<ul class="products">\s*</ul>' # a regex found in the body
///
/// [[render]]
/// auto = true                          # the pages whose content needs script, measured
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderRuleSpec {
    /// A name for messages and the summary (default `render[N]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A regular expression searched for in the page's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A regular expression that must be found in the page's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A regular expression that must not be found in the page's body (the content the
    /// page should have and does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_lacks: Option<String>,
    /// Adaptive rendering (`--render auto`): of the pages the other matchers match (every
    /// page without them), those whose HTML shows that their content needs script (an
    /// empty application root, JSON data the body lacks, empty lists, …; see the crate
    /// `rip-adaptive`), the decision learnt per URL pattern.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

/// One rule: what it matches (every given matcher must match) and the route it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleSpec {
    /// A name for messages and for `expected` records' `rule` (default `rules[N]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Error categories, e.g. `"PERMANENT"` or `["THROTTLED", "TRANSIENT"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "category_schema")]
    pub category: Option<OneOrMany<ErrorCategory>>,
    /// HTTP statuses: `404`, `[404, 410]`, `"4xx"`, `"500-599"`. A failure without a
    /// status never matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<OneOrMany<StatusSpec>>,
    /// Error codes of the failure's last error: exact (`"httpError.permanent"`) or a prefix
    /// ending in `*` (`"network.*"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<OneOrMany<String>>,
    /// Phases: `discover`, `fetch`, `parse` (`write` failures are never routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "phase_schema")]
    pub phase: Option<OneOrMany<Phase>>,
    /// A regular expression searched for in the URL (use `^…$` to anchor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether the failure says it is retryable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// The route to take.
    pub route: RouteName,
    /// For `expected`: why (required), e.g. `"removed upstream"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For `retry`: this rule's own retry budget instead of `maxRetries`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// For `resolve`: the strategies to try, instead of `resolve.strategies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<Strategy>>,
}

/// The routes of the reference's `route:failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RouteName {
    /// Emit the `ref` again for the next `rip-fetch`.
    Retry,
    /// Emit candidate `ref`s for corrected URLs.
    Resolve,
    /// Write an `error` document.
    Capture,
    /// Write an `expected` record.
    Expected,
}

/// A resolve strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// The same id under the other categories of `categorySet`
    /// (`/classes/77.html` → `/ancestries/77.html`, `Classes.aspx?ID=77` → `Ancestries.aspx?ID=77`).
    CrossLocator,
    /// The `<link rel="canonical">` of the failed response, when it had a body.
    Canonical,
    /// `searchUrl` with `{q}` replaced by the URL-encoded link text.
    Search,
}

/// How the `resolve` route finds candidates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveSpec {
    /// Strategies, in order (default: `crossLocator`, `canonical`, `search`; each yields
    /// nothing until configured, except `canonical`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<Strategy>>,
    /// The categories `crossLocator` tries, in order of preference, e.g.
    /// `["ancestries", "spells"]` or `["Ancestries", "Classes"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub category_set: Vec<String>,
    /// A regex with a named group `category` locating the category in a URL. The default
    /// finds `/<category>/<digits>.html` and `/<Category>.aspx?ID=<digits>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The `search` strategy's URL template; `{q}` becomes the URL-encoded link text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_url: Option<String>,
    /// The most candidates tried for one failed URL (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// When the failed link had a text: a candidate `page` counts as found only if its
    /// body contains that text, a candidate `doc` only if its `name` is that text (both
    /// case-insensitive). Guards against an id shared by unrelated pages (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_link_text: Option<bool>,
}

/// A value or a list of values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// One value.
    One(T),
    /// Several values; any may match.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a list.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Self::One(v) => vec![v],
            Self::Many(v) => v,
        }
    }
}

/// The JSON Schema of policy files, as committed in `docs/schemas/policy.schema.json` and
/// printed by `rip-route --policy-schema`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(PolicySpec);
    serde_json::to_string_pretty(&schema).expect("a schema serialises") + "\n"
}

/// A status: a number, or a string `"4xx"`, `"500-599"` or `"404"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StatusSpec {
    /// One status.
    Code(u16),
    /// A class (`"5xx"`) or an inclusive range (`"500-599"`).
    Pattern(String),
}

fn one_or_many_of(names: &[&str], description: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": description,
        "oneOf": [
            { "enum": names },
            { "type": "array", "items": { "enum": names }, "minItems": 1 }
        ]
    })
}

fn category_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = ErrorCategory::ALL.iter().map(|c| c.as_str()).collect();
    one_or_many_of(
        &names,
        "Error categories, e.g. \"PERMANENT\" or [\"THROTTLED\", \"TRANSIENT\"].",
    )
}

fn phase_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = [Phase::Discover, Phase::Fetch, Phase::Parse, Phase::Write]
        .iter()
        .map(|p| p.as_str())
        .collect();
    one_or_many_of(
        &names,
        "Phases: discover, fetch, parse (write failures are never routed).",
    )
}
