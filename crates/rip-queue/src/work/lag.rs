//! The worker group's lag on the broker, for `--metrics`: the records of its input not yet
//! delivered to any worker (`queuePending`) and those delivered but not yet acknowledged
//! (`queueAckPending`: in a run, or held by a dead worker until the acknowledgement wait),
//! as the broker counts them, added up over the group's consumers: the one consumer of a
//! shared input, or one per partition of a partitioned one (`<group>-p<N>`), whichever
//! worker holds it. Every worker of a group serves the same figures.
//!
//! One request a second, whatever the number of partitions: the broker's list of the
//! stream's consumers, which carries each one's counts. Read again when the worker ends, so
//! that its last figures are the broker's then (0 and 0 when the group has done its input).

use async_nats::jetstream::consumer::Info;
use async_nats::jetstream::stream::Stream;
use futures::TryStreamExt as _;
use std::time::Duration;

/// How often the lag is read while the worker runs.
const EVERY: Duration = Duration::from_secs(1);

/// Sets the live gauges of the group's lag every [`EVERY`] until [`LagWatch::last`] (or
/// until dropped).
pub(super) struct LagWatch {
    input: Stream,
    group: String,
    task: tokio::task::JoinHandle<()>,
}

impl LagWatch {
    /// Starts reading the lag of `group` on `input` (nothing without `--metrics`).
    pub(super) fn start(input: &Stream, group: &str) -> Option<Self> {
        if !rip_core::live::enabled() {
            return None;
        }
        let (watched, name) = (input.clone(), group.to_owned());
        let task = tokio::spawn(async move {
            loop {
                read(&watched, &name).await;
                tokio::time::sleep(EVERY).await;
            }
        });
        Some(Self {
            input: input.clone(),
            group: group.to_owned(),
            task,
        })
    }

    /// Stops the timer and reads the lag once more, waiting at most the broker's request
    /// timeout (a broker away keeps the last figures).
    pub(super) async fn last(self) {
        self.task.abort();
        let _ = tokio::time::timeout(
            crate::broker::ATTEMPT_TIMEOUT,
            read(&self.input, &self.group),
        )
        .await;
    }
}

impl Drop for LagWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads the group's consumers and sets the gauges; nothing when the broker does not
/// answer or the group has no consumer yet.
async fn read(input: &Stream, group: &str) {
    let Ok(infos) = input.consumers().try_collect::<Vec<Info>>().await else {
        return;
    };
    let counts = infos
        .iter()
        .map(|i| (i.name.as_str(), i.num_pending, i.num_ack_pending as u64));
    if let Some((pending, ack_pending)) = group_lag(counts, group) {
        let live = rip_core::live::stage(super::LIVE_STAGE);
        live.set_gauge("queuePending", i64::try_from(pending).unwrap_or(i64::MAX));
        live.set_gauge(
            "queueAckPending",
            i64::try_from(ack_pending).unwrap_or(i64::MAX),
        );
    }
}

/// The records not yet delivered and those not yet acknowledged, added up over `group`'s
/// consumers among `consumers` (name, not delivered, not acknowledged); `None` when it has
/// none.
fn group_lag<'a>(
    consumers: impl Iterator<Item = (&'a str, u64, u64)>,
    group: &str,
) -> Option<(u64, u64)> {
    let of_group = |name: &str| {
        name == group
            || name
                .strip_prefix(group)
                .and_then(|rest| rest.strip_prefix("-p"))
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut lag = None;
    for (_, n, acks) in consumers.filter(|c| of_group(c.0)) {
        let (pending, ack_pending) = lag.get_or_insert((0, 0));
        *pending += n;
        *ack_pending += acks;
    }
    lag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_is_the_groups_consumers_added_up() {
        let consumers = [
            ("docs-p0", 3, 1),
            ("docs-p12", 5, 0),
            ("docs", 1, 1),
            ("docs-px", 100, 100),
            ("docs-p", 100, 100),
            ("other-p0", 100, 100),
        ];
        assert_eq!(group_lag(consumers.into_iter(), "docs"), Some((9, 2)));
        assert_eq!(group_lag(consumers.into_iter(), "none"), None);
    }
}
