//! The exchanges on the wire, for a stage that keeps a record of them (`rip-fetch --warc`
//! writes them as WARC records): a [`WireTap`] set on a [`Fetcher`](crate::Fetcher) with
//! [`Fetcher::set_tap`](crate::Fetcher::set_tap) is given every request the fetcher sends
//! (each redirect hop, each retry, robots.txt and API calls too) with what came back.
//!
//! rip-http knows no archive format: the tap is a trait, so the one HTTP crate stays free of
//! the crates that write archives.

use std::net::IpAddr;

use url::Url;

use crate::Classification;

/// Told of each exchange, in the task that made it: keep it short (no waiting on I/O that
/// may stall), it is on the fetch's path.
pub trait WireTap: Send + Sync + std::fmt::Debug {
    /// One request sent and what came back.
    fn exchange(&self, exchange: &WireExchange<'_>);
}

/// One request and what came back.
#[derive(Debug)]
pub struct WireExchange<'a> {
    /// The URL requested.
    pub url: &'a Url,
    /// `GET`, or `POST` for an API call's form.
    pub method: &'static str,
    /// The headers sent, as the client was told to send them (those the connection adds
    /// itself, such as cookies from the cookie store, are not known here); credentials are
    /// redacted.
    pub request_headers: Vec<(String, String)>,
    /// The body sent: an API call's form (`application/x-www-form-urlencoded`), else
    /// empty.
    pub request_body: &'a [u8],
    /// Which request of this fetch this is (1 for the first; retries and redirect hops
    /// count up).
    pub request_number: u32,
    /// What came back.
    pub answer: WireAnswer<'a>,
    /// How the fetcher classifies it, when it is a failure (a status of 400 or more, or
    /// no response): category, retryability, code.
    pub failure: Option<Classification>,
}

/// What came back for one request.
#[derive(Debug)]
pub enum WireAnswer<'a> {
    /// A response (of any status).
    Response {
        /// Status.
        status: u16,
        /// Headers as received, lower-case names, in order.
        headers: &'a [(String, String)],
        /// The body after the client decoded it (transfer and content codings removed),
        /// cut at the body limit.
        body: &'a [u8],
        /// The body was cut at the limit.
        truncated: bool,
        /// The server's address.
        remote: Option<IpAddr>,
    },
    /// No complete response.
    Transport {
        /// A dotted code (`network.reset`, `timeout.read`, …).
        code: &'a str,
        /// Detail.
        message: &'a str,
    },
}
