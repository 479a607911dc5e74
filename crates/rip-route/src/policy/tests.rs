use super::*;
use rip_core::ErrorEntry;

fn fail(url: &str, category: ErrorCategory, status: Option<u16>, attempt: u32) -> Failure {
    let code = match category {
        ErrorCategory::Throttled => "httpError.throttled",
        ErrorCategory::Transient => "httpError.transient",
        ErrorCategory::Permanent => "httpError.permanent",
        ErrorCategory::Network => "network.reset",
        _ => "other.thing",
    };
    let mut f = Failure::new(
        url,
        category,
        Phase::Fetch,
        ErrorEntry::new(code, "x", "rip-fetch"),
    );
    f.status = status;
    f.attempt = attempt;
    f
}

fn policy(toml_text: &str) -> Policy {
    let spec: PolicySpec = toml::from_str(toml_text).unwrap();
    Policy::from_spec(spec, Path::new("p.toml")).unwrap()
}

fn policy_err(toml_text: &str) -> String {
    let spec: PolicySpec = toml::from_str(toml_text).unwrap();
    Policy::from_spec(spec, Path::new("p.toml"))
        .unwrap_err()
        .to_string()
}

fn route(p: &Policy, f: &Failure) -> Route {
    p.decide(f).route
}

#[test]
fn default_retries_retryable_failures_within_budget_then_captures() {
    let p = Policy::default();
    for (cat, status) in [
        (ErrorCategory::Transient, Some(503)),
        (ErrorCategory::Throttled, Some(429)),
        (ErrorCategory::Network, None),
    ] {
        assert_eq!(route(&p, &fail("http://h/a", cat, status, 1)), Route::Retry);
        assert_eq!(route(&p, &fail("http://h/a", cat, status, 2)), Route::Retry);
        assert_eq!(
            route(&p, &fail("http://h/a", cat, status, 3)),
            Route::Capture
        );
    }
    let f = fail("http://h/a", ErrorCategory::Permanent, Some(404), 1);
    assert_eq!(
        route(&p, &f),
        Route::Capture,
        "permanent: captured on round 1"
    );
    let mut f = fail("http://h/a", ErrorCategory::Transient, Some(503), 1);
    f.retryable = false;
    assert_eq!(route(&p, &f), Route::Capture, "the record's retryable wins");
}

#[test]
fn max_retries_one_makes_the_second_round_final() {
    let mut p = Policy {
        max_retries: 1,
        ..Default::default()
    };
    let f = |a| fail("http://h/a", ErrorCategory::Transient, Some(503), a);
    assert_eq!(route(&p, &f(1)), Route::Retry);
    assert_eq!(route(&p, &f(2)), Route::Capture);
    p.max_retries = 0;
    assert_eq!(route(&p, &f(1)), Route::Capture);
}

#[test]
fn write_failures_pass_through_whatever_the_rules_say() {
    let p = policy("[[rules]]\nroute = \"capture\"\n");
    let mut f = fail("http://h/a", ErrorCategory::Resource, None, 1);
    f.phase = Phase::Write;
    assert_eq!(route(&p, &f), Route::PassThrough);
}

#[test]
fn the_first_matching_rule_decides() {
    let p = policy(
        r#"
        [[rules]]
        name = "gone"
        status = [410, "451"]
        route = "expected"
        reason = "removed upstream"

        [[rules]]
        name = "classes"
        status = "4xx"
        url = "/classes/\\d+\\.html$"
        route = "resolve"

        [[rules]]
        name = "flaky host"
        category = "PERMANENT"
        url = "^http://flaky\\."
        route = "retry"
        maxRetries = 1

        [[rules]]
        category = ["TRANSIENT", "THROTTLED"]
        code = "httpError.*"
        route = "capture"
        "#,
    );
    let f = fail("http://h/x", ErrorCategory::Permanent, Some(410), 1);
    let d = p.decide(&f);
    assert_eq!(d.route, Route::Expected("removed upstream".into()));
    assert_eq!(d.rule.as_deref(), Some("gone"));
    let f = fail("http://h/x", ErrorCategory::Permanent, Some(451), 1);
    assert_eq!(route(&p, &f), Route::Expected("removed upstream".into()));

    let f = fail(
        "http://h/classes/77.html",
        ErrorCategory::Permanent,
        Some(404),
        1,
    );
    assert_eq!(
        route(&p, &f),
        Route::Resolve(vec![
            Strategy::CrossLocator,
            Strategy::Canonical,
            Strategy::Search
        ])
    );
    let f = fail(
        "http://h/items/77.html",
        ErrorCategory::Permanent,
        Some(404),
        1,
    );
    assert_eq!(route(&p, &f), Route::Capture, "no rule: default");

    let f = |a| fail("http://flaky.h/a", ErrorCategory::Permanent, Some(404), a);
    assert_eq!(
        route(&p, &f(1)),
        Route::Retry,
        "a rule may retry a permanent failure"
    );
    assert_eq!(
        route(&p, &f(2)),
        Route::Capture,
        "within the rule's own budget"
    );

    let d = p.decide(&fail("http://h/a", ErrorCategory::Transient, Some(503), 1));
    assert_eq!(
        (d.route, d.rule.as_deref()),
        (Route::Capture, Some("rules[3]"))
    );
    let f = fail("http://h/a", ErrorCategory::Network, None, 1);
    assert_eq!(
        route(&p, &f),
        Route::Retry,
        "the code matcher needs httpError.*"
    );
}

#[test]
fn status_matchers_never_match_a_failure_without_status() {
    let p = policy("[[rules]]\nstatus = \"5xx\"\nroute = \"capture\"\n");
    assert_eq!(
        route(
            &p,
            &fail("http://h/a", ErrorCategory::Transient, Some(599), 1)
        ),
        Route::Capture
    );
    assert_eq!(
        route(
            &p,
            &fail("http://h/a", ErrorCategory::Transient, Some(600), 1)
        ),
        Route::Retry
    );
    assert_eq!(
        route(&p, &fail("http://h/a", ErrorCategory::Timeout, None, 1)),
        Route::Retry
    );
}

#[test]
fn phase_and_retryable_matchers() {
    let p = policy(
        "[[rules]]\nphase = \"parse\"\nretryable = false\nroute = \"expected\"\nreason = \"no rule for it\"\n",
    );
    let mut f = fail("http://h/a", ErrorCategory::Validation, None, 1);
    assert_eq!(route(&p, &f), Route::Capture, "fetch phase: default");
    f.phase = Phase::Parse;
    assert_eq!(route(&p, &f), Route::Expected("no rule for it".into()));
    f.retryable = true;
    assert_eq!(route(&p, &f), Route::Retry);
}

#[test]
fn resolve_needs_a_round_left_and_never_resolves_a_candidate() {
    let p = policy(
        "maxRetries = 1\n[[rules]]\nstatus = 404\nroute = \"resolve\"\nstrategies = [\"canonical\"]\n",
    );
    let f = fail("http://h/a", ErrorCategory::Permanent, Some(404), 1);
    assert_eq!(route(&p, &f), Route::Resolve(vec![Strategy::Canonical]));
    let f = fail("http://h/a", ErrorCategory::Permanent, Some(404), 2);
    assert_eq!(route(&p, &f), Route::Capture, "no fetch round follows");
    let mut f = fail("http://h/b", ErrorCategory::Permanent, Some(404), 1);
    f.context.resolves = Some("http://h/a".into());
    assert_eq!(route(&p, &f), Route::Capture);
}

#[test]
fn bad_policies_are_refused_with_the_field_and_a_hint() {
    let e = policy_err("[[rules]]\nroute = \"expected\"\n");
    assert!(
        e.starts_with("p.toml: rules[0].reason: an `expected` route needs a reason"),
        "{e}"
    );
    let e =
        policy_err("[[rules]]\nroute = \"capture\"\n[[rules]]\nurl = \"(\"\nroute = \"capture\"\n");
    assert!(
        e.starts_with("p.toml: rules[1].url: not a valid regex"),
        "{e}"
    );
    let e = policy_err("[[rules]]\nstatus = \"4x\"\nroute = \"capture\"\n");
    assert!(e.contains("rules[0].status: `4x` is not a status"), "{e}");
    let e = policy_err("[[rules]]\nstatus = \"599-500\"\nroute = \"capture\"\n");
    assert!(e.contains("rules[0].status"), "{e}");
    let e = policy_err("[[rules]]\nroute = \"capture\"\nreason = \"x\"\n");
    assert!(
        e.contains("rules[0].reason: only an `expected` route"),
        "{e}"
    );
    let e = policy_err("maxRetryAfter = \"soon\"\n");
    assert!(e.starts_with("p.toml: maxRetryAfter:"), "{e}");
}

#[test]
fn a_bad_field_is_a_typed_error_naming_the_field_and_the_value() {
    let spec: PolicySpec =
        toml::from_str("[[rules]]\nstatus = [404, \"6xx0\"]\nroute = \"capture\"\n").unwrap();
    let err = Policy::from_spec(spec, Path::new("p.toml")).unwrap_err();
    let PolicyError::Invalid { path, field } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(path, Path::new("p.toml"));
    assert_eq!(field.field, "rules[0].status");
    assert!(
        matches!(&field.problem, FieldProblem::Status(s) if s == "6xx0"),
        "{field:?}"
    );
    assert_eq!(
        err.to_string(),
        "p.toml: rules[0].status: `6xx0` is not a status (hint: 404, \"4xx\" or \"500-599\", within 100-999)"
    );
}

#[test]
fn policy_files_name_the_file_and_line_of_a_syntax_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, "maxRetries = 1\n[[rules]]\nroute = \"retri\"\n").unwrap();
    let e = Policy::from_file(&path).unwrap_err().to_string();
    assert!(
        e.contains("policy.toml") && e.contains("line 3") && e.contains("retri"),
        "{e}"
    );
    std::fs::write(&path, "[[rules]]\nroute = \"capture\"\nstatuss = 404\n").unwrap();
    let e = Policy::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("statuss"), "unknown fields are errors: {e}");

    let json = dir.path().join("policy.json");
    std::fs::write(
        &json,
        r#"{"maxRetries": 3, "rules": [{"status": 410, "route": "expected", "reason": "gone"}]}"#,
    )
    .unwrap();
    let p = Policy::from_file(&json).unwrap();
    assert_eq!(p.max_retries, 3);
    let e = Policy::from_file(&dir.path().join("missing.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read policy") && e.contains("missing.toml"),
        "{e}"
    );
}
