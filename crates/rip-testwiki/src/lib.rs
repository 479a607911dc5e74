//! A real MediaWiki for tests: [`Wiki::start`] copies the cached Emberfall Wiki (built from
//! `testdata/wiki/emberfall-wiki.xml` by `scripts/mediawiki`) into a temporary folder, serves it
//! with PHP's built-in server on a free port of 127.0.0.1, and stops it when the [`Wiki`] is
//! dropped. Nothing is mocked: the answers are MediaWiki's own.
//!
//! ```no_run
//! let wiki = rip_testwiki::Wiki::start().unwrap();
//! let api = wiki.api_url(); // http://127.0.0.1:PORT/api.php
//! // … run a stage against `api` …
//! let batches = wiki.requests().unwrap().iter().filter(|r| r.param("titles").is_some()).count();
//! # let _ = (api, batches);
//! ```
//!
//! Each wiki is its own copy, so a test may delete pages ([`Wiki::delete`]) or inject faults
//! ([`Wiki::fault_maxlag`], [`Wiki::fault_status`]) without disturbing the others.
//!
//! Needs Debian's `mediawiki`, `php-cli` and `php-sqlite3` (`scripts/setup test` or
//! `scripts/mediawiki install` installs them). The first start on a machine builds the template
//! wiki (~15–60 s, once per dump; later starts take ~1 s). The cache lives in
//! `$RIP_MEDIAWIKI_CACHE`, else in `mediawiki-cache/` of the running test's target directory.

#![deny(missing_docs)]

mod log;
mod manifest;

pub use log::LoggedRequest;
pub use manifest::Manifest;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use url::Url;

/// The repository's root (two levels above this crate).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path of `scripts/mediawiki`.
pub fn script() -> PathBuf {
    repo_root().join("scripts/mediawiki")
}

/// The path of the default dump, `testdata/wiki/emberfall-wiki.xml`.
pub fn default_dump() -> PathBuf {
    repo_root().join("testdata/wiki/emberfall-wiki.xml")
}

/// What can go wrong starting or driving the test wiki.
#[derive(Debug, thiserror::Error)]
pub enum WikiError {
    /// `scripts/mediawiki` could not be run at all.
    #[error(
        "cannot run {script}: {source} (hint: run the tests from a checkout of the repository)"
    )]
    Spawn {
        /// The script's path.
        script: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// `scripts/mediawiki` ran and failed.
    #[error(
        "`scripts/mediawiki {command}` failed ({status}): {stderr} \
         (hint: `scripts/setup test` installs MediaWiki; see scripts/mediawiki --help)"
    )]
    Script {
        /// The subcommand and its arguments.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The script printed something that is not the API URL.
    #[error("`scripts/mediawiki start` printed {printed:?}, not an API URL")]
    BadUrl {
        /// What it printed.
        printed: String,
    },
    /// Reading a file of the wiki (request log, manifest) failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of the request log or the manifest is not what the script writes.
    #[error("{path}:{line}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line (1 for a whole-file document).
        line: usize,
        /// The JSON error.
        source: serde_json::Error,
    },
}

/// A running MediaWiki, stopped (and its folder removed) on drop.
#[derive(Debug)]
pub struct Wiki {
    dir: tempfile::TempDir,
    api: Url,
}

impl Wiki {
    /// Starts a copy of the Emberfall Wiki (`testdata/wiki/emberfall-wiki.xml`).
    pub fn start() -> Result<Wiki, WikiError> {
        Wiki::start_with_dump(&default_dump())
    }

    /// Starts a wiki built from another XML dump.
    pub fn start_with_dump(dump: &Path) -> Result<Wiki, WikiError> {
        Wiki::start_with(dump, &[])
    }

    /// Starts a wiki with environment variables for `scripts/mediawiki start`, e.g.
    /// `RIP_WIKI_API_MAX_RESULT_SIZE` to make MediaWiki cut batch answers.
    pub fn start_with(dump: &Path, env: &[(&str, &str)]) -> Result<Wiki, WikiError> {
        let dir = tempfile::Builder::new()
            .prefix("rip-wiki-")
            .tempdir()
            .map_err(|source| WikiError::Read {
                path: std::env::temp_dir(),
                source,
            })?;
        let wiki_dir = dir.path().join("wiki");
        let out = run_with(vec!["start".into(), wiki_dir.into(), dump.into()], env)?;
        let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let api = Url::parse(&printed).map_err(|_| WikiError::BadUrl {
            printed: printed.clone(),
        })?;
        Ok(Wiki { dir, api })
    }

    /// The API endpoint, `http://127.0.0.1:PORT/api.php`.
    pub fn api_url(&self) -> &Url {
        &self.api
    }

    /// The wiki's folder (`LocalSettings.php`, `data/`, logs).
    pub fn dir(&self) -> PathBuf {
        self.dir.path().join("wiki")
    }

    /// The request log: one JSON object per request, see [`LoggedRequest`]. It starts empty
    /// once the wiki answers.
    pub fn request_log_path(&self) -> PathBuf {
        self.dir().join("requests.log")
    }

    /// Every request the wiki received so far, in arrival order.
    pub fn requests(&self) -> Result<Vec<LoggedRequest>, WikiError> {
        log::read(&self.request_log_path())
    }

    /// Deletes pages, as an administrator would (`maintenance/deleteBatch.php`).
    pub fn delete(&self, titles: &[&str]) -> Result<(), WikiError> {
        let mut args: Vec<OsString> = vec!["delete".into(), self.dir().into()];
        args.extend(titles.iter().map(OsString::from));
        run(args).map(drop)
    }

    /// The next `count` API requests that send `maxlag=N` with `N < lag` get MediaWiki's real
    /// maxlag error (HTTP 200, `Retry-After: max(N, 5)`, `X-Database-Lag: lag`).
    pub fn fault_maxlag(&self, lag: u32, count: u32) -> Result<(), WikiError> {
        self.fault(&["maxlag", &lag.to_string(), &count.to_string()])
    }

    /// The next `count` requests get HTTP `status` with a small JSON error body, before
    /// MediaWiki runs.
    pub fn fault_status(&self, status: u16, count: u32) -> Result<(), WikiError> {
        self.fault(&["status", &status.to_string(), &count.to_string()])
    }

    /// The next `count` requests of the API action `action` (e.g. `expandtemplates`) get
    /// HTTP `status`, as [`Wiki::fault_status`]; other requests are answered.
    pub fn fault_status_for(&self, action: &str, status: u16, count: u32) -> Result<(), WikiError> {
        self.fault(&["status", &status.to_string(), &count.to_string(), action])
    }

    /// Removes every pending fault.
    pub fn clear_faults(&self) -> Result<(), WikiError> {
        self.fault(&["clear"])
    }

    fn fault(&self, what: &[&str]) -> Result<(), WikiError> {
        let mut args: Vec<OsString> = vec!["fault".into(), self.dir().into()];
        args.extend(what.iter().map(OsString::from));
        run(args).map(drop)
    }

    /// Stops the server now (drop does it too).
    pub fn stop(&self) -> Result<(), WikiError> {
        run(vec!["stop".into(), self.dir().into()]).map(drop)
    }
}

impl Drop for Wiki {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("rip-testwiki: {e}");
        }
    }
}

/// Where the template wiki is cached: `$RIP_MEDIAWIKI_CACHE`, else `mediawiki-cache/` in the
/// target directory of the running test (so `cargo clean` removes it).
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RIP_MEDIAWIKI_CACHE") {
        return Some(dir.into());
    }
    // target/<profile>/deps/<test>-<hash>
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    let profile = if deps.ends_with("deps") {
        deps.parent()?
    } else {
        deps
    };
    Some(profile.parent()?.join("mediawiki-cache"))
}

fn run(args: Vec<OsString>) -> Result<Output, WikiError> {
    run_with(args, &[])
}

fn run_with(args: Vec<OsString>, env: &[(&str, &str)]) -> Result<Output, WikiError> {
    let script = script();
    let mut cmd = Command::new("bash");
    cmd.arg(&script).args(&args);
    cmd.envs(env.iter().copied());
    if let Some(cache) = cache_dir() {
        cmd.env("RIP_MEDIAWIKI_CACHE", cache);
    }
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| WikiError::Spawn {
            script: script.clone(),
            source,
        })?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(WikiError::Script {
            command: args
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}
