//! A network of our own for the scale-out tests (issue 41): a [`Lab`] of N hosts, each a
//! network namespace with its own address (`10.77.0.1`, `10.77.0.2`, … on a /24), whose
//! links can be slowed, made to lose packets, cut and healed while programs run on them.
//!
//! Each host's one interface (`lab0`) is a TUN device, and the other end of every device is
//! the lab's switch, threads of the test process (the module `switch`): it reads a packet from a
//! host, applies the sender's link and then the receiver's (delay ± jitter, loss, cut) and
//! writes it to the receiver. This is `tc netem` on both ends of a veth pair into a bridge,
//! done in user space, because this machine's kernel has no `netem` qdisc. Nothing touches
//! the machine's own network: the devices are moved into the hosts' namespaces as soon as
//! they are made, and labs existing at once (tests run in parallel) are separate switches
//! with namespaces of their own names, so their addresses never meet.
//!
//! A cut drops every packet to and from the host (netem's `loss 100%`, not link down): a
//! partition as machines see one, connections open and silent, nobody told, rather than an
//! interface that goes away and makes the host's own sockets fail at once.
//!
//! Namespaces are named `riplab-<pid>-<lab>-h<host>`; [`Lab::drop`] kills every process in
//! them and deletes them, after a test's panic too, and a new lab deletes those left by a
//! test process that no longer runs (killed, so its drops never ran). Labs need root, `ip`
//! (iproute2, installed by `scripts/setup test`) and `/dev/net/tun`; [`Lab::new`] says on
//! stderr what is missing and gives `None` without them, so a test can pass with that
//! message where it cannot run (not root).

mod switch;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use switch::Shape;

/// The lab's network: 10.77.0.0/24.
const NET: [u8; 3] = [10, 77, 0];
/// The prefix of every lab namespace's name.
const PREFIX: &str = "riplab-";

static LABS: AtomicUsize = AtomicUsize::new(0);

/// A host of a [`Lab`]: a network namespace with one address.
#[derive(Debug, Clone)]
pub struct Host {
    index: usize,
    netns: String,
}

impl Host {
    /// Its address, `10.77.0.<index + 1>`.
    pub fn ip(&self) -> String {
        format!("{}.{}.{}.{}", NET[0], NET[1], NET[2], self.index + 1)
    }

    /// Its network namespace's name.
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// A command running `program` on this host (`ip netns exec <netns> <program>`): add
    /// arguments, environment and stdio as to any [`Command`]. The process started is
    /// `program` itself (`ip` execs it), so killing the child kills the program.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns]).arg(program);
        cmd
    }
}

/// N hosts joined by the lab's switch; everything removed when dropped.
pub struct Lab {
    hosts: Vec<Host>,
    switch: Option<switch::Switch>,
}

/// Runs `ip args`; its stderr as the error.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        format!("ip: {e} (hint: run `scripts/setup test`, which installs iproute2)")
    })?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

impl Lab {
    /// A lab of `hosts` hosts (at most 250), or `None`, said on stderr, where this process
    /// cannot make network namespaces and TUN devices (not root, no `ip`, no
    /// `/dev/net/tun`). Panics when it can but building the lab fails.
    pub fn new(hosts: usize) -> Option<Self> {
        assert!((1..=250).contains(&hosts), "a lab of 1 to 250 hosts");
        sweep_leftovers();
        let pid = std::process::id();
        let lab = LABS.fetch_add(1, Ordering::SeqCst);
        let name = |i: usize| format!("{PREFIX}{pid}-{lab}-h{i}");
        if let Err(e) = ip(&["netns", "add", &name(0)]) {
            eprintln!("skipped: no network namespace of its own ({e}); run as root with `ip`");
            return None;
        }
        if !Path::new("/dev/net/tun").exists() {
            let _ = ip(&["netns", "del", &name(0)]);
            eprintln!("skipped: no /dev/net/tun for the lab's links");
            return None;
        }
        let hosts: Vec<Host> = (0..hosts)
            .map(|index| Host {
                index,
                netns: name(index),
            })
            .collect();
        let mut made = Lab {
            hosts,
            switch: None,
        };
        let devices = made
            .wire(pid, lab)
            .unwrap_or_else(|e| panic!("building the lab's network: {e}"));
        made.switch = Some(switch::Switch::start(devices));
        Some(made)
    }

    /// Makes the namespaces (the first exists) and their devices, addressed and up.
    fn wire(&self, pid: u32, lab: usize) -> Result<Vec<tun::Device>, String> {
        let mut devices = Vec::new();
        for host in &self.hosts {
            if host.index > 0 {
                ip(&["netns", "add", &host.netns])?;
            }
            // Made in this process's namespace under a unique name, then moved.
            let temp = format!("rl{:x}x{lab:x}x{}", pid, host.index);
            let temp: String = temp.chars().take(15).collect();
            let mut config = tun::Configuration::default();
            config.tun_name(&temp).platform_config(|p| {
                p.ensure_root_privileges(false);
            });
            let device = tun::create(&config).map_err(|e| format!("a TUN device {temp}: {e}"))?;
            let ns = host.netns.as_str();
            ip(&["link", "set", &temp, "netns", ns])?;
            ip(&["-n", ns, "link", "set", &temp, "name", "lab0"])?;
            let addr = format!("{}/24", host.ip());
            ip(&["-n", ns, "addr", "add", &addr, "dev", "lab0"])?;
            ip(&["-n", ns, "link", "set", "lab0", "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            devices.push(device);
        }
        Ok(devices)
    }

    /// The hosts, in order (addresses 10.77.0.1, .2, …).
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Host `i`.
    pub fn host(&self, i: usize) -> &Host {
        &self.hosts[i]
    }

    fn switch(&self) -> &switch::Switch {
        self.switch.as_ref().expect("a running switch")
    }

    /// Shapes host `i`'s link from now on (packets held keep their time): each packet to or
    /// from it is delayed `shape.delay ± shape.jitter` and lost with `shape.loss`. A packet
    /// between two shaped hosts crosses both links: 50 ms on each makes 100 ms one way.
    pub fn shape(&self, i: usize, shape: Shape) {
        self.switch().set(i, |l| l.shape = shape);
    }

    /// Shapes every host's link.
    pub fn shape_all(&self, shape: Shape) {
        for i in 0..self.hosts.len() {
            self.shape(i, shape);
        }
    }

    /// Cuts host `i` off: every packet to or from it is lost until [`Lab::heal`].
    pub fn cut(&self, i: usize) {
        self.switch().set(i, |l| l.cut = true);
    }

    /// Ends host `i`'s cut; its shape is as before.
    pub fn heal(&self, i: usize) {
        self.switch().set(i, |l| l.cut = false);
    }

    /// Cuts hosts `i` and `j` off from each other only (a partition between two machines
    /// that both still reach the rest), until [`Lab::join`].
    pub fn part(&self, i: usize, j: usize) {
        self.switch().set_apart(i, j, true);
    }

    /// Ends a [`Lab::part`] of hosts `i` and `j`.
    pub fn join(&self, i: usize, j: usize) {
        self.switch().set_apart(i, j, false);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for host in &self.hosts {
            remove_netns(&host.netns);
        }
        // The namespaces are gone, and with them the devices: the readers end.
        self.switch.take();
    }
}

/// Kills every process in namespace `ns` (SIGKILL) and deletes it.
fn remove_netns(ns: &str) {
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
    let _ = ip(&["netns", "del", ns]);
}

/// Deletes the lab namespaces of test processes that no longer run.
fn sweep_leftovers() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or_default();
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            remove_netns(&name);
        }
    }
}
