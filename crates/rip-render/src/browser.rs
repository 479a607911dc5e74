//! The one browser of a stage: Debian's Chromium, started headless with a profile folder
//! of its own, driven over the DevTools protocol (chromiumoxide), and started again when it
//! dies.
//!
//! `Engine::get` hands out the running browser (starting it when there is none, or the
//! last one died); a tab that finds its browser gone calls `Engine::lost` with the
//! generation it used, so that many tabs seeing one death start one new browser, and the
//! death is counted once (`Engine::losses`).
//!
//! A browser is known gone the moment its DevTools connection ends or its process exits
//! (watched through a pidfd), whichever comes first: `Chromium::gone` resolves then, so
//! the pages waiting in it are done again at once instead of at their page timeout.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use chromiumoxide::Handler;
use chromiumoxide::browser::{Browser, BrowserConfig, BrowserConfigBuilder};
use futures::StreamExt;
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

/// Where Debian installs Chromium.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// How the browser is started.
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    /// The Chromium executable.
    pub executable: PathBuf,
    /// The JavaScript heap of each page's renderer, in MiB (V8's `--max-old-space-size`):
    /// a page whose script allocates without end crashes its own renderer at this size,
    /// not the machine.
    pub js_heap_mib: u32,
    /// How long the browser may take to start.
    pub launch_timeout: Duration,
    /// Extra command-line switches for Chromium (`--foo=bar`).
    pub extra_args: Vec<String>,
}

impl Default for BrowserSettings {
    fn default() -> Self {
        Self {
            executable: PathBuf::from(DEFAULT_CHROMIUM),
            js_heap_mib: 256,
            launch_timeout: Duration::from_secs(30),
            extra_args: Vec::new(),
        }
    }
}

/// Why the browser could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No executable there.
    #[error(
        "no Chromium at {} (hint: `apt-get install chromium`, or give another with --chromium)",
        path.display()
    )]
    Missing {
        /// The path tried.
        path: PathBuf,
    },
    /// Its profile folder could not be made.
    #[error("cannot make a profile folder for Chromium in the temporary folder: {0}")]
    Profile(#[source] std::io::Error),
    /// It did not start, or did not answer.
    #[error("cannot start Chromium ({}): {message}", path.display())]
    Start {
        /// The executable.
        path: PathBuf,
        /// What chromiumoxide said.
        message: String,
    },
}

/// A running browser.
pub(crate) struct Chromium {
    pub browser: Browser,
    /// Counts the browsers this stage started, from 1.
    pub generation: u64,
    /// `Chromium/156.0.…`.
    pub version: String,
    /// Becomes true when the connection to it ends or its process exits (it crashed or
    /// was killed).
    gone: watch::Receiver<bool>,
    /// Set when its death has been counted ([`Engine::losses`]).
    counted: AtomicBool,
    handler: JoinHandle<()>,
    _profile: tempfile::TempDir,
}

impl Chromium {
    pub fn is_alive(&self) -> bool {
        !*self.gone.borrow()
    }

    /// Resolves once the browser is gone (at once when it already is).
    pub async fn gone(&self) {
        let mut gone = self.gone.clone();
        // An error is the watcher ended without a word: gone as well.
        let _ = gone.wait_for(|gone| *gone).await;
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// The stage's browser, started on demand and again after it died.
pub(crate) struct Engine {
    settings: BrowserSettings,
    current: Mutex<Option<Arc<Chromium>>>,
    generation: AtomicU64,
    losses: AtomicU64,
}

impl Engine {
    pub fn new(settings: BrowserSettings) -> Self {
        Self {
            settings,
            current: Mutex::new(None),
            generation: AtomicU64::new(0),
            losses: AtomicU64::new(0),
        }
    }

    /// Browsers lost so far (died or given up), each counted once however many of its
    /// pages saw it go.
    pub fn losses(&self) -> u64 {
        self.losses.load(Ordering::Relaxed)
    }

    fn count_loss(&self, chromium: &Chromium) {
        if !chromium.counted.swap(true, Ordering::Relaxed) {
            self.losses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Browsers started so far.
    pub fn started(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// The running browser, started when there is none or it died.
    pub async fn get(&self) -> Result<Arc<Chromium>, LaunchError> {
        let mut current = self.current.lock().await;
        if let Some(c) = current.as_ref()
            && c.is_alive()
        {
            return Ok(c.clone());
        }
        if let Some(old) = current.take() {
            self.count_loss(&old);
            tracing::warn!(
                "the browser (start {}) is gone: starting another",
                old.generation
            );
        }
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let chromium = Arc::new(launch(&self.settings, generation).await?);
        *current = Some(chromium.clone());
        Ok(chromium)
    }

    /// A tab found `chromium` unusable: it is counted lost (once, whichever of its tabs
    /// says so first) and dropped (its process killed), and the next [`Engine::get`]
    /// starts another.
    pub async fn lost(&self, chromium: &Chromium) {
        self.count_loss(chromium);
        let mut current = self.current.lock().await;
        if current
            .as_ref()
            .is_some_and(|c| c.generation == chromium.generation)
        {
            *current = None;
        }
    }

    /// The running browser, if one runs (none is started).
    pub async fn running(&self) -> Option<Arc<Chromium>> {
        self.current.lock().await.clone().filter(|c| c.is_alive())
    }

    /// Closes the browser, if one runs.
    pub async fn close(&self) {
        let taken = self.current.lock().await.take();
        if let Some(chromium) = taken
            && let Ok(mut chromium) = Arc::try_unwrap(chromium)
        {
            let _ = tokio::time::timeout(Duration::from_secs(5), chromium.browser.close()).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), chromium.browser.wait()).await;
        }
    }
}

/// Adds rip-render's switches to chromiumoxide's defaults, as chromiumoxide takes them:
/// without the leading `--` (it adds them; `----js-flags` would be no switch at all) and split
/// at the first `=`, so that a key it sets too (`disable-features`) gets both lists of values
/// instead of a second switch that Chromium would read in place of the first.
fn with_switches(
    mut builder: BrowserConfigBuilder,
    settings: &BrowserSettings,
) -> BrowserConfigBuilder {
    for switch in switches(settings) {
        let bare = switch.trim_start_matches('-');
        builder = match bare.split_once('=') {
            Some((key, value)) => builder.arg((key, value)),
            None => builder.arg(bare),
        };
    }
    builder
}

/// The switches rip-render starts Chromium with, besides chromiumoxide's defaults.
fn switches(settings: &BrowserSettings) -> Vec<String> {
    let mut args = vec![
        format!("--js-flags=--max-old-space-size={}", settings.js_heap_mib),
        "--disable-gpu".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,MediaRouter".into(),
        // Only loopback is proxied by nothing; every request is answered through the
        // interception anyway, so nothing leaves Chromium by itself.
        "--disable-domain-reliability".into(),
        "--disable-component-update".into(),
    ];
    args.extend(no_network_of_its_own());
    args.extend(settings.extra_args.iter().cloned());
    args
}

/// Switches that leave Chromium no network of its own: every http(s) request a page makes
/// is answered through the interception (by rip-http, under its network policy), but
/// Chromium also connects by itself, without a request the interception sees: a
/// `<link rel=preconnect>`, a WebSocket, DNS prefetching. These go to a proxy that is not
/// there (port 1 of loopback, loopback included: `<-loopback>` drops Chromium's implicit
/// bypass), and no name resolves, so a page cannot open a connection to a private address
/// (`bin/tests/it/netns.rs` counts the connections a private namespace accepts: 1 without
/// these switches, 0 with them).
fn no_network_of_its_own() -> [String; 3] {
    [
        "--proxy-server=http://127.0.0.1:1".into(),
        "--proxy-bypass-list=<-loopback>".into(),
        "--host-resolver-rules=MAP * ~NOTFOUND".into(),
    ]
}

async fn launch(settings: &BrowserSettings, generation: u64) -> Result<Chromium, LaunchError> {
    let path = settings.executable.clone();
    if !path.is_file() {
        return Err(LaunchError::Missing { path });
    }
    let profile = tempfile::Builder::new()
        .prefix("rip-render-profile-")
        .tempdir()
        .map_err(LaunchError::Profile)?;
    let mut builder = BrowserConfig::builder()
        .chrome_executable(&path)
        .user_data_dir(profile.path())
        .launch_timeout(settings.launch_timeout)
        .request_timeout(Duration::from_secs(60))
        .viewport(None);
    builder = with_switches(builder, settings);
    // Chromium's sandbox does not run as root; there it is turned off (a container's
    // own isolation stands for it).
    if rustix::process::geteuid().is_root() {
        builder = builder.no_sandbox();
    }
    let start = |message: String| LaunchError::Start {
        path: path.clone(),
        message,
    };
    let config = builder.build().map_err(start)?;
    let (mut browser, handler) = Browser::launch(config)
        .await
        .map_err(|e| start(e.to_string()))?;
    let pid = browser
        .get_mut_child()
        .and_then(|child| child.as_mut_inner().id());
    let (said_gone, gone) = watch::channel(false);
    let handler = tokio::spawn(async move {
        tokio::select! {
            () = connection(handler) => tracing::debug!("the connection to the browser ended"),
            () = exited(pid) => tracing::debug!("the browser's process exited"),
        }
        let _ = said_gone.send(true);
    });
    let version = match tokio::time::timeout(Duration::from_secs(10), browser.version()).await {
        Ok(Ok(v)) => v.product.replace("HeadlessChrome", "Chromium"),
        _ => "Chromium".into(),
    };
    Ok(Chromium {
        browser,
        generation,
        version,
        gone,
        counted: AtomicBool::new(false),
        handler,
        _profile: profile,
    })
}

/// Drives the DevTools connection; returns when it ends.
async fn connection(mut handler: Handler) {
    while let Some(event) = handler.next().await {
        if let Err(e) = event {
            tracing::debug!("browser connection: {e}");
            if matches!(e, chromiumoxide::error::CdpError::Ws(_)) {
                return;
            }
        }
    }
}

/// How often the browser's process is looked at (whether it exited).
const EXIT_POLL: Duration = Duration::from_millis(100);

/// Resolves when the process `pid` (the browser, a child of this one) exits; never when
/// it cannot be watched (no pid, no pidfd): then the connection's end says the browser is
/// gone. Looked at every [`EXIT_POLL`] through a pidfd, without reaping it (its
/// `tokio::process::Child`, in chromiumoxide, does that).
async fn exited(pid: Option<u32>) {
    use rustix::io::Errno;
    use rustix::process::{Pid, PidfdFlags, WaitId, WaitIdOptions, pidfd_open, waitid};
    use std::os::fd::AsFd;
    let pid = pid.and_then(|p| Pid::from_raw(i32::try_from(p).ok()?));
    let fd = pid.and_then(|pid| match pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => Some(fd),
        Err(e) => {
            tracing::debug!("cannot watch the browser's process {pid:?}: {e}");
            None
        }
    });
    let Some(fd) = fd else {
        return std::future::pending().await;
    };
    let look = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    let mut tick = tokio::time::interval(EXIT_POLL);
    loop {
        tick.tick().await;
        match waitid(WaitId::PidFd(fd.as_fd()), look) {
            Ok(None) | Err(Errno::INTR) => {}
            // Exited, or already reaped (ECHILD).
            Ok(Some(_)) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_process_that_exits_is_seen_at_once_and_left_to_be_reaped() {
        let mut child = tokio::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let watching = tokio::spawn(exited(child.id()));
        tokio::time::sleep(EXIT_POLL * 3).await;
        assert!(!watching.is_finished(), "seen exited while it runs");
        child.start_kill().unwrap();
        tokio::time::timeout(Duration::from_secs(30), watching)
            .await
            .expect("seen exited")
            .unwrap();
        // Not reaped by the watch: its owner still gets its status.
        let status = child.wait().await.unwrap();
        assert!(!status.success());
    }

    #[tokio::test]
    async fn no_process_to_watch_is_never_exited() {
        let never = tokio::time::timeout(EXIT_POLL * 3, exited(None)).await;
        assert!(never.is_err());
    }
}
