//! The lab's packet switch, in user space: every host's link is a TUN device whose other end
//! is this switch. A packet read from a host's device is dropped or held for its links'
//! delay, then written to the device of the host its IPv4 destination names. The kernel
//! here has no `netem` (nor `tbf`, `fq`…: only `htb` and `pfifo`), so delay, jitter and loss
//! are done here, as netem would on each end of a link: a packet crossing from host A to
//! host B meets A's link (delay, jitter, loss) and then B's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How one host's link treats each packet crossing it (either way).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Shape {
    /// Added to each packet's trip across the link.
    pub delay: Duration,
    /// The delay varies by up to this much either way (uniformly). Packets between two
    /// hosts are never reordered: one is held at least as long as the one before it.
    pub jitter: Duration,
    /// The share of packets lost, 0.0 to 1.0.
    pub loss: f64,
}

impl Shape {
    /// A link of `delay` ± `jitter` losing `loss` (0.0–1.0) of its packets.
    pub fn new(delay: Duration, jitter: Duration, loss: f64) -> Self {
        Self {
            delay,
            jitter,
            loss,
        }
    }
}

/// One host's link as the switch sees it now.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Link {
    pub shape: Shape,
    /// Every packet to or from the host is lost (a partition nobody is told about).
    pub cut: bool,
}

/// Packets waiting for their time, and the links' settings.
struct State {
    links: Vec<Link>,
    /// Pairs of hosts that cannot reach each other (either way), each reaching the others.
    apart: std::collections::HashSet<(usize, usize)>,
    /// (due, sequence, destination host) → packet.
    queue: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    packets: std::collections::HashMap<u64, Vec<u8>>,
    /// The last due time per (from, to), so that jitter never reorders a flow.
    last_due: std::collections::HashMap<(usize, usize), Instant>,
    seq: u64,
    rng: fastrand::Rng,
}

/// The running switch: its threads stop when it is dropped.
pub(crate) struct Switch {
    state: Arc<(Mutex<State>, Condvar)>,
    stop: Arc<AtomicBool>,
    sender: Option<std::thread::JoinHandle<()>>,
}

/// The host of an address 10.77.0.x of the lab (x - 1), if it is one.
fn host_of(packet: &[u8], hosts: usize) -> Option<usize> {
    // IPv4 only (version 4), destination at bytes 16..20.
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let dst = &packet[16..20];
    let index = (dst[..3] == super::NET[..]).then(|| usize::from(dst[3]))?;
    (1..=hosts).contains(&index).then(|| index - 1)
}

impl Switch {
    /// Starts switching between `devices` (host i's link is `devices[i]`).
    pub fn start(devices: Vec<tun::Device>) -> Self {
        let hosts = devices.len();
        let state = Arc::new((
            Mutex::new(State {
                links: vec![Link::default(); hosts],
                apart: Default::default(),
                queue: BinaryHeap::new(),
                packets: Default::default(),
                last_due: Default::default(),
                seq: 0,
                rng: fastrand::Rng::new(),
            }),
            Condvar::new(),
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for (from, device) in devices.into_iter().enumerate() {
            let (reader, writer) = device.split();
            writers.push(writer);
            let (state, stop) = (state.clone(), stop.clone());
            // A reader blocks in read(); it ends when its namespace (and so its device)
            // is deleted, or at the next packet after the stop.
            std::thread::Builder::new()
                .name(format!("netlab-read-{from}"))
                .spawn(move || read_loop(reader, from, hosts, &state, &stop))
                .expect("a switch thread");
        }
        let (s, st) = (state.clone(), stop.clone());
        let sender = std::thread::Builder::new()
            .name("netlab-send".into())
            .spawn(move || send_loop(writers, &s, &st))
            .expect("a switch thread");
        Self {
            state,
            stop,
            sender: Some(sender),
        }
    }

    /// Changes host `host`'s link; packets already held keep their due time.
    pub fn set(&self, host: usize, change: impl FnOnce(&mut Link)) {
        let mut state = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut state.links[host]);
    }

    /// Parts hosts `a` and `b` (`apart`) or joins them again: while parted, every packet
    /// between the two is lost, and each reaches every other host as before.
    pub fn set_apart(&self, a: usize, b: usize, apart: bool) {
        let mut state = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
        let pair = (a.min(b), a.max(b));
        if apart {
            state.apart.insert(pair);
        } else {
            state.apart.remove(&pair);
        }
    }
}

/// Whether a packet from host `from` to host `to` is lost to a cut: either's link cut, or
/// the two parted.
fn blocked(
    links: &[Link],
    apart: &std::collections::HashSet<(usize, usize)>,
    from: usize,
    to: usize,
) -> bool {
    links[from].cut || links[to].cut || apart.contains(&(from.min(to), from.max(to)))
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.state.1.notify_all();
        if let Some(sender) = self.sender.take() {
            let _ = sender.join();
        }
    }
}

fn read_loop(
    mut reader: tun::Reader,
    from: usize,
    hosts: usize,
    state: &(Mutex<State>, Condvar),
    stop: &AtomicBool,
) {
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::SeqCst) {
        let n = match reader.read(&mut buf) {
            Ok(n) if n > 0 => n,
            Ok(_) => return,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let Some(to) = host_of(&buf[..n], hosts) else {
            continue;
        };
        let mut guard = state.0.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        let (a, b) = (s.links[from], s.links[to]);
        if blocked(&s.links, &s.apart, from, to) {
            continue;
        }
        let mut delay = Duration::ZERO;
        let mut lost = false;
        for link in [a.shape, b.shape] {
            lost |= link.loss > 0.0 && s.rng.f64() < link.loss;
            delay += link.delay;
            if !link.jitter.is_zero() {
                let j = link.jitter.as_secs_f64() * (2.0 * s.rng.f64() - 1.0);
                delay = Duration::from_secs_f64((delay.as_secs_f64() + j).max(0.0));
            }
        }
        if lost {
            continue;
        }
        let mut due = Instant::now() + delay;
        let last = s.last_due.entry((from, to)).or_insert(due);
        due = due.max(*last);
        *last = due;
        s.seq += 1;
        let seq = s.seq;
        s.packets.insert(seq, buf[..n].to_vec());
        s.queue.push(Reverse((due, seq, to)));
        state.1.notify_all();
    }
}

fn send_loop(mut writers: Vec<tun::Writer>, state: &(Mutex<State>, Condvar), stop: &AtomicBool) {
    let mut guard = state.0.lock().unwrap_or_else(|e| e.into_inner());
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        match guard.queue.peek().copied() {
            Some(Reverse((due, seq, to))) if due <= now => {
                guard.queue.pop();
                let packet = guard.packets.remove(&seq).unwrap_or_default();
                drop(guard);
                // A host whose namespace is gone fails the write: nothing to do.
                let _ = writers[to].write(&packet);
                guard = state.0.lock().unwrap_or_else(|e| e.into_inner());
            }
            Some(Reverse((due, ..))) => {
                let wait = due - now;
                guard = (state.1.wait_timeout(guard, wait))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            None => {
                let wait = Duration::from_millis(200);
                guard = (state.1.wait_timeout(guard, wait))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_goes_to_the_host_of_its_destination() {
        let mut p = vec![0u8; 20];
        p[0] = 0x45;
        p[16..20].copy_from_slice(&[10, 77, 0, 3]);
        assert_eq!(host_of(&p, 4), Some(2));
        assert_eq!(host_of(&p, 2), None);
        p[16..20].copy_from_slice(&[10, 78, 0, 3]);
        assert_eq!(host_of(&p, 4), None);
        p[0] = 0x60;
        assert_eq!(host_of(&p, 4), None);
        assert_eq!(host_of(&p[..10], 4), None);
    }

    #[test]
    fn parted_hosts_reach_every_other_host() {
        let mut links = vec![Link::default(); 4];
        let apart = [(1, 2)].into_iter().collect();
        assert!(blocked(&links, &apart, 1, 2) && blocked(&links, &apart, 2, 1));
        assert!(!blocked(&links, &apart, 1, 3) && !blocked(&links, &apart, 0, 2));
        links[3].cut = true;
        assert!(blocked(&links, &apart, 0, 3) && blocked(&links, &apart, 3, 0));
        assert!(!blocked(&links, &apart, 0, 1));
    }
}
