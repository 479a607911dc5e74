//! `--metrics ADDR`: each long-running program serves its live books on `/metrics`, and
//! what it serves at the end is what its `summary` record says. The runs are on the demo
//! site (`testdata/site`) with the demo's faults (`testdata/demo-faults.json`: 503s and
//! connection resets past the retries, a 429 with Retry-After, a 410), so that failures,
//! retries and expected records are counted too. The input of rip-fetch and rip-parse is
//! given in two parts, the second only once a scrape has shown the first done: a scrape
//! during the run shows the counts growing, without a timing guess.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Output};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus_parse::{Scrape, Value};
use rip_core::Summary;
use rip_testkit::{Ran, Stage};
use rip_testserver::{FaultPlan, TestServer};

/// How long a scrape may take to show what a test waits for (a loaded machine).
const PATIENCE: Duration = Duration::from_secs(120);

/// The demo site, served with the demo's faults.
fn demo_site() -> TestServer {
    let plan = std::fs::read_to_string(rip_testkit::testdata("demo-faults.json")).unwrap();
    TestServer::builder()
        .dir(rip_testkit::testdata("site"))
        .plan(FaultPlan::from_json(&plan).unwrap())
        .start_background()
        .unwrap()
}

/// The demo site's pages (and a page that is not there), as `ref` lines.
fn demo_refs(server: &TestServer) -> Vec<String> {
    let root = rip_testkit::testdata("site");
    let mut paths = vec!["items/item-99.html".to_owned()];
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy();
                paths.push(rel.into_owned());
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|p| {
            format!(
                r#"{{"_type":"ref","url":"{}"}}"#,
                server.url(&format!("/{p}"))
            )
        })
        .collect()
}

/// A program running with `--metrics 127.0.0.1:0`, its stdin held open by the test.
struct Watched {
    program: String,
    child: Child,
    stdin: Option<ChildStdin>,
    addr: String,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    /// Its working folder: what it leaves there (`.rip-cache/hosts`, the shared host
    /// schedules) stays out of the checkout.
    _cwd: tempfile::TempDir,
}

impl Watched {
    /// Starts `program` with `args`; waits for the address it says on stderr.
    fn start(program: &str, args: &[&str]) -> Self {
        Self::start_with(program, args, |stage| stage)
    }

    /// [`Watched::start`], the stage changed by `with` (an environment); the metrics
    /// flags go before a `--` that starts a command.
    fn start_with(program: &str, args: &[&str], with: impl FnOnce(Stage) -> Stage) -> Self {
        let at = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        let metrics = ["--metrics", "127.0.0.1:0", "--metrics-linger", "120s"];
        let cwd = tempfile::tempdir().unwrap();
        let stage = Stage::new(program)
            .current_dir(cwd.path())
            .args(&args[..at])
            .args(metrics)
            .args(&args[at..])
            .stdin("");
        let mut child = with(stage).command().spawn().unwrap();
        let stdin = child.stdin.take();
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        });
        let (tx, rx) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().unwrap());
        let stderr = std::thread::spawn(move || {
            let mut text = Vec::new();
            for line in err.lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once(": metrics on http://") {
                    let _ = tx.send(rest.trim_end_matches("/metrics").to_owned());
                }
                text.extend_from_slice(line.as_bytes());
                text.push(b'\n');
            }
            text
        });
        let addr = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("{program} did not say where its metrics are"));
        Self {
            program: program.to_owned(),
            child,
            stdin,
            addr,
            stdout,
            stderr,
            _cwd: cwd,
        }
    }

    /// Writes input lines to the program.
    fn feed(&mut self, lines: &[String]) {
        let stdin = self.stdin.as_mut().unwrap();
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        stdin.flush().unwrap();
    }

    /// One scrape of `/metrics`, parsed (and held to the format's shape, see [`parsed`]).
    fn scrape(&self) -> Scrape {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        write!(
            stream,
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/openmetrics-text"),
            "{head}"
        );
        parsed(body)
    }

    /// One scrape, or `None` when the program does not answer (not yet, or no more).
    fn try_scrape(&self) -> Option<Scrape> {
        let mut stream = TcpStream::connect(&self.addr).ok()?;
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let request = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (_, body) = response.split_once("\r\n\r\n")?;
        Some(parsed(body))
    }

    /// Scrapes until `done` says yes of a scrape; that scrape.
    fn scrape_until(&self, what: &str, done: impl Fn(&Scrape) -> bool) -> Scrape {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let scrape = self.scrape();
            if done(&scrape) {
                return scrape;
            }
            assert!(Instant::now() < deadline, "{}: never {what}", self.program);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The last scrape: once the stage says it is finished (its summary's numbers).
    fn finished(&mut self) -> Scrape {
        let stage = self.program.clone();
        self.finished_as(&stage)
    }

    /// [`Watched::finished`] for a stage named otherwise than its program.
    fn finished_as(&mut self, stage: &str) -> Scrape {
        drop(self.stdin.take());
        self.scrape_until("finished", |s| {
            value(s, "rip_stage_finished", &[("stage", stage)]) == Some(1.0)
        })
    }

    /// Waits for the program to end (it lingers until its final numbers are read: scraped
    /// again while it is up, which a scrape of them already did).
    fn end(mut self) -> Ran {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{} did not end", self.program);
            let _ = self.try_scrape();
            std::thread::sleep(Duration::from_millis(100));
        };
        let out = Output {
            status,
            stdout: self.stdout.join().unwrap(),
            stderr: self.stderr.join().unwrap(),
        };
        Ran::from_output(&self.program, out)
    }
}

/// The text parsed with a Prometheus text-format parser, after checks of the shape it
/// does not make: `# EOF` once at the end, each family's `# HELP` and `# TYPE` once, a
/// counter's samples named `<family>_total`, every sample of a declared family.
fn parsed(text: &str) -> Scrape {
    assert!(
        text.ends_with("# EOF\n") && text.matches("# EOF").count() == 1,
        "{text}"
    );
    let mut families: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let mut words = line.split(' ').skip(2);
        let (name, kind) = (words.next().unwrap(), words.next().unwrap());
        assert!(
            families.insert(name.to_owned(), kind.to_owned()).is_none(),
            "{name} twice"
        );
    }
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name = line.split(['{', ' ']).next().unwrap();
        let family = match name.strip_suffix("_total") {
            Some(f) if families.get(f).is_some_and(|k| k == "counter") => f,
            _ => name,
        };
        let kind = families
            .get(family)
            .unwrap_or_else(|| panic!("{line}: no # TYPE"));
        assert_eq!(kind == "counter", family != name, "{line}");
    }
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap()
}

/// The value of the samples `metric` whose labels include `labels` (added up: the steps
/// of a pipeline); `None` when there is none.
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut matching = scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .peekable();
    matching.peek()?;
    Some(matching.map(|s| number(&s.value)).sum())
}

fn number(value: &Value) -> f64 {
    match value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        other => panic!("not a number: {other:?}"),
    }
}

/// `metric`'s samples of `stage`, by the value of `label` (added up over the steps of a
/// pipeline, where a program runs more than once).
fn by_label(scrape: &Scrape, metric: &str, stage: &str, label: &str) -> BTreeMap<String, u64> {
    let mut values = BTreeMap::new();
    let of_stage =
        |s: &&prometheus_parse::Sample| s.metric == metric && s.labels.get("stage") == Some(stage);
    for s in scrape.samples.iter().filter(of_stage) {
        let key = s.labels.get(label).unwrap().to_owned();
        *values.entry(key).or_default() += number(&s.value) as u64;
    }
    values
}

/// The stage's counters as the summary names them: `failed.<CATEGORY>`, `retries`,
/// `requests`, and the rest by their `counter` label.
fn summary_counters(scrape: &Scrape, stage: &str) -> BTreeMap<String, u64> {
    let mut counters = by_label(scrape, "rip_summary_counter_total", stage, "counter");
    for (category, n) in by_label(scrape, "rip_failures_total", stage, "category") {
        counters.insert(format!("failed.{category}"), n);
    }
    for (metric, name) in [
        ("rip_retries_total", "retries"),
        ("rip_http_requests_total", "requests"),
        ("rip_body_bytes_total", "bodyBytes"),
    ] {
        if let Some(n) = value(scrape, metric, &[("stage", stage)]) {
            counters.insert(name.to_owned(), n as u64);
        }
    }
    counters
}

/// The scrape's numbers are the summary's: records in, out and passed through by kind,
/// bad lines, and every counter (one the summary leaves out, as zeros are, is 0).
fn assert_books(scrape: &Scrape, summary: &Summary) {
    let stage = summary.stage.as_str();
    assert_eq!(
        by_label(scrape, "rip_records_in_total", stage, "kind"),
        summary.input
    );
    assert_eq!(
        by_label(scrape, "rip_records_out_total", stage, "kind"),
        summary.output
    );
    let passed = by_label(scrape, "rip_records_passed_through_total", stage, "kind");
    assert_eq!(passed, summary.passed_through);
    let bad = value(scrape, "rip_bad_lines_total", &[("stage", stage)]);
    assert_eq!(bad, Some(summary.bad_lines as f64));
    let counters = summary_counters(scrape, stage);
    for (name, n) in &summary.counters {
        assert_eq!(
            counters.get(name),
            Some(n),
            "{stage}'s {name}: {counters:?}"
        );
    }
    for (name, n) in &counters {
        if !summary.counters.contains_key(name) {
            assert_eq!(
                *n, 0,
                "{stage}'s {name} is not in its summary: {:?}",
                summary.counters
            );
        }
    }
    let rss = value(
        scrape,
        "rip_resident_memory_peak_bytes",
        &[("program", stage)],
    );
    assert!(rss.is_some_and(|b| b > 0.0), "peak RSS");
}

/// Records of `kinds` written by `stage` so far.
fn out_of(scrape: &Scrape, stage: &str, kinds: &[&str]) -> u64 {
    let out = by_label(scrape, "rip_records_out_total", stage, "kind");
    kinds
        .iter()
        .map(|k| out.get(*k).copied().unwrap_or(0))
        .sum()
}

/// Runs `program` on `lines` given in two parts: a scrape shows the first part done, the
/// last scrape the whole; returns both and the run.
fn two_parts(
    program: &str,
    args: &[&str],
    lines: &[String],
    made: &[&str],
) -> (Scrape, Scrape, Ran) {
    let (first, second) = lines.split_at(lines.len() / 2);
    let mut watched = Watched::start(program, args);
    watched.feed(first);
    let n = first.len() as u64;
    let midway = watched.scrape_until("done with the first part", |s| {
        let read = by_label(s, "rip_records_in_total", program, "kind")
            .values()
            .sum::<u64>();
        read == n && out_of(s, program, made) == n
    });
    watched.feed(second);
    let last = watched.finished();
    (midway, last, watched.end())
}

#[test]
fn rip_fetch_and_rip_parse_serve_their_summary_live() {
    let server = demo_site();
    let refs = demo_refs(&server);
    let args = [
        "--delay",
        "0ms",
        "--jitter",
        "0ms",
        "--retry-base",
        "20ms",
        "--retry-max",
        "50ms",
        "--attempts",
        "3",
        "--cache",
        "off",
    ];
    let (midway, last, ran) =
        two_parts("rip-fetch", &args, &refs, &["page", "failure", "expected"]);
    assert_eq!(ran.code, 2, "failures make it partial: {}", ran.stderr);
    let summary = ran.summary();
    assert_books(&last, summary);
    let refs_midway = value(
        &midway,
        "rip_records_in_total",
        &[("stage", "rip-fetch"), ("kind", "ref")],
    );
    assert_eq!(refs_midway, Some((refs.len() / 2) as f64), "midway");
    assert!(summary.input["ref"] as usize == refs.len());
    assert!(
        summary.counters.get("retries").is_some_and(|&n| n > 0),
        "{:?}",
        summary.counters
    );
    assert!(
        summary.counters.keys().any(|k| k.starts_with("failed.")),
        "{:?}",
        summary.counters
    );

    let pages: Vec<String> = ran
        .lines()
        .iter()
        .filter(|l| l.contains(r#""_type":"page""#))
        .cloned()
        .collect();
    // Every page's body came over the network (cache off), retried answers' bodies too.
    let page_bytes: usize = pages
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["body"]
                .as_str()
                .map_or(0, str::len)
        })
        .sum();
    let body_bytes = summary.counters.get("bodyBytes").copied().unwrap_or(0);
    assert!(
        page_bytes > 0 && body_bytes >= page_bytes as u64,
        "bodyBytes {body_bytes} against {page_bytes} bytes of page bodies"
    );
    let (midway, last, parsed) = two_parts("rip-parse", &[], &pages, &["doc", "error"]);
    assert!(parsed.code == 0 || parsed.code == 2, "{}", parsed.stderr);
    assert_books(&last, parsed.summary());
    let docs_midway = out_of(&midway, "rip-parse", &["doc", "error"]);
    assert!(
        docs_midway < out_of(&last, "rip-parse", &["doc", "error"]),
        "growing"
    );
}

#[test]
fn rip_discover_serves_its_summary_live() {
    let server = demo_site();
    let mut watched = Watched::start(
        "rip-discover",
        &[
            &server.url("/"),
            "--max-depth",
            "5",
            "--delay",
            "0ms",
            "--jitter",
            "0ms",
            "--retry-base",
            "20ms",
            "--retry-max",
            "50ms",
            "--cache",
            "off",
        ],
    );
    let last = watched.finished();
    let ran = watched.end();
    assert_books(&last, ran.summary());
    assert!(
        ran.summary().output.get("ref").is_some_and(|&n| n > 10),
        "{:?}",
        ran.summary()
    );
    let frontier = value(&last, "rip_frontier_urls", &[("stage", "rip-discover")]);
    assert_eq!(frontier, Some(0.0), "the frontier is empty at the end");
}

#[test]
fn a_bad_metrics_address_is_a_usage_error_naming_it() {
    let ran = Stage::new("rip-fetch")
        .args(["--metrics", "localhost:nine"])
        .run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("localhost:nine"), "{}", ran.stderr);
}

/// The summaries of one stage (a pipeline's fetch rounds), added up as one.
fn added_up(summaries: &[&Summary]) -> Summary {
    let mut sum = summaries[0].clone();
    for s in &summaries[1..] {
        for (into, from) in [
            (&mut sum.input, &s.input),
            (&mut sum.output, &s.output),
            (&mut sum.passed_through, &s.passed_through),
            (&mut sum.counters, &s.counters),
        ] {
            for (k, n) in from {
                *into.entry(k.clone()).or_default() += n;
            }
        }
        sum.bad_lines += s.bad_lines;
    }
    sum
}

/// `ripperoni run --metrics`: the wrapper scrapes each stage that serves metrics and
/// serves them all on its one address, each sample labelled with its `step` (the three
/// fetch rounds are three rip-fetch processes). Scraped until the run ends (the wrapper
/// lingers until a scrape after its end): the last scrape's numbers, added up by program,
/// are the stages' summaries in the run's `stream.ndjson`.
#[test]
fn ripperoni_run_serves_the_whole_pipeline_on_one_address() {
    let server = demo_site();
    let dir = tempfile::tempdir().unwrap();
    let state = rip_testkit::demo_state(dir.path(), &server.origin(), |_| {});
    let mut watched = Watched::start("ripperoni", &["run", state.to_str().unwrap()]);
    drop(watched.stdin.take());
    let mut scrapes = Vec::new();
    let deadline = Instant::now() + PATIENCE * 2;
    while watched.child.try_wait().unwrap().is_none() {
        scrapes.extend(watched.try_scrape());
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    let ran = watched.end();
    assert_eq!(ran.code, 2, "partial, as the demo is: {}", ran.stderr);
    let last = scrapes.last().expect("scraped");
    let stream = dir.path().join("out/emberfall/stream.ndjson");
    let summaries: Vec<Summary> = std::fs::read_to_string(stream)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(r#"{"_type":"summary""#))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for program in ["rip-discover", "rip-fetch", "rip-parse"] {
        let of: Vec<&Summary> = summaries.iter().filter(|s| s.stage == program).collect();
        let steps = last
            .samples
            .iter()
            .filter(|s| s.metric == "rip_stage_finished" && s.labels.get("stage") == Some(program));
        assert_eq!(steps.count(), of.len(), "a step of {program} per summary");
        assert_books(last, &added_up(&of));
    }
    let made = |s: &Scrape| value(s, "rip_records_out_total", &[]).unwrap_or(0.0);
    let end = made(last);
    assert!(
        scrapes.iter().any(|s| made(s) > 0.0 && made(s) < end),
        "a scrape during the run shows the counts growing"
    );
}

/// rip-render (headless Chromium) on a few pages of the demo site, one answering 503 past
/// its retries (in the first part) and one not there: the same books, live and at the end;
/// its HTTP requests and retries served as they are made, as rip-fetch's are.
#[test]
fn rip_render_serves_its_summary_live() {
    let server = demo_site();
    let paths = [
        "/index.html",
        "/items/item-7.html",
        "/about.html",
        "/items/item-1.html",
        "/items/item-99.html",
        "/items/item-2.html",
    ];
    let refs: Vec<String> = paths
        .iter()
        .map(|p| format!(r#"{{"_type":"ref","url":"{}"}}"#, server.url(p)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let args = [
        "--delay",
        "0ms",
        "--jitter",
        "0ms",
        "--retry-base",
        "20ms",
        "--retry-max",
        "50ms",
        "--attempts",
        "2",
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    let made = ["page", "failure", "expected"];
    let (midway, last, ran) = two_parts("rip-render", &args, &refs, &made);
    assert!(ran.code == 0 || ran.code == 2, "{}", ran.stderr);
    assert_books(&last, ran.summary());
    assert!(out_of(&midway, "rip-render", &made) < out_of(&last, "rip-render", &made));
    let http = |s: &Scrape, metric| value(s, metric, &[("stage", "rip-render")]).unwrap_or(0.0);
    let requests = http(&midway, "rip_http_requests_total");
    assert!(requests > 0.0, "requests served midway");
    assert!(
        requests < http(&last, "rip_http_requests_total"),
        "and growing"
    );
    let retries = http(&midway, "rip_retries_total");
    assert!(retries > 0.0, "the first part's 503 retried, served midway");
}

/// The counts of `rip-queue work`'s closing line (`rip-queue: 8 records in 2 runs (0
/// delivered again, 0 handed back, 0 given up as failures, 0 runs failed); output: 24
/// stored, 0 already there`), by their metrics names.
fn worked_line(stderr: &str) -> BTreeMap<String, u64> {
    let line = stderr
        .lines()
        .find(|l| l.contains(" records in "))
        .expect(stderr);
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let names = [
        "records",
        "batches",
        "redelivered",
        "handedBack",
        "givenUp",
        "failedRuns",
        "stored",
        "duplicates",
    ];
    assert_eq!(numbers.len(), names.len(), "{line}");
    names.iter().map(|n| n.to_string()).zip(numbers).collect()
}

/// What the broker says of its consumers (its monitoring endpoint, `/jsz`): the records not
/// yet delivered and those not yet acknowledged, added up over every consumer.
fn broker_lag(monitor: &str) -> (u64, u64) {
    let mut stream = TcpStream::connect(monitor).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let path = "/jsz?accounts=true&streams=true&consumers=true";
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {monitor}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    let jsz: serde_json::Value = serde_json::from_str(body).expect(body);
    let mut lag = (0, 0);
    let accounts = jsz["account_details"].as_array().into_iter().flatten();
    for stream in accounts.flat_map(|a| a["stream_detail"].as_array().into_iter().flatten()) {
        for consumer in stream["consumer_detail"].as_array().into_iter().flatten() {
            lag.0 += consumer["num_pending"].as_u64().unwrap_or(0);
            lag.1 += consumer["num_ack_pending"].as_u64().unwrap_or(0);
        }
    }
    lag
}

/// The worker's lag as served: records not delivered, and delivered but not acknowledged.
fn served_lag(scrape: &Scrape) -> Option<(u64, u64)> {
    let stage = [("stage", "rip-queue work")];
    let pending = value(scrape, "rip_queue_pending_messages", &stage)?;
    let ack_pending = value(scrape, "rip_queue_ack_pending_messages", &stage)?;
    Some((pending as u64, ack_pending as u64))
}

/// `rip-queue work` (what `ripperoni worker` runs, on a partitioned input) on a real broker,
/// one run at a time, each held at a gate until the test opens it: started before the refs
/// are pushed, its records counted from 0 as they come; while the gate holds the first batch,
/// its lag on the broker is the broker's own figures (records waiting, records in the run);
/// at the end 0 and 0, and its counts are its closing line's.
fn rip_queue_work_serves_its_counts_and_its_queue_lag(partitions: &[&str]) {
    let server = demo_site();
    let monitor = format!("127.0.0.1:{}", rip_testkit::free_port());
    let nats = rip_testkit::NatsServer::start_with(&format!("http: {monitor}"));
    let refs: Vec<String> = demo_refs(&server).into_iter().take(12).collect();
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let pipeline = format!(
        "while [ ! -e '{}' ]; do sleep 0.1; done; \
         rip-fetch -q --delay 0ms --jitter 0ms --retry-base 20ms --cache off | rip-parse -q",
        gate.display()
    );
    let broker = nats.url();
    let mut args = vec!["--broker", &broker, "work", "refs", "docs"];
    args.extend(partitions);
    args.extend([
        "--ack-wait",
        "2s",
        "--handover-wait",
        "0s",
        "--idle-exit",
        "2s",
    ]);
    args.extend(["--batch", "4", "-j", "1", "--", "bash", "-c", &pipeline]);
    let mut watched = Watched::start_with("rip-queue", &args, |s| {
        s.env("PATH", rip_testkit::path_with_bins())
    });
    let stage = "rip-queue work";
    let counters = |s: &Scrape| by_label(s, "rip_summary_counter_total", stage, "counter");
    let before = watched.scrape();
    assert_eq!(counters(&before).get("records").copied().unwrap_or(0), 0);
    let pushed = Stage::new("rip-queue")
        .args(["--broker", &broker, "push", "refs"])
        .args(partitions)
        .stdin(refs.join("\n") + "\n")
        .run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let all = refs.len() as u64;
    // The gate holds the first batch: nothing moves on the broker until it opens.
    let held = watched.scrape_until("serving the broker's lag", |s| {
        let broker = broker_lag(&monitor);
        broker.0 > 0 && broker.1 > 0 && served_lag(s) == Some(broker)
    });
    let (waiting, running) = served_lag(&held).unwrap();
    assert_eq!(waiting + running, all, "every record waits or runs");
    std::fs::write(&gate, "").unwrap();
    let done = watched.scrape_until("done with every ref", |s| {
        counters(s).get("records") == Some(&all)
    });
    assert!(served_lag(&done).is_some());
    let last = watched.finished_as(stage);
    assert_eq!(served_lag(&last), Some((0, 0)), "no lag at the end");
    assert_eq!(broker_lag(&monitor), (0, 0), "as the broker says");
    let ran = watched.end();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let worked = worked_line(&ran.stderr);
    assert_eq!(counters(&last), worked, "{}", ran.stderr);
}

#[test]
fn rip_queue_work_serves_its_queue_lag_on_a_shared_input() {
    rip_queue_work_serves_its_counts_and_its_queue_lag(&[]);
}

/// Partitioned by host, as `ripperoni worker`'s input is: the lag is the partitions'.
#[test]
fn rip_queue_work_serves_its_queue_lag_on_a_partitioned_input() {
    rip_queue_work_serves_its_counts_and_its_queue_lag(&["--partitions", "4"]);
}

/// Failures by host, bounded: refs to five hosts that refuse connections (closed ports),
/// host `k` with `k` refs, served with `--metrics-hosts 3`: the three hosts with the most
/// failures by name, the other two added up as `other`; four series, never one per host.
#[test]
fn failures_by_host_are_served_for_the_top_hosts_only() {
    let ports: Vec<u16> = (0..5).map(|_| rip_testkit::free_port()).collect();
    let mut refs = Vec::new();
    for (k, port) in ports.iter().enumerate() {
        for i in 0..=k {
            refs.push(format!(
                r#"{{"_type":"ref","url":"http://127.0.0.1:{port}/{i}.html"}}"#
            ));
        }
    }
    let args = ["--attempts", "1", "--cache", "off", "--metrics-hosts", "3"];
    let mut watched = Watched::start("rip-fetch", &args);
    watched.feed(&refs);
    let last = watched.finished();
    let ran = watched.end();
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let hosts = by_label(&last, "rip_host_failures", "rip-fetch", "host");
    let expected: BTreeMap<String, u64> = [
        (format!("127.0.0.1:{}", ports[4]), 5),
        (format!("127.0.0.1:{}", ports[3]), 4),
        (format!("127.0.0.1:{}", ports[2]), 3),
        ("other".to_owned(), 2 + 1),
    ]
    .into();
    assert_eq!(hosts, expected);
    let failed: u64 = ran.summary().output.get("failure").copied().unwrap_or(0);
    assert_eq!(failed, refs.len() as u64, "every ref failed");
}
