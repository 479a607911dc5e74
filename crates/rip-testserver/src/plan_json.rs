//! The JSON form of a [`FaultPlan`] (documented in the crate docs): plain serde structs
//! that mirror the file, checked and turned into [`Rule`]s and [`Fault`]s, and the
//! plan's constructors from JSON. This module depends on `plan`, never the reverse.

use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde::Deserialize;

use crate::error::{PlanError, PlanProblem};
use crate::fault::{Fault, RetryAfter};
use crate::plan::{FaultPlan, LocationStyle, Matcher, Rule};
use crate::samples::Sample;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanJson {
    #[serde(default)]
    rules: Vec<RuleJson>,
    #[serde(default)]
    redirects: Vec<RedirectsJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleJson {
    path: Option<String>,
    prefix: Option<String>,
    glob: Option<String>,
    host: Option<String>,
    #[serde(default)]
    sequence: Vec<FaultJson>,
    #[serde(alias = "always")]
    then: Option<FaultJson>,
    #[serde(default)]
    counter: CounterJson,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum CounterJson {
    #[default]
    PerTarget,
    Shared,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedirectsJson {
    paths: Vec<String>,
    to: Option<String>,
    #[serde(rename = "loop", default)]
    is_loop: bool,
    status: Option<u16>,
    #[serde(default)]
    location: LocationJson,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum LocationJson {
    #[default]
    Path,
    Absolute,
    Relative,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FaultJson {
    #[serde(default)]
    reset: bool,
    #[serde(default)]
    close: bool,
    status: Option<u16>,
    location: Option<String>,
    retry_after: Option<RetryAfterJson>,
    retry_after_date: Option<u64>,
    body: Option<String>,
    body_base64: Option<String>,
    content_type: Option<String>,
    sample: Option<Sample>,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    gzip: bool,
    gzip_bomb: Option<u64>,
    delay: Option<String>,
    trickle: Option<TrickleJson>,
    stall: Option<String>,
    short_body: Option<usize>,
    #[serde(default)]
    end_with_reset: bool,
    huge_headers: Option<HugeHeadersJson>,
    etag: Option<String>,
    last_modified: Option<String>,
    validators: Option<bool>,
    times: Option<usize>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RetryAfterJson {
    Seconds(u64),
    Raw(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrickleJson {
    chunk: usize,
    every: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HugeHeadersJson {
    count: usize,
    size: usize,
}

impl FaultPlan {
    /// Parses the JSON format described in the crate docs.
    pub fn from_json(json: &str) -> Result<FaultPlan, PlanError> {
        parse(json, "<string>")
    }

    /// Reads and parses a JSON plan file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<FaultPlan, PlanError> {
        let path = path.as_ref();
        let json = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_owned(),
            source,
        })?;
        parse(&json, &path.display().to_string())
    }
}

/// Parses and checks a JSON plan; `origin` names it in errors.
fn parse(json: &str, origin: &str) -> Result<FaultPlan, PlanError> {
    let plan: PlanJson = serde_json::from_str(json).map_err(|source| PlanError::Json {
        origin: origin.to_owned(),
        source,
    })?;
    let invalid = |entry: String, problem: PlanProblem| PlanError::Invalid {
        origin: origin.to_owned(),
        entry,
        problem,
    };
    let mut out = FaultPlan::new();
    for (r, rule) in plan.rules.into_iter().enumerate() {
        out.push(convert_rule(rule, &format!("rules[{r}]")).map_err(|(e, p)| invalid(e, p))?);
    }
    for (r, redirects) in plan.redirects.into_iter().enumerate() {
        let entry = format!("redirects[{r}]");
        out = convert_redirects(out, redirects).map_err(|p| invalid(entry, p))?;
    }
    Ok(out)
}

type Located<T> = Result<T, (String, PlanProblem)>;

fn convert_rule(rule: RuleJson, entry: &str) -> Located<Rule> {
    let at = |p: PlanProblem| (entry.to_owned(), p);
    let matcher = match (rule.path, rule.prefix, rule.glob) {
        (Some(p), None, None) => Matcher::Exact(p),
        (None, Some(p), None) => Matcher::Prefix(p),
        (None, None, Some(p)) => Matcher::Glob(p),
        _ => return Err(at(PlanProblem::Matcher)),
    };
    let pattern = match &matcher {
        Matcher::Exact(p) | Matcher::Prefix(p) | Matcher::Glob(p) => p,
    };
    let glob_star = matches!(matcher, Matcher::Glob(_)) && pattern.starts_with('*');
    if !pattern.starts_with('/') && !glob_star {
        return Err(at(PlanProblem::Pattern(pattern.clone())));
    }
    let mut out = Rule::new(matcher);
    if let Some(host) = rule.host {
        out = out.host(host);
    }
    if let CounterJson::Shared = rule.counter {
        out = out.shared_counter();
    }
    for (s, step) in rule.sequence.into_iter().enumerate() {
        let step_entry = format!("{entry}.sequence[{s}]");
        let times = step.times.unwrap_or(1);
        if times == 0 {
            return Err((step_entry, PlanProblem::Zero("times")));
        }
        let fault = convert_fault(step).map_err(|p| (step_entry, p))?;
        out = out.times(times, fault);
    }
    if let Some(then) = rule.then {
        let then_entry = format!("{entry}.then");
        if then.times.is_some() {
            return Err((then_entry, PlanProblem::Conflict("times", "then")));
        }
        out = out.then(convert_fault(then).map_err(|p| (then_entry, p))?);
    }
    Ok(out)
}

fn convert_redirects(plan: FaultPlan, r: RedirectsJson) -> Result<FaultPlan, PlanProblem> {
    if r.paths.is_empty() {
        return Err(PlanProblem::NoPaths);
    }
    if let Some(bad) = r.paths.iter().find(|p| !p.starts_with('/')) {
        return Err(PlanProblem::Pattern(bad.clone()));
    }
    let status = check_status(r.status.unwrap_or(302))?;
    let style = match r.location {
        LocationJson::Path => LocationStyle::Path,
        LocationJson::Absolute => LocationStyle::Absolute,
        LocationJson::Relative => LocationStyle::Relative,
    };
    let paths: Vec<&str> = r.paths.iter().map(String::as_str).collect();
    match (r.to, r.is_loop) {
        (Some(to), false) => Ok(plan.redirect_chain(&paths, &to, status, style)),
        (None, true) => Ok(plan.redirect_loop(&paths, status, style)),
        (Some(_), true) => Err(PlanProblem::Conflict("to", "loop")),
        (None, false) => Err(PlanProblem::Conflict("to", "loop")),
    }
}

fn convert_fault(mut f: FaultJson) -> Result<Fault, PlanProblem> {
    check_conflicts(&f)?;
    let has_content = f.has_content();
    let fault = what_is_sent(&mut f)?;
    let fault = with_headers(fault, &mut f, has_content)?;
    let fault = with_delivery(fault, &f)?;
    with_validators(fault, f)
}

impl FaultJson {
    /// A body of its own: text, base64, a sample or a gzip bomb.
    fn has_content(&self) -> bool {
        self.body.is_some()
            || self.body_base64.is_some()
            || self.sample.is_some()
            || self.gzip_bomb.is_some()
    }
}

/// Fields that cannot go together.
fn check_conflicts(f: &FaultJson) -> Result<(), PlanProblem> {
    if f.reset || f.close {
        // Nothing is sent: no status, no content.
        exclusive(&[
            ("reset", f.reset),
            ("close", f.close),
            ("status", f.status.is_some()),
            ("location", f.location.is_some()),
            ("body", f.body.is_some()),
            ("body_base64", f.body_base64.is_some()),
            ("sample", f.sample.is_some()),
            ("gzip_bomb", f.gzip_bomb.is_some()),
        ])?;
    }
    exclusive(&[
        ("body", f.body.is_some()),
        ("body_base64", f.body_base64.is_some()),
        ("sample", f.sample.is_some()),
        ("gzip_bomb", f.gzip_bomb.is_some()),
    ])?;
    exclusive(&[
        ("retry_after", f.retry_after.is_some()),
        ("retry_after_date", f.retry_after_date.is_some()),
    ])?;
    if f.sample.is_some() && f.content_type.is_some() {
        return Err(PlanProblem::Conflict("sample", "content_type"));
    }
    if f.validators == Some(false) && (f.etag.is_some() || f.last_modified.is_some()) {
        return Err(PlanProblem::Conflict("validators", "etag"));
    }
    Ok(())
}

/// What is sent: a reset, a close, or a response (its content and status).
fn what_is_sent(f: &mut FaultJson) -> Result<Fault, PlanProblem> {
    let status = f.status.map(check_status).transpose()?;
    let body = match (f.body.take(), f.body_base64.take()) {
        (Some(text), _) => Some(text.into_bytes()),
        (None, Some(b64)) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|_| PlanProblem::Base64)?,
        ),
        (None, None) => None,
    };
    if f.reset {
        return Ok(Fault::reset());
    }
    if f.close {
        return Ok(Fault::close());
    }
    let with_content = if let Some(sample) = f.sample {
        Some(Fault::sample(sample))
    } else if let Some(expanded) = f.gzip_bomb {
        Some(Fault::gzip_bomb(expanded))
    } else {
        body.map(|body| {
            let content_type = f.content_type.clone();
            Fault::body(
                content_type.unwrap_or_else(|| "text/html; charset=utf-8".into()),
                body,
            )
        })
    };
    Ok(match (with_content, status) {
        (Some(fault), Some(status)) => fault.with_status(status),
        (Some(fault), None) => fault,
        (None, Some(status)) => Fault::status(status),
        (None, None) if f.location.is_some() => Fault::status(302),
        (None, None) => Fault::serve(),
    })
}

/// The headers a fault adds: `Content-Type` (relabelling what is sent when the fault has
/// no content of its own), `Location`, `Retry-After`, then its `headers`.
fn with_headers(
    mut fault: Fault,
    f: &mut FaultJson,
    has_content: bool,
) -> Result<Fault, PlanProblem> {
    if !has_content && let Some(ct) = f.content_type.take() {
        // Relabel whatever is sent (the site's page, the canned body).
        fault = fault.header("Content-Type", ct);
    }
    if let Some(location) = f.location.take() {
        fault = fault.header("Location", location);
    }
    match f.retry_after.take() {
        Some(RetryAfterJson::Seconds(s)) => {
            fault = fault.with_retry_after(RetryAfter::Seconds(s));
        }
        Some(RetryAfterJson::Raw(raw)) => fault = fault.with_retry_after(RetryAfter::Raw(raw)),
        None => {}
    }
    if let Some(s) = f.retry_after_date {
        fault = fault.with_retry_after(RetryAfter::After(Duration::from_secs(s)));
    }
    for (name, value) in std::mem::take(&mut f.headers) {
        let value = match value {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            _ => return Err(PlanProblem::Header(name)),
        };
        if !crate::http::valid_header(&name, &value) {
            return Err(PlanProblem::Header(name));
        }
        fault = fault.header(name, value);
    }
    Ok(fault)
}

/// How the response is delivered: gzip, delays, trickle, stall, short body, reset at the
/// end, huge headers.
fn with_delivery(mut fault: Fault, f: &FaultJson) -> Result<Fault, PlanProblem> {
    if f.gzip {
        fault = fault.gzip();
    }
    if let Some(delay) = &f.delay {
        fault = fault.delay(duration("delay", delay.clone())?);
    }
    if let Some(t) = &f.trickle {
        if t.chunk == 0 {
            return Err(PlanProblem::Zero("trickle.chunk"));
        }
        fault = fault.trickle(t.chunk, duration("trickle.every", t.every.clone())?);
    }
    if let Some(stall) = &f.stall {
        fault = fault.stall(duration("stall", stall.clone())?);
    }
    if let Some(sent) = f.short_body {
        fault = fault.short_body(sent);
    }
    if f.end_with_reset {
        fault = fault.end_with_reset();
    }
    if let Some(h) = &f.huge_headers {
        fault = fault.huge_headers(h.count, h.size);
    }
    Ok(fault)
}

/// The validators: a fixed `ETag` or `Last-Modified`, or none at all.
fn with_validators(mut fault: Fault, f: FaultJson) -> Result<Fault, PlanProblem> {
    if let Some(etag) = f.etag {
        fault = fault.etag(etag);
    }
    if let Some(date) = f.last_modified {
        fault = fault.last_modified(date_value("last_modified", date)?);
    }
    if f.validators == Some(false) {
        fault = fault.no_validators();
    }
    Ok(fault)
}

/// Fails with the first two flags that are both set.
fn exclusive(flags: &[(&'static str, bool)]) -> Result<(), PlanProblem> {
    let mut set = flags.iter().filter(|(_, on)| *on).map(|(name, _)| *name);
    match (set.next(), set.next()) {
        (Some(a), Some(b)) => Err(PlanProblem::Conflict(a, b)),
        _ => Ok(()),
    }
}

fn check_status(status: u16) -> Result<u16, PlanProblem> {
    if (100..=999).contains(&status) {
        Ok(status)
    } else {
        Err(PlanProblem::Status(status))
    }
}

fn duration(field: &'static str, value: String) -> Result<Duration, PlanProblem> {
    humantime::parse_duration(value.trim()).map_err(|_| PlanProblem::Duration { field, value })
}

fn date_value(field: &'static str, value: String) -> Result<SystemTime, PlanProblem> {
    humantime::parse_rfc3339_weak(value.trim())
        .or_else(|_| httpdate::parse_http_date(value.trim()))
        .map_err(|_| PlanProblem::Date { field, value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{Action, Content, Encoding, Validator};

    fn problem(json: &str) -> (String, PlanProblem) {
        match parse(json, "t.json") {
            Err(PlanError::Invalid { entry, problem, .. }) => (entry, problem),
            other => panic!("expected an invalid plan, got {other:?}"),
        }
    }

    #[test]
    fn the_documented_example_parses() {
        let plan = FaultPlan::from_json(crate::EXAMPLE_PLAN).expect("example plan");
        assert!(plan.rules().len() >= 8, "{}", plan.rules().len());
    }

    #[test]
    fn fields_become_faults() {
        let plan = parse(
            r#"{"rules": [
                {"path": "/f", "sequence": [{"status": 503, "retry_after": 2, "times": 2},
                                            {"status": 429, "retry_after_date": 5}],
                 "then": {"gzip": true, "delay": "20ms", "etag": "\"v1\""}},
                {"prefix": "/r", "host": "LocalHost", "counter": "shared", "always": {"reset": true}},
                {"glob": "*.png", "then": {"sample": "png"}},
                {"path": "/b", "then": {"body_base64": "AAEC", "content_type": "x/y",
                                        "headers": {"X-A": "1", "X-N": 2}}},
                {"path": "/m", "then": {"location": "/n"}}
            ]}"#,
            "t.json",
        )
        .unwrap();
        let rules = plan.rules();
        assert_eq!(rules[0].sequence.len(), 3);
        assert_eq!(
            rules[0].sequence[1].retry_after,
            Some(RetryAfter::Seconds(2))
        );
        assert_eq!(
            rules[0].sequence[2].retry_after,
            Some(RetryAfter::After(Duration::from_secs(5)))
        );
        assert_eq!(rules[0].then.encoding, Encoding::Gzip);
        assert_eq!(rules[0].then.delay, Duration::from_millis(20));
        assert_eq!(rules[0].then.etag, Validator::Fixed("\"v1\"".into()));
        assert_eq!(rules[1].host.as_deref(), Some("localhost"));
        assert_eq!(rules[1].then.action, Action::Reset);
        assert_eq!(rules[2].then, Fault::sample(Sample::Png));
        assert_eq!(
            rules[3].then.content,
            Content::Bytes {
                content_type: "x/y".into(),
                body: vec![0u8, 1, 2].into()
            }
        );
        assert_eq!(rules[3].then.headers.len(), 2);
        assert_eq!(rules[4].then.status, Some(302));
    }

    #[test]
    fn mistakes_are_located() {
        assert_eq!(
            problem(r#"{"rules":[{"then":{}}]}"#).1,
            PlanProblem::Matcher
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"x"}]}"#).1,
            PlanProblem::Pattern("x".into())
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","sequence":[{},{"reset":true,"status":500}]}]}"#),
            (
                "rules[0].sequence[1]".into(),
                PlanProblem::Conflict("reset", "status")
            )
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","then":{"delay":"soon"}}]}"#).1,
            PlanProblem::Duration {
                field: "delay",
                value: "soon".into()
            }
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","then":{"status":1000}}]}"#).1,
            PlanProblem::Status(1000)
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","then":{"body":"a","sample":"pdf"}}]}"#).1,
            PlanProblem::Conflict("body", "sample")
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","then":{"headers":{"X":"a\nb"}}}]}"#).1,
            PlanProblem::Header("X".into())
        );
        assert_eq!(
            problem(r#"{"rules":[{"path":"/","then":{"times":2}}]}"#).1,
            PlanProblem::Conflict("times", "then")
        );
        assert_eq!(
            problem(r#"{"redirects":[{"paths":["/a"]}]}"#),
            ("redirects[0]".into(), PlanProblem::Conflict("to", "loop"))
        );
        assert!(matches!(
            parse(
                r#"{"rules":[{"path":"/","then":{"stauts":500}}]}"#,
                "t.json"
            ),
            Err(PlanError::Json { .. })
        ));
        assert!(matches!(parse("[", "t.json"), Err(PlanError::Json { .. })));
    }

    #[test]
    fn status_with_body_is_fine() {
        let plan = FaultPlan::from_json(
            r#"{"rules":[{"path":"/","then":{"status":500,"body":"<h1>oops</h1>"}}]}"#,
        )
        .unwrap();
        assert_eq!(plan.rules()[0].then.status, Some(500));
    }
}
