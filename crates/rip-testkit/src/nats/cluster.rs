//! A cluster of `nats-server` nodes with JetStream clustered (issue 41): each node a
//! `server_name` of its own, its own store, routes to every other node, on loopback ports
//! or each on a host of a [`Lab`](crate::netlab::Lab). A node can be killed (SIGKILL) and
//! started again on its store, as a machine that crashes and comes back.
//!
//! Debian's nats-server 2.9.10 clusters JetStream (the Raft of streams and consumers, R1
//! to R5); a stream of 3 replicas keeps taking writes while 2 of its 3 nodes are up.

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use super::{free_port, nats_server_program, spawn_server};
use crate::netlab::Host;

/// One node: where it listens, its folder, its process while it runs.
struct Node {
    name: String,
    /// `ip:port` clients connect to.
    client: String,
    /// `ip:port` of its cluster routes.
    route: String,
    /// `ip:port` of its monitoring endpoint (`/healthz`).
    monitor: String,
    dir: PathBuf,
    host: Option<Host>,
    child: Option<Child>,
    /// The length of its log when it last started.
    log_from: usize,
}

/// A running cluster; its nodes are killed when it is dropped.
pub struct NatsCluster {
    nodes: Vec<Node>,
    _dir: tempfile::TempDir,
}

impl NatsCluster {
    /// `n` nodes on loopback ports, each with an empty store; returns once the cluster has
    /// a JetStream leader.
    pub fn start(n: usize) -> Self {
        let addrs = (0..n)
            .map(|_| {
                (
                    format!("127.0.0.1:{}", free_port()),
                    format!("127.0.0.1:{}", free_port()),
                    format!("127.0.0.1:{}", free_port()),
                    None,
                )
            })
            .collect();
        Self::start_nodes(addrs)
    }

    /// One node on each of `hosts` (ports 4222 and 6222 of the host's address).
    pub fn start_on(hosts: &[&Host]) -> Self {
        let addrs = (hosts.iter())
            .map(|h| {
                let ip = h.ip();
                (
                    format!("{ip}:4222"),
                    format!("{ip}:6222"),
                    format!("{ip}:8222"),
                    Some((*h).clone()),
                )
            })
            .collect();
        Self::start_nodes(addrs)
    }

    fn start_nodes(addrs: Vec<(String, String, String, Option<Host>)>) -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let nodes = (addrs.into_iter().enumerate())
            .map(|(i, (client, route, monitor, host))| Node {
                name: format!("n{i}"),
                client,
                route,
                monitor,
                dir: dir.path().join(format!("n{i}")),
                host,
                child: None,
                log_from: 0,
            })
            .collect();
        let mut cluster = Self { nodes, _dir: dir };
        for i in 0..cluster.nodes.len() {
            cluster.launch(i);
        }
        for i in 0..cluster.nodes.len() {
            cluster.wait_log(i, "Server is ready");
        }
        cluster.wait_leader();
        // JetStream takes requests once every node says it is healthy; before that a
        // stream's creation can time out (seen under a full test run's load).
        for i in 0..cluster.nodes.len() {
            cluster.wait_healthy(i);
        }
        cluster
    }

    /// Every node's URL, separated by commas (the form `--broker` takes).
    pub fn urls(&self) -> String {
        (0..self.nodes.len())
            .map(|i| self.url(i))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `i`'s URL.
    pub fn url(&self, i: usize) -> String {
        format!("nats://{}", self.nodes[i].client)
    }

    /// Node `i`'s log so far.
    pub fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.nodes[i].dir.join("server.log")).unwrap_or_default()
    }

    /// The node that leads the stream `name` (e.g. `rip_refs`) by the nodes' logs: the last
    /// to say it became its leader, with when it said so (`2026/12/07 17:35:35.527634`, the
    /// server's local time).
    pub fn stream_leader(&self, name: &str) -> Option<(usize, String)> {
        let needle = format!("new stream leader for '$G > {name}'");
        (0..self.nodes.len())
            .filter_map(|i| {
                let log = self.log(i);
                let line = log.lines().rfind(|l| l.contains(&needle))?.to_owned();
                let mut words = line.split_whitespace().skip(1);
                let when = format!("{} {}", words.next()?, words.next()?);
                Some((i, when))
            })
            .max_by(|a, b| a.1.cmp(&b.1))
    }

    /// Kills node `i` with SIGKILL, as a crash does; its store stays.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            child.kill().ok();
            child.wait().ok();
        }
    }

    /// Starts node `i` again on its store and addresses; returns once it is ready and,
    /// for a node on loopback, healthy (`/healthz`: its streams and consumers caught up),
    /// as an operator waits before taking down the next node.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.launch(i);
        self.wait_log(i, "Server is ready");
        self.wait_healthy(i);
    }

    /// Waits (60 s at most) until node `i` answers `/healthz` with 200; at once for a node
    /// on a lab host, which this process cannot reach.
    pub fn wait_healthy(&self, i: usize) {
        let node = &self.nodes[i];
        if node.host.is_some() {
            return;
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let answer = self.monitor_get(i, "/healthz");
            if answer
                .is_some_and(|a| a.starts_with("HTTP/1.1 200") || a.starts_with("HTTP/1.0 200"))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "nats-server {}: not healthy within 60 s: {}",
            node.name,
            self.log(i)
        );
    }

    /// The node (of those on loopback that run) holding a client connection named `name`
    /// (async-nats' `ConnectOptions::name`; `rip-queue` names its connections so), by the
    /// nodes' `/connz`.
    pub fn serving(&self, name: &str) -> Option<usize> {
        let needle = format!("\"name\": \"{name}\"");
        (0..self.nodes.len()).find(|&i| {
            self.nodes[i].child.is_some()
                && self
                    .monitor_get(i, "/connz")
                    .is_some_and(|a| a.contains(&needle))
        })
    }

    /// The node whose `server_name` is `name` (`n0`, `n1`, …: the names JetStream gives,
    /// e.g. as a consumer's or stream's leader).
    pub fn node_named(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The answer, headers and body, of node `i`'s monitoring endpoint to `GET path`; `None`
    /// when it does not answer (or is on a lab host).
    fn monitor_get(&self, i: usize, path: &str) -> Option<String> {
        use std::io::{Read, Write};
        let node = &self.nodes[i];
        if node.host.is_some() {
            return None;
        }
        let mut c = std::net::TcpStream::connect(&node.monitor).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        c.write_all(format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
            .ok()?;
        let mut s = String::new();
        c.read_to_string(&mut s).ok()?;
        Some(s)
    }

    fn config(&self, i: usize) -> String {
        let node = &self.nodes[i];
        let routes: Vec<String> = (self.nodes.iter().enumerate())
            .filter(|(j, _)| *j != i)
            .map(|(_, other)| format!("nats-route://{}", other.route))
            .collect();
        format!(
            "server_name: {}\nlisten: {}\nmax_payload: 8MB\n\
             jetstream {{\n  store_dir: \"{}\"\n}}\n\
             cluster {{\n  name: rip\n  listen: {}\n  routes: [{}]\n}}\nhttp: {}\n",
            node.name,
            node.client,
            node.dir.join("store").display(),
            node.route,
            routes.join(", "),
            node.monitor
        )
    }

    fn launch(&mut self, i: usize) {
        let config = self.config(i);
        let log_from = self.log(i).len();
        let node = &mut self.nodes[i];
        node.log_from = log_from;
        std::fs::create_dir_all(&node.dir).expect("the node's folder");
        let path = node.dir.join("nats.conf");
        std::fs::write(&path, config).expect("the node's configuration");
        // Appended: a restarted node's log follows its first life's.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(node.dir.join("server.log"))
            .expect("a log file");
        let cmd = match &node.host {
            Some(host) => host.command(nats_server_program()),
            None => std::process::Command::new(nats_server_program()),
        };
        node.child = Some(spawn_server(cmd, &path, log));
    }

    /// Waits until node `i`'s log since it last started says `needle`.
    fn wait_log(&mut self, i: usize, needle: &str) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let log = self.log(i);
            if log
                .get(self.nodes[i].log_from..)
                .unwrap_or("")
                .contains(needle)
            {
                return;
            }
            let node = &mut self.nodes[i];
            if let Some(status) = node
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("nats-server {} exited with {status}: {log}", node.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let name = &self.nodes[i].name;
        panic!(
            "nats-server {name}: no {needle:?} within 60 s: {}",
            self.log(i)
        );
    }

    /// Waits until some node says the cluster's JetStream has a leader.
    fn wait_leader(&self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let found = (0..self.nodes.len()).any(|i| {
                let log = self.log(i);
                log.contains("JetStream cluster new metadata leader")
                    || log.contains("Self is new JetStream cluster metadata leader")
            });
            if found {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no JetStream leader within 60 s: {}", self.log(0));
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}
