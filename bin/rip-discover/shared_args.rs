//! The shared crawl's flags (see the `rip_discover` crate documentation, *Shared crawl*).

use std::time::Duration;

use clap::Args;

/// A crawl shared by processes on several machines through a NATS JetStream broker.
#[derive(Debug, Args)]
pub struct SharedArgs {
    /// Share this crawl with every process given the same name (and the same start URLs
    /// and scope) on the broker of --broker: hosts are spread over the processes, each URL
    /// is fetched by one of them, and a process that dies leaves its URLs to the others.
    /// Running it again under the same name continues the crawl.
    #[arg(help_heading = "Shared crawl", long, value_name = "NAME", conflicts_with_all = ["state", "sorted"])]
    pub crawl: Option<String>,
    /// Partitions of the shared frontier (hosts are spread over them; fixed when the crawl
    /// is created).
    #[arg(help_heading = "Shared crawl", long, value_name = "N", default_value_t = 16, requires = "crawl", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub partitions: u32,
    /// How long the URLs a dead process had taken wait before another process gets them
    /// (the one that takes its hosts over works on later URLs meanwhile). Fixed when the
    /// crawl is created: a later process asking another is told the one in force.
    #[arg(help_heading = "Shared crawl", long, value_name = "DURATION", default_value = "3s", value_parser = ack_wait, requires = "crawl")]
    pub ack_wait: Duration,
    /// How long a process waits after taking hosts over before fetching from them: at
    /// least the per-host gap (or Crawl-delay).
    #[arg(help_heading = "Shared crawl", long, value_name = "DURATION", default_value = "2s", value_parser = humantime::parse_duration, requires = "crawl")]
    pub handover_wait: Duration,
    #[command(flatten, next_help_heading = "Shared crawl")]
    pub broker: rip_cli::broker::BrokerArgs,
}

impl SharedArgs {
    /// The library's configuration, when --crawl is given.
    pub fn config(&self, quiet: bool) -> Option<rip_discover::SharedConfig> {
        Some(rip_discover::SharedConfig {
            broker: self.broker.options(!quiet),
            crawl: self.crawl.clone()?,
            partitions: self.partitions,
            ack_wait: self.ack_wait,
            handover_wait: self.handover_wait,
        })
    }
}

/// `--ack-wait`: a duration of more than 0.
fn ack_wait(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("must be more than 0".to_owned());
    }
    Ok(d)
}
