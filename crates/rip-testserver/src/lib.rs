#![deny(missing_docs)]
//! A fault-injecting HTTP/1.1 test server for ripperoni's network tests.
//!
//! It serves a directory, a generated [`LinkGraph`], or in-memory files on `127.0.0.1`
//! (port 0 by default), answers chosen paths with faults (statuses, `Retry-After`, resets,
//! stalls, short bodies, slow bodies, redirects, gzip and gzip bombs, wrong charsets,
//! non-HTML bodies, validators and 304s, huge headers), and logs every request so tests can
//! assert on counts, headers and timing. It is its own small server on `tokio` and `httparse`,
//! because resets, stalls and short bodies need the raw socket.
//!
//! # Quick start
//!
//! ```no_run
//! use std::time::Duration;
//! use rip_testserver::{Fault, LinkGraph, RetryAfter, Rule, TestServer};
//!
//! # async fn demo() -> Result<(), rip_testserver::Error> {
//! let server = TestServer::builder()
//!     .graph(LinkGraph::new(1_000).seed(7).sections(4))
//!     .rule(
//!         Rule::path("/item-5")
//!             .times(2, Fault::retry_after(503, RetryAfter::Seconds(1)))
//!             .then(Fault::serve()),
//!     )
//!     .rule(Rule::path("/item-6").always(Fault::reset()))
//!     .start()
//!     .await?;
//!
//! let url = server.url("/item-5"); // http://127.0.0.1:PORT/item-5
//! // ... run the code under test against `url` ...
//! assert_eq!(server.count("/item-5"), 3);
//! assert!(server.min_gap().unwrap() >= Duration::from_millis(900));
//! let ua = server.requests_for("/item-5")[0].header("user-agent").map(str::to_owned);
//! # Ok(()) }
//! ```
//!
//! [`ServerBuilder::start`] runs the server on the caller's tokio runtime (sharing a paused
//! clock); [`ServerBuilder::start_background`] runs it on a thread with its own runtime, for
//! synchronous tests and tests that drive child processes. Dropping the [`TestServer`] stops it.
//!
//! # What is served
//!
//! - [`ServerBuilder::dir`]: files with a `Content-Type` by extension ([`content_type_for`]),
//!   `index.html` for a path ending in `/`, a 301 adding the `/` to a directory path (as
//!   nginx does), 404 for anything missing, and 400 for paths that try to leave the root
//!   (`..`, `%2e%2e`, NUL, backslashes, bad escapes; symlinks out of the root are 404).
//! - [`ServerBuilder::graph`]: a [`LinkGraph`] of N pages computed per request from a seed
//!   (fan-out, sections, numbered names, robots.txt, sitemaps and sitemap indexes, gzipped
//!   sitemaps). See its docs for the exact shape.
//! - [`ServerBuilder::file`]: in-memory files at exact paths, over either of the above
//!   (a custom `/robots.txt`, say).
//! - 200 responses carry an `ETag` (a hash of the body) and a `Last-Modified` (the file's
//!   mtime, or 2024-01-01 for generated content), and `If-None-Match` / `If-Modified-Since`
//!   get 304 ([`ServerBuilder::validators`] turns this off).
//! - `GET` and `HEAD` are served; other methods get 405 (their body, if it has a
//!   `Content-Length`, is read and discarded). Keep-alive is the default for HTTP/1.1;
//!   `Connection: close` and HTTP/1.0 close after the response. Request heads over 64 KiB or
//!   with over 256 headers get 431, garbage gets 400, `Transfer-Encoding` gets 501, bodies
//!   over 16 MiB get 413, each followed by a close: none of these are logged. Nothing a
//!   client sends makes the server panic.
//! - To gzip everything (as nginx would), add `Rule::prefix("/").always(Fault::serve().gzip())`.
//!
//! # Faults
//!
//! A [`FaultPlan`] is an ordered list of [`Rule`]s. Each request goes to the **first** rule
//! that matches it ([`Matcher`]: exact path, prefix, or `*` glob; a pattern with `?` is
//! compared with path and query; optionally only for one [`Rule::host`]). A rule has a
//! *sequence* of [`Fault`]s for the first matching requests and a fault for every request
//! after them ([`Rule::then`], [`Fault::serve`] by default). By default each distinct target
//! goes through the sequence on its own ([`Counter`]). Requests no rule matches are served
//! normally. [`TestServer::add_rule`] and [`TestServer::set_plan`] change the plan of a
//! running server.
//!
//! | Fault | Rust | JSON | A client sees |
//! |---|---|---|---|
//! | any status, small body | [`Fault::status`]`(503)` | `{"status": 503}` | that status |
//! | `Retry-After` seconds | [`Fault::retry_after`]`(429, RetryAfter::Seconds(2))` | `{"status": 429, "retry_after": 2}` | `Retry-After: 2` |
//! | `Retry-After` HTTP-date | `RetryAfter::After(d)` | `{"status": 503, "retry_after_date": 5}` | a date ~5 s ahead |
//! | fail N times, then succeed | [`Rule::times`]`(n, f)` | `"sequence": [{"status": 503, "times": n}]` | n failures, then 200 |
//! | connection reset | [`Fault::reset`] | `{"reset": true}` | `ECONNRESET`, no response |
//! | close without response | [`Fault::close`] | `{"close": true}` | incomplete message |
//! | stall after headers | [`Fault::stall`]`(hold)` | `{"stall": "30s"}` | headers, then a body read timeout |
//! | short body | [`Fault::short_body`]`(n)` | `{"short_body": 10}` | a body error after n bytes |
//! | reset mid-body | `.short_body(n).end_with_reset()` | `{"short_body": 10, "end_with_reset": true}` | `ECONNRESET` mid-body |
//! | slow headers | [`Fault::delay`]`(d)` | `{"delay": "500ms"}` | a late response |
//! | slow body | [`Fault::trickle`]`(chunk, every)` | `{"trickle": {"chunk": 16, "every": "10ms"}}` | a slow body |
//! | redirect | [`Fault::redirect`]`(301, "/new")` | `{"status": 301, "location": "/new"}` | a redirect |
//! | redirect chain / loop | [`FaultPlan::redirect_chain`], [`FaultPlan::redirect_loop`] | `"redirects": [...]` | hops / a loop |
//! | gzip | [`Fault::gzip`] | `{"gzip": true}` | gzip iff `Accept-Encoding` allows |
//! | gzip bomb | [`Fault::gzip_bomb`]`(bytes)` | `{"gzip_bomb": 104857600}` | a tiny body expanding hugely |
//! | wrong / missing charset, non-HTML | [`Fault::sample`]`(Sample::…)`, [`Fault::body`] | `{"sample": "meta_charset_only"}`, `{"body": "…", "content_type": "…"}` | those bytes |
//! | custom headers | [`Fault::header`] | `{"headers": {"Cache-Control": "no-store"}}` | the header |
//! | validators | [`Fault::etag`], [`Fault::last_modified`], [`Fault::no_validators`] | `{"etag": "\"v2\""}`, `{"last_modified": "…"}`, `{"validators": false}` | 200 or 304 |
//! | huge headers | [`Fault::huge_headers`]`(count, size)` | `{"huge_headers": {"count": 8, "size": 8192}}` | big response headers |
//!
//! Faults combine: `Fault::serve().gzip().trickle(16, ms)` or `{"gzip": true, "delay": "1s"}`.
//! In a `Location` (and any header value), `{origin}` becomes `http://` plus the request's
//! `Host`, for absolute redirects that keep the host name the client used.
//!
//! # The JSON plan format
//!
//! The binary reads it with `--faults plan.json`; [`FaultPlan::from_json`] and
//! [`FaultPlan::from_file`] read it in Rust. Unknown fields are errors, reported with the
//! entry (`rules[2].sequence[0]`).
//!
//! - `rules`: a list of rules, tried in order. Each has exactly one of `path`, `prefix`,
//!   `glob`; optionally `host`; optionally `sequence` (a list of faults, each with an
//!   optional `times`, default 1); optionally `then` (alias `always`: the fault for every
//!   later request, default: serve normally); optionally `counter`: `"per_target"` (default)
//!   or `"shared"`.
//! - A fault is an object; `{}` serves normally. Fields: `reset`, `close` (booleans, alone);
//!   `status`; `location` (a redirect, status 302 unless `status` says otherwise);
//!   `retry_after` (seconds, or a string sent as is) or `retry_after_date` (seconds from
//!   now); content: one of `body` (UTF-8 text, `Content-Type` `text/html; charset=utf-8`
//!   unless `content_type` says otherwise), `body_base64`, `sample` (see [`Sample`]),
//!   `gzip_bomb` (expanded bytes); `content_type` alone relabels the normal content;
//!   `headers` (an object); `gzip`; `delay`, `stall` (durations such as `"250ms"`, `"2s"`);
//!   `trickle` (`{"chunk": bytes, "every": duration}`); `short_body` (bytes sent);
//!   `end_with_reset`; `huge_headers` (`{"count", "size"}`); `etag`; `last_modified`
//!   (RFC 3339 or HTTP-date); `validators` (`false` for none).
//! - `redirects`: a list of `{"paths": [...], "to": "/final"}` (a chain) or
//!   `{"paths": [...], "loop": true}` (a loop back to the first path), with optional
//!   `status` (default 302) and `location`: `"path"` (`/r1`, default), `"absolute"`
//!   (`http://HOST/r1`) or `"relative"` (`r1`). These rules come after `rules`.
//!
//! This example (also [`EXAMPLE_PLAN`], printed by `rip-testserver --example-plan`) uses
//! every kind of entry:
//!
#![doc = concat!("```json\n", include_str!("../assets/example-plan.json"), "```\n")]
//!
//! # The request log
//!
//! Every request, except control requests and refused garbage, becomes a [`RequestRecord`]
//! (sequence number, connection number, monotonic `elapsed` since start, wall-clock `time`,
//! method, target, path, query, `Host`, all request headers, peer, status sent, fault kind,
//! rule index) **before** its response is written, so a test that got a response can rely
//! on the log. In Rust: [`TestServer::requests`], [`TestServer::requests_for`],
//! [`TestServer::count`], [`TestServer::min_gap`], [`TestServer::min_gap_for_host`],
//! [`TestServer::wait_for_count`], and the free functions [`min_gap`] and [`gaps`] over any
//! filtered records.
//!
//! Other processes read it from the control endpoints (never logged, never faulted):
//! `GET /__rip/log` (a JSON array of records; `?path=PATTERN` filters, percent-encoded),
//! `GET /__rip/count?path=PATTERN` (`{"count": n}`), `GET /__rip/clear`, `GET /__rip/health`;
//! or from the NDJSON file of [`ServerBuilder::log_file`] (`--log FILE`), one record per line,
//! flushed per request.
//!
//! # Several hosts
//!
//! Politeness is per host, so tests need two hosts fetched in parallel. Three ways, all on
//! `127.0.0.1`:
//!
//! 1. One server, two host names: `http://127.0.0.1:PORT/` and `http://localhost:PORT/`
//!    ([`TestServer::url_for_host`]) are different hosts to a client and the same server here;
//!    the log tells them apart by `Host` ([`TestServer::requests_for_host`],
//!    [`TestServer::min_gap_for_host`]), and rules can be limited to one ([`Rule::host`]).
//!    `localhost` must resolve to 127.0.0.1 (it does on Linux; a client that tries `::1`
//!    first gets a refusal and moves on).
//! 2. One server, any names: a reqwest client can map names to the server,
//!    `ClientBuilder::resolve("a.test", server.addr())`, which gives any number of hosts.
//! 3. Several servers: each [`TestServer`] has its own port and log. Hosts that differ only
//!    by port may count as one host to a politeness scheduler keyed by host name.
//!
//! # The binary
//!
//! `bin/rip-testserver/` (package `rip-bin`) serves this crate's server as a process:
//! `rip-testserver [--dir DIR | --graph PAGES [graph options]] [--faults plan.json]
//! [--log FILE] [--bind ADDR]` prints `listening on http://127.0.0.1:PORT` as its first
//! stdout line (flushed), serves until SIGINT or SIGTERM, then exits 0. See `--help`.

mod conn;
mod control;
mod error;
mod fault;
mod gzip;
mod http;
mod log;
mod plan;
mod plan_json;
mod respond;
mod samples;
mod server;
mod shared;
mod site;
mod urlpath;

pub use error::{Error, PlanError, PlanProblem};
pub use fault::{Fault, HugeHeaders, RetryAfter, Trickle};
pub use gzip::MAX_GZIP_BOMB;
pub use http::{MAX_REQUEST_BODY, MAX_REQUEST_HEAD, MAX_REQUEST_HEADERS};
pub use log::{RequestRecord, gaps, min_gap};
pub use plan::{Counter, FaultPlan, LocationStyle, Matcher, Rule};
pub use samples::{SAMPLE_TEXT, Sample};
pub use server::{ServerBuilder, TestServer};
pub use site::{FIXED_LAST_MODIFIED_SECS, LinkGraph, LinkStyle, SITE_ORIGIN, content_type_for};

/// The path prefix of the control endpoints: `/__rip/log`, `/__rip/count`, `/__rip/clear`,
/// `/__rip/health`.
pub const CONTROL_PREFIX: &str = "/__rip/";

/// An example fault plan using every kind of entry:
#[doc = concat!("```json\n", include_str!("../assets/example-plan.json"), "```")]
pub const EXAMPLE_PLAN: &str = include_str!("../assets/example-plan.json");
