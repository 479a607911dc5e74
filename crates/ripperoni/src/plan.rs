//! From a state file to the pipeline: which stages, with which flags, in which order.
//! [`Plan::shell`] prints it as the shell a person would type; the runner spawns exactly
//! these commands.
//!
//! ```text
//! rip-discover START… --state DIR … | rip-fetch … | rip-route --max-retries K-1 …   (K rounds,
//!   the last rip-route --final) | rip-parse [--rules R] | rip-route --final … | rip-write --out STAGING --name T > STAGING/T/stream.ndjson
//! rip-reconcile [--config RECONCILER] --dir STAGING/T
//! rip-health --dir STAGING/T --html STAGING/T/report.html
//! ```
//!
//! A run writes beside the output folder `BASE/T`, in `STAGING/T` (`STAGING` is
//! `BASE/.T.staging`, on the same filesystem), which is put in the output folder's place
//! at the end ([`crate::runner`] decides whether it is); the previous output stays as it
//! is until then.
//!
//! With `urls` there is no discovery: the list enters as `ref` records (a file the run
//! writes, [`Folder::input_file`]) read by `rip-check`, in `rip-discover`'s place.

use crate::state::{Format, Layout, Queue, Render, State};
use crate::validate::Loaded;
use std::path::{Path, PathBuf};

/// One stage process: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// The program (`rip-fetch`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Stage {
    fn new(program: &str) -> Self {
        Self {
            program: program.to_owned(),
            args: Vec::new(),
        }
    }

    fn arg(&mut self, a: impl Into<String>) -> &mut Self {
        self.args.push(a.into());
        self
    }

    fn flag(&mut self, name: &str, value: impl Into<String>) -> &mut Self {
        self.args.push(name.to_owned());
        self.args.push(value.into());
        self
    }

    fn path(&mut self, name: &str, value: &Path) -> &mut Self {
        self.flag(name, value.display().to_string())
    }

    /// The command as shell words.
    pub fn shell(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The role of a stage in the pipeline, for progress and accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The source: `rip-discover`, or `rip-check` reading the listed URLs. Ctrl-C goes to
    /// it first.
    Source,
    /// `rip-fetch` of round `n` (1-based).
    Fetch(u32),
    /// `rip-route` of round `n`; `0` after rip-parse.
    Route(u32),
    /// `rip-parse`.
    Parse,
    /// `rip-write` (the raw one before parse, or the last).
    Write,
    /// `rip-queue relay`: the refs sent to the workers, what they made of them back (a
    /// scrape spread over machines: the state file's `queue`).
    Relay,
}

/// A folder a run writes: the docs and error documents, `stream.ndjson`, the report, and
/// `.ripperoni/` (crawl state, logs, the source's input, the resume marker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// The folder.
    pub dir: PathBuf,
    /// `<dir>/.ripperoni`: what ripperoni keeps for itself; also the sign that ripperoni
    /// wrote the folder.
    pub work: PathBuf,
    /// `<dir>/stream.ndjson`: the final stream.
    pub stream: PathBuf,
    /// `<dir>/report.html`.
    pub report: PathBuf,
}

impl Folder {
    fn new(dir: PathBuf) -> Self {
        let work = dir.join(".ripperoni");
        Self {
            stream: dir.join("stream.ndjson"),
            report: dir.join("report.html"),
            work,
            dir,
        }
    }

    /// The source's input file, when it reads one (listed URLs, carried records).
    pub fn input_file(&self) -> PathBuf {
        self.work.join(INPUT_FILE)
    }

    /// Each stage's stderr, one file per stage.
    pub fn logs(&self) -> PathBuf {
        self.work.join("logs")
    }

    /// `rip-discover --state`: the crawl's journal.
    pub fn crawl_state(&self) -> PathBuf {
        self.work.join("discover")
    }

    /// Left by an interrupted run that the same command resumes.
    pub fn resume_marker(&self) -> PathBuf {
        self.work.join("resume.json")
    }
}

/// Everything a run does, decided from the state file before anything starts.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The target's name.
    pub target: String,
    /// `<basePath>`.
    pub base: PathBuf,
    /// `<basePath>/<target>`: the output folder, holding the last run that was put in
    /// place.
    pub output: Folder,
    /// `<basePath>/.<target>.staging`: where a run writes before it is put in place.
    pub staging: PathBuf,
    /// `<staging>/<target>`: the folder this run's stages write, which becomes the
    /// output folder.
    pub next: Folder,
    /// `<basePath>/runs.ndjson`.
    pub runs: PathBuf,
    /// The pipeline, first stage first, with each stage's role.
    pub stages: Vec<(Role, Stage)>,
    /// What runs after the pipeline, one after the other.
    pub finish: Vec<Stage>,
    /// `ref` records to give the source (from `urls`), when any.
    pub url_refs: Vec<String>,
    /// Fetch rounds (`maxRetries` + 1).
    pub rounds: u32,
    /// With `queue`: the command every worker machine runs (`ripperoni worker`).
    pub worker: Option<Stage>,
}

/// The file the source reads when it has input (listed URLs, carried records).
pub const INPUT_FILE: &str = "input.ndjson";

impl Plan {
    /// The plan for a loaded state file.
    pub fn new(l: &Loaded) -> Self {
        let st = &l.state;
        let base = st.output.base_path.clone();
        let staging = base.join(format!(".{}.staging", l.target));
        let next = Folder::new(staging.join(&l.target));
        let http = HttpFlags {
            st,
            cache_dir: st
                .cache
                .dir
                .clone()
                .unwrap_or_else(|| base.join(".rip-cache")),
        };
        let rounds = l.max_retries + 1;

        let (source, url_refs) = match (&st.urls, &st.api_url) {
            // Discovery is skipped: the listed pages enter as refs, through rip-check (a
            // pass-through that checks them), the source Ctrl-C stops first.
            (Some(urls), _) => (Stage::new("rip-check"), url_refs(st, urls)),
            (None, Some(api)) => (wiki_discover(st, api, &http), Vec::new()),
            (None, None) => (crawl_discover(st, &http, &next.crawl_state()), Vec::new()),
        };
        let mut stages = vec![(Role::Source, source)];
        let mut work = rounds_of(l, &http, rounds);
        if st.include_raw_content {
            let mut raw = write(l, &staging);
            raw.arg("--raw").arg("--no-failures-file");
            work.push((Role::Write, raw));
        }
        work.push((Role::Parse, parse(st)));
        work.push((Role::Route(0), route(l, true)));
        let worker = match &st.queue {
            Some(q) => {
                let streams = Streams::of(&l.target);
                stages.push((Role::Relay, streams.relay(q)));
                // What the workers routed passes through; a failure the queue itself made
                // (a record a worker gave up, one whose chunks are lost) is routed here as
                // the workers' last route would have, instead of reaching the books
                // unaccounted.
                stages.push((Role::Route(0), route(l, true)));
                Some(streams.worker(q, &work))
            }
            None => {
                stages.extend(work);
                None
            }
        };
        stages.push((Role::Write, write(l, &staging)));

        let mut reconcile = Stage::new("rip-reconcile");
        if let Some(c) = &st.reconciler {
            reconcile.path("--config", c);
        }
        reconcile.path("--dir", &next.dir);
        let mut health = Stage::new("rip-health");
        health.path("--dir", &next.dir).path("--html", &next.report);

        Self {
            target: l.target.clone(),
            runs: base.join("runs.ndjson"),
            output: Folder::new(base.join(&l.target)),
            base,
            staging,
            next,
            stages,
            finish: vec![reconcile, health],
            url_refs,
            rounds,
            worker,
        }
    }

    /// The pipeline and what follows it, as shell commands a person can copy, change and
    /// run by hand: a fresh run written beside the output folder, then put in its place.
    /// `with_input`: the source reads [`Folder::input_file`].
    pub fn shell(&self, with_input: bool) -> String {
        let q = |p: &Path| quote(&p.display().to_string());
        let (output, staging, next) = (q(&self.output.dir), q(&self.staging), q(&self.next.dir));
        let mut out = format!(
            "# A fresh run, written beside the previous output ({output}) until it is done.\n\
             # A stage's exit 2 (partial: failures, written down as data) goes on to the end,\n\
             # under `set -e` too, and the script then exits 2 as `ripperoni run` does; any\n\
             # other failure (1 fatal, 3 not ready) stops a `set -e` shell there, with it.\n\
             partial=0\nrm -rf {staging}\nmkdir -p {}\n",
            q(&self.next.work)
        );
        if !self.url_refs.is_empty() {
            // The listed URLs, one `ref` each: the source's input.
            out.push_str(&format!(
                "cat > {} <<'URLS'\n{}\nURLS\n",
                q(&self.next.input_file()),
                self.url_refs.join("\n")
            ));
        }
        for (i, (_, stage)) in self.stages.iter().enumerate() {
            let mut s = stage.clone();
            if i == 0 && (with_input || !self.url_refs.is_empty()) {
                s.path("-i", &self.next.input_file());
            }
            if i > 0 {
                out.push_str("  | ");
            }
            out.push_str(&s.shell());
            out.push_str(if i + 1 < self.stages.len() {
                " \\\n"
            } else {
                ""
            });
        }
        out.push_str(&format!(" > {}{PARTIAL_GOES_ON}\n", q(&self.next.stream)));
        for s in &self.finish {
            out.push_str(&s.shell());
            out.push_str(PARTIAL_GOES_ON);
            out.push('\n');
        }
        if let Some(worker) = &self.worker {
            out.push_str(&format!(
                "# On each worker machine (any number, with the state file and its companions; \
                 `ripperoni worker` runs this), while the above runs:\n# {}\n",
                worker.shell()
            ));
        }
        out.push_str(&format!(
            "# Put in place of the previous output (`ripperoni run` does so only when the run \
             is complete or partial).\n\
             if [ -e {output} ]; then mv {output} {staging}/{PREVIOUS}; fi\n\
             mv {next} {output} && rm -rf {staging}\n\
             (exit $partial)\n"
        ));
        out
    }
}

/// After a step of the printed script: its exit 2 (partial) is not a failure of the script,
/// so that it runs to its end under `set -e` (rip-write and rip-health exit 2 on any
/// failure, which a scrape of a real site always has), and is kept for the script's own
/// exit, the last line's `(exit $partial)` (a subshell: pasted into a terminal, it closes
/// nothing). Any other status is the step's failure, which stops a `set -e` shell.
const PARTIAL_GOES_ON: &str = " || { s=$?; [ $s -eq 2 ] && partial=2 || (exit $s); }";

/// The streams of a scrape spread over machines: `<target>-refs` (what to fetch, partitioned
/// by host) and `<target>-docs` (what the workers made of it).
struct Streams {
    refs: String,
    docs: String,
}

impl Streams {
    fn of(target: &str) -> Self {
        let name: String = target
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(48)
            .collect();
        Self {
            refs: format!("{name}-refs"),
            docs: format!("{name}-docs"),
        }
    }

    /// `rip-queue` with the broker's flags (never a secret: credentials stay in their file).
    fn queue(q: &Queue) -> Stage {
        let mut s = Stage::new("rip-queue");
        s.flag("--broker", q.broker.clone());
        if let Some(c) = &q.credentials_file {
            s.path("--creds", c);
        }
        s.flag("--prefix", q.prefix.clone());
        s
    }

    /// The coordinator's stage: refs out, the workers' records back.
    fn relay(&self, q: &Queue) -> Stage {
        let mut s = Self::queue(q);
        s.arg("relay").arg(&self.refs).arg(&self.docs);
        s.flag("--partitions", q.partitions.to_string());
        s
    }

    /// A worker: the fetch rounds, parse and route, as one shell pipeline run on batches of
    /// refs.
    fn worker(&self, q: &Queue, work: &[(Role, Stage)]) -> Stage {
        let pipeline: Vec<String> = work.iter().map(|(_, s)| s.shell()).collect();
        let mut s = Self::queue(q);
        s.arg("work").arg(&self.refs).arg(&self.docs);
        s.flag("--partitions", q.partitions.to_string());
        s.arg("--").arg("sh").arg("-c").arg(pipeline.join(" | "));
        s
    }
}

/// The HTTP flags every stage that fetches takes: politeness, retries, headers, cache,
/// the network policy, and with `output.warc` the archive folder (each process writes its own files there).
struct HttpFlags<'a> {
    st: &'a State,
    cache_dir: PathBuf,
}

impl HttpFlags<'_> {
    fn add(&self, s: &mut Stage, delay: u64, jitter: u64) {
        let st = self.st;
        s.flag("--delay", format!("{delay}ms"))
            .flag("--jitter", format!("{jitter}ms"))
            .flag("--retry-base", format!("{}ms", st.retry_base_delay_ms))
            .flag("--retry-max", format!("{}ms", st.retry_max_delay_ms));
        for (k, v) in &st.headers {
            s.flag("-H", format!("{k}: {v}"));
        }
        s.path("--cache-dir", &self.cache_dir)
            .flag("--cache", st.cache.mode.as_arg());
        if let Some(ttl) = st.cache.ttl_ms {
            s.flag("--ttl", format!("{ttl}ms"));
        }
        self.add_network(s);
    }

    /// The network policy (`network`): `--allow-network`, `--deny-network`, `--resolve`.
    fn add_network(&self, s: &mut Stage) {
        let n = &self.st.network;
        for net in &n.allow {
            s.flag("--allow-network", net);
        }
        for net in &n.deny {
            s.flag("--deny-network", net);
        }
        for (host, addrs) in &n.resolve {
            s.flag("--resolve", format!("{host}={}", addrs.join(",")));
        }
    }

    /// `--warc` into `output.warc`, when set.
    fn add_warc(&self, s: &mut Stage) {
        if let Some(dir) = &self.st.output.warc {
            s.path("--warc", dir);
        }
    }

    /// The flags of a round's fetching stage (`rip-fetch`, `rip-render`): the run's rate
    /// limit and jitter (the crawler may have its own).
    fn add_round(&self, s: &mut Stage) {
        let st = self.st;
        self.add(s, st.rate_limit_ms, st.jitter_ms);
    }
}

/// The `ref` records of `urls`, the source's input.
fn url_refs(st: &State, urls: &[String]) -> Vec<String> {
    urls.iter()
        .map(|u| {
            serde_json::json!({"_type": "ref", "url": st.entry_url(u), "depth": 0, "attempt": 0})
                .to_string()
        })
        .collect()
}

/// A MediaWiki's source: its pages listed through the API, as wiki refs rip-fetch fetches
/// 50 titles per request.
fn wiki_discover(st: &State, api: &str, http: &HttpFlags) -> Stage {
    let mut discover = Stage::new("rip-discover");
    discover.flag("--mediawiki", api);
    for category in &st.categories {
        discover.flag("--category", category);
    }
    if let Some(n) = st.crawler.as_ref().and_then(|c| c.max_pages) {
        discover.flag("--max-pages", n.to_string());
    }
    http.add(&mut discover, st.rate_limit_ms, st.jitter_ms);
    discover
}

/// The link crawler: its start URLs, scope, budgets and politeness, and its state folder.
fn crawl_discover(st: &State, http: &HttpFlags, state_dir: &Path) -> Stage {
    let mut discover = Stage::new("rip-discover");
    let c = st.crawler.clone().unwrap_or_default();
    let starts: Vec<String> = if c.start_urls.is_empty() {
        st.base_url.iter().cloned().collect()
    } else {
        c.start_urls.iter().map(|u| st.entry_url(u)).collect()
    };
    for s in starts {
        discover.arg(s);
    }
    for (flag, regex) in [
        ("--domain", &c.domain),
        ("--follow", &c.delimiter),
        ("--target", &c.target),
    ] {
        if let Some(r) = regex {
            discover.flag(flag, r.clone());
        }
    }
    if let Some(n) = c.max_depth {
        discover.flag("--max-depth", n.to_string());
    }
    if let Some(n) = c.max_pages {
        discover.flag("--max-pages", n.to_string());
    }
    if let Some(n) = c.concurrency {
        discover
            .flag("-c", n.to_string())
            .flag("--per-host", n.to_string());
    }
    if c.sitemaps {
        discover.arg("--sitemaps");
    }
    if c.follow_nofollow {
        discover.arg("--follow-nofollow");
    }
    http.add(
        &mut discover,
        c.rate_limit_ms.unwrap_or(st.rate_limit_ms),
        c.jitter_ms.unwrap_or(st.jitter_ms),
    );
    http.add_warc(&mut discover);
    if let Some(r) = st.render.as_ref().filter(|r| r.auto) {
        discover.flag("--render", "auto");
        if let Some(wait) = &r.wait {
            discover.flag("--render-wait", wait.clone());
        }
        if let Some(tabs) = r.tabs {
            discover.flag("--render-tabs", tabs.to_string());
        }
        if let Some(ms) = r.page_timeout_ms {
            discover.flag("--render-timeout", format!("{ms}ms"));
        }
        if r.session {
            discover.arg("--render-session");
        }
    }
    discover.path("--state", state_dir);
    discover
}

/// The fetch rounds: in each, the browser (`render`, or the pages a policy's render rules
/// sent), `rip-fetch` (unless every page is rendered) and `rip-route`, the last one
/// `--final`; then, with render rules, the browser for the last round's pages.
fn rounds_of(l: &Loaded, http: &HttpFlags, rounds: u32) -> Vec<(Role, Stage)> {
    let st = &l.state;
    let mut work = Vec::new();
    let marked_only = Render::default();
    let auto = st.render.as_ref().is_some_and(|r| r.auto);
    for round in 1..=rounds {
        match &st.render {
            Some(r) if r.auto => work.push((Role::Fetch(round), render(r, http, true))),
            Some(r) => work.push((Role::Fetch(round), render(r, http, false))),
            None if l.policy_renders => {
                work.push((Role::Fetch(round), render(&marked_only, http, true)));
            }
            None => {}
        }
        if st
            .render
            .as_ref()
            .is_none_or(|r| r.auto || r.urls.is_some())
        {
            work.push((Role::Fetch(round), fetch(st, http)));
        }
        let mut route = route(l, round == rounds);
        if auto {
            route.flag("--render", "auto");
        }
        work.push((Role::Route(round), route));
    }
    if l.policy_renders || auto {
        let r = st.render.as_ref().unwrap_or(&marked_only);
        work.push((Role::Fetch(rounds), render(r, http, true)));
    }
    work
}

/// A round's `rip-fetch`.
fn fetch(st: &State, http: &HttpFlags) -> Stage {
    let mut fetch = Stage::new("rip-fetch");
    if let Some(n) = st.parallel_workers {
        fetch
            .flag("-c", n.to_string())
            .flag("--per-host", n.to_string());
    }
    http.add_round(&mut fetch);
    http.add_warc(&mut fetch);
    fetch
}

/// A round's `rip-render`: every page, or with `urls` the matching ones (the others go on
/// to the round's `rip-fetch`), or with `marked_only` those a `rip-route` render rule sent
/// (the pages of every render always go through it).
fn render(r: &Render, http: &HttpFlags, marked_only: bool) -> Stage {
    let mut render = Stage::new("rip-render");
    if marked_only {
        render.arg("--only-marked");
    } else if let Some(urls) = &r.urls {
        render.flag("--only", urls.clone());
    }
    if let Some(wait) = &r.wait {
        render.flag("--wait", wait.clone());
    }
    if let Some(tabs) = r.tabs {
        render.flag("-c", tabs.to_string());
    }
    if let Some(ms) = r.page_timeout_ms {
        render.flag("--page-timeout", format!("{ms}ms"));
    }
    if r.session {
        render.arg("--session");
    }
    http.add_round(&mut render);
    http.add_warc(&mut render);
    render
}

/// `rip-parse`, with the rules and the output schema.
fn parse(st: &State) -> Stage {
    let mut parse = Stage::new("rip-parse");
    if let Some(r) = &st.rules {
        parse.path("--rules", r);
    }
    if let Some(s) = &st.output_schema {
        parse.path("--output-schema", s);
        if let Some(on) = st.on_schema_error {
            parse.flag("--on-schema-error", on.as_str());
        }
    }
    parse
}

/// During a swap, where the previous output waits to be removed: `<staging>/.previous` (a
/// target's name cannot start with `.`).
pub const PREVIOUS: &str = ".previous";

/// A `rip-route`; the last round's and the one after rip-parse are `--final`: no fetch
/// follows them, so what they would retry or resolve is captured instead.
fn route(l: &Loaded, last: bool) -> Stage {
    let mut r = Stage::new("rip-route");
    if let Some(p) = &l.state.policy {
        r.path("-p", p);
    }
    r.flag("--max-retries", l.max_retries.to_string());
    if last {
        r.arg("--final");
    }
    r
}

fn write(l: &Loaded, base: &Path) -> Stage {
    let mut w = Stage::new("rip-write");
    w.path("--out", base).flag("--name", l.target.clone());
    if l.state.output.format == Format::Jsonl {
        w.arg("--jsonl");
    }
    if l.state.output.layout == Layout::Sharded {
        w.flag("--layout", "sharded");
    }
    w
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("rip-fetch"), "rip-fetch");
        assert_eq!(quote("/(a|b)/\\d+$"), r"'/(a|b)/\d+$'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("User-Agent: x"), "'User-Agent: x'");
    }
}
