//! A real `nats-server` with JetStream for the scale-out tests: on a free loopback port, its
//! store in a temporary folder, killed when dropped, and able to die and come back on the same
//! store and port as a broker restart does.

pub mod cluster;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `nats-server -js` (Debian's package, installed by `scripts/setup test`).
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    extra: String,
}

/// Starts `cmd` (the server program, maybe run on a lab host) with the configuration file
/// `config`, its output into `log`; panics, naming `scripts/setup test`, when it cannot.
fn spawn_server(mut cmd: Command, config: &Path, log: std::fs::File) -> Child {
    cmd.arg("-c")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("the log file"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start nats-server ({e}): run `scripts/setup test` to install it")
        })
}

/// The server program: `/usr/sbin/nats-server`, or the one on `PATH`.
pub fn nats_server_program() -> PathBuf {
    let debian = Path::new("/usr/sbin/nats-server");
    if debian.is_file() {
        debian.to_path_buf()
    } else {
        PathBuf::from("nats-server")
    }
}

impl NatsServer {
    /// Starts a server with an empty store; panics (naming `scripts/setup test`) when it
    /// cannot.
    pub fn start() -> Self {
        Self::start_with("")
    }

    /// Starts a server with `extra` added to its configuration file, e.g.
    /// `authorization { user: u, password: p }`.
    pub fn start_with(extra: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let port = free_port();
        let mut server = Self {
            child: None,
            port,
            dir,
            extra: extra.to_owned(),
        };
        server.launch();
        server
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The folder holding the server's configuration and JetStream store.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Kills the server with SIGKILL, as a crash does; its store stays.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().ok();
            child.wait().ok();
        }
    }

    /// Stops the server's process (SIGSTOP) without closing anything: requests go
    /// unanswered, as while a cluster elects a leader, until [`thaw`](Self::thaw).
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Lets a server stopped by [`freeze`](Self::freeze) go on (SIGCONT).
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        if let Some(child) = &self.child {
            let status = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(status.success(), "kill {signal} nats-server");
        }
    }

    /// Starts the server again on the same port and store.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    fn launch(&mut self) {
        let config = self.dir.path().join("nats.conf");
        let store = self.dir.path().join("store");
        std::fs::write(
            &config,
            format!(
                "listen: 127.0.0.1:{}\nmax_payload: 8MB\njetstream {{\n  store_dir: \"{}\"\n}}\n{}\n",
                self.port,
                store.display(),
                self.extra
            ),
        )
        .expect("the server's configuration");
        let log = std::fs::File::create(self.dir.path().join("server.log")).expect("a log file");
        self.child = Some(spawn_server(
            Command::new(nats_server_program()),
            &config,
            log,
        ));
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                let log = std::fs::read_to_string(self.dir.path().join("server.log"));
                panic!(
                    "nats-server exited with {status}: {}",
                    log.unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "nats-server did not listen on port {} within 20 s",
            self.port
        );
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// The URL of a broker nobody listens at (port 1), with `password` in it.
pub fn absent_broker(password: &str) -> String {
    format!("nats://crawler:{password}@127.0.0.1:1")
}

/// Asserts that `ran` failed (exit 1) because the broker of [`absent_broker`] was not there,
/// and said so naming the broker with its password hidden.
pub fn assert_broker_absent(ran: &crate::Ran, password: &str) {
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("cannot reach the broker at nats://***@127.0.0.1:1"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains(password), "{}", ran.stderr);
}
