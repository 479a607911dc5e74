//! [`Shared`]: the state the accept loop, the connections and the [`TestServer`] handle
//! hold in common. Its own module so that `server` (which spawns connections) and `conn`,
//! `control` and `respond` (which read it) all depend on it and not on each other.
//!
//! [`TestServer`]: crate::TestServer

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use tokio::time::Instant;

use crate::log::RequestLog;
use crate::plan::PlanState;
use crate::site::Site;

/// State shared by the accept loop, the connections and the [`TestServer`] handle.
///
/// [`TestServer`]: crate::TestServer
pub(crate) struct Shared {
    pub addr: SocketAddr,
    pub site: Site,
    pub plan: Mutex<PlanState>,
    pub log: RequestLog,
    pub started: Instant,
    pub control: bool,
    pub validators: bool,
    /// Gzip bombs already made, by expanded size.
    pub bombs: Mutex<HashMap<u64, Bytes>>,
    next_connection: AtomicU64,
}

impl Shared {
    /// The state of a server bound at `addr`, started now.
    pub fn new(
        addr: SocketAddr,
        site: Site,
        plan: PlanState,
        log: RequestLog,
        control: bool,
        validators: bool,
    ) -> Self {
        Self {
            addr,
            site,
            plan: Mutex::new(plan),
            log,
            started: Instant::now(),
            control,
            validators,
            bombs: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(0),
        }
    }

    /// A number for the next accepted connection (0, 1, ...).
    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// `http://` and the request's Host, or the bound address when there is none.
    pub fn origin(&self, host: Option<&str>) -> String {
        match host {
            Some(host) if !host.is_empty() => format!("http://{host}"),
            _ => format!("http://{}", self.addr),
        }
    }
}
