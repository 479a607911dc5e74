//! robots.txt, as RFC 9309 and Google's parser read it: user-agent groups (merged when an
//! agent appears twice, `*` when none names us), `Allow`/`Disallow` with `*` and `$`, the
//! longest match winning and `Allow` winning ties, `Crawl-delay`, `Sitemap`.
//!
//! Behind the small [`RobotsRules`] trait so the parser can be swapped. This one is ours
//! rather than `texting_robots` or `robotstxt` because a disallowed URL must become an
//! `expected` record naming the rule that matched (neither crate reports it), and because
//! each of them fails some of Google's parser-test expectations that this one passes
//! (see `tests/it/robots.rs`); Google's own test cases run as data in
//! `tests/it/robots_conformance.rs`.

use std::time::Duration;

/// The largest robots.txt read; the rest is ignored (Google reads 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;
/// Lines longer than this are cut: Google's buffer holds 8 × the longest practical URL,
/// less the terminating NUL (robots_test.cc's `GoogleOnly_LineTooLong`).
const MAX_LINE: usize = 2083 * 8 - 1;

/// A robots.txt decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// May be fetched.
    Allowed,
    /// May not be fetched; `rule` is the matching line, e.g. `Disallow: /private/`.
    Disallowed {
        /// The rule that decided it.
        rule: String,
    },
}

/// The rules that apply to one agent on one origin.
pub trait RobotsRules: Send + Sync + std::fmt::Debug {
    /// The decision for a URL path with its query (`/a/b?c=d`).
    fn check(&self, path_and_query: &str) -> Verdict;
    /// The agent's `Crawl-delay`, when given.
    fn crawl_delay(&self) -> Option<Duration>;
    /// `Sitemap:` URLs (they apply to every agent).
    fn sitemaps(&self) -> &[String];
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    allow: bool,
    pattern: String,
    /// What the file said, for the verdict.
    line: String,
}

/// A parsed robots.txt for one agent.
#[derive(Debug, Clone, Default)]
pub struct Robots {
    rules: Vec<Rule>,
    delay: Option<Duration>,
    sitemaps: Vec<String>,
    disallow_all: bool,
}

#[derive(Default)]
struct Group {
    specific: bool,
    global: bool,
    rules: Vec<Rule>,
    delay: Option<Duration>,
}

#[derive(Clone, Copy)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    CrawlDelay,
    Sitemap,
    Other,
}

fn key(k: &str) -> Key {
    match k.to_ascii_lowercase().as_str() {
        "user-agent" | "useragent" | "user agent" | "user_agent" => Key::UserAgent,
        "allow" => Key::Allow,
        "disallow" | "dissallow" | "dissalow" | "disalow" | "diasllow" | "disallaw" => {
            Key::Disallow
        }
        "crawl-delay" | "crawldelay" | "crawl delay" => Key::CrawlDelay,
        "sitemap" | "site-map" => Key::Sitemap,
        _ => Key::Other,
    }
}

/// Splits a line into key and value: `key: value`, or `key value` without the colon (as
/// Google accepts). Comments and surrounding blanks are gone already.
fn split_line(line: &str) -> Option<(&str, &str)> {
    if let Some((k, v)) = line.split_once(':') {
        return Some((k.trim(), v.trim()));
    }
    let (k, v) = line.split_once([' ', '\t'])?;
    let v = v.trim();
    // "user agent" written with a space has no value after a lone key.
    (!v.contains([' ', '\t'])).then_some((k.trim(), v))
}

/// The product token of a `User-agent` value: its leading `[A-Za-z_-]` characters.
fn agent_token(value: &str) -> &str {
    let end = value
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '-'))
        .unwrap_or(value.len());
    &value[..end]
}

/// Percent-encodes bytes outside printable ASCII and upper-cases existing escapes, so
/// patterns and paths compare as Google compares them.
pub fn normalize_escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' && i + 2 < b.len() {
            let (h, l) = (b[i + 1], b[i + 2]);
            if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() {
                out.push('%');
                out.push(h.to_ascii_uppercase() as char);
                out.push(l.to_ascii_uppercase() as char);
                i += 3;
                continue;
            }
        }
        if c <= 0x20 || c >= 0x7f {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(c as char);
        }
        i += 1;
    }
    out
}

/// Does `pattern` (with `*` and a trailing `$`) match the start of `path`?
fn matches(pattern: &str, path: &str) -> bool {
    let p = pattern.as_bytes();
    let s = path.as_bytes();
    // Positions in `s` reachable after matching p[..i]; Google's algorithm.
    let mut pos: Vec<usize> = vec![0];
    for (i, &c) in p.iter().enumerate() {
        if c == b'$' && i + 1 == p.len() {
            return pos.last() == Some(&s.len());
        }
        if c == b'*' {
            let first = pos[0];
            pos = (first..=s.len()).collect();
        } else {
            let mut next = Vec::with_capacity(pos.len());
            for &at in &pos {
                if at < s.len() && s[at] == c {
                    next.push(at + 1);
                }
            }
            if next.is_empty() {
                return false;
            }
            pos = next;
        }
    }
    true
}

impl Robots {
    /// Allows everything (no robots.txt, or a 4xx for it).
    pub fn allow_all() -> Self {
        Self::default()
    }

    /// Disallows everything (used when a caller asks for it explicitly).
    pub fn disallow_all() -> Self {
        Self {
            disallow_all: true,
            ..Self::default()
        }
    }

    /// Parses `body` (at most [`MAX_ROBOTS_BYTES`] read) for the agent token `agent`.
    pub fn parse(body: &[u8], agent: &str) -> Self {
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
        let text = String::from_utf8_lossy(skip_bom(body));
        let mut reader = Reader::new(agent_token(agent).to_ascii_lowercase());
        for raw in text.split(['\n', '\r']) {
            if let Some((k, v)) = split_line(content(raw)) {
                reader.line(key(k), v);
            }
        }
        reader.finish()
    }
}

/// `body` without a UTF-8 byte-order mark at its start, whole or cut short (as Google
/// skips `EF`, `EF BB` and `EF BB BF`).
fn skip_bom(body: &[u8]) -> &[u8] {
    let bom = b"\xEF\xBB\xBF";
    let n = body.iter().zip(bom).take_while(|(a, b)| a == b).count();
    &body[n..]
}

/// What a line says, without its comment and surrounding blanks, cut at [`MAX_LINE`].
fn content(raw: &str) -> &str {
    let line = raw.split('#').next().unwrap_or("");
    let line = if line.len() > MAX_LINE {
        let mut end = MAX_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        &line[..end]
    } else {
        line
    };
    line.trim()
}

/// A robots.txt being read for one agent, line by line.
struct Reader {
    /// The agent's product token, lower case.
    agent: String,
    /// The groups naming the agent, merged.
    specific: Group,
    /// The `*` groups, merged.
    global: Group,
    sitemaps: Vec<String>,
    /// The group being read names the agent.
    in_specific: bool,
    /// The group being read is `*`.
    in_global: bool,
    /// The previous line was a `User-agent` (consecutive ones start one group).
    last_was_agent: bool,
}

impl Reader {
    fn new(agent: String) -> Self {
        Self {
            agent,
            specific: Group::default(),
            global: Group::default(),
            sitemaps: Vec::new(),
            in_specific: false,
            in_global: false,
            last_was_agent: false,
        }
    }

    fn line(&mut self, k: Key, v: &str) {
        match k {
            Key::UserAgent => self.user_agent(v),
            Key::Sitemap => self.sitemaps.push(v.to_owned()),
            Key::Other => {}
            Key::Allow | Key::Disallow | Key::CrawlDelay => self.group_line(k, v),
        }
    }

    /// A `User-agent` line: the first of a run starts a new group, which is ours when
    /// it names the agent, `*`'s when it says `*`.
    fn user_agent(&mut self, v: &str) {
        if !self.last_was_agent {
            self.in_specific = false;
            self.in_global = false;
        }
        self.last_was_agent = true;
        let is_global = v.starts_with('*') && v[1..].chars().next().is_none_or(char::is_whitespace);
        if is_global {
            self.in_global = true;
            self.global.global = true;
        } else if !self.agent.is_empty() && agent_token(v).eq_ignore_ascii_case(&self.agent) {
            self.in_specific = true;
            self.specific.specific = true;
        }
    }

    /// An `Allow`, `Disallow` or `Crawl-delay` line, for the groups being read.
    fn group_line(&mut self, k: Key, v: &str) {
        self.last_was_agent = false;
        let groups = [
            self.in_specific.then_some(&mut self.specific),
            self.in_global.then_some(&mut self.global),
        ];
        for g in groups.into_iter().flatten() {
            match k {
                Key::CrawlDelay => {
                    if let Some(delay) = crawl_delay(v) {
                        g.delay = Some(delay);
                    }
                }
                _ => push_rule(g, matches!(k, Key::Allow), v),
            }
        }
    }

    /// The rules of the groups naming the agent, else of `*`.
    fn finish(self) -> Robots {
        let chosen = if self.specific.specific {
            self.specific
        } else {
            self.global
        };
        Robots {
            rules: chosen.rules,
            delay: chosen.delay,
            sitemaps: self.sitemaps,
            disallow_all: false,
        }
    }
}

/// A `Crawl-delay` value: seconds, finite, not negative, at most a day.
fn crawl_delay(v: &str) -> Option<Duration> {
    let secs = v.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

fn push_rule(g: &mut Group, allow: bool, value: &str) {
    let word = if allow { "Allow" } else { "Disallow" };
    let line = format!("{word}: {value}");
    if value.is_empty() {
        // An empty Disallow allows everything; an empty Allow says nothing.
        return;
    }
    let mut pattern = normalize_escapes(value);
    if !pattern.starts_with('/') && !pattern.starts_with('*') {
        pattern.insert(0, '/');
    }
    if allow {
        // Google: `Allow: /dir/index.html` also allows `/dir/`.
        for index in ["/index.html", "/index.htm"] {
            if let Some(dir) = pattern.strip_suffix(index) {
                g.rules.push(Rule {
                    allow: true,
                    pattern: format!("{dir}/$"),
                    line: line.clone(),
                });
                break;
            }
        }
    }
    g.rules.push(Rule {
        allow,
        pattern,
        line,
    });
}

impl RobotsRules for Robots {
    fn check(&self, path_and_query: &str) -> Verdict {
        if self.disallow_all {
            return Verdict::Disallowed {
                rule: "Disallow: / (robots.txt unavailable)".to_owned(),
            };
        }
        let path = if path_and_query.is_empty() {
            "/".to_owned()
        } else {
            normalize_escapes(path_and_query)
        };
        let mut best: Option<&Rule> = None;
        for r in &self.rules {
            if !matches(&r.pattern, &path) {
                continue;
            }
            best = match best {
                None => Some(r),
                Some(b) if r.pattern.len() > b.pattern.len() => Some(r),
                Some(b) if r.pattern.len() == b.pattern.len() && r.allow && !b.allow => Some(r),
                keep => keep,
            };
        }
        match best {
            Some(r) if !r.allow => Verdict::Disallowed {
                rule: r.line.clone(),
            },
            _ => Verdict::Allowed,
        }
    }

    fn crawl_delay(&self) -> Option<Duration> {
        self.delay
    }

    fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }
}

/// The part of a URL robots.txt rules are matched against: path and query.
pub fn robots_target(url: &url::Url) -> String {
    let mut s = url.path().to_owned();
    if let Some(q) = url.query() {
        s.push('?');
        s.push_str(q);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_matching() {
        assert!(matches("/", "/x"));
        assert!(matches("/*.php", "/a/b.php?x"));
        assert!(matches("/*.php$", "/a/b.php"));
        assert!(!matches("/*.php$", "/a/b.php?x"));
        assert!(matches("/fish*", "/fish"));
        assert!(!matches("/fish", "/Fish"));
        assert!(matches("*", "/"));
        assert!(matches("/a$", "/a"));
        assert!(!matches("/a$", "/ab"));
    }

    #[test]
    fn escapes_are_normalised() {
        assert_eq!(normalize_escapes("/a%aa/ツ"), "/a%AA/%E3%83%84");
        assert_eq!(normalize_escapes("/50%"), "/50%");
    }

    /// robots_test.cc's `ID_LinesNumbersAreCountedCorrectly`, through the matcher: LF,
    /// CR LF, CR, no final newline and a mixture all end lines.
    #[test]
    fn every_line_ending_ends_a_line() {
        for body in [
            "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
            "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
            "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
            "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
            "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
        ] {
            let bar = Robots::parse(body.as_bytes(), "bar");
            assert!(
                matches!(bar.check("/x"), Verdict::Disallowed { .. }),
                "{body:?}"
            );
            let foo = Robots::parse(body.as_bytes(), "foo");
            assert_eq!(foo.check("/x"), Verdict::Allowed, "{body:?}");
        }
    }

    /// robots_test.cc's `TestGetPathParamsQuery` (its absolute URLs: we only ever see
    /// parsed ones) and `TestMaybeEscapePattern`.
    #[test]
    fn google_path_and_escape_cases() {
        for (url, want) in [
            ("http://www.example.com", "/"),
            ("http://www.example.com/", "/"),
            ("http://www.example.com/a", "/a"),
            ("http://www.example.com/a/", "/a/"),
            (
                "http://www.example.com/a/b?c=http://d.e/",
                "/a/b?c=http://d.e/",
            ),
            (
                "http://www.example.com/a/b?c=d&e=f#fragment",
                "/a/b?c=d&e=f",
            ),
            ("http://example.com?a", "/?a"),
            ("http://example.com/a;b#c", "/a;b"),
        ] {
            let parsed = url::Url::parse(url).expect(url);
            assert_eq!(robots_target(&parsed), want, "{url}");
        }
        for (pattern, want) in [
            ("http://www.example.com", "http://www.example.com"),
            ("/a/b/c", "/a/b/c"),
            ("á", "%C3%A1"),
            ("%aa", "%AA"),
        ] {
            assert_eq!(normalize_escapes(pattern), want, "{pattern}");
        }
    }

    /// A byte-order mark, whole or its first one or two bytes, is skipped at the start of
    /// the file only: robots_test.cc's `ID_UTF8ByteOrderMarkIsSkipped`.
    #[test]
    fn a_byte_order_mark_whole_or_partial_is_skipped() {
        let disallowed = |body: &[u8]| {
            let robots = Robots::parse(body, "foo");
            matches!(robots.check("/AnyValue"), Verdict::Disallowed { .. })
        };
        for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
            let body = [bom, b"User-Agent: foo\nDisallow: /AnyValue\n"].concat();
            assert!(disallowed(&body), "{bom:x?}");
        }
        // Not a BOM: the first line is garbage, so no group names foo.
        assert!(!disallowed(
            b"\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n"
        ));
        // Only at the start: a BOM later makes its line garbage.
        assert!(!disallowed(
            b"User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n"
        ));
    }

    /// Google keeps the first `2083 * 8 - 1` bytes of a line (its buffer of `2083 * 8`
    /// ends in a NUL): robots_test.cc's `GoogleOnly_LineTooLong`.
    #[test]
    fn a_long_line_keeps_googles_length() {
        let kept = format!("Disallow: /x/{}", "a".repeat(2083 * 8 - 1 - 13));
        assert_eq!(kept.len(), 2083 * 8 - 1);
        let body = format!("User-agent: *\n{kept}q\n");
        let robots = Robots::parse(body.as_bytes(), "FooBot");
        let target = format!("{}z", &kept["Disallow: ".len()..]);
        let verdict = robots.check(&target);
        assert!(
            matches!(&verdict, Verdict::Disallowed { rule } if *rule == kept),
            "the line cut to 16663 bytes disallows its prefix"
        );
    }
}
