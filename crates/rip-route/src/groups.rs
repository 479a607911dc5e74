//! Resolve groups held by the `rip-route` downstream of the candidates' `rip-fetch`.
//!
//! A group is a *head* (the original failure, with `resolving` listing its candidates) and
//! one outcome per candidate: a success (`page` or `doc`) or not (`failure`, `expected`,
//! `error`). When every candidate has an outcome the group closes: the first success in
//! candidate order comes out, or the head is captured with every candidate's error.

use rip_core::{ErrorEntry, Failure, Kind, Line};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// The fields of any outcome record a group needs, decoded without the rest.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Peek {
    pub url: String,
    #[serde(default)]
    pub resolves: Option<String>,
    #[serde(default)]
    pub errors: Vec<ErrorEntry>,
    #[serde(default)]
    pub reason: Option<String>,
}

impl Peek {
    pub fn of(line: &Line) -> Result<Self, BadOutcome> {
        serde_json::from_str(line.text()).map_err(|error| BadOutcome {
            kind: line.kind().clone(),
            error,
        })
    }
}

/// An outcome line whose fields a group needs cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("bad `{kind}` record: {error}")]
pub(crate) struct BadOutcome {
    kind: Kind,
    error: serde_json::Error,
}

/// What became of one candidate.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A `page` or `doc`: the line, to be written unchanged if it wins.
    Success(Line),
    /// Anything else: the errors to add to the failed URL's history, and the line (none
    /// for a candidate that never arrived).
    Failed {
        line: Option<Line>,
        errors: Vec<ErrorEntry>,
    },
}

impl Outcome {
    /// The outcome a record of `kind` stands for; `None` for kinds that are no outcome.
    /// With `match_link_text`, a page or doc that does not mention the failed link's text
    /// is a failed outcome (`resolve.mismatch`).
    pub fn of(
        kind: &Kind,
        peek: &Peek,
        line: Line,
        head: &Failure,
        match_link_text: bool,
    ) -> Option<Self> {
        let note = |mut e: ErrorEntry| {
            e.message = format!("{} (resolve candidate {})", e.message, peek.url);
            e
        };
        match kind {
            Kind::Page | Kind::Doc => {
                let wanted = head.context.link_text.as_deref().map(str::trim);
                match wanted.filter(|t| match_link_text && !t.is_empty()) {
                    Some(text) if !mentions(kind, &line, text) => Some(Self::Failed {
                        errors: vec![note(ErrorEntry::new(
                            "resolve.mismatch",
                            format!("the {kind} does not mention \"{text}\""),
                            "rip-route",
                        ))],
                        line: Some(line),
                    }),
                    _ => Some(Self::Success(line)),
                }
            }
            Kind::Failure | Kind::Error => {
                // The candidate carried the head's history: keep only what is new.
                let new = match peek.errors.strip_prefix(head.errors.as_slice()) {
                    Some(rest) if !rest.is_empty() => rest.to_vec(),
                    _ => peek.errors.last().cloned().into_iter().collect(),
                };
                Some(Self::Failed {
                    errors: new.into_iter().map(note).collect(),
                    line: Some(line),
                })
            }
            Kind::Expected => Some(Self::Failed {
                errors: vec![note(ErrorEntry::new(
                    "resolve.candidateExpected",
                    peek.reason.clone().unwrap_or_else(|| "expected".into()),
                    "rip-route",
                ))],
                line: Some(line),
            }),
            _ => None,
        }
    }
}

/// Whether a candidate page's body contains `text`, or a candidate doc's `name` is `text`
/// (case-insensitive).
fn mentions(kind: &Kind, line: &Line, text: &str) -> bool {
    #[derive(Deserialize)]
    struct Content {
        #[serde(default)]
        body: Option<String>,
        #[serde(default)]
        name: Option<String>,
    }
    let Ok(c) = serde_json::from_str::<Content>(line.text()) else {
        return false;
    };
    let text = text.to_lowercase();
    match kind {
        Kind::Doc => c.name.is_some_and(|n| n.trim().to_lowercase() == text),
        _ => c.body.is_some_and(|b| b.to_lowercase().contains(&text)),
    }
}

/// One held group.
#[derive(Debug)]
pub(crate) struct Group {
    pub head: Failure,
    pub outcomes: Vec<Option<Outcome>>,
    /// A candidate went by as an unfetched `ref`: this `rip-route` is not the one to close it.
    pub forwarded: bool,
}

impl Group {
    fn complete(&self) -> bool {
        self.outcomes.iter().all(Option::is_some)
    }
}

/// The groups this `rip-route` holds, in the order they were opened.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    seq: u64,
    order: BTreeMap<u64, Group>,
    by_url: HashMap<String, u64>,
}

impl Groups {
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// True when a group for `url` is held.
    pub fn holds(&self, url: &str) -> bool {
        self.by_url.contains_key(url)
    }

    /// Holds a head (a group for its URL must not be held already, see [`Groups::holds`]).
    pub fn open(&mut self, head: Failure) {
        debug_assert!(!self.holds(&head.url));
        self.seq += 1;
        self.by_url.insert(head.url.clone(), self.seq);
        let outcomes = head.resolving.iter().map(|_| None).collect();
        self.order.insert(
            self.seq,
            Group {
                head,
                outcomes,
                forwarded: false,
            },
        );
    }

    fn slot(&mut self, resolves: &str, url: &str) -> Option<(u64, usize)> {
        let seq = *self.by_url.get(resolves)?;
        let group = self.order.get(&seq)?;
        let i = group
            .head
            .resolving
            .iter()
            .zip(&group.outcomes)
            .position(|(c, o)| c == url && o.is_none())?;
        Some((seq, i))
    }

    /// True when `url`, resolving `resolves`, is a candidate still awaited here.
    pub fn awaits(&mut self, resolves: &str, url: &str) -> bool {
        self.slot(resolves, url).is_some()
    }

    /// Notes that an awaited candidate went by unfetched.
    pub fn saw_ref(&mut self, resolves: &str, url: &str) {
        if let Some((seq, _)) = self.slot(resolves, url)
            && let Some(g) = self.order.get_mut(&seq)
        {
            g.forwarded = true;
        }
    }

    /// Records a candidate's outcome (which must be awaited, see [`Groups::awaits`]) given
    /// a builder that sees the head; returns the group when it is complete.
    pub fn record(
        &mut self,
        resolves: &str,
        url: &str,
        outcome: impl FnOnce(&Failure) -> Option<Outcome>,
    ) -> Option<Group> {
        let (seq, i) = self.slot(resolves, url)?;
        let group = self.order.get_mut(&seq)?;
        group.outcomes[i] = Some(outcome(&group.head)?);
        if !group.complete() {
            return None;
        }
        self.by_url.remove(resolves);
        self.order.remove(&seq)
    }

    /// Every group still held, oldest first (at the end of input).
    pub fn drain(&mut self) -> Vec<Group> {
        self.by_url.clear();
        std::mem::take(&mut self.order).into_values().collect()
    }
}
