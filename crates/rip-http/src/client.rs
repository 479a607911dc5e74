//! The reqwest client and one HTTP exchange with bounded everything: time to headers and
//! silence between body reads (read-idle timeout), the whole exchange (total timeout), and
//! the body size after decompression (the rest is cut and marked truncated).
//!
//! Redirects are not followed here (the client's policy is `none`): the fetcher follows
//! them itself, so it can record the chain, check each hop's scheme, scope and robots.txt,
//! and give each hop its host's politeness slot; each hop is a request of its own, so the
//! network policy ([`crate::network`]) checks every hop's address.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::time::{Instant, timeout, timeout_at};

use crate::classify::{describe, transport_code};
use crate::config::ClientConfig;
use crate::network::{Denied, NetworkPolicy, PolicyResolver, ResolveError};

/// Bodies of non-2xx responses are kept up to this size.
pub const MAX_ERROR_BODY: usize = 64 << 10;
/// The most room made for a body before it arrives, whatever its Content-Length says.
const PRESIZE_MAX: usize = 4 << 20;

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A header name or value given in the configuration is not valid HTTP.
    #[error("bad extra header `{name}`: {why} (hint: use `Name: value`)")]
    Header {
        /// The header as given.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The proxy URL is not valid.
    #[error("bad proxy `{proxy}`: {source} (hint: e.g. http://127.0.0.1:3128)")]
    Proxy {
        /// The proxy as given.
        proxy: String,
        /// reqwest's reason.
        source: reqwest::Error,
    },
    /// reqwest refused the configuration.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The cache folder could not be prepared.
    #[error("cannot use the cache folder {path}: {source}")]
    CacheDir {
        /// The folder.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The cache is read-only and its folder is not there (a read-only cache is read,
    /// never made: a mistyped folder would be a run of misses).
    #[error(
        "the cache folder {path} does not exist (cache folder {from}; the cache mode \
         read-only reads a cache and creates none) (hint: check the path, or fill the \
         cache first with the read-write mode)"
    )]
    NoCacheFolder {
        /// The folder.
        path: std::path::PathBuf,
        /// Where it was named ([`CacheConfig::dir_from`](crate::CacheConfig::dir_from)).
        from: String,
    },
}

/// What came back from one request.
#[derive(Debug)]
pub enum Exchange {
    /// A complete response (its body possibly cut at the limit).
    Response {
        /// Status.
        status: u16,
        /// Headers, lower-case names.
        headers: Vec<(String, String)>,
        /// Body after decompression.
        body: Bytes,
        /// The body was cut at the limit.
        truncated: bool,
        /// The server's address, when known.
        remote: Option<std::net::IpAddr>,
    },
    /// No complete response.
    Transport {
        /// A dotted code (`network.reset`, `timeout.read`, …).
        code: &'static str,
        /// Detail.
        message: String,
    },
}

/// How long what a connection sent may go unacknowledged before the kernel drops the
/// connection (`TCP_USER_TIMEOUT`), also once its process is gone. Without it, a request
/// sent into a network partition is retransmitted by the kernel for minutes, even after
/// its process was killed, and reaches the host once the partition heals, while another
/// machine that took the host over is fetching it (issue 41: 83 ms between two machines'
/// requests). A worker stops its run 1.5 s before its lease can run out and the next
/// owner waits 2 s more: 3 s keeps a late request inside that. A connection whose data
/// goes unacknowledged that long fails as a network error, retried as such.
pub const UNACKNOWLEDGED_LIMIT: Duration = Duration::from_secs(3);

/// The HTTP client of a fetcher.
#[derive(Debug, Clone)]
pub struct Client {
    inner: reqwest::Client,
    cfg: ClientConfig,
    policy: Arc<NetworkPolicy>,
}

impl Client {
    /// Builds the client.
    pub fn new(cfg: &ClientConfig) -> Result<Self, BuildError> {
        let mut headers = HeaderMap::new();
        for (name, value) in &cfg.headers {
            let n =
                HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| BuildError::Header {
                    name: name.clone(),
                    why: e.to_string(),
                })?;
            let v = HeaderValue::from_str(value.trim()).map_err(|e| BuildError::Header {
                name: name.clone(),
                why: e.to_string(),
            })?;
            headers.append(n, v);
        }
        let mut b = reqwest::Client::builder()
            .user_agent(cfg.user_agent.clone())
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(cfg.connect_timeout)
            .pool_max_idle_per_host(cfg.pool_idle_per_host)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .tcp_user_timeout(UNACKNOWLEDGED_LIMIT)
            .danger_accept_invalid_certs(cfg.insecure)
            .cookie_store(cfg.cookies);
        if let Some(proxy) = &cfg.proxy {
            let p = reqwest::Proxy::all(proxy).map_err(|source| BuildError::Proxy {
                proxy: proxy.clone(),
                source,
            })?;
            b = b.proxy(p);
        } else {
            b = b.no_proxy();
        }
        let policy = Arc::new(NetworkPolicy::new(cfg.network.clone()));
        if !cfg.network.is_open() {
            // The only resolver of the client: the connector connects to what it returns.
            let exempt = (cfg.proxy.as_deref())
                .and_then(|p| url::Url::parse(p).ok())
                .and_then(|u| u.host_str().map(str::to_owned));
            b = b.dns_resolver(Arc::new(PolicyResolver {
                policy: policy.clone(),
                exempt,
            }));
        }
        let inner = b.build().map_err(BuildError::Client)?;
        Ok(Self {
            inner,
            cfg: cfg.clone(),
            policy,
        })
    }

    /// The network policy of this client (start URLs are admitted through it).
    pub fn policy(&self) -> &Arc<NetworkPolicy> {
        &self.policy
    }

    /// Whether the policy lets `url` be requested, as far as can be told before
    /// connecting: an IP literal (no resolver sees it), and, through a proxy (which
    /// resolves names itself), the name's addresses. Names are checked by the resolver.
    async fn admissible(&self, url: &url::Url) -> Result<(), Denied> {
        self.policy.check_url(url)?;
        if let (Some(_), Some(url::Host::Domain(name))) = (&self.cfg.proxy, url.host())
            && !self.cfg.network.is_open()
            && let Err(ResolveError::Denied(d)) = self.policy.resolve(name).await
        {
            return Err(d);
        }
        Ok(())
    }

    /// One GET of `url` with `extra` headers; the body is read up to `limit` bytes.
    pub async fn get(&self, url: &url::Url, extra: &[(&str, String)], limit: usize) -> Exchange {
        self.send(url, None, extra, limit).await
    }

    /// One GET of `url`, or, with `form`, one POST of that
    /// `application/x-www-form-urlencoded` body (an API call too long for a URL).
    pub async fn send(
        &self,
        url: &url::Url,
        form: Option<&str>,
        extra: &[(&str, String)],
        limit: usize,
    ) -> Exchange {
        let deadline = Instant::now() + self.cfg.total_timeout;
        if let Err(d) = self.admissible(url).await {
            return denied(&d);
        }
        let resp = match self.head(self.request(url, form, extra), deadline).await {
            Ok(resp) => resp,
            Err(failed) => return failed,
        };
        let remote = resp.remote_addr().map(|a| a.ip());
        // The peer of the connection used, checked again: no body is read from a refused
        // one. Through a proxy the peer is the proxy, which the policy lets through.
        if let Some(ip) = remote.filter(|_| self.cfg.proxy.is_none())
            && let Err(d) = self.policy.check(url.host_str().unwrap_or_default(), ip)
        {
            return denied(&d);
        }
        let status = resp.status().as_u16();
        let headers = header_list(resp.headers());
        let limit = if (200..300).contains(&status) {
            limit
        } else {
            limit.min(MAX_ERROR_BODY)
        };
        match self.read_body(resp, limit, deadline).await {
            Ok((body, truncated)) => Exchange::Response {
                status,
                headers,
                body,
                truncated,
                remote,
            },
            Err(failed) => failed,
        }
    }

    /// The headers a request with `form` and `extra` is sent with, as the client is told to
    /// send them (what the connection adds, cookies, is not known here), credentials
    /// redacted: what an archive of the exchange records.
    #[must_use]
    pub fn sent_headers(
        &self,
        form: Option<&str>,
        extra: &[(&str, String)],
    ) -> Vec<(String, String)> {
        let mut h = vec![("User-Agent".to_owned(), self.cfg.user_agent.clone())];
        for (name, value) in &self.cfg.headers {
            h.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        h.push(("Accept".to_owned(), "*/*".to_owned()));
        h.push((
            "Accept-Encoding".to_owned(),
            "gzip, br, zstd, deflate".to_owned(),
        ));
        if self.cfg.basic_auth.is_some() {
            h.push(("Authorization".to_owned(), "Basic [redacted]".to_owned()));
        }
        if let Some(body) = form {
            h.push((
                "Content-Type".to_owned(),
                "application/x-www-form-urlencoded".to_owned(),
            ));
            h.push(("Content-Length".to_owned(), body.len().to_string()));
        }
        for (name, value) in extra {
            h.push(((*name).to_owned(), value.clone()));
        }
        h
    }

    /// The request: a GET, or a POST of `form`, with basic auth and `extra` headers.
    fn request(
        &self,
        url: &url::Url,
        form: Option<&str>,
        extra: &[(&str, String)],
    ) -> reqwest::RequestBuilder {
        let mut req = match form {
            None => self.inner.get(url.clone()),
            Some(body) => self
                .inner
                .post(url.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body.to_owned()),
        };
        if let Some((user, pass)) = &self.cfg.basic_auth {
            req = req.basic_auth(user, pass.as_deref());
        }
        for (k, v) in extra {
            req = req.header(*k, v);
        }
        req
    }

    /// Sends `req` and waits for the response headers, within the read-idle timeout and
    /// the `deadline`.
    async fn head(
        &self,
        req: reqwest::RequestBuilder,
        deadline: Instant,
    ) -> Result<reqwest::Response, Exchange> {
        let idle = self.cfg.read_timeout;
        match timeout_at(deadline, timeout(idle, req.send())).await {
            Err(_) => Err(total_timeout(self.cfg.total_timeout)),
            Ok(Err(_)) => Err(Exchange::Transport {
                code: "timeout.read",
                message: format!("no response headers within {}", fmt_d(idle)),
            }),
            Ok(Ok(Err(e))) => Err(transport(&e)),
            Ok(Ok(Ok(r))) => Ok(r),
        }
    }

    /// Reads the body up to `limit` bytes (`true`: cut there), no read silent for longer
    /// than the read-idle timeout, all of it before the `deadline`.
    async fn read_body(
        &self,
        mut resp: reqwest::Response,
        limit: usize,
        deadline: Instant,
    ) -> Result<(Bytes, bool), Exchange> {
        let idle = self.cfg.read_timeout;
        // Room for the body its Content-Length announces (not grown by doubling, a copy of
        // it at each step), up to the limit and PRESIZE_MAX: a server may announce more.
        let announced = resp.content_length().unwrap_or(0);
        let mut body =
            BytesMut::with_capacity(announced.min((limit.min(PRESIZE_MAX)) as u64) as usize);
        loop {
            let chunk = match timeout_at(deadline, timeout(idle, resp.chunk())).await {
                Err(_) => return Err(total_timeout(self.cfg.total_timeout)),
                Ok(Err(_)) => {
                    return Err(Exchange::Transport {
                        code: "timeout.read",
                        message: format!(
                            "body stalled for {} after {} bytes",
                            fmt_d(idle),
                            body.len()
                        ),
                    });
                }
                Ok(Ok(Err(e))) => return Err(transport(&e)),
                Ok(Ok(Ok(c))) => c,
            };
            let Some(chunk) = chunk else {
                return Ok((body.freeze(), false));
            };
            let room = limit - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body.freeze(), true));
            }
            body.extend_from_slice(&chunk);
        }
    }
}

/// Response headers as (lower-case name, value) pairs, in arrival order.
fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

fn fmt_d(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn total_timeout(d: Duration) -> Exchange {
    Exchange::Transport {
        code: "timeout.total",
        message: format!("request took longer than {}", fmt_d(d)),
    }
}

fn transport(e: &reqwest::Error) -> Exchange {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(d) = s.downcast_ref::<Denied>() {
            return denied(d);
        }
        source = s.source();
    }
    Exchange::Transport {
        code: transport_code(e),
        message: describe(e),
    }
}

/// The failure of a connection the network policy refused.
fn denied(d: &Denied) -> Exchange {
    Exchange::Transport {
        code: crate::network::DENIED_CODE,
        message: d.to_string(),
    }
}
