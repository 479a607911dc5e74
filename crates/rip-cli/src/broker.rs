//! The flags that say where the broker is (`rip-queue`, `rip-discover --broker`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use rip_queue::BrokerOptions;

/// Where the broker is.
#[derive(Debug, Clone, Args)]
pub struct BrokerArgs {
    /// The broker's URL (`nats://host:4222`, `tls://…`, several separated by commas). A user
    /// and password in it (`nats://user:password@host:4222`, percent-escaped) or a token
    /// (`nats://token@host:4222`) are used and never printed.
    #[arg(
        long,
        value_name = "URL",
        env = "RIP_BROKER",
        hide_env_values = true,
        global = true,
        default_value = "nats://127.0.0.1:4222"
    )]
    pub broker: String,

    /// A file whose first line is `user:password` or a token, to keep them off the command
    /// line.
    #[arg(long, value_name = "FILE", env = "RIP_BROKER_CREDS", global = true)]
    pub creds: Option<PathBuf>,

    /// The prefix of the streams' names, so that several crawls can share one broker.
    #[arg(long, value_name = "NAME", default_value = "rip", global = true)]
    pub prefix: String,

    /// How long a broker that went away (a restart) is waited for before giving up with
    /// exit 1.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration, global = true)]
    pub patience: Duration,

    /// How long a record's identity is remembered, so that publishing it again stores it once.
    #[arg(long, value_name = "DURATION", default_value = "20m", value_parser = humantime::parse_duration, global = true)]
    pub dedupe_window: Duration,

    /// How many of the broker's servers keep each stream this run creates (1 to 5). By
    /// default it follows the broker: 3 on a JetStream cluster of three servers or more, as
    /// many as the cluster has when fewer, 1 for a single server. Streams that exist keep
    /// theirs.
    #[arg(long, value_name = "N", env = "RIP_BROKER_REPLICAS", global = true, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub replicas: Option<u8>,
}

impl BrokerArgs {
    /// The broker options these flags give (`say_waits`: say on stderr when the broker is
    /// waited for).
    pub fn options(&self, say_waits: bool) -> BrokerOptions {
        let mut options = BrokerOptions::new(self.broker.clone());
        options.creds = self.creds.clone();
        options.prefix = self.prefix.clone();
        options.patience = self.patience;
        options.dedupe_window = self.dedupe_window;
        options.say_waits = say_waits;
        options.replicas = self.replicas.map(usize::from);
        options
    }
}
