//! [`Level`]: one depth's waiting items, by key, served host by host in turn.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use super::IdHasher;

/// One depth's items (their keys: the items themselves are found through the visited
/// map), served host by host in turn: each host's items in the order they came, the hosts
/// in a rotation, so one large host does not starve the others (its items would otherwise
/// fill every task, each waiting for the host's gap). 8 bytes a waiting item.
#[derive(Debug, Default)]
pub(super) struct Level {
    /// Host ([`host_id`]) → its waiting items' keys, first come first.
    hosts: HashMap<u64, VecDeque<u64>, BuildHasherDefault<IdHasher>>,
    /// The hosts with items waiting, the next to serve first.
    turn: VecDeque<u64>,
}

impl Level {
    /// Queues the key of an item of `url`.
    pub fn push(&mut self, key: u64, url: &str) {
        let host = host_id(url);
        let queue = self.hosts.entry(host).or_default();
        if queue.is_empty() {
            self.turn.push_back(host);
        }
        queue.push_back(key);
    }

    /// The key of the item to serve next.
    pub fn front(&self) -> Option<u64> {
        let host = self.turn.front()?;
        self.hosts.get(host)?.front().copied()
    }

    /// Takes the key of the item to serve next; its host goes to the back of the rotation.
    pub fn pop(&mut self) -> Option<u64> {
        let host = self.turn.pop_front()?;
        let queue = self.hosts.get_mut(&host)?;
        let key = queue.pop_front()?;
        if queue.is_empty() {
            self.hosts.remove(&host);
        } else {
            self.turn.push_back(host);
        }
        Some(key)
    }

    pub fn is_empty(&self) -> bool {
        self.turn.is_empty()
    }
}

/// A URL's host (its authority: host and port as written) as a number, for [`Level`]'s
/// rotation. URLs in the frontier are canonical, so equal hosts are written alike.
fn host_id(url: &str) -> u64 {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    xxhash_rust::xxh3::xxh3_64(&rest.as_bytes()[..end])
}
