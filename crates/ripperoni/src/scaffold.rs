//! `ripperoni scaffold <name>`: a starter state file, rules file and failure policy that
//! run as they are
//! against the bundled demo site (`rip-testserver --dir testdata/site --bind
//! 127.0.0.1:8080`), to be edited for a real site.

use crate::state::{Crawler, Output, State};
use std::path::{Path, PathBuf};

/// The base URL a scaffold points at: the demo site as `rip-testserver --bind
/// 127.0.0.1:8080` serves it.
pub const DEMO_BASE_URL: &str = "http://127.0.0.1:8080/";

/// The starter rules: one concept per section of the demo site, routed by URL.
pub const RULES: &str = r#"# Extraction rules for rip-parse (schema: docs/schemas/rules.schema.json).
# Concepts are tried in order; the first whose `match` holds takes the page. Pages no
# concept takes become `unknown` docs with the generic fields (title, text, links).
# Check a change with: rip-parse --rules THIS_FILE --check-rules

name = "starter"
description = "Starter rules for the Emberfall Compendium demo site: edit for your site"

# Fields shared by the sections, inherited with `extends`.
[[concept]]
name = "entry"
abstract = true
fields.name = { selector = "article h1.name", required = true }
fields.traits = { selector = "ul.traits li", list = true }
fields.summary = { selector = "p.description" }

[[concept]]
name = "item"
extends = "entry"
match.url = '/items/item-(?P<id>\d+)\.html$'
fields.price = { selector = "dd.price" }
fields.level = { selector = "dd.level", type = "integer" }

[[concept]]
name = "ancestry"
extends = "entry"
match.url = '/ancestries/(?P<id>\d+)\.html$'
fields.hitPoints = { selector = "dd.hp", type = "integer" }

[[concept]]
name = "class"
extends = "entry"
match.url = '/classes/(?P<id>\d+)\.html$'
fields.keyAbility = { selector = "dd.key-ability" }

[[concept]]
name = "spell"
extends = "entry"
match.url = '/spells/(?P<id>\d+)\.html$'
fields.rank = { selector = "dd.rank" }
"#;

/// The starter failure policy: the default routes (retry what is retryable within
/// `maxRetries`, then capture), plus pages that are not HTML as a known gap.
pub const POLICY: &str = r#"# Failure policy for rip-route (schema: docs/schemas/policy.schema.json).
# Rules are tried in order; a failure no rule matches is retried while it is retryable
# and rounds are left (maxRetries, in the state file), then captured as an error document.

# rip-parse makes a page that is not HTML (an image, a PDF) a `parse.notHtml` failure:
# here that is a known gap, an `expected` record, not an error.
[[rules]]
name = "not a page"
code = "parse.notHtml"
route = "expected"
reason = "not HTML: images and downloads are not scraped"
"#;

/// The starter state for target `name`, its rules and policy beside it.
pub fn state(name: &str, base_url: &str) -> State {
    State {
        base_url: Some(base_url.to_owned()),
        crawler: Some(Crawler {
            max_depth: Some(5),
            max_pages: Some(10_000),
            concurrency: Some(4),
            ..Default::default()
        }),
        rate_limit_ms: 50,
        jitter_ms: 10,
        max_retries: Some(2),
        retry_base_delay_ms: 200,
        retry_max_delay_ms: 5_000,
        rules: Some(PathBuf::from(format!("{name}.rules.toml"))),
        policy: Some(PathBuf::from(format!("{name}.policy.toml"))),
        output: Output {
            base_path: PathBuf::from("out"),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// What `scaffold` could not do.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// A file is already there.
    #[error("{0} already exists (hint: pick another name, or remove it)")]
    Exists(PathBuf),
    /// The name cannot be a target name.
    #[error(
        "`{0}` cannot name a target: use {rule} (it becomes the output folder's name)",
        rule = crate::state::TARGET_NAME_RULE
    )]
    Name(String),
    /// Writing failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Writes `<dir>/<name>.state.json`, `<dir>/<name>.rules.toml` and
/// `<dir>/<name>.policy.toml`; returns their paths.
/// Refuses to overwrite.
pub fn write(dir: &Path, name: &str, base_url: &str) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !crate::state::is_target_name(name) {
        return Err(ScaffoldError::Name(name.to_owned()));
    }
    let state_path = dir.join(format!("{name}{}", crate::state::SUFFIX));
    let rules_path = dir.join(format!("{name}.rules.toml"));
    let policy_path = dir.join(format!("{name}.policy.toml"));
    for p in [&state_path, &rules_path, &policy_path] {
        if p.exists() {
            return Err(ScaffoldError::Exists(p.clone()));
        }
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ScaffoldError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    std::fs::write(&rules_path, RULES).map_err(io(&rules_path))?;
    std::fs::write(&policy_path, POLICY).map_err(io(&policy_path))?;
    std::fs::write(&state_path, state(name, base_url).to_pretty_json()).map_err(io(&state_path))?;
    Ok(vec![state_path, rules_path, policy_path])
}
