//! robots.txt per origin: fetched once (through the fetcher's own path, so cached and
//! polite), remembered, and asked of each URL ([`Fetcher::disallowed_by_robots`]).

use std::sync::Arc;
use std::time::Duration;

use rip_core::ExpectedSource;
use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use super::{Fetcher, host_key};
use crate::outcome::{FetchFailure, Outcome, Skip};
use crate::robots::{Robots, RobotsRules, Verdict, robots_target};

/// The codes of a request that reached no server (or whose host rests, or the network
/// policy refused): the host is down or unreachable, whatever the URL.
const NO_CONNECTION: [&str; 8] = [
    crate::network::DENIED_CODE,
    "network.refused",
    "network.connect",
    "network.dns",
    "network.unreachable",
    "network.tls",
    "timeout.connect",
    "circuit.open",
];

/// True when `f` says the host was not reached: no response, and a code of
/// [`NO_CONNECTION`] (a user rule may have re-classified it; the code stays).
fn no_connection(f: &FetchFailure) -> bool {
    f.status.is_none() && NO_CONNECTION.contains(&f.class.code.as_str())
}

/// How long an unreachable robots.txt is remembered before it is asked for again.
const ROBOTS_RETRY: Duration = Duration::from_secs(30);

/// The robots.txt of one origin, as it was found.
#[derive(Debug, Clone)]
pub(super) enum RobotsEntry {
    /// Its rules (allow-all when it is missing).
    Rules(Arc<dyn RobotsRules>),
    /// It could not be read; the failure, and when.
    Unreachable(FetchFailure, Instant),
}

impl Fetcher {
    /// The robots.txt rules for `url`'s origin (fetched once per origin and remembered),
    /// or the failure that made it unreachable (see [`Fetcher::disallowed_by_robots`]). A
    /// 4xx for robots.txt allows everything.
    pub async fn robots(&self, url: &Url) -> Result<Arc<dyn RobotsRules>, FetchFailure> {
        let origin = url.origin().ascii_serialization();
        let cell = {
            let mut map = self.inner.robots.lock().unwrap_or_else(|p| p.into_inner());
            let cell = map.entry(origin).or_default();
            if let Some(RobotsEntry::Unreachable(_, at)) = cell.get()
                && at.elapsed() > ROBOTS_RETRY
            {
                *cell = Arc::new(OnceCell::new());
            }
            cell.clone()
        };
        let entry = cell.get_or_init(|| self.load_robots(url)).await;
        match entry {
            RobotsEntry::Rules(r) => Ok(r.clone()),
            RobotsEntry::Unreachable(f, _) => Err(f.clone()),
        }
    }

    /// May `url` be fetched, by its origin's robots.txt? `Ok(None)`: yes (robots.txt
    /// allows it, or `url` is robots.txt itself); `Ok(Some(skip))`: no, and the skip
    /// names the rule that decided (`Disallow: /private/`), for an `expected` record;
    /// `Err`: robots.txt could not be read, and `url` is not to be fetched either: a
    /// retryable `robots.unreachable` failure when the host answered (a 5xx, a 429, a
    /// body cut short), or the host's own failure when it did not (`network.refused`,
    /// `network.dns`, `timeout.connect`, `circuit.open`, … as classified).
    ///
    /// This is what every fetch asks when robots.txt is obeyed ([`HttpConfig::robots`],
    /// and not [`FetchOptions::ignore_robots`]), for its URL and each redirect's target;
    /// callers that decide before fetching (a crawler's queue) ask the same.
    ///
    /// [`HttpConfig::robots`]: crate::HttpConfig::robots
    /// [`FetchOptions::ignore_robots`]: crate::FetchOptions::ignore_robots
    pub async fn disallowed_by_robots(&self, url: &Url) -> Result<Option<Skip>, FetchFailure> {
        if url.path() == "/robots.txt" {
            return Ok(None);
        }
        let rules = self.robots(url).await?;
        Ok(match rules.check(&robots_target(url)) {
            Verdict::Allowed => None,
            Verdict::Disallowed { rule } => Some(Skip {
                reason: "disallowed by robots.txt".into(),
                source: ExpectedSource::Robots,
                rule: Some(rule),
                status: None,
            }),
        })
    }

    /// Fetches and reads the robots.txt of `url`'s origin; its `Crawl-delay` becomes the
    /// host's gap.
    async fn load_robots(&self, url: &Url) -> RobotsEntry {
        let mut robots_url = url.clone();
        robots_url.set_path("/robots.txt");
        robots_url.set_query(None);
        robots_url.set_fragment(None);
        let fetched = Box::pin(self.run(robots_url.as_str(), Some(&robots_url), None, false)).await;
        match fetched.outcome {
            Outcome::Page(resp) => {
                let rules = Robots::parse(&resp.body, &self.inner.cfg.client.robots_agent);
                if let Some(d) = rules.crawl_delay() {
                    self.inner.politeness.set_crawl_delay(&host_key(url), d);
                }
                RobotsEntry::Rules(Arc::new(rules))
            }
            Outcome::Skipped(_) => RobotsEntry::Rules(Arc::new(Robots::allow_all())),
            Outcome::Failure(f)
                if f.status
                    .is_some_and(|s| (400..500).contains(&s) && s != 429) =>
            {
                RobotsEntry::Rules(Arc::new(Robots::allow_all()))
            }
            // The host did not answer at all: the page would not have been reached either,
            // so its failure is the host's (`network.refused`, `network.dns`, …), not
            // robots.txt's.
            Outcome::Failure(mut f) if no_connection(&f) => {
                if f.class.code != crate::network::DENIED_CODE {
                    let host = host_key(url);
                    f.class.message = format!("{host} did not answer: {}", f.class.message);
                }
                RobotsEntry::Unreachable(f, Instant::now())
            }
            Outcome::Failure(mut f) => {
                f.class.message = format!("robots.txt unreachable: {}", f.class.message);
                f.class.code = "robots.unreachable".into();
                f.class.retryable = true;
                RobotsEntry::Unreachable(f, Instant::now())
            }
        }
    }
}
