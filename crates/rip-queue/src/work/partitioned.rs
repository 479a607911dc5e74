//! Work on a stream partitioned by host: a worker takes batches only from the partitions whose
//! lease it holds ([`members`](super::members)), one batch at a time per partition, so a host
//! is worked on by one program at a time on one machine, and its politeness (the gap,
//! Retry-After, the circuit breaker, kept in that machine's cache folder) holds for the whole
//! crawl however many workers there are.

pub(super) mod gate;

use super::batch::{self, Outcome};
use super::{WorkOptions, Worked, away, batches, consumer, received_while};
use crate::broker::Absence;
use crate::members::Membership;
use crate::{Broker, QueueError};
use async_nats::jetstream::Message;
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::stream::Stream;
use gate::{GATE, Gate};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

type Done = (u32, Result<Vec<Outcome>, QueueError>);

/// Works on the partitions of `input` this worker holds until stopped or idle.
pub(super) async fn work(
    broker: &Broker,
    input: Stream,
    partitions: u32,
    options: Arc<WorkOptions>,
    out_partitions: u32,
    stop: Arc<AtomicBool>,
) -> Result<Worked, QueueError> {
    let wait = options.handover_wait;
    let mut members = Membership::join(broker, &options.group, partitions, wait).await?;
    let mut job = Job {
        broker,
        input,
        options,
        out_partitions,
        partitions,
        consumers: HashMap::new(),
        running: JoinSet::new(),
        busy: BTreeSet::new(),
        stops: HashMap::new(),
        gates: HashMap::new(),
        worked: Worked::default(),
    };
    let result = job.run(&mut members, &stop).await;
    // A broker that is away forgets this worker by itself (its entries' age).
    tokio::select! {
        () = members.leave() => {}
        () = away(broker) => {}
    }
    result.map(|()| job.worked)
}

struct Job<'a> {
    broker: &'a Broker,
    input: Stream,
    options: Arc<WorkOptions>,
    out_partitions: u32,
    partitions: u32,
    consumers: HashMap<u32, PullConsumer>,
    running: JoinSet<Done>,
    busy: BTreeSet<u32>,
    /// Stops the run on each busy partition (its lease lost).
    stops: HashMap<u32, oneshot::Sender<()>>,
    /// Pauses the run on each busy partition (its lease in doubt) and resumes it.
    gates: HashMap<u32, Arc<Gate>>,
    worked: Worked,
}

impl Job<'_> {
    async fn run(&mut self, members: &mut Membership, stop: &AtomicBool) -> Result<(), QueueError> {
        let mut idle_since = Instant::now();
        let mut absence = Absence::default();
        let mut turn = 0usize;
        loop {
            let stopping = stop.load(Ordering::Relaxed);
            if stopping && self.running.is_empty() {
                return Ok(());
            }
            // Every round, so that a broker away longer than the patience ends the worker then.
            absence.check(self.broker, "keep the worker group")?;
            let connected = self.broker.connected();
            if connected && members.due() {
                self.beat(members).await;
            }
            self.settle_leases(members);
            let free: Vec<u32> = members.held().filter(|p| !self.busy.contains(p)).collect();
            turn = turn.wrapping_add(1);
            if !stopping && connected && self.start_batches(free, turn).await? {
                idle_since = Instant::now();
                continue;
            }
            if self.running.is_empty() {
                if connected
                    && self
                        .options
                        .idle_exit
                        .is_some_and(|idle| idle_since.elapsed() >= idle)
                {
                    if self.all_done().await? {
                        return Ok(());
                    }
                    idle_since = Instant::now(); // another worker's partitions still have work
                }
                tokio::time::sleep(self.options.linger).await;
                continue;
            }
            let linger = self.options.linger;
            if let Ok(Some(done)) = tokio::time::timeout(linger, self.running.join_next()).await {
                let (p, outcomes) = done.map_err(|e| QueueError::Io(std::io::Error::other(e)))?;
                self.busy.remove(&p);
                self.stops.remove(&p);
                self.gates.remove(&p);
                for outcome in outcomes? {
                    outcome.add_to(&mut self.worked);
                }
            }
        }
    }

    /// Renews the leases (a beat), pausing meanwhile each run whose lease may run out
    /// before the beat ends: a beat waits for the broker (up to its request timeout) and
    /// a machine cut off gets no answer.
    async fn beat(&mut self, members: &mut Membership) {
        let mut deadlines: Vec<(Instant, u32)> = (self.gates.keys())
            .map(|&p| (members.lease_deadline(p), p))
            .collect();
        deadlines.sort_unstable();
        let beat = members.beat(&self.busy);
        tokio::pin!(beat);
        loop {
            let next = deadlines.first().map(|&(t, _)| t);
            let until = tokio::time::Instant::from_std(next.unwrap_or_else(Instant::now));
            tokio::select! {
                beat = &mut beat => {
                    if let Err(e) = beat {
                        tracing::warn!("{e}");
                    }
                    return;
                }
                () = away(self.broker) => return,
                () = tokio::time::sleep_until(until), if next.is_some() => {
                    let (_, p) = deadlines.remove(0);
                    pause_run(&self.gates, p);
                }
            }
        }
    }

    /// Pauses the runs on partitions whose lease this worker may no longer hold (not renewed
    /// for nearly its lifetime: the broker away or this machine cut off), before another
    /// worker can take their hosts over; resumes those whose lease was renewed since at the
    /// revision it had (nobody took it: the cluster was electing a leader, or this machine's
    /// cut healed before another worker took the lease); stops those whose lease another
    /// worker took.
    fn settle_leases(&mut self, members: &Membership) {
        let busy: Vec<u32> = self.gates.keys().copied().collect();
        for p in busy {
            if !members.holds(p) {
                stop_run(&mut self.stops, p);
            } else if members.lease_at_risk(p) {
                pause_run(&self.gates, p);
            } else if self.gates[&p].paused() {
                tracing::warn!(
                    "partition {p}: its lease renewed at the revision it had (nobody took \
                     it meanwhile); its run goes on"
                );
                self.gates[&p].resume();
            }
        }
    }

    /// Starts a batch on each free partition with records, up to the parallel runs allowed,
    /// beginning at a partition that turns; whether one started.
    async fn start_batches(&mut self, free: Vec<u32>, turn: usize) -> Result<bool, QueueError> {
        let mut started = false;
        let n = free.len().max(1);
        for i in 0..free.len() {
            if self.running.len() >= self.options.parallel {
                break;
            }
            let p = free[(turn + i) % n];
            let messages = self.fetch_now(p).await?;
            if messages.is_empty() {
                continue;
            }
            let groups = batches(messages, &mut self.worked, self.options.max_deliver);
            self.busy.insert(p);
            started = true;
            let (broker, options) = (self.broker.clone(), self.options.clone());
            let out_partitions = self.out_partitions;
            let (stop, stopped) = oneshot::channel();
            self.stops.insert(p, stop);
            let gate = Arc::new(Gate::default());
            self.gates.insert(p, gate.clone());
            self.running.spawn(GATE.scope(gate, async move {
                let mut outcomes = Vec::new();
                let runs = async {
                    for group in groups {
                        let run =
                            batch::run(broker.clone(), options.clone(), out_partitions, group);
                        outcomes.push(run.await?);
                    }
                    Ok(())
                };
                // A run stopped is dropped: its processes killed, its records not
                // acknowledged (they come back after the ack wait, to the partition's owner).
                tokio::select! {
                    ran = runs => if let Err(e) = ran { return (p, Err(e)) },
                    _ = stopped => {}
                }
                (p, Ok(outcomes))
            }));
        }
        Ok(started)
    }

    /// Whether the input has had records and none is left to do in any partition; not when
    /// the broker goes away before it answers.
    async fn all_done(&mut self) -> Result<bool, QueueError> {
        let broker = self.broker;
        let done = async {
            // In this order, as in [`super::all_done`].
            let fed = super::ever_fed(&self.input).await;
            Ok(fed && self.outstanding().await? == 0)
        };
        tokio::select! {
            done = done => done,
            () = away(broker) => Ok(false),
        }
    }

    /// Records not yet done in any partition, this worker's or not (see
    /// [`super::outstanding`]).
    async fn outstanding(&mut self) -> Result<u64, QueueError> {
        let mut total = 0;
        for p in 0..self.partitions {
            total += super::outstanding(self.consumer(p).await?).await;
        }
        Ok(total)
    }

    async fn consumer(&mut self, p: u32) -> Result<&PullConsumer, QueueError> {
        if !self.consumers.contains_key(&p) {
            let c = consumer(self.broker, &self.input, &self.options, Some(p)).await?;
            self.consumers.insert(p, c);
        }
        Ok(&self.consumers[&p])
    }

    /// The records partition `p` has now (no waiting), up to a batch.
    async fn fetch_now(&mut self, p: u32) -> Result<Vec<Message>, QueueError> {
        let batch_size = self.options.batch;
        let Ok(batch) = self
            .consumer(p)
            .await?
            .fetch()
            .max_messages(batch_size)
            .messages()
            .await
        else {
            return Ok(Vec::new());
        };
        let messages = received_while(self.broker, batch, Duration::from_secs(5)).await;
        crate::chunks::for_work(self.broker, messages).await
    }
}

/// Stops the run on partition `p`, if one runs: its lease was taken by another worker.
fn stop_run(stops: &mut HashMap<u32, oneshot::Sender<()>>, p: u32) {
    if let Some(stop) = stops.remove(&p) {
        tracing::warn!(
            "partition {p}: its lease was taken by another worker; its run is stopped (its \
             records come back)"
        );
        let _ = stop.send(());
    }
}

/// Pauses the run on partition `p`, if one runs and goes on: its lease could not be renewed
/// in time.
fn pause_run(gates: &HashMap<u32, Arc<Gate>>, p: u32) {
    if let Some(gate) = gates.get(&p).filter(|g| !g.paused()) {
        tracing::warn!(
            "partition {p}: its lease could not be renewed in time; its run is paused so that \
             no two workers work on its hosts at once (it goes on if the lease is still this \
             worker's when the broker answers)"
        );
        gate.pause();
    }
}
