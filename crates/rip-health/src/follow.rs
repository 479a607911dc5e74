//! `rip-health --follow`: the report kept up to date while a run goes on.
//!
//! The stream is read on a thread of its own and handed over line by line, so that the
//! report is made again every few seconds whether records arrive or not: from stdin (a
//! pipeline's end, `… | rip-health --follow --html report.html`) or from a file still
//! being written ([`Growing`]: at its end, it waits for more). Each time, `tick` gets the
//! [`Tally`] so far ([`crate::snapshot`] makes a report of it without taking it apart).
//! When the stream ends, the caller makes the final report from the whole tally with
//! [`crate::build`], as `rip-health` without `--follow` does: the same report.
//!
//! A report takes time in proportion to the URLs (the ledger is checked URL by URL), so
//! the next one comes after `every`, or ten times what the last one took when that is
//! longer: a report never takes more than a tenth of the time.

use crate::{Error, Tally};
use rip_core::{Line, NdjsonReader, ReadError};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

/// A file still being written: read to its end, then again each `poll` as it grows, until
/// it has not grown for `idle`, or `stop` is set (Ctrl-C).
pub struct Growing {
    file: File,
    idle: Duration,
    poll: Duration,
    stop: Arc<AtomicBool>,
    quiet_since: Option<Instant>,
}

impl Growing {
    /// Opens `path` to follow it.
    pub fn open(path: &Path, idle: Duration, stop: Arc<AtomicBool>) -> io::Result<Self> {
        Ok(Self {
            file: File::open(path)?,
            idle,
            poll: Duration::from_millis(200),
            stop,
            quiet_since: None,
        })
    }
}

impl Read for Growing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.file.read(buf)?;
            if n > 0 || buf.is_empty() {
                self.quiet_since = None;
                return Ok(n);
            }
            let since = *self.quiet_since.get_or_insert_with(Instant::now);
            if self.stop.load(Ordering::Relaxed) || since.elapsed() >= self.idle {
                return Ok(0);
            }
            std::thread::sleep(self.poll);
        }
    }
}

/// Reads `input` into `tally` as [`crate::tally_stream`] does, calling `tick` at the start
/// and then every `every` (or ten times what the last `tick` took) until the input ends.
pub fn follow<R: Read + Send + 'static>(
    input: R,
    name: &str,
    tally: &mut Tally,
    strict: bool,
    every: Duration,
    mut tick: impl FnMut(&mut Tally) -> Result<(), Error>,
) -> Result<(), Error> {
    let (tx, rx) = sync_channel::<Result<Line, ReadError>>(4096);
    let reader = NdjsonReader::new(BufReader::with_capacity(256 * 1024, input), name);
    let name = reader.name().clone();
    let thread = std::thread::Builder::new()
        .name("rip-health-read".into())
        .spawn(move || {
            for item in reader {
                if tx.send(item).is_err() {
                    return;
                }
            }
        })
        .map_err(|source| {
            Error::Read(ReadError::Io {
                input: name.clone(),
                source,
            })
        })?;
    let mut next = Instant::now();
    loop {
        if Instant::now() >= next {
            let started = Instant::now();
            tick(tally)?;
            next = Instant::now() + every.max(started.elapsed() * 10);
        }
        let wait = next.saturating_duration_since(Instant::now());
        let item = match rx.recv_timeout(wait) {
            Ok(item) => item,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        crate::take_item(tally, &name, item, strict, |_| true)?;
    }
    let _ = thread.join();
    Ok(())
}
