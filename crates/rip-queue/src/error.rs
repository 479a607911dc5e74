//! What can go wrong between a pipeline and the broker.

use std::time::Duration;

/// An error of `rip-queue`. Messages name the broker by its address without credentials.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The broker did not answer at the start.
    #[error("cannot reach the broker at {url}: {reason}")]
    Connect {
        /// The broker's address, credentials removed.
        url: String,
        /// What the client said.
        reason: String,
    },
    /// The broker refused the credentials it was given (or asks for some and none were).
    #[error("the broker at {url} refused {who}: {reason}{hint}")]
    Unauthorized {
        /// The broker's address, credentials removed.
        url: String,
        /// Who was refused (`the user alice`, `a token`, `no credentials`), never a secret.
        who: String,
        /// What the client said.
        reason: String,
        /// What to do about it.
        hint: &'static str,
    },
    /// A broker URL that cannot be used as given.
    #[error("the broker URL {url}: {reason}")]
    BrokerUrl {
        /// The URL, credentials removed.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The broker stayed away longer than the run allows.
    #[error("the broker at {url} has not answered for {waited:?} ({doing}): {reason}")]
    Gone {
        /// The broker's address, credentials removed.
        url: String,
        /// How long it was waited for.
        waited: Duration,
        /// What was being done.
        doing: String,
        /// The last error the client gave.
        reason: String,
    },
    /// A JetStream request the broker refused (stream or consumer settings), or that no
    /// leader answered in time (said so: see [`no_leader_answered`]).
    #[error("{}", refused_text(doing, reason))]
    Refused {
        /// What was being asked.
        doing: String,
        /// The broker's answer.
        reason: String,
    },
    /// A stream name that JetStream cannot take.
    #[error("bad stream name `{0}`: use letters, digits, `-` and `_`")]
    BadStreamName(String),
    /// A stream to read that nobody created.
    #[error(
        "no stream {stream} under the prefix {prefix} on the broker (nothing was pushed to it; another --prefix?)"
    )]
    NoStream {
        /// The stream.
        stream: String,
        /// The prefix.
        prefix: String,
    },
    /// A stream asked for with other partitions than it has.
    #[error(
        "the stream {stream} has {has} partitions, not {wanted} (0: not partitioned); use another stream name or --prefix"
    )]
    Partitions {
        /// The stream.
        stream: String,
        /// Its partitions.
        has: u32,
        /// The partitions asked for.
        wanted: u32,
    },
    /// The credentials file could not be read.
    #[error("cannot read the credentials file {path}: {source}")]
    Credentials {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading input or writing output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The command a worker runs could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Whether a JetStream request's failure `said` is one no leader answered in time: a request
/// timed out, or a publish with no stream to take it. On a cluster that is most often an
/// election (2-8 s after a server left or was cut off), else a server too slow to answer.
pub fn no_leader_answered(said: &str) -> bool {
    [
        "timed out",
        "no answer within",
        "no stream found",
        "no responders",
        "temporarily unavailable",
    ]
    .iter()
    .any(|sign| said.contains(sign))
}

fn refused_text(doing: &str, reason: &str) -> String {
    if no_leader_answered(reason) {
        format!(
            "the broker did not answer in time to {doing}: {reason} (a slow broker, or a \
             cluster electing a leader after a server left or was cut off)"
        )
    } else {
        format!("the broker refused to {doing}: {reason}")
    }
}

impl QueueError {
    /// The broker refused (or could not answer) a request: what was asked, and its answer.
    pub fn refused(doing: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self::Refused {
            doing: doing.into(),
            reason: reason.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::QueueError;

    #[test]
    fn a_request_no_leader_answered_is_not_called_refused() {
        let e = QueueError::refused("write a table", "timed out: didn't receive ack in time");
        let text = e.to_string();
        assert!(
            text.starts_with("the broker did not answer in time"),
            "{text}"
        );
        assert!(text.contains("electing a leader"), "{text}");
        assert!(super::no_leader_answered("no answer within 10s"));
        let e = QueueError::refused("open the stream refs", "subjects overlap");
        assert_eq!(
            e.to_string(),
            "the broker refused to open the stream refs: subjects overlap"
        );
    }
}
