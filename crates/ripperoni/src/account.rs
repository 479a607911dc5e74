//! After the pipeline: `rip-reconcile --dir` and `rip-health --dir --html` on the output
//! folder, and the run's account read back from `crawl-health.json` (Ladon's counters,
//! the totals, the books' problems, the URLs missing).

use crate::plan::Plan;
use anyhow::Context as _;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What rip-health said.
pub struct Health {
    /// Its stderr: the one-screen summary.
    pub text: String,
    /// Its exit code (0 healthy, 2 not).
    pub exit: Option<i32>,
}

/// Runs the plan's finishing stages one after the other; their failures go to `errors`.
pub fn finish(
    plan: &Plan,
    bins: &dyn Fn(&str) -> PathBuf,
    errors: &mut Vec<String>,
) -> anyhow::Result<Health> {
    let mut health = Health {
        text: String::new(),
        exit: None,
    };
    for stage in &plan.finish {
        let out = Command::new(bins(&stage.program))
            .args(&stage.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("cannot run {}", stage.program))?;
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        if stage.program == "rip-health" {
            if !matches!(out.status.code(), Some(0 | 2)) {
                errors.push(format!("rip-health failed: {}", text.trim()));
            }
            health = Health {
                text,
                exit: out.status.code(),
            };
        } else if !out.status.success() {
            errors.push(format!(
                "{} exited {}: {}",
                stage.program,
                out.status.code().unwrap_or(-1),
                text.trim()
            ));
        }
    }
    Ok(health)
}

/// With `render: "auto"`: adds to `counters`, as `renderAuto.<name>`, what the stages'
/// summaries in the output stream say of it: the pages rip-fetch fetched (`fetched`),
/// those the rip-renders rendered (`rendered`), and the rip-routes' judging (`autoChecked`,
/// `autoLearnt`, `patternsLearnt`), summed over the rounds (a page kept from the browser
/// passes through the later rounds' rip-route, and is judged again there). Only summary
/// lines are decoded.
pub fn render_auto(stream: &Path, counters: &mut BTreeMap<String, u64>) {
    use std::io::BufRead as _;
    let Ok(file) = std::fs::File::open(stream) else {
        return;
    };
    let wanted: [(&str, &str, &str); 5] = [
        ("rip-fetch", "page", "fetched"),
        ("rip-render", "rendered", "rendered"),
        ("rip-route", "autoChecked", "autoChecked"),
        ("rip-route", "autoLearnt", "autoLearnt"),
        ("rip-route", "patternsLearnt", "patternsLearnt"),
    ];
    for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
        if !line.starts_with(r#"{"_type":"summary""#) {
            continue;
        }
        let Ok(s) = serde_json::from_str::<rip_core::Summary>(&line) else {
            continue;
        };
        for (stage, counter, name) in wanted {
            if s.stage != stage {
                continue;
            }
            let n = match counter {
                "page" => s.made("page"),
                c => s.counters.get(c).copied().unwrap_or(0),
            };
            *counters.entry(format!("renderAuto.{name}")).or_default() += n;
        }
    }
}

/// Adds crawl-health's `counters` and `totals` (as `totals.<name>`) to `counters`, and its
/// ledger problems and missing URLs to `errors`.
pub fn from_report(path: &Path, counters: &mut BTreeMap<String, u64>, errors: &mut Vec<String>) {
    let Some(h) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        errors.push(format!("no health report at {}", path.display()));
        return;
    };
    let numbers = |v: Option<&Value>| {
        v.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_u64().map(|n| (k.clone(), n)))
            .collect::<Vec<_>>()
    };
    counters.extend(numbers(h.get("counters")));
    counters.extend(
        numbers(h.get("totals"))
            .into_iter()
            .map(|(k, n)| (format!("totals.{k}"), n)),
    );
    let list = |p: &str| {
        h.pointer(p)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    errors.extend(
        list("/ledger/problems")
            .iter()
            .filter_map(|p| p.as_str().map(str::to_owned)),
    );
    errors.extend(
        list("/missing")
            .iter()
            .filter_map(|m| m.get("url")?.as_str().map(|u| format!("missing: {u}"))),
    );
}
