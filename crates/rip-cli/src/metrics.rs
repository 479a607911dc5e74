//! `--metrics ADDR`: a program's live counters on `http://ADDR/metrics`, in the
//! Prometheus text format (its OpenMetrics flavour, which Prometheus scrapes as it is).
//!
//! The numbers are the stages' own books ([`rip_core::live`]): records in and out by kind,
//! what passed through, bad lines and the summary's counters, the very numbers each
//! stage's `summary` record and stderr line end with, and the gauges a stage reads from its
//! state at scrape time (hosts waiting, the frontier, open circuit breakers, a queue's
//! pending messages), with the process's current and peak resident memory. Counters only
//! grow; rates (pages per second) are Prometheus's to compute (`rate(…[1m])`).
//!
//! Names follow Prometheus's conventions (`rip_records_in_total{stage,kind}`, `_total`
//! counters, `_bytes`), and every label has a bounded set of values: stages, record kinds,
//! error categories and the summary counters' names, never a URL or a host. The registry
//! is `prometheus-client`'s (the Prometheus project's Rust client), whose collector reads
//! the live books at each scrape; the endpoint is served with hyper ([`serve`]).

use std::collections::BTreeMap;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use rip_core::live::{self, LiveStage};

mod merge;
mod serve;
mod upstream;

pub use merge::merge;
pub use serve::{MetricsArgs, MetricsServer, Render, serve};
pub use upstream::Upstreams;

/// Summary counters with a metric of their own: (summary name, metric, help).
const NAMED_COUNTERS: &[(&str, &str, &str)] = &[
    (
        "retries",
        "rip_retries",
        "HTTP retries (attempts after the first).",
    ),
    (
        "requests",
        "rip_http_requests",
        "HTTP requests sent (hops and retries included).",
    ),
    (
        "bodyBytes",
        "rip_body_bytes",
        "Bytes of response bodies received.",
    ),
];

/// Gauges with a metric of their own: (reading name, metric, help).
const NAMED_GAUGES: &[(&str, &str, &str)] = &[
    (
        "hostsWaiting",
        "rip_hosts_waiting",
        "Hosts with URLs waiting for their turn.",
    ),
    (
        "hostsBacklog",
        "rip_hosts_backlog_urls",
        "URLs waiting on their host's politeness.",
    ),
    (
        "frontier",
        "rip_frontier_urls",
        "URLs in the crawl frontier not yet fetched.",
    ),
    (
        "breakersOpen",
        "rip_circuit_breakers_open",
        "Hosts whose circuit breaker is open.",
    ),
    (
        "queuePending",
        "rip_queue_pending_messages",
        "Records of the worker group's input not yet delivered (its lag on the broker).",
    ),
    (
        "queueAckPending",
        "rip_queue_ack_pending_messages",
        "Records of the worker group delivered and not yet acknowledged.",
    ),
];

/// The metrics of this process's stages, in the text format (see the module docs).
pub fn render(program: &str) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(LiveCollector {
        program: program.to_owned(),
    }));
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// Reads the live books of every stage of the process at each scrape.
#[derive(Debug)]
struct LiveCollector {
    program: String,
}

/// One metric family's samples: label pairs and a value.
type Samples = Vec<(Vec<(&'static str, String)>, u64)>;

impl Collector for LiveCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stages = live::stages();
        let books: Vec<_> = stages.iter().map(|s| (s, s.books())).collect();
        let by_kind = |pick: fn(&live::BooksSnapshot) -> &BTreeMap<String, u64>| -> Samples {
            let mut samples = Samples::new();
            for (stage, b) in &books {
                for (kind, n) in pick(b) {
                    samples.push((labels(stage, "kind", kind), *n));
                }
            }
            samples
        };
        let help = "Records read, by kind (upstream summaries and ledgers included).";
        counter(&mut encoder, "rip_records_in", help, by_kind(|b| &b.input))?;
        let help = "Records written, by kind (what passed through included).";
        counter(
            &mut encoder,
            "rip_records_out",
            help,
            by_kind(|b| &b.output),
        )?;
        let help = "Of the records written, those passed through unchanged, by kind.";
        let passed = by_kind(|b| &b.passed_through);
        counter(&mut encoder, "rip_records_passed_through", help, passed)?;
        let bad = books
            .iter()
            .map(|(s, b)| (vec![("stage", s.name().to_owned())], b.bad_lines))
            .collect();
        counter(
            &mut encoder,
            "rip_bad_lines",
            "Input lines that were not valid records.",
            bad,
        )?;
        encode_readings(&mut encoder, &stages)?;
        encode_hosts(&mut encoder, &stages)?;
        let finished = books
            .iter()
            .map(|(s, b)| (vec![("stage", s.name().to_owned())], u64::from(b.finished)))
            .collect();
        let help = "1 once the stage wrote its summary: the counts are its numbers.";
        gauge(&mut encoder, "rip_stage_finished", help, finished)?;
        self.encode_memory(&mut encoder)
    }
}

impl LiveCollector {
    fn encode_memory(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let program = || vec![("program", self.program.clone())];
        for (field, name, help) in [
            (
                "VmRSS",
                "rip_resident_memory_bytes",
                "The process's resident memory now.",
            ),
            (
                "VmHWM",
                "rip_resident_memory_peak_bytes",
                "The process's peak resident memory.",
            ),
        ] {
            if let Some(bytes) = live::proc_status_bytes(field) {
                gauge(encoder, name, help, vec![(program(), bytes)])?;
            }
        }
        Ok(())
    }
}

/// The counters and gauges of the stages' readers (and their summary counters).
fn encode_readings(
    encoder: &mut DescriptorEncoder,
    stages: &[std::sync::Arc<LiveStage>],
) -> Result<(), std::fmt::Error> {
    let mut failures = Samples::new();
    let mut named: BTreeMap<&str, Samples> = BTreeMap::new();
    let mut other = Samples::new();
    let mut named_gauges: BTreeMap<&str, Samples> = BTreeMap::new();
    let mut other_gauges = Samples::new();
    for stage in stages {
        let readings = stage.readings();
        for (name, n) in readings.counters {
            if let Some(category) = name.strip_prefix("failed.") {
                failures.push((labels(stage, "category", category), n));
            } else if let Some((_, metric, _)) = NAMED_COUNTERS.iter().find(|c| c.0 == name) {
                let stage = vec![("stage", stage.name().to_owned())];
                named.entry(metric).or_default().push((stage, n));
            } else {
                other.push((labels(stage, "counter", &name), n));
            }
        }
        for (name, n) in readings.gauges {
            let n = u64::try_from(n).unwrap_or(0);
            if let Some((_, metric, _)) = NAMED_GAUGES.iter().find(|g| g.0 == name) {
                let stage = vec![("stage", stage.name().to_owned())];
                named_gauges.entry(metric).or_default().push((stage, n));
            } else {
                other_gauges.push((labels(stage, "gauge", &name), n));
            }
        }
    }
    let help = "Records that failed, by error category (the summary's failed.<CATEGORY>).";
    counter(encoder, "rip_failures", help, failures)?;
    for (_, metric, help) in NAMED_COUNTERS {
        counter(
            encoder,
            metric,
            help,
            named.remove(metric).unwrap_or_default(),
        )?;
    }
    let help = "The other counters of the stage's summary, by their summary name.";
    counter(encoder, "rip_summary_counter", help, other)?;
    for (_, metric, help) in NAMED_GAUGES {
        gauge(
            encoder,
            metric,
            help,
            named_gauges.remove(metric).unwrap_or_default(),
        )?;
    }
    gauge(
        encoder,
        "rip_stage_gauge",
        "Other gauges of the stage's state.",
        other_gauges,
    )
}

/// The figures per host: the top hosts of each stage and `other` (a bounded label).
fn encode_hosts(
    encoder: &mut DescriptorEncoder,
    stages: &[std::sync::Arc<LiveStage>],
) -> Result<(), std::fmt::Error> {
    let (mut backlog, mut failures) = (Samples::new(), Samples::new());
    for stage in stages {
        let figures = stage.per_host();
        for (host, n) in figures.backlog {
            backlog.push((labels(stage, "host", &host), n));
        }
        for (host, n) in figures.failures {
            failures.push((labels(stage, "host", &host), n));
        }
    }
    let help =
        "URLs waiting for their host's turn, for the hosts with the most (the rest as other).";
    gauge(encoder, "rip_host_backlog_urls", help, backlog)?;
    let help = "Failures so far by their URL's host, for the hosts with the most (the rest as \
                other, which a host leaving it makes fall: a gauge).";
    gauge(encoder, "rip_host_failures", help, failures)
}

fn labels(stage: &LiveStage, key: &'static str, value: &str) -> Vec<(&'static str, String)> {
    vec![("stage", stage.name().to_owned()), (key, value.to_owned())]
}

/// A counter family (`<name>_total`); nothing when it has no samples.
fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: Samples,
) -> Result<(), std::fmt::Error> {
    family(encoder, name, help, MetricType::Counter, samples)
}

/// A gauge family; nothing when it has no samples.
fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: Samples,
) -> Result<(), std::fmt::Error> {
    family(encoder, name, help, MetricType::Gauge, samples)
}

fn family(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    samples: Samples,
) -> Result<(), std::fmt::Error> {
    if samples.is_empty() {
        return Ok(());
    }
    let mut metric = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in &samples {
        let sample = metric.encode_family(labels)?;
        match kind {
            MetricType::Counter => ConstCounter::new(*value).encode(sample)?,
            _ => ConstGauge::new(i64::try_from(*value).unwrap_or(i64::MAX)).encode(sample)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_books_are_rendered_with_bounded_labels() {
        live::enable();
        let stage = live::stage("rip-metrics-test");
        let mut books = live::BooksSnapshot::default();
        books.input.insert("ref".into(), 3);
        books.output.insert("page".into(), 2);
        books.output.insert("failure".into(), 1);
        stage.publish(books);
        let _reader = stage.add_reader("test", |r| {
            r.counter("retries", 4);
            r.counter("failed.TIMEOUT", 1);
            r.counter("cacheHits", 2);
            r.gauge("hostsWaiting", 1);
        });
        let text = render("rip-test");
        for line in [
            r#"rip_records_in_total{stage="rip-metrics-test",kind="ref"} 3"#,
            r#"rip_records_out_total{stage="rip-metrics-test",kind="failure"} 1"#,
            r#"rip_failures_total{stage="rip-metrics-test",category="TIMEOUT"} 1"#,
            r#"rip_retries_total{stage="rip-metrics-test"} 4"#,
            r#"rip_summary_counter_total{stage="rip-metrics-test",counter="cacheHits"} 2"#,
            r#"rip_hosts_waiting{stage="rip-metrics-test"} 1"#,
            r#"rip_stage_finished{stage="rip-metrics-test"} 0"#,
            "# TYPE rip_records_in counter",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(text.contains("rip_resident_memory_bytes{program=\"rip-test\"} "));
        let hosts = |text: &str| {
            (text.lines())
                .filter(|l| l.starts_with("rip_host_failures{stage=\"rip-metrics-test\""))
                .count()
        };
        for i in 0..(live::DEFAULT_TOP_HOSTS + 5) {
            stage.count_host_failure(&format!("host-{i}.example"));
        }
        let text = render("rip-test");
        assert_eq!(hosts(&text), live::DEFAULT_TOP_HOSTS + 1, "{text}");
        let other = "rip_host_failures{stage=\"rip-metrics-test\",host=\"other\"} 5";
        assert!(text.lines().any(|l| l == other), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
