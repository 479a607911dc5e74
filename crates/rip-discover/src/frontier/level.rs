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
    hosts: HashMap<u64, HostQueue, BuildHasherDefault<IdHasher>>,
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
        queue.push(key);
    }

    /// The key of the item to serve next.
    pub fn front(&self) -> Option<u64> {
        let host = self.turn.front()?;
        self.hosts.get(host)?.front()
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

/// Keys a block of a host's queue holds (4 KiB).
const BLOCK: usize = 512;

/// One host's waiting keys, first come first, in blocks of [`BLOCK`] keys: a queue grows a
/// block at a time and gives back each block it is done with. A `VecDeque` doubles instead:
/// at ten million keys over a thousand hosts its unused halves and the buffers the
/// allocator kept after each doubling came to ~50 MB (peak RSS 390 MB against 337 MB for
/// one host's single queue).
#[derive(Debug, Default)]
struct HostQueue {
    blocks: VecDeque<Vec<u64>>,
    /// Keys already taken from the front block.
    taken: usize,
}

impl HostQueue {
    fn push(&mut self, key: u64) {
        match self.blocks.back_mut() {
            Some(block) if block.len() < BLOCK => block.push(key),
            _ => {
                let mut block = Vec::with_capacity(BLOCK);
                block.push(key);
                self.blocks.push_back(block);
            }
        }
    }

    fn front(&self) -> Option<u64> {
        self.blocks.front()?.get(self.taken).copied()
    }

    fn pop_front(&mut self) -> Option<u64> {
        let key = self.front()?;
        self.taken += 1;
        if self.blocks.front().is_some_and(|b| b.len() == self.taken) {
            self.blocks.pop_front();
            self.taken = 0;
        }
        Some(key)
    }

    fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// A URL's host (its authority: host and port as written) as a number, for [`Level`]'s
/// rotation. URLs in the frontier are canonical, so equal hosts are written alike.
fn host_id(url: &str) -> u64 {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    xxhash_rust::xxh3::xxh3_64(&rest.as_bytes()[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Across blocks, taken as it grows: first come first, a block a time, and empty once
    /// every key is taken (a block half full at the back included).
    #[test]
    fn a_host_queue_keeps_its_order_a_block_at_a_time() {
        let mut queue = HostQueue::default();
        let (mut next, mut taken) = (0u64, Vec::new());
        for _ in 0..6 {
            for _ in 0..BLOCK * 3 / 4 {
                queue.push(next);
                next += 1;
            }
            let waiting = next as usize - taken.len();
            assert!(queue.blocks.len() <= waiting / BLOCK + 2, "{waiting} keys");
            assert!(queue.blocks.iter().all(|b| b.capacity() == BLOCK));
            for _ in 0..BLOCK / 2 {
                taken.extend(queue.pop_front());
            }
        }
        assert_eq!(queue.front(), taken.last().map(|k| k + 1));
        taken.extend(std::iter::from_fn(|| queue.pop_front()));
        assert_eq!(taken, (0..next).collect::<Vec<_>>());
        assert!(queue.is_empty() && queue.front().is_none());
    }
}
