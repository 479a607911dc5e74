//! When a page is done: `settled`, `load`, `network-idle` or `selector:CSS`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How long without a request in flight makes a loaded page idle.
pub const IDLE: Duration = Duration::from_millis(500);
/// How much longer a page whose requests are all answered waits for the browser to say
/// its network is idle, before it is taken as idle anyway (a page on which Chromium's
/// `networkIdle` never comes must not time out for it).
pub const GRACE: Duration = Duration::from_secs(2);
/// How long a loaded page that says it has nothing pending ([`crate::settle`]), and
/// whose requests are all answered, stays quiet before it is taken as settled.
pub const SETTLE_QUIET: Duration = Duration::from_millis(100);

/// The rule that says a page is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// The `load` event fired, no request is in flight (as the interception counts
    /// them), the page says it has no work pending ([`crate::settle`]: no `fetch()`,
    /// XHR or inserted script unfinished, no timer due within a second) and nothing
    /// happened for [`SETTLE_QUIET`]; or, for a page that never says so, the
    /// [`Wait::NetworkIdle`] rule. The default: as complete as `network-idle` on every
    /// page measured, and ~0.4 s sooner.
    Settled,
    /// The `load` event fired (the document and its synchronous subresources are in).
    Load,
    /// The `load` event fired and no request has been in flight for [`IDLE`] (what a page
    /// that fills itself from a JSON endpoint needs), as both the browser (its
    /// `networkIdle` lifecycle event) and the interception count them: a request a script
    /// starts reaches the interception later than the page's renderer knows of it (on a
    /// loaded machine, seconds later). Without the browser's word, [`GRACE`] longer.
    NetworkIdle,
    /// An element matches this CSS selector.
    Selector(String),
}

/// A `--wait` value that is none of the three.
#[derive(Debug, thiserror::Error)]
pub enum BadWait {
    /// Not a known rule.
    #[error(
        "unknown wait rule `{0}` (expected `settled`, `load`, `network-idle` or `selector:CSS`, e.g. `selector:ul.items li`)"
    )]
    Unknown(String),
    /// `selector:` with a selector that does not parse.
    #[error("`{selector}` is not a CSS selector: {message}")]
    Selector {
        /// The selector given.
        selector: String,
        /// What the parser said.
        message: String,
    },
}

impl FromStr for Wait {
    type Err = BadWait;

    fn from_str(s: &str) -> Result<Self, BadWait> {
        match s {
            "settled" => Ok(Wait::Settled),
            "load" => Ok(Wait::Load),
            "network-idle" | "networkidle" => Ok(Wait::NetworkIdle),
            _ => match s.strip_prefix("selector:") {
                Some(css) => {
                    let css = css.trim();
                    scraper::Selector::parse(css).map_err(|e| BadWait::Selector {
                        selector: css.to_owned(),
                        message: e.to_string(),
                    })?;
                    Ok(Wait::Selector(css.to_owned()))
                }
                None => Err(BadWait::Unknown(s.to_owned())),
            },
        }
    }
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wait::Settled => f.write_str("settled"),
            Wait::Load => f.write_str("load"),
            Wait::NetworkIdle => f.write_str("network-idle"),
            Wait::Selector(css) => write!(f, "selector:{css}"),
        }
    }
}

impl Wait {
    /// The script that is true once the selector matches (for [`Wait::Selector`]).
    pub(crate) fn probe(&self) -> Option<String> {
        match self {
            Wait::Selector(css) => Some(format!(
                "(() => {{ try {{ return document.querySelector({}) !== null; }} catch (e) {{ return false; }} }})()",
                serde_json::Value::String(css.clone())
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_print_back() {
        for s in ["settled", "load", "network-idle", "selector:ul.items > li"] {
            assert_eq!(s.parse::<Wait>().unwrap().to_string(), s);
        }
        let e = "idle".parse::<Wait>().unwrap_err().to_string();
        assert!(e.contains("unknown wait rule `idle`"), "{e}");
        let e = "selector:ul[".parse::<Wait>().unwrap_err().to_string();
        assert!(e.contains("`ul[` is not a CSS selector"), "{e}");
    }

    #[test]
    fn the_probe_quotes_the_selector() {
        let probe = Wait::Selector("a[href=\"x\"]".into()).probe().unwrap();
        assert!(
            probe.contains(r#"querySelector("a[href=\"x\"]")"#),
            "{probe}"
        );
    }
}
