//! The network policy where a broken one would show, with nothing beyond this machine
//! reachable even then. Each test builds two network namespaces of its own, joined by a
//! veth pair: "the internet", where a public site listens at 198.51.100.10, and the
//! crawler's, whose loopback also holds 10.0.0.2 (a LAN address) and 169.254.169.254 (the
//! cloud metadata address), with a private server on all of them logging every request.
//! The programs run in the crawler's namespace (`ip netns exec`); a test wants a
//! `network.denied` failure for each way in and an empty private log. It needs root and
//! `ip netns` (as here and in CI); without them it says so on stderr and passes.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The public site: a page with a link into each private address, a redirect into one,
/// a name that resolves to loopback, and a page a browser renders that asks for them.
const INDEX: &str = r#"<!doctype html><title>Public</title>
<a href="/a.html">A</a>
<a href="http://169.254.169.254/latest/meta-data/">metadata</a>
<a href="/go">go</a>
<a href="http://inside.test/secret">inside</a>
<a href="http://rebind.test/page2.html">rebind</a>
"#;
const APP: &str = r#"<!doctype html><title>App</title>
<link rel="preconnect" href="http://10.9.0.2/"><link rel="dns-prefetch" href="http://10.9.0.2/">
<body><p id="x">app</p>
<script src="http://10.0.0.2/app.js"></script>
<script>
fetch('http://inside.test/secret').then(r => r.text()).then(t => { document.getElementById('x').textContent = t; }).catch(() => {});
try { new WebSocket('ws://10.9.0.2/socket'); } catch (e) {}
</script>
</body>
"#;
const PLAN: &str = r#"{"rules": [{"path": "/go", "then": {"status": 302, "location": "http://10.0.0.2/secret"}}]}"#;

/// Two namespaces, their servers and files; all removed on drop.
struct Lab {
    crawler: String,
    public: String,
    /// A third namespace, at 10.9.0.2 from the crawler's, counting the connections it
    /// accepts ([`Lab::add_target`]).
    target: Option<String>,
    dir: PathBuf,
    servers: Vec<Child>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

impl Lab {
    /// The lab of test `tag` (one letter), or `None` (said on stderr) without `ip netns`.
    fn new(tag: char) -> Option<Self> {
        let pid = std::process::id();
        let (crawler, public) = (format!("rip-c{pid}{tag}"), format!("rip-p{pid}{tag}"));
        if let Err(e) = ip(&["netns", "add", &crawler]) {
            eprintln!("skipped: no network namespace of its own ({e}); run as root with `ip`");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("rip-netns-{pid}-{tag}"));
        let lab = Lab {
            crawler,
            public,
            target: None,
            dir,
            servers: Vec::new(),
        };
        lab.wire(&format!("rc{pid}{tag}"), &format!("rp{pid}{tag}"))
            .unwrap_or_else(|e| panic!("building the namespaces: {e}"));
        lab.files();
        Some(lab)
    }

    /// The namespaces' links and addresses.
    fn wire(&self, vc: &str, vp: &str) -> Result<(), String> {
        let (c, p) = (self.crawler.as_str(), self.public.as_str());
        ip(&["netns", "add", p])?;
        ip(&["link", "add", vc, "type", "veth", "peer", "name", vp])?;
        ip(&["link", "set", vc, "netns", c])?;
        ip(&["link", "set", vp, "netns", p])?;
        for (ns, dev, addr) in [(c, vc, "198.51.100.1/24"), (p, vp, "198.51.100.10/24")] {
            ip(&["-n", ns, "addr", "add", addr, "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        for private in ["10.0.0.2/32", "169.254.169.254/32"] {
            ip(&["-n", c, "addr", "add", private, "dev", "lo"])?;
        }
        Ok(())
    }

    fn files(&self) {
        let write = |rel: &str, text: &str| {
            let path = self.dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("site/index.html", INDEX);
        write("site/a.html", "<!doctype html><title>A</title><p>a</p>");
        write("site/page2.html", r#"<a href="/secret">secret</a>"#);
        // A sitemap robots.txt names on a private address (rip-discover --sitemaps).
        let sitemap = "User-agent: *\nAllow: /\nSitemap: http://10.0.0.2/sitemap.xml\n";
        write("site/robots.txt", sitemap);
        write(
            "private/sitemap.xml",
            r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://10.0.0.2/secret</loc></url></urlset>"#,
        );
        write("site/app.html", APP);
        write("plan.json", PLAN);
        write("private/secret", "the secret");
        write("private/app.js", "document.title = 'owned';");
        write("private/latest/meta-data/index.html", "credentials");
    }

    /// Starts rip-testserver in namespace `ns`, serving `site` at `bind`, logging to `log`.
    fn serve(&mut self, ns: &str, site: &str, bind: &str, log: &str, plan: bool) {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_rip-testserver")])
            .arg("--dir")
            .arg(self.dir.join(site))
            .args(["--bind", bind, "--log"])
            .arg(self.dir.join(log));
        if plan {
            cmd.arg("--faults").arg(self.dir.join("plan.json"));
        }
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("listening on"), "rip-testserver: {line:?}");
        self.servers.push(child);
    }

    /// The public site and the private server.
    fn start(&mut self) {
        let (public, crawler) = (self.public.clone(), self.crawler.clone());
        self.serve(&public, "site", "198.51.100.10:80", "public.log", true);
        self.serve(&crawler, "private", "0.0.0.0:80", "private.log", false);
    }

    /// A namespace of its own behind 10.9.0.2 (private), with a server: its TCP
    /// `PassiveOpens` count every connection made to it, with or without a request, which
    /// a server's log does not (Chromium's preconnects send none).
    fn add_target(&mut self, tag: char) {
        let pid = std::process::id();
        let t = format!("rip-t{pid}{tag}");
        let (vc, vt) = (format!("rx{pid}{tag}"), format!("rt{pid}{tag}"));
        let c = self.crawler.clone();
        let wire = || -> Result<(), String> {
            ip(&["netns", "add", &t])?;
            ip(&["link", "add", &vc, "type", "veth", "peer", "name", &vt])?;
            ip(&["link", "set", &vc, "netns", &c])?;
            ip(&["link", "set", &vt, "netns", &t])?;
            for (ns, dev, addr) in [(&c, &vc, "10.9.0.1/24"), (&t, &vt, "10.9.0.2/24")] {
                ip(&["-n", ns, "addr", "add", addr, "dev", dev])?;
                ip(&["-n", ns, "link", "set", dev, "up"])?;
            }
            ip(&["-n", &t, "link", "set", "lo", "up"])
        };
        self.target = Some(t.clone());
        wire().unwrap_or_else(|e| panic!("building the target namespace: {e}"));
        self.serve(&t, "private", "10.9.0.2:80", "target.log", false);
    }

    /// The TCP connections the target namespace accepted.
    fn target_connections(&self) -> u64 {
        let t = self.target.as_deref().expect("a target namespace");
        let out = Command::new("ip")
            .args(["netns", "exec", t, "cat", "/proc/net/snmp"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut tcp = text.lines().filter(|l| l.starts_with("Tcp:"));
        let (names, values) = (tcp.next().unwrap(), tcp.next().unwrap());
        let at = names.split_whitespace().position(|n| n == "PassiveOpens");
        let value = values.split_whitespace().nth(at.expect("PassiveOpens"));
        value.unwrap().parse().unwrap()
    }

    /// Runs `script` (sh) in the crawler's namespace, in the lab's folder, with the
    /// programs as `$DISCOVER`, `$FETCH`, `$RENDER`: its records, and its stderr.
    fn run(&self, script: &str) -> (Vec<Value>, String) {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.crawler, "sh", "-c", script])
            .current_dir(&self.dir)
            .env("DISCOVER", env!("CARGO_BIN_EXE_rip-discover"))
            .env("FETCH", env!("CARGO_BIN_EXE_rip-fetch"))
            .env("RENDER", env!("CARGO_BIN_EXE_rip-render"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let records = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}")))
            .collect();
        (records, stderr)
    }

    /// The requests the private server got.
    fn private_requests(&self) -> String {
        std::fs::read_to_string(self.dir.join("private.log")).unwrap_or_default()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for child in &mut self.servers {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Deleting a namespace deletes the veth pair with it.
        let _ = ip(&["netns", "del", &self.crawler]);
        let _ = ip(&["netns", "del", &self.public]);
        if let Some(t) = &self.target {
            let _ = ip(&["netns", "del", t]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The one record of `kind` for `url`.
fn record<'a>(records: &'a [Value], kind: &str, url: &str) -> &'a Value {
    let found: Vec<_> = (records.iter())
        .filter(|r| r["_type"] == kind && r["url"] == url)
        .collect();
    assert_eq!(found.len(), 1, "{kind} of {url} in {records:#?}");
    found[0]
}

/// Asserts `failure` is `network.denied`, PERMANENT, not retried, naming `addr`.
fn assert_denied(failure: &Value, addr: &str) {
    let e = &failure["errors"][0];
    assert_eq!(e["code"], "network.denied", "{failure}");
    assert_eq!(failure["category"], "PERMANENT", "{failure}");
    assert_eq!(failure["retryable"], false, "{failure}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains(&format!("to {addr} ")), "{message}");
}

const COMMON: &str = "--cache-dir cache --delay 0ms --jitter 0ms --quiet \
                      --resolve inside.test=127.0.0.1";

#[test]
fn a_public_crawl_reaches_no_private_address_by_link_redirect_or_name() {
    let Some(mut lab) = Lab::new('a') else { return };
    lab.start();
    // rebind.test is public when rip-discover resolves it and loopback when rip-fetch
    // does (DNS rebinding): the pages it found there hold rip-fetch to nothing more. The
    // fetch stage reads no cache, so it asks the network itself.
    let (records, stderr) = lab.run(&format!(
        "$DISCOVER http://198.51.100.10/ --domain . --sitemaps {COMMON} \
           --resolve rebind.test=198.51.100.10 \
         | $FETCH {COMMON} --cache off --resolve rebind.test=127.0.0.1"
    ));
    let failure = |url| record(&records, "failure", url);
    // A link to the link-local metadata address.
    assert_denied(
        failure("http://169.254.169.254/latest/meta-data/"),
        "169.254.169.254",
    );
    // A redirect to a private address.
    assert_denied(failure("http://198.51.100.10/go"), "10.0.0.2");
    // A name that resolves to loopback.
    assert_denied(failure("http://inside.test/secret"), "127.0.0.1");
    // A name that rebinds to loopback between two stages.
    assert_denied(failure("http://rebind.test/secret"), "127.0.0.1");
    // The sitemap robots.txt named on 10.0.0.2 was not read: the private log is empty.
    // The public pages are fetched as ever.
    record(&records, "page", "http://198.51.100.10/a.html");
    assert_eq!(lab.private_requests(), "", "{stderr}");
}

#[test]
fn a_rendered_pages_subresources_reach_no_private_address() {
    let Some(mut lab) = Lab::new('b') else { return };
    lab.start();
    lab.add_target('b');
    let before = lab.target_connections();
    let (records, stderr) = lab.run(&format!("$RENDER http://198.51.100.10/app.html {COMMON}"));
    let page = record(&records, "page", "http://198.51.100.10/app.html");
    let failed = page["render"]["failedRequests"].as_array().cloned();
    let failed = failed.unwrap_or_else(|| panic!("no failed requests: {page}\n{stderr}"));
    let denied = |url: &str| {
        let r = (failed.iter()).find(|r| r["url"] == url);
        let r = r.unwrap_or_else(|| panic!("{url} not in {failed:#?}"));
        assert_eq!(r["code"], "network.denied", "{r}");
    };
    denied("http://10.0.0.2/app.js");
    denied("http://inside.test/secret");
    let body = page["body"].as_str().unwrap();
    assert!(
        !body.contains("the secret") && !body.contains("owned"),
        "{body}"
    );
    assert_eq!(lab.private_requests(), "", "{stderr}");
    // Nor does Chromium connect by itself (a preconnect, a WebSocket).
    assert_eq!(lab.target_connections(), before, "{stderr}");
}

#[test]
fn a_local_crawl_keeps_its_own_network_and_no_other() {
    // Start URLs in a private network let the crawl into that network (here 10.0.0.2, the
    // private server's), and no further: the link to the metadata address still fails.
    let Some(mut lab) = Lab::new('c') else { return };
    lab.start();
    let dir = lab.dir.clone();
    std::fs::write(
        dir.join("private/index.html"),
        r#"<a href="/secret">s</a> <a href="http://169.254.169.254/latest/meta-data/">m</a>"#,
    )
    .unwrap();
    let (records, stderr) = lab.run(&format!(
        "$DISCOVER http://10.0.0.2/ --domain . {COMMON} | $FETCH {COMMON}"
    ));
    record(&records, "page", "http://10.0.0.2/secret");
    assert_denied(
        record(
            &records,
            "failure",
            "http://169.254.169.254/latest/meta-data/",
        ),
        "169.254.169.254",
    );
    let log = lab.private_requests();
    assert!(!log.contains("meta-data"), "{log}\n{stderr}");
}
