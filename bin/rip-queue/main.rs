//! `rip-queue`: see the `rip_queue` library. This file is glue: arguments → options → run.

use rip_bin::queue as args;

use args::{Cli, Command, WorkArgs};
use rip_core::Status;
use rip_queue::pull::Until;
use rip_queue::work::{WorkOptions, Worked};
use rip_queue::{Broker, Published};
use std::io::BufReader;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli: Cli = rip_cli::parse();
    rip_cli::init_logging(cli.verbose, cli.quiet);
    // Started by `ripperoni worker`: this process and its programs die with it.
    if let Err(e) = rip_cli::die_with_wrapper() {
        return rip_cli::exit_with_error("rip-queue", &e);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return rip_cli::exit_with_error("rip-queue", &e.into()),
    };
    let outcome = runtime.block_on(run(cli));
    // Not waited for: a read of stdin still blocked (a relay's input, its source still
    // writing) would keep a relay whose broker is gone running until its input ends.
    runtime.shutdown_background();
    rip_cli::exit_with("rip-queue", outcome)
}

async fn run(mut cli: Cli) -> anyhow::Result<Status> {
    if let Command::Relay { file, old_file, .. } = &mut cli.command {
        let renamed = rip_cli::Renamed::new("rip-queue", "--file", "--input");
        *file = renamed.take(file.take(), old_file.take(), cli.quiet);
    }
    let options = cli.broker.options(!cli.quiet);
    let broker = Broker::connect(&options).await?;
    let quiet = cli.quiet;
    match cli.command {
        Command::Push {
            stream,
            urls,
            input,
            partitions,
        } => {
            let (input, name) = rip_cli::urls::open_input(&urls, input.as_deref())?;
            let input = BufReader::new(input);
            let pushed = rip_queue::push::push(&broker, &stream, partitions, input, name).await?;
            say(
                quiet,
                &format!(
                    "{} records to {stream}: {}",
                    pushed.read,
                    published(&pushed.published)
                ),
            );
            let bad = pushed.bad_lines > 0;
            Ok(if bad {
                Status::Partial
            } else {
                Status::Complete
            })
        }
        Command::Pull {
            stream,
            follow,
            after,
        } => {
            let until = match after {
                Some(after) => {
                    let (input, group) = after.split_once('/').unwrap_or((&after, &stream));
                    Until::Done {
                        input: input.to_owned(),
                        group: group.to_owned(),
                    }
                }
                None if follow => Until::Forever,
                None => Until::End,
            };
            let mut out = std::io::BufWriter::new(rip_cli::stdout());
            let n = rip_queue::pull::pull(&broker, &stream, until, &mut out).await?;
            say(quiet, &format!("{n} records from {stream}"));
            Ok(Status::Complete)
        }
        Command::Relay {
            input,
            output,
            file,
            partitions,
            group,
            ..
        } => {
            let route = rip_queue::relay::Route {
                group: group.unwrap_or_else(|| output.clone()),
                input,
                output,
                partitions,
            };
            relay(&broker, &route, file.as_deref(), quiet).await
        }
        Command::Work(args) => work(&broker, args, quiet).await,
    }
}

/// `relay`: stdin's records to the workers, what they made of them to stdout.
async fn relay(
    broker: &Broker,
    route: &rip_queue::relay::Route,
    file: Option<&std::path::Path>,
    quiet: bool,
) -> anyhow::Result<Status> {
    let (reader, name) = rip_cli::open_input(file)?;
    let mut out = std::io::BufWriter::new(rip_cli::stdout());
    let relayed =
        rip_queue::relay::relay(broker, route, BufReader::new(reader), name, &mut out).await?;
    say(
        quiet,
        &format!(
            "run {}: {} records to {}, {} records from {}",
            relayed.run, relayed.pushed.read, route.input, relayed.written, route.output
        ),
    );
    Ok(if relayed.pushed.bad_lines > 0 {
        Status::Partial
    } else {
        Status::Complete
    })
}

async fn work(broker: &Broker, args: WorkArgs, quiet: bool) -> anyhow::Result<Status> {
    let stop = rip_cli::install_interrupt()?;
    let _metrics = args.metrics.start("rip-queue", quiet)?;
    let options = WorkOptions {
        group: args.group.unwrap_or_else(|| args.output.clone()),
        input: args.input,
        output: args.output,
        partitions: args.partitions,
        batch: usize::from(args.batch),
        parallel: usize::from(args.parallel),
        linger: args.linger,
        ack_wait: args.ack_wait,
        max_deliver: i64::from(args.max_deliver),
        idle_exit: args.idle_exit,
        handover_wait: args.handover_wait,
        command: args.command,
    };
    let worked = rip_queue::work::work(broker, options, stop.clone()).await?;
    say(quiet, &worked_line(&worked));
    Ok(if stop.load(std::sync::atomic::Ordering::Relaxed) {
        Status::Interrupted
    } else if worked.given_up > 0 {
        Status::Partial
    } else {
        Status::Complete
    })
}

fn published(p: &Published) -> String {
    let mut text = format!("{} stored, {} already there", p.stored, p.duplicates);
    if p.chunked > 0 {
        text += &format!(
            " ({} over the broker's largest message, in chunks)",
            p.chunked
        );
    }
    text
}

fn worked_line(w: &Worked) -> String {
    format!(
        "{} records in {} runs ({} delivered again, {} handed back, {} given up as failures, \
         {} runs failed); output: {}",
        w.records,
        w.batches,
        w.redelivered,
        w.handed_back,
        w.given_up,
        w.failed_runs,
        published(&w.published)
    )
}

fn say(quiet: bool, line: &str) {
    if !quiet {
        rip_core::stderr::say(format_args!("rip-queue: {line}"));
    }
}
