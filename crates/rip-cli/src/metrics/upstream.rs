//! The metrics of other processes, for a program that runs its stages as children
//! (`ripperoni run`): each child serves its own on a port of its choosing, which it says on
//! stderr; the parent scrapes every child twice a second and keeps the last text of each
//! (so a child that ended is still counted, with its final numbers: it lingers until a
//! scrape after its end), and serves them merged with its own ([`merge`](super::merge)).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper::Request;
use hyper_util::rt::TokioIo;

/// How often the children are scraped.
pub const POLL_EVERY: Duration = Duration::from_millis(500);

/// The children's endpoints and the last text of each.
#[derive(Debug, Default)]
pub struct Upstreams {
    children: Mutex<Vec<Child>>,
}

/// A child: its step (`02-rip-fetch`), its endpoint, the last text read of it.
#[derive(Debug)]
struct Child {
    step: String,
    addr: SocketAddr,
    last: Option<String>,
}

impl Upstreams {
    /// Starts scraping every child added, on a thread of its own.
    pub fn start() -> anyhow::Result<Arc<Self>> {
        let upstreams = Arc::new(Self::default());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let polled = upstreams.clone();
        std::thread::Builder::new()
            .name("metrics-upstreams".into())
            .spawn(move || runtime.block_on(polled.poll()))?;
        Ok(upstreams)
    }

    /// A child serving its metrics on `addr`; its samples are labelled `step="<step>"`
    /// (two stages of one program in a pipeline, e.g. the fetch rounds, tell apart by it).
    pub fn add(&self, step: &str, addr: SocketAddr) {
        self.lock().push(Child {
            step: step.to_owned(),
            addr,
            last: None,
        });
    }

    /// The address in a child's stderr line `<program>: metrics on http://ADDR/metrics`.
    pub fn address_in(line: &str) -> Option<SocketAddr> {
        let (_, rest) = line.split_once(": metrics on http://")?;
        rest.strip_suffix("/metrics")?.parse().ok()
    }

    /// The last text scraped of each child, its samples labelled with its step.
    pub fn texts(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter_map(|c| Some(super::merge::relabel(c.last.as_ref()?, "step", &c.step)))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Child>> {
        self.children.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn poll(self: Arc<Self>) {
        loop {
            let addrs: Vec<SocketAddr> = self.lock().iter().map(|c| c.addr).collect();
            for addr in addrs {
                let Ok(Some(text)) =
                    tokio::time::timeout(Duration::from_secs(5), scrape(addr)).await
                else {
                    continue;
                };
                if let Some(child) = self.lock().iter_mut().find(|c| c.addr == addr) {
                    child.last = Some(text);
                }
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }
}

/// `GET /metrics` of a child; `None` when it cannot be read (it ended, or not yet up).
async fn scrape(addr: SocketAddr) -> Option<String> {
    let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(connection);
    let request = Request::get("/metrics")
        .header(hyper::header::HOST, addr.to_string())
        .body(Empty::<Bytes>::new())
        .ok()?;
    let response = sender.send_request(request).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = response.into_body().collect().await.ok()?.to_bytes();
    String::from_utf8(body.to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_read_from_the_stderr_line() {
        let line = "rip-fetch: metrics on http://127.0.0.1:40123/metrics";
        assert_eq!(
            Upstreams::address_in(line),
            Some("127.0.0.1:40123".parse().unwrap())
        );
        assert_eq!(Upstreams::address_in("rip-fetch: 3 refs"), None);
    }
}
