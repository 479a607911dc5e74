//! Scale-out across a network of our own (issue 41): the demo site with its faults on one
//! host, a cluster of three brokers on three more, four `ripperoni worker`s on four more and
//! the coordinator (`ripperoni run`) on the last, as a user runs them on nine machines
//! ([docs/scale-out.md](../../../docs/scale-out.md)), over links that delay and lose packets
//! ([`rip_testkit::netlab`]). The crawl's books must be those of the same crawl on loopback,
//! URL by URL, and the site's request log must show no host asked by two workers within its
//! gap. As root with `ip` (here and in CI); elsewhere it says so on stderr and passes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rip_testkit::netlab::{Host, Lab, Shape};
use rip_testkit::{NatsCluster, repo};
use serde_json::Value;

/// The stream of the refs the coordinator sends the workers (prefix `lab`).
const REFS: &str = "lab_emberfall-refs";
/// The site's gap between two requests (the state file's `rateLimitMs`).
const GAP: Duration = Duration::from_millis(10);
const WORKERS: usize = 4;

/// Where the programs of one crawl run: on a lab's hosts, or all on this machine.
#[derive(Clone, Copy)]
enum Place<'a> {
    Lab(&'a Lab),
    Loopback,
}

/// Host indices in the lab: the site, the brokers, the workers, the coordinator.
const SITE: usize = 0;
const BROKERS: [usize; 3] = [1, 2, 3];
const FIRST_WORKER: usize = 4;
const COORDINATOR: usize = FIRST_WORKER + WORKERS;

impl Place<'_> {
    fn host(&self, i: usize) -> Option<&Host> {
        match self {
            Place::Lab(lab) => Some(lab.host(i)),
            Place::Loopback => None,
        }
    }

    /// A command running `program` on host `i` (here, on loopback).
    fn command(&self, i: usize, program: &str) -> Command {
        let mut cmd = match self.host(i) {
            Some(host) => host.command(program),
            None => Command::new(program),
        };
        cmd.stdin(Stdio::null());
        cmd
    }
}

/// What a crawl left: its health report, the site's request log, its time and the
/// addresses of its workers as the site saw them.
struct Crawl {
    health: Value,
    requests: Vec<Value>,
    wall: Duration,
    origin: String,
    /// What the coordinator and the workers said on stderr.
    stderr: String,
}

fn program(name: &str) -> String {
    let path = match name {
        "ripperoni" => env!("CARGO_BIN_EXE_ripperoni"),
        "rip-testserver" => env!("CARGO_BIN_EXE_rip-testserver"),
        _ => unreachable!("{name}"),
    };
    path.to_owned()
}

/// The demo site with its faults, logging every request to `log`; its origin.
fn serve(place: Place, log: &Path) -> (Child, String) {
    let bind = match place.host(SITE) {
        Some(h) => format!("{}:80", h.ip()),
        None => "127.0.0.1:0".to_owned(),
    };
    let mut child = place
        .command(SITE, &program("rip-testserver"))
        .arg("--dir")
        .arg(repo().join("testdata/site"))
        .arg("--faults")
        .arg(repo().join("testdata/demo-faults.json"))
        .args(["--bind", &bind, "--log"])
        .arg(log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let origin = line.trim().strip_prefix("listening on ").map(str::to_owned);
    let origin = origin.unwrap_or_else(|| panic!("rip-testserver: {line:?}"));
    // Port 80 is not written in URLs.
    let origin = origin.trim_end_matches('/').trim_end_matches(":80");
    (child, origin.to_owned())
}

/// testdata/demo's state file for `origin`, its output under `dir`, spread over `broker`.
fn state(dir: &Path, origin: &str, broker: &str, gap: Duration) -> PathBuf {
    let demo = repo().join("testdata/demo");
    let text = std::fs::read_to_string(demo.join("emberfall.state.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["baseUrl"] = format!("{origin}/").into();
    for f in ["rules", "policy", "reconciler"] {
        let p = demo.join(v[f].as_str().unwrap()).canonicalize().unwrap();
        v[f] = p.display().to_string().into();
    }
    v.as_object_mut().unwrap().remove("$schema");
    v["output"]["basePath"] = dir.join("out").display().to_string().into();
    v["queue"] = serde_json::json!({"broker": broker, "prefix": "lab", "partitions": 4});
    v["rateLimitMs"] = (gap.as_millis() as u64).into();
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("emberfall.state.json");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

/// Waits for `child` up to `limit`; kills it past that and fails naming `what`.
fn wait(what: &str, child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Something done to a crawl while it runs (given the brokers and the site's log), before
/// its coordinator is waited for.
type Fault<'a> = Box<dyn FnOnce(&mut NatsCluster, &Path) + 'a>;

/// The folder of the programs (the coordinator and workers find the stages there).
fn bins() -> PathBuf {
    let ripperoni = program("ripperoni");
    Path::new(&ripperoni).parent().unwrap().to_owned()
}

/// The four workers, each with its own copy of the files under `dir/w<i>`, as on a machine
/// of its own, its stderr in `stderr.log` there.
fn start_workers(
    place: Place,
    dir: &Path,
    origin: &str,
    broker: &str,
    gap: Duration,
) -> Vec<Child> {
    (0..WORKERS)
        .map(|w| {
            let state = state(&dir.join(format!("w{w}")), origin, broker, gap);
            let log = std::fs::File::create(state.with_file_name("stderr.log")).unwrap();
            place
                .command(FIRST_WORKER + w, &program("ripperoni"))
                .env("RIP_BIN_DIR", bins())
                .args(["worker", state.to_str().unwrap(), "--idle-exit", "5s"])
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap()
        })
        .collect()
}

/// The demo's scrape with its refs fetched by four workers through a cluster of three
/// brokers, placed on `place`, with `fault` done to it.
fn crawl(place: Place, gap: Duration, fault: Option<Fault>) -> Crawl {
    let dir = tempfile::tempdir().unwrap();
    let (mut site, origin) = serve(place, &dir.path().join("site.log"));
    let mut brokers = match place {
        Place::Lab(lab) => NatsCluster::start_on(&BROKERS.map(|i| lab.host(i))),
        Place::Loopback => NatsCluster::start(3),
    };
    let bins = bins();
    let mut workers = start_workers(place, dir.path(), &origin, &brokers.urls(), gap);
    let state = state(
        &dir.path().join("coordinator"),
        &origin,
        &brokers.urls(),
        gap,
    );
    let start = Instant::now();
    let mut run = place
        .command(COORDINATOR, &program("ripperoni"))
        .env("RIP_BIN_DIR", &bins)
        .args(["run", state.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    let err = run.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(err), &mut text).ok();
        text
    });
    if let Some(fault) = fault {
        fault(&mut brokers, &dir.path().join("site.log"));
    }
    let status = wait("ripperoni run", &mut run, Duration::from_secs(300));
    let wall = start.elapsed();
    stderr.push_str(&reader.join().unwrap());
    assert_eq!(status.code(), Some(2), "one URL missing, as ever: {stderr}");
    for (w, worker) in workers.iter_mut().enumerate() {
        let status = wait("a worker", worker, Duration::from_secs(120));
        let log = dir.path().join(format!("w{w}/stderr.log"));
        let text = std::fs::read_to_string(log).unwrap_or_default();
        // A worker may have been killed by the test (SIGKILL), as a machine dies.
        let killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(9);
        assert!(status.success() || killed, "worker {w}: {text}");
        stderr.push_str(&format!("\n--- worker {w}:\n{text}"));
    }
    site.kill().ok();
    site.wait().ok();
    let health = dir
        .path()
        .join("coordinator/out/emberfall/crawl-health.json");
    let health: Value = serde_json::from_str(&std::fs::read_to_string(&health).unwrap())
        .unwrap_or_else(|e| panic!("crawl-health.json: {e}: {stderr}"));
    let log = std::fs::read_to_string(dir.path().join("site.log")).unwrap();
    let requests = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Crawl {
        health,
        requests,
        wall,
        origin,
        stderr,
    }
}

/// The health report's books, with the crawl's host written `HOST`, so that two crawls of
/// the same site at two addresses compare: all but how long things took (latency, each
/// stage's time, pid and memory).
fn books(crawl: &Crawl) -> Value {
    let host = crawl.origin.trim_start_matches("http://");
    let text = serde_json::to_string(&crawl.health).unwrap();
    let mut v: Value = serde_json::from_str(&text.replace(host, "HOST")).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("latency");
    o.remove("generatedAt");
    if let Some(ledger) = o.get_mut("ledger").and_then(Value::as_object_mut) {
        // Each stage's time, pid and memory; and whether the summaries happened to
        // line up as one pipeline, which depends on how the refs fell into batches.
        ledger.remove("stages");
        ledger.remove("notes");
    }
    // Pages a redone run found in its worker's cache: a run stopped when its lease could
    // not be renewed in time (on a starved machine: load 80 once) is redone, from the cache.
    if let Some(fetches) = o.get_mut("siteFetches").and_then(Value::as_object_mut) {
        fetches.remove("fromCache");
    }
    // A summary per worker's run: how the refs fell into batches.
    if let Some(records) = o
        .get_mut("input")
        .and_then(|i| i["records"].as_object_mut())
    {
        records.remove("summary");
    }
    v
}

/// The shortest time between two requests to the site from two different peers among
/// `from` (addresses), and the requests each peer made.
fn politeness(requests: &[Value], from: &[String]) -> (Option<Duration>, BTreeMap<String, usize>) {
    let mut asked: Vec<(u64, String)> = (requests.iter())
        .filter_map(|r| {
            let peer = r["peer"].as_str()?;
            let ip = peer.rsplit_once(':')?.0.to_owned();
            from.contains(&ip)
                .then(|| (r["elapsed_us"].as_u64().unwrap_or(0), ip))
        })
        .collect();
    asked.sort();
    let mut per_peer = BTreeMap::new();
    for (_, ip) in &asked {
        *per_peer.entry(ip.clone()).or_default() += 1;
    }
    let shortest = (asked.windows(2))
        .filter(|w| w[0].1 != w[1].1)
        .map(|w| Duration::from_micros(w[1].0 - w[0].0))
        .min();
    (shortest, per_peer)
}

#[test]
fn four_workers_on_a_slow_lossy_network_keep_the_books_and_the_gap_of_loopback() {
    let Some(lab) = Lab::new(COORDINATOR + 1) else {
        return;
    };
    // 25 ms and 0.5 % loss on each host's link: between two hosts 50 ms each way and
    // about 1 % of packets lost.
    lab.shape_all(Shape::new(Duration::from_millis(25), Duration::ZERO, 0.005));
    let far = crawl(Place::Lab(&lab), GAP, None);
    let near = crawl(Place::Loopback, GAP, None);
    // Pages fetched (the books' `siteFetches.records`) per second of `ripperoni run`.
    let rate = |c: &Crawl| {
        let pages = c.health["siteFetches"]["records"].as_u64().unwrap_or(0);
        let secs = c.wall.as_secs_f64();
        format!(
            "{pages} pages in {secs:.1} s, {:.2} pages/s, {} requests to the site",
            pages as f64 / secs,
            c.requests.len()
        )
    };
    eprintln!("lab: {}; loopback: {}", rate(&far), rate(&near));
    assert_eq!(
        far.health["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1}),
        "{:#}",
        far.health
    );
    assert_eq!(books(&far), books(&near));
    // The site was asked by the workers' hosts, and never by two within its gap.
    let ips: Vec<String> = (FIRST_WORKER..COORDINATOR)
        .map(|i| lab.host(i).ip())
        .collect();
    let (shortest, per_peer) = politeness(&far.requests, &ips);
    eprintln!("requests per worker: {per_peer:?}; shortest gap between two: {shortest:?}");
    assert!(!per_peer.is_empty(), "no worker asked the site");
    if let Some(gap) = shortest {
        assert!(gap >= GAP, "two workers asked the site {gap:?} apart");
    }
}

/// The workers' requests in the site's log at `log` so far (lines whose peer is in `ips`).
fn requests_from(log: &Path, ips: &[String]) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    (text.lines())
        .filter(|l| {
            ips.iter()
                .any(|ip| l.contains(&format!("\"peer\":\"{ip}:")))
        })
        .count()
}

/// The longest time the site went without a request from a worker of `ips`, between the
/// first and the last.
fn longest_pause(requests: &[Value], ips: &[String]) -> Duration {
    let mut times: Vec<u64> = (requests.iter())
        .filter(|r| {
            let peer = r["peer"].as_str().unwrap_or_default();
            ips.iter().any(|ip| peer.starts_with(&format!("{ip}:")))
        })
        .filter_map(|r| r["elapsed_us"].as_u64())
        .collect();
    times.sort_unstable();
    let longest = times.windows(2).map(|w| w[1] - w[0]).max();
    Duration::from_micros(longest.unwrap_or(0))
}

/// Issue 41's third run: the broker node leading the refs stream SIGKILLed once the
/// workers fetch, started again 10 s later; nothing lost, nothing entered twice, the gap
/// kept. The crawl's pause (from the kill to the workers' next
/// request at the site) is printed beside the election's time (from the kill to a new
/// leader of the refs in the nodes' logs), not asserted: a loaded machine's elections and
/// pauses take longer. A worker whose lease went unrenewed during the election pauses its
/// run and goes on with it once the cluster renews the lease at its revision; before,
/// it dropped the run and another worker redid its 51 records after the ack wait (a pause
/// of 15.9 s against an election of about 5 s).
#[test]
fn the_broker_leading_the_refs_killed_mid_crawl_and_restarted_loses_nothing() {
    let Some(lab) = Lab::new(COORDINATOR + 1) else {
        return;
    };
    // 10 ms ± 2.5 ms on each link: 20 ms ± 5 ms between two hosts.
    let ms = Duration::from_millis;
    lab.shape_all(Shape::new(ms(10), ms(2) + Duration::from_micros(500), 0.0));
    let ips: Vec<String> = (FIRST_WORKER..COORDINATOR)
        .map(|i| lab.host(i).ip())
        .collect();
    let timings = std::cell::Cell::new(KillTimings::default());
    let crawl = crawl(
        Place::Lab(&lab),
        GAP,
        Some(Box::new(|brokers: &mut NatsCluster, log: &Path| {
            rip_testkit::wait_for("the workers' first pages", Duration::from_secs(120), || {
                requests_from(log, &ips) >= 10
            });
            timings.set(kill_and_restart_the_refs_leader(brokers, log, &ips));
        })),
    );
    let t = timings.get();
    let again = delivered_again(&crawl.stderr);
    eprintln!(
        "the refs' leader down {:.1} s, a new one after {:?}; the workers' next request \
         {:?} after the kill; {} pages in {:.1} s; the longest pause in the workers' \
         requests {:?}; records delivered again {again}",
        t.down.as_secs_f64(),
        t.election,
        t.next_request,
        crawl.health["siteFetches"]["records"],
        crawl.wall.as_secs_f64(),
        longest_pause(&crawl.requests, &ips),
    );
    eprintln!("{}", crawl.stderr);
    // Records delivered again are printed, not asserted: a pull's answer or an
    // acknowledgement in flight through the killed server is lost with it (1 record in one
    // run of three, 45 in another before batches were acknowledged again after a wait).
    assert_whole(&crawl, &ips, GAP);
}

/// What the kill of the refs' leader took: how long it was down, when a new leader came
/// and when the workers next asked the site (each from the kill).
#[derive(Clone, Copy, Default)]
struct KillTimings {
    down: Duration,
    election: Option<Duration>,
    next_request: Option<Duration>,
}

/// SIGKILLs the node leading the refs, restarts it 10 s later, and watches (up to 60 s)
/// for the new leader and the workers' next request in the site's log at `log`.
fn kill_and_restart_the_refs_leader(
    brokers: &mut NatsCluster,
    log: &Path,
    ips: &[String],
) -> KillTimings {
    let (leader, _) = brokers.stream_leader(REFS).expect("a leader of the refs");
    let before = requests_from(log, ips);
    brokers.kill(leader);
    let killed = Instant::now();
    let mut t = KillTimings::default();
    let restart = Duration::from_secs(10);
    while killed.elapsed() < Duration::from_secs(60)
        && (t.election.is_none() || t.next_request.is_none() || t.down.is_zero())
    {
        let new_leader = || {
            brokers
                .stream_leader(REFS)
                .is_some_and(|(n, _)| n != leader)
        };
        if t.election.is_none() && new_leader() {
            t.election = Some(killed.elapsed());
        }
        if t.next_request.is_none() && requests_from(log, ips) > before {
            t.next_request = Some(killed.elapsed());
        }
        if t.down.is_zero() && killed.elapsed() >= restart {
            brokers.restart(leader);
            t.down = killed.elapsed();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if t.down.is_zero() {
        brokers.restart(leader);
        t.down = killed.elapsed();
    }
    t
}

/// The records the workers say were delivered to them again (their closing lines: "… (N
/// delivered again, …"), summed.
fn delivered_again(stderr: &str) -> u64 {
    (stderr.lines())
        .filter_map(|l| {
            l.split_once(" runs (")?
                .1
                .split_once(" delivered again")?
                .0
                .parse::<u64>()
                .ok()
        })
        .sum::<u64>()
}

/// The crawl's books are the demo's, nothing lost nor entered twice, and no two of the
/// workers at `ips` asked the site within `gap`.
fn assert_whole(crawl: &Crawl, ips: &[String], gap: Duration) {
    assert_eq!(
        crawl.health["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1}),
        "{:#}",
        crawl.health
    );
    let ledger = &crawl.health["ledger"];
    assert_eq!(ledger["complete"], true, "{:#}", crawl.health);
    assert_eq!(ledger["enteredTwice"], serde_json::json!([]), "{ledger:#}");
    let (shortest, _) = politeness(&crawl.requests, ips);
    if let Some(shortest) = shortest {
        assert!(
            shortest >= gap,
            "two workers asked the site {shortest:?} apart"
        );
    }
}

/// Issue 41's fourth run: the broker node leading the refs stream cut off from every other
/// host (brokers and clients) for 10 s once the workers fetch, then healed.
#[test]
fn the_broker_leading_the_refs_cut_off_mid_crawl_loses_nothing() {
    leader_cut_off(
        "cut off",
        |lab, leader| lab.cut(BROKERS[leader]),
        |lab, leader| {
            lab.heal(BROKERS[leader]);
        },
    );
}

/// Issue 41's fourth run, the other way: the broker node leading the refs stream cut off
/// from the two other brokers only for 10 s, still reached by the workers and the
/// coordinator, then joined again.
#[test]
fn the_broker_leading_the_refs_cut_off_from_its_peers_only_loses_nothing() {
    let peers = |leader: usize| BROKERS.into_iter().filter(move |&b| b != BROKERS[leader]);
    leader_cut_off(
        "cut off from its peers",
        |lab, leader| peers(leader).for_each(|p| lab.part(BROKERS[leader], p)),
        |lab, leader| peers(leader).for_each(|p| lab.join(BROKERS[leader], p)),
    );
}

/// The demo's crawl with the node leading the refs stream cut (`cut`, given the lab and
/// the node) once the workers fetch, healed (`heal`) 10 s later; `how` names the cut.
fn leader_cut_off(how: &str, cut: impl Fn(&Lab, usize), heal: impl Fn(&Lab, usize)) {
    let Some(lab) = Lab::new(COORDINATOR + 1) else {
        return;
    };
    let ms = Duration::from_millis;
    lab.shape_all(Shape::new(ms(10), ms(2) + Duration::from_micros(500), 0.0));
    let ips: Vec<String> = (FIRST_WORKER..COORDINATOR)
        .map(|i| lab.host(i).ip())
        .collect();
    let election = std::cell::Cell::new(None);
    let crawl = crawl(
        Place::Lab(&lab),
        GAP,
        Some(Box::new(|brokers: &mut NatsCluster, log: &Path| {
            rip_testkit::wait_for("the workers' first pages", Duration::from_secs(120), || {
                requests_from(log, &ips) >= 10
            });
            let (leader, _) = brokers.stream_leader(REFS).expect("a leader of the refs");
            cut(&lab, leader);
            let since = Instant::now();
            election.set(new_leader_within(
                brokers,
                leader,
                since,
                Duration::from_secs(10),
            ));
            std::thread::sleep(Duration::from_secs(10).saturating_sub(since.elapsed()));
            heal(&lab, leader);
        })),
    );
    let (shortest, _) = politeness(&crawl.requests, &ips);
    eprintln!(
        "the refs' leader {how} 10 s, a new one after {:?}; {} pages in {:.1} s; the \
         longest pause in the workers' requests {:?}; shortest gap between two workers \
         {shortest:?}",
        election.get(),
        crawl.health["siteFetches"]["records"],
        crawl.wall.as_secs_f64(),
        longest_pause(&crawl.requests, &ips),
    );
    eprintln!("{}", crawl.stderr);
    assert_whole(&crawl, &ips, GAP);
}

/// How long after `since` the nodes' logs name a leader of the refs other than `old`, if
/// they do within `limit` (an election's time, measured; not asserted: a loaded machine's
/// elections take longer).
fn new_leader_within(
    brokers: &NatsCluster,
    old: usize,
    since: Instant,
    limit: Duration,
) -> Option<Duration> {
    while since.elapsed() < limit {
        if brokers.stream_leader(REFS).is_some_and(|(n, _)| n != old) {
            return Some(since.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The worker (its index among `ips`) that asked the site first, by its log at `log`.
fn first_worker(log: &Path, ips: &[String]) -> Option<usize> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .find_map(|l| (ips.iter()).position(|ip| l.contains(&format!("\"peer\":\"{ip}:"))))
}

/// How long the fetching worker's cut lasts: 20 s (four times its lease), or
/// `NETLAB_CUT_SECS` (`scripts/bench/netlab/run` cuts the full 60 s).
fn cut_length() -> Duration {
    let secs = std::env::var("NETLAB_CUT_SECS").ok();
    Duration::from_secs(secs.and_then(|s| s.parse().ok()).unwrap_or(20))
}

/// Issue 41's second run, shortened: the worker fetching the site cut off from everything
/// for 20 s (four times its lease; the full 60 s in `scripts/bench/netlab/run`) mid-crawl,
/// then healed. Nothing lost, nothing entered twice, and the site never asked by two workers
/// within its gap, across the cut too.
#[test]
fn a_worker_cut_off_mid_crawl_and_healed_loses_nothing_and_keeps_the_gap() {
    let Some(lab) = Lab::new(COORDINATOR + 1) else {
        return;
    };
    let ms = Duration::from_millis;
    lab.shape_all(Shape::new(ms(10), ms(2) + Duration::from_micros(500), 0.0));
    let ips: Vec<String> = (FIRST_WORKER..COORDINATOR)
        .map(|i| lab.host(i).ip())
        .collect();
    // A gap long enough that the fetching outlasts the cut's start.
    let gap = ms(250);
    let cut = std::cell::Cell::new(None);
    let crawl = crawl(
        Place::Lab(&lab),
        gap,
        Some(Box::new(|_: &mut NatsCluster, log: &Path| {
            rip_testkit::wait_for("the workers' first pages", Duration::from_secs(120), || {
                requests_from(log, &ips) >= 5
            });
            let w = first_worker(log, &ips).expect("a worker asked the site");
            lab.cut(FIRST_WORKER + w);
            cut.set(Some(w));
            std::thread::sleep(cut_length());
            lab.heal(FIRST_WORKER + w);
        })),
    );
    let (shortest, per_peer) = politeness(&crawl.requests, &ips);
    eprintln!(
        "worker {:?} cut {:?}; {} pages in {:.1} s; requests per worker {per_peer:?}; \
         shortest gap between two workers {shortest:?}; longest pause {:?}",
        cut.get(),
        cut_length(),
        crawl.health["siteFetches"]["records"],
        crawl.wall.as_secs_f64(),
        longest_pause(&crawl.requests, &ips),
    );
    eprintln!("{}", crawl.stderr);
    assert_whole(&crawl, &ips, gap);
}

/// Kills (SIGKILL) every process on `host`, as a machine that dies.
fn kill_everything_on(host: &Host) {
    let out = Command::new("ip")
        .args(["netns", "pids", host.netns()])
        .output()
        .unwrap();
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        Command::new("kill").args(["-KILL", pid]).status().unwrap();
    }
}

/// Issue 41's fifth run: the worker fetching the site cut off mid-crawl and, while cut off,
/// killed with everything on its host (SIGKILL); healed 10 s later with nothing left on it.
///
/// The request the killed rip-fetch had sent into the cut must not reach the site after
/// the heal: before rip-http's `UNACKNOWLEDGED_LIMIT` the host's kernel retransmitted the
/// dead process's socket and it arrived 16 s late, 83–103 ms from the new owner's request.
#[test]
fn a_worker_killed_while_cut_off_loses_nothing_and_keeps_the_gap() {
    let Some(lab) = Lab::new(COORDINATOR + 1) else {
        return;
    };
    let ms = Duration::from_millis;
    lab.shape_all(Shape::new(ms(10), ms(2) + Duration::from_micros(500), 0.0));
    let ips: Vec<String> = (FIRST_WORKER..COORDINATOR)
        .map(|i| lab.host(i).ip())
        .collect();
    let gap = ms(250);
    let crawl = crawl(
        Place::Lab(&lab),
        gap,
        Some(Box::new(|_: &mut NatsCluster, log: &Path| {
            rip_testkit::wait_for("the workers' first pages", Duration::from_secs(120), || {
                requests_from(log, &ips) >= 5
            });
            let w = first_worker(log, &ips).expect("a worker asked the site");
            lab.cut(FIRST_WORKER + w);
            std::thread::sleep(Duration::from_secs(2));
            kill_everything_on(lab.host(FIRST_WORKER + w));
            std::thread::sleep(Duration::from_secs(8));
            lab.heal(FIRST_WORKER + w);
        })),
    );
    let (shortest, per_peer) = politeness(&crawl.requests, &ips);
    eprintln!(
        "{} pages in {:.1} s; requests per worker {per_peer:?}; shortest gap between two \
         workers {shortest:?}; longest pause {:?}",
        crawl.health["siteFetches"]["records"],
        crawl.wall.as_secs_f64(),
        longest_pause(&crawl.requests, &ips),
    );
    eprintln!("{}", crawl.stderr);
    assert_whole(&crawl, &ips, gap);
}
