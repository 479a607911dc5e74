#![allow(clippy::print_stdout, clippy::print_stderr)] // a generator: its stream is its output
//! A synthetic stream as `rip-write` ends a pipeline, for `scripts/bench/scale/ledger`:
//! the input of `rip-reconcile | rip-health` at any number of URLs, without a network.
//!
//! ```text
//! ledger_input URLS [--hosts H] [--unaccounted K] [--duplicated K] [--before-write] > stream.ndjson
//! ```
//!
//! `URLS` URLs enter (`rip-fetch`'s `ledger` records, 1,000 URLs each, as `Pipe::enter`
//! batches them), spread over `H` hosts (default 2,000), about 60–95 bytes each. Each comes out
//! once, in the block of its ledger record: a `doc` (with `siteFetch`, a short text and a
//! link; one in 50 recovered in a second round), one in 40 an `error` (404, or 410 one
//! time in four; one in 80 under `/legacy/` with the path tail of the doc before it, so a
//! `pathTail` reconciler finds it captured elsewhere) and one in 200 an `expected`
//! (robots). One in 400 adds an `expected` found by `rip-discover` that never entered.
//! The stream ends with the five stages' summaries (`rip-discover`, `rip-fetch`,
//! `rip-route`, `rip-parse`, `rip-write`; with `--before-write` the first four, for a real
//! `rip-write` to follow), which count exactly the records written, so
//! the summaries balance and only the URL-by-URL check can find what is planted:
//!
//! - `K` URLs (`--unaccounted`, default 5) whose doc is missing (as if rip-parse dropped
//!   a page), and
//! - `K` URLs (`--duplicated`, default 5) with two docs.
//!
//! Their URLs are printed on stderr (`unaccounted URL`, `duplicated URL`), so a run can
//! check that the report names each of them.

use std::io::{BufWriter, Write};

const WORDS: &[&str] = &[
    "alpha", "amber", "arbor", "atlas", "beacon", "birch", "canyon", "cedar", "cobalt", "delta",
    "ember", "falcon", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel", "lagoon",
    "meadow", "nectar", "onyx", "orchid", "pepper", "quartz", "raven", "saffron", "tundra",
    "umber", "velvet", "willow", "zephyr",
];
const SECTIONS: &[&str] = &[
    "docs",
    "articles",
    "products",
    "catalog",
    "news",
    "reference",
    "guides",
    "blog",
    "wiki",
];
const TLDS: &[&str] = &["com", "org", "net", "io", "co.uk", "de"];
const PER_LEDGER: usize = 1000;

/// What the generator was asked for.
struct Args {
    urls: usize,
    hosts: usize,
    unaccounted: usize,
    duplicated: usize,
    /// Leave out rip-write's summary: the stream rip-parse ends, for a real rip-write.
    before_write: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        urls: 0,
        hosts: 2000,
        unaccounted: 5,
        duplicated: 5,
        before_write: false,
    };
    let mut it = std::env::args().skip(1);
    let number = |v: Option<String>, name: &str| -> Result<usize, String> {
        v.and_then(|v| v.replace('_', "").parse().ok())
            .ok_or_else(|| format!("{name} needs a number"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--hosts" => args.hosts = number(it.next(), "--hosts")?.max(1),
            "--unaccounted" => args.unaccounted = number(it.next(), "--unaccounted")?,
            "--duplicated" => args.duplicated = number(it.next(), "--duplicated")?,
            "--before-write" => args.before_write = true,
            _ => args.urls = number(Some(a), "URLS")?,
        }
    }
    if args.urls < 1000 {
        return Err(
            "usage: ledger_input URLS (at least 1000) [--hosts H] [--unaccounted K] \
             [--duplicated K]"
                .into(),
        );
    }
    Ok(args)
}

/// splitmix64: a fixed pseudo-random number for `i`.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn word(r: u64, n: u32) -> &'static str {
    WORDS[((r >> (5 * n)) % WORDS.len() as u64) as usize]
}

/// The host of URL `i`.
fn host(i: usize, hosts: usize) -> String {
    let h = (mix(i as u64) % hosts as u64) as usize;
    let r = mix(h as u64 ^ 0x5eed);
    let tld = TLDS[(r % TLDS.len() as u64) as usize];
    format!("https://www.{}-{}{h}.{tld}", word(r, 1), word(r, 2))
}

/// The path tail (slug and number) of URL `i`: unique per `i`.
fn tail(i: usize) -> String {
    let r = mix(i as u64 ^ 0x7a11);
    let slug: Vec<&str> = (0..2 + (r % 3) as u32).map(|n| word(r, n + 2)).collect();
    format!("{}-{i}.html", slug.join("-"))
}

/// URL `i`: `https://www.<host>.<tld>/<section>/<word>/<slug>-<i>.html`.
fn url(i: usize, hosts: usize) -> String {
    let r = mix(i as u64 ^ 0xab);
    let section = SECTIONS[(r % SECTIONS.len() as u64) as usize];
    if outcome(i) == Outcome::Moved {
        return format!("{}/legacy/{}", host(i - 1, hosts), tail(i - 1));
    }
    format!("{}/{section}/{}/{}", host(i, hosts), word(r, 3), tail(i))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Doc,
    /// An error: 404, or 410 (every fourth).
    Error,
    /// An error under `/legacy/` whose path tail is the previous URL's (a doc).
    Moved,
    /// Disallowed by robots.txt, found by rip-fetch.
    Robots,
}

fn outcome(i: usize) -> Outcome {
    if i % 80 == 47 {
        Outcome::Moved
    } else if i % 80 == 7 {
        Outcome::Error
    } else if i % 200 == 13 {
        Outcome::Robots
    } else {
        Outcome::Doc
    }
}

/// `k` indexes spread over `0..urls` (starting at `offset` in each stretch) whose
/// outcome is a doc.
fn planted(urls: usize, k: usize, offset: usize) -> Vec<usize> {
    let step = urls / k.max(1);
    (0..k)
        .map(|n| {
            let mut i = n * step + offset % step;
            while outcome(i) != Outcome::Doc {
                i += 1;
            }
            i
        })
        .collect()
}

/// What was written, by kind: the stages' summaries count it.
#[derive(Default)]
struct Counts {
    ledgers: u64,
    docs: u64,
    errors: u64,
    fetch_expected: u64,
    discover_expected: u64,
    pages: u64,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ledger_input: {e}");
            std::process::exit(2);
        }
    };
    let unaccounted = planted(args.urls, args.unaccounted, 501);
    let duplicated = planted(args.urls, args.duplicated, 733);
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut counts = Counts::default();
    let result = (|| -> std::io::Result<()> {
        for start in (0..args.urls).step_by(PER_LEDGER) {
            let end = (start + PER_LEDGER).min(args.urls);
            write_ledger(&mut out, start..end, args.hosts)?;
            counts.ledgers += 1;
            for i in start..end {
                let u = url(i, args.hosts);
                if unaccounted.contains(&i) {
                    eprintln!("unaccounted URL {u}");
                    counts.pages += 1;
                    continue;
                }
                let copies = if duplicated.contains(&i) {
                    eprintln!("duplicated URL {u}");
                    2
                } else {
                    1
                };
                counts.pages += u64::from(outcome(i) == Outcome::Doc);
                for _ in 0..copies {
                    write_outcome(&mut out, i, &u, args.hosts, &mut counts)?;
                }
                if i % 400 == 399 {
                    write_discover_expected(&mut out, i, args.hosts)?;
                    counts.discover_expected += 1;
                }
            }
        }
        let stages = if args.before_write { 4 } else { 5 };
        write_summaries(&mut out, args.urls as u64, &counts, stages)?;
        out.flush()
    })();
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("ledger_input: {e}");
            std::process::exit(1);
        }
        Ok(()) => {}
    }
}

fn write_ledger(
    out: &mut impl Write,
    urls: std::ops::Range<usize>,
    hosts: usize,
) -> std::io::Result<()> {
    out.write_all(br#"{"_type":"ledger","stage":"rip-fetch","entered":["#)?;
    for (n, i) in urls.enumerate() {
        if n > 0 {
            out.write_all(b",")?;
        }
        write!(out, "\"{}\"", url(i, hosts))?;
    }
    out.write_all(b"]}\n")
}

fn parent(u: &str) -> &str {
    &u[..u.rfind('/').unwrap_or(u.len())]
}

fn write_outcome(
    out: &mut impl Write,
    i: usize,
    u: &str,
    hosts: usize,
    counts: &mut Counts,
) -> std::io::Result<()> {
    let r = mix(i as u64 ^ 0xd0c);
    let name = format!("{} {}", word(r, 1), word(r, 2));
    let parent = parent(u);
    match outcome(i) {
        Outcome::Doc => {
            counts.docs += 1;
            let attempt = u32::from(i % 50 == 3);
            let latency = 20 + r % 400;
            let (faults, statuses) = if attempt == 1 {
                (r#","faults":["httpError.transient"]"#, "[503,200]")
            } else {
                ("", "[200]")
            };
            let attempts = 1 + attempt;
            let link = url(i + 1, hosts);
            writeln!(
                out,
                r#"{{"_type":"doc","url":"{u}","concept":"article","name":"{name} | {}","depth":3,"parent":"{parent}/","linkText":"{name}","attempt":{attempt},"httpAttempts":{attempts},"elapsedMs":{},"siteFetch":{{"fetchedBy":"rip-discover","httpAttempts":{attempts},"statuses":{statuses}{faults},"waitedMs":0,"latencyMs":{latency},"elapsedMs":{}}},"lang":"en","text":"The {name} page of this site: {} {} {} {} and more about it, written for the benchmark.","links":[{{"href":"{link}","text":"{} {}"}}]}}"#,
                word(r, 3),
                latency + 2,
                latency + 2,
                word(r, 4),
                word(r, 5),
                word(r, 6),
                word(r, 7),
                word(r, 8),
                word(r, 9),
            )
        }
        Outcome::Error | Outcome::Moved => {
            counts.errors += 1;
            let status = if i % 160 == 7 { 410 } else { 404 };
            writeln!(
                out,
                r#"{{"_type":"error","url":"{u}","errors":[{{"code":"httpError.permanent","message":"HTTP {status}","operation":"rip-fetch","attempt":1}}],"status":{status},"category":"PERMANENT","phase":"fetch","attempt":1,"depth":3,"parent":"{parent}/","linkText":"{name}","capturedAt":"2026-12-01T09:00:04Z"}}"#
            )
        }
        Outcome::Robots => {
            counts.fetch_expected += 1;
            writeln!(
                out,
                r#"{{"_type":"expected","url":"{u}","reason":"disallowed by robots.txt","source":"robots","rule":"Disallow: /","phase":"fetch","attempt":0,"depth":3,"parent":"{parent}/","linkText":"{name}"}}"#
            )
        }
    }
}

/// An `expected` that rip-discover wrote for a link it did not follow: it never entered.
fn write_discover_expected(out: &mut impl Write, i: usize, hosts: usize) -> std::io::Result<()> {
    let h = host(i, hosts);
    writeln!(
        out,
        r#"{{"_type":"expected","url":"{h}/private/{}","reason":"disallowed by robots.txt","source":"robots","rule":"Disallow: /private/","phase":"discover","attempt":0,"depth":3,"parent":"{h}/","linkText":"private"}}"#,
        tail(i)
    )
}

/// The first `stages` of the five stages' summaries: each reads what the one before wrote
/// (and the summaries before it), and writes the kinds it read, changed as it changes them.
fn write_summaries(
    out: &mut impl Write,
    urls: u64,
    c: &Counts,
    stages: usize,
) -> std::io::Result<()> {
    let expected = c.fetch_expected + c.discover_expected;
    let fetched = [
        ("ledger", c.ledgers),
        ("page", c.pages),
        ("failure", c.errors),
        ("expected", expected),
    ];
    let routed = fetched.map(|(k, n)| (if k == "failure" { "error" } else { k }, n));
    let parsed = routed.map(|(k, n)| if k == "page" { ("doc", c.docs) } else { (k, n) });
    let outputs: [(&str, &[(&str, u64)]); 5] = [
        (
            "rip-discover",
            &[("ref", urls), ("expected", c.discover_expected)],
        ),
        ("rip-fetch", &fetched),
        ("rip-route", &routed),
        ("rip-parse", &parsed),
        ("rip-write", &parsed),
    ];
    let mut read: &[(&str, u64)] = &[];
    for (n, &(stage, wrote)) in outputs.iter().take(stages).enumerate() {
        writeln!(
            out,
            r#"{{"_type":"summary","stage":"{stage}","pid":{},"startedAt":"2026-12-01T09:00:00Z","endedAt":"2026-12-01T10:00:00Z","input":{},"output":{},"badLines":0,"status":"complete"}}"#,
            100 + n,
            counts(read, n),
            counts(wrote, n),
        )?;
        read = wrote;
    }
    Ok(())
}

/// A summary's counts by kind as JSON, with `summaries` summaries (when any).
fn counts(kinds: &[(&str, u64)], summaries: usize) -> String {
    let mut fields: Vec<String> = kinds.iter().map(|(k, n)| format!("\"{k}\":{n}")).collect();
    if summaries > 0 {
        fields.push(format!("\"summary\":{summaries}"));
    }
    format!("{{{}}}", fields.join(","))
}
