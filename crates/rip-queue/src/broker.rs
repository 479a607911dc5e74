//! The connection to the broker and the streams records live in.
//!
//! A stream named `fetched` under the prefix `rip` is the JetStream stream `rip_fetched`, whose
//! one subject is `rip.fetched`. Streams keep their messages on disk (file storage) and
//! remember message ids for the deduplication window, so a record published again within it
//! is stored once.

use crate::login::redact;
use crate::{QueueError, partition};
use async_nats::jetstream::{self, stream};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest one request to the broker is waited for before it is tried again.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to reach the broker.
#[derive(Debug, Clone)]
pub struct BrokerOptions {
    /// The broker's URL, e.g. `nats://127.0.0.1:4222` (user and password may be in it, or in
    /// [`creds`](Self::creds)); `tls://` for TLS.
    pub url: String,
    /// A file whose first line is `user:password` or a token.
    pub creds: Option<PathBuf>,
    /// The prefix of stream names and subjects, so that crawls can share a broker.
    pub prefix: String,
    /// How long a broker that went away is waited for before the run gives up.
    pub patience: Duration,
    /// How long message ids are remembered to store a record published twice once.
    pub dedupe_window: Duration,
    /// Say on stderr when the broker goes away and is waited for (off with `-q`).
    pub say_waits: bool,
    /// How many servers keep each stream and table this run creates: `None` follows the
    /// broker, 3 on a JetStream cluster of three servers or more, else as many as it has
    /// (1 for a single server). Streams that exist keep theirs.
    pub replicas: Option<usize>,
}

impl BrokerOptions {
    /// Options for `url` with the defaults: prefix `rip`, 60 s of patience, a 20-minute
    /// deduplication window.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            creds: None,
            prefix: "rip".to_owned(),
            patience: Duration::from_secs(60),
            dedupe_window: Duration::from_secs(20 * 60),
            say_waits: true,
            replicas: None,
        }
    }
}

/// A connection to the broker's JetStream.
#[derive(Clone)]
pub struct Broker {
    js: jetstream::Context,
    client: async_nats::Client,
    options: BrokerOptions,
    shown_url: String,
    /// Connections made so far (the first, then one per reconnection).
    connections: Arc<AtomicU64>,
    /// Waits for the broker begun so far (each said on stderr, unless told not to).
    waits: Arc<AtomicU64>,
}

impl Broker {
    /// Connects, with the credentials of the URL or the credentials file.
    pub async fn connect(options: &BrokerOptions) -> Result<Self, QueueError> {
        let shown_url = redact(&options.url);
        let (servers, login) = crate::login::login(&options.url, options.creds.as_deref())?;
        let connections = Arc::new(AtomicU64::new(0));
        let counted = connections.clone();
        let connect = async_nats::ConnectOptions::new()
            .name("rip-queue")
            .connection_timeout(Duration::from_secs(5))
            .event_callback(move |event| {
                if matches!(event, async_nats::Event::Connected) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                std::future::ready(())
            });
        let client = login
            .apply(connect)
            // Each address on its own: the client reads a string as one address.
            .connect(servers.split(',').collect::<Vec<_>>())
            .await
            .map_err(|e| connect_error(&e, &shown_url, &login, &options.url))?;
        let js = jetstream::new(client.clone());
        Ok(Self {
            js,
            client,
            options: options.clone(),
            shown_url,
            connections,
            waits: Arc::default(),
        })
    }

    /// Connections made so far: a reader whose broker reconnected since it opened its
    /// consumer opens another (a broker that restarted lost it).
    pub(crate) fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }

    /// Waits for the broker begun so far: each a request not answered, or refused, and
    /// asked again (said on stderr unless told not to).
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::SeqCst)
    }

    /// Resolves once the server has everything sent on the connection so far.
    pub(crate) async fn flush(&self) -> Result<(), async_nats::client::FlushError> {
        self.client.flush().await
    }

    /// The JetStream context.
    pub fn jetstream(&self) -> &jetstream::Context {
        &self.js
    }

    /// The broker's address without credentials, for messages.
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// How long a broker that went away is waited for.
    pub fn patience(&self) -> Duration {
        self.options.patience
    }

    /// How long message ids are remembered (a record published again within it is stored
    /// once).
    pub fn dedupe_window(&self) -> Duration {
        self.options.dedupe_window
    }

    /// How many servers keep each stream and table created: [`BrokerOptions::replicas`], or
    /// the cluster's size up to 3 (the servers it tells its clients of, itself included),
    /// 1 for a server in no cluster.
    pub fn replicas(&self) -> usize {
        if let Some(n) = self.options.replicas {
            return n.max(1);
        }
        let info = self.client.server_info();
        match info.cluster {
            None => 1,
            // A server of a cluster just formed may not yet know every other's address:
            // the servers named on the command line count too, so that workers starting
            // together agree (they once created one stream with 2 and 3 replicas at once).
            Some(_) => (info.connect_urls.len())
                .max(self.options.url.split(',').count())
                .clamp(1, 3),
        }
    }

    /// The largest message the broker takes, in bytes.
    pub fn max_payload(&self) -> usize {
        self.client.server_info().max_payload
    }

    /// The prefix of the streams' and buckets' names.
    pub fn prefix(&self) -> &str {
        &self.options.prefix
    }

    /// The subject records of `name` are published on.
    pub fn subject(&self, name: &str) -> String {
        format!("{}.{name}", self.options.prefix)
    }

    /// The stream `name`, which must exist: reading a stream nobody wrote (a misspelt name,
    /// another `--prefix`) is an error, not an empty output.
    pub async fn existing_stream(&self, name: &str) -> Result<stream::Stream, QueueError> {
        use async_nats::jetstream::context::GetStreamErrorKind;
        check_name(name)?;
        check_name(&self.options.prefix)?;
        let full = format!("{}_{name}", self.options.prefix);
        let doing = format!("open the stream {name}");
        let found = self
            .patiently(&doing, || async {
                match self.js.get_stream(&full).await {
                    Ok(stream) => Ok(Some(stream)),
                    Err(e) => match e.kind() {
                        GetStreamErrorKind::JetStream(j) if j.code() == 404 => Ok(None),
                        _ => Err(e),
                    },
                }
            })
            .await?;
        found.ok_or_else(|| QueueError::NoStream {
            stream: name.to_owned(),
            prefix: self.options.prefix.clone(),
        })
    }

    /// The stream `name`, created (not partitioned) when it does not exist yet.
    pub async fn stream(&self, name: &str) -> Result<stream::Stream, QueueError> {
        self.stream_with(name, None).await
    }

    /// The stream `name`, created with `partitions` when given and it does not exist yet; an
    /// existing stream with another number of partitions is an error.
    pub async fn stream_with(
        &self,
        name: &str,
        partitions: Option<u32>,
    ) -> Result<stream::Stream, QueueError> {
        check_name(name)?;
        check_name(&self.options.prefix)?;
        let subject = self.subject(name);
        let config = stream::Config {
            name: format!("{}_{name}", self.options.prefix),
            subjects: vec![subject.clone(), format!("{subject}.*")],
            storage: stream::StorageType::File,
            duplicate_window: self.options.dedupe_window,
            description: partitions.filter(|&n| n > 0).map(partition::description),
            num_replicas: self.replicas(),
            ..Default::default()
        };
        let doing = format!("open the stream {name}");
        let stream = self
            .patiently(&doing, || open_or_create(&self.js, &config))
            .await?;
        let has = partitions_of(&stream);
        match partitions {
            Some(wanted) if wanted != has => Err(QueueError::Partitions {
                stream: name.to_owned(),
                has,
                wanted,
            }),
            _ => Ok(stream),
        }
    }

    /// Runs `attempt` until it succeeds, for as long as the broker's patience allows: a broker
    /// that restarts is waited for, one that stays away ends the run with [`QueueError::Gone`].
    pub async fn patiently<T, E, F, Fut>(
        &self,
        doing: &str,
        mut attempt: F,
    ) -> Result<T, QueueError>
    where
        E: std::fmt::Display,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let start = Instant::now();
        let mut pause = Duration::from_millis(100);
        // Whether every failure was an answer (the connection up, a reply in time): a
        // broker that refuses, not one that is away.
        let mut refused = true;
        loop {
            // The client queues requests while it reconnects: a request may neither answer
            // nor fail, so each attempt has a bound of its own, within the patience left.
            let left = self.options.patience.saturating_sub(start.elapsed());
            let bound = ATTEMPT_TIMEOUT.min(left).max(Duration::from_millis(100));
            let answer = match tokio::time::timeout(bound, attempt()).await {
                Ok(answer) => answer.map_err(|e| (e.to_string(), self.connected())),
                Err(_) => Err((format!("no answer within {bound:?}"), false)),
            };
            match answer {
                Ok(value) => return Ok(value),
                Err((e, answered)) => {
                    refused &= answered;
                    if start.elapsed() >= self.options.patience {
                        return Err(if refused {
                            self.refused(doing, &e)
                        } else {
                            self.gone(doing, &e)
                        });
                    }
                    if pause == Duration::from_millis(100) {
                        self.say_waiting(doing, &e, answered);
                    }
                    let left = self.options.patience.saturating_sub(start.elapsed());
                    tokio::time::sleep(pause.min(left)).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }
}

impl Broker {
    /// Whether the connection is up now (the client reconnects by itself when it is not).
    pub fn connected(&self) -> bool {
        matches!(
            self.client.connection_state(),
            async_nats::connection::State::Connected
        )
    }

    /// The error ending a run whose broker stayed away longer than its patience, while
    /// `doing`, the client's last word being `reason` (credentials removed).
    pub fn gone(&self, doing: &str, reason: &str) -> QueueError {
        QueueError::Gone {
            url: self.shown_url.clone(),
            waited: self.options.patience,
            doing: doing.to_owned(),
            reason: without_secrets(reason, &self.options.url),
        }
    }

    /// The error ending a run whose broker answered every attempt to `doing` with a refusal
    /// for longer than its patience (a refusal can be passing: JetStream starting again).
    pub fn refused(&self, doing: &str, reason: &str) -> QueueError {
        QueueError::Refused {
            doing: format!("{doing} (asked for {:?})", self.options.patience),
            reason: without_secrets(reason, &self.options.url),
        }
    }

    /// Says `line` on stderr after `rip-queue: `, unless told not to.
    pub(crate) fn say(&self, line: &str) {
        if self.options.say_waits {
            eprintln!("rip-queue: {line}");
        }
    }

    /// Says on stderr (unless told not to) that the broker did not answer, or `answered`
    /// with a refusal, and is asked again.
    pub fn say_waiting(&self, doing: &str, error: &dyn std::fmt::Display, answered: bool) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        if self.options.say_waits {
            let said = without_secrets(&error.to_string(), &self.options.url);
            // Connected to a server of a cluster: a request it did not answer is one no
            // leader answered.
            let cluster = self.client.server_info().cluster.is_some() && self.connected();
            let what = waiting_line(&said, &self.shown_url, answered, cluster);
            eprintln!(
                "rip-queue: {doing}: {said}; {what} (up to {:?})",
                self.options.patience
            );
        }
    }
}

/// What a program does after the broker at `url` answered a request with `said` (or did not
/// answer: `answered` false). On a cluster, a request timed out or a stream not found is
/// most often the cluster electing a new leader after a server left (2-8 s), or a server too
/// slow to answer, and is said so: not a refusal.
fn waiting_line(said: &str, url: &str, answered: bool, cluster: bool) -> String {
    let electing = cluster && crate::error::no_leader_answered(said);
    if electing {
        format!(
            "no leader in the broker cluster at {url} answered (an election after a server \
             left or was cut off, or a slow server); asking again"
        )
    } else if answered {
        format!("the broker at {url} refused; asking again")
    } else {
        format!("waiting for the broker at {url}")
    }
}

/// The stream of `config`, created when absent. Processes that open a new stream at once
/// (the workers of a crawl starting together) all get it: a creation that loses the race
/// (the stream exists, perhaps created with other defaults: its configuration stands) or
/// that a cluster does not answer while it starts the new stream's group is followed by
/// looking the stream up again for up to [`ATTEMPT_TIMEOUT`], without a word; only then is
/// the error the caller's to report.
pub(crate) async fn open_or_create(
    js: &jetstream::Context,
    config: &stream::Config,
) -> Result<stream::Stream, jetstream::context::CreateStreamError> {
    use jetstream::context::CreateStreamErrorKind;
    let start = Instant::now();
    let error = loop {
        let create = tokio::time::timeout(CREATE_WAIT, js.get_or_create_stream(config.clone()));
        let error = match create.await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => e,
            Err(_) => CreateStreamErrorKind::TimedOut.into(),
        };
        // A cluster just started whose servers do not all know each other yet has no
        // place for the replicas: asked again shortly.
        let starting = matches!(error.kind(), CreateStreamErrorKind::JetStream(e)
            if e.error_code() == jetstream::ErrorCode::CLUSTER_NO_PEERS);
        if !starting || start.elapsed() >= ATTEMPT_TIMEOUT {
            break error;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let racing = match error.kind() {
        CreateStreamErrorKind::TimedOut => true,
        CreateStreamErrorKind::JetStream(e) => {
            e.error_code() == jetstream::ErrorCode::STREAM_NAME_EXIST
        }
        _ => false,
    };
    if !racing {
        return Err(error);
    }
    while start.elapsed() < ATTEMPT_TIMEOUT {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let got = tokio::time::timeout(CREATE_WAIT, js.get_stream(&config.name)).await;
        if let Ok(Ok(stream)) = got {
            return Ok(stream);
        }
    }
    Err(error)
}

/// How long one creation or look-up of a stream is waited for before looking again: a
/// cluster answers in milliseconds, or not at all while the new stream elects its first
/// leader.
const CREATE_WAIT: Duration = Duration::from_secs(3);

/// How long the broker has been away, for loops whose requests the client buffers while it
/// reconnects (and so never fail): [`Absence::check`] after each round ends the run once the
/// broker has been away longer than its patience.
#[derive(Debug, Default)]
pub struct Absence {
    since: Option<Instant>,
}

impl Absence {
    /// `Ok` while the broker is connected or has been away less than its patience.
    pub fn check(&mut self, broker: &Broker, doing: &str) -> Result<(), QueueError> {
        if broker.connected() {
            self.since = None;
            return Ok(());
        }
        let since = *self.since.get_or_insert_with(|| {
            broker.say_waiting(doing, &"disconnected", false);
            Instant::now()
        });
        if since.elapsed() < broker.patience() {
            return Ok(());
        }
        Err(broker.gone(doing, "disconnected"))
    }
}

/// The partitions of `stream` (0: not partitioned), from its description.
pub fn partitions_of(stream: &stream::Stream) -> u32 {
    partition::from_description(stream.cached_info().config.description.as_deref())
}

/// The error of a first connection that failed: credentials refused, or a broker not reached.
fn connect_error(
    e: &async_nats::ConnectError,
    shown_url: &str,
    login: &crate::login::Login,
    url: &str,
) -> QueueError {
    use async_nats::ConnectErrorKind::{Authentication, AuthorizationViolation};
    let reason = without_secrets(&e.to_string(), url);
    match e.kind() {
        AuthorizationViolation | Authentication => QueueError::Unauthorized {
            url: shown_url.to_owned(),
            who: login.describe(),
            reason,
            hint: match login {
                crate::login::Login::Anonymous => {
                    " (hint: it asks for credentials: a user and password in the URL, \
                     nats://user:password@host:4222, or a --creds file)"
                }
                _ => " (hint: check the user and password, or the token)",
            },
        },
        _ => QueueError::Connect {
            url: shown_url.to_owned(),
            reason,
        },
    }
}

fn check_name(name: &str) -> Result<(), QueueError> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fine {
        Ok(())
    } else {
        Err(QueueError::BadStreamName(name.to_owned()))
    }
}

/// `message` with every credential of `url` replaced by `***`.
fn without_secrets(message: &str, url: &str) -> String {
    let mut out = message.replace(url, &redact(url));
    for one in url.split(',') {
        let start = one.find("://").map_or(0, |i| i + 3);
        if let Some(at) = one.rfind('@').filter(|&at| at > start) {
            for secret in one[start..at].split(':').filter(|s| s.len() > 2) {
                out = out.replace(secret, "***");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_show() {
        assert_eq!(
            redact("nats://u:secret@127.0.0.1:4222"),
            "nats://***@127.0.0.1:4222"
        );
        assert_eq!(
            redact("tls://token@h:1,nats://h2:2"),
            "tls://***@h:1,nats://h2:2"
        );
        assert_eq!(redact("127.0.0.1:4222"), "127.0.0.1:4222");
        let said = without_secrets("auth failed for secret on host", "nats://u:secret@h:1");
        assert!(!said.contains("secret on"), "{said}");
    }

    #[test]
    fn an_election_is_called_one_on_a_cluster() {
        let url = "nats://b1:4222,nats://b2:4222";
        for said in [
            "jetstream request timed out",
            "no stream found for given subject",
        ] {
            let line = waiting_line(said, url, true, true);
            assert!(line.contains("no leader in the broker cluster"), "{line}");
            assert!(line.contains("an election"), "{line}");
            assert!(!line.contains("refused"), "{line}");
            // One server: no election; it refused.
            let line = waiting_line(said, url, true, false);
            assert!(line.contains("refused"), "{line}");
        }
        let line = waiting_line("stream name already in use", url, true, true);
        assert!(line.contains("refused"), "{line}");
        let line = waiting_line("disconnected", url, false, true);
        assert!(line.starts_with("waiting for the broker"), "{line}");
    }

    #[test]
    fn stream_names_are_checked() {
        assert!(check_name("fetched-2").is_ok());
        for bad in ["", "a.b", "a b", "a*", ">"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
