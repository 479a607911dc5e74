//! Running one stage binary the way a pipeline does: arguments, a stdin fed while the
//! stage runs, and its stdout read back as records with rip-core's types.
//!
//! ```no_run
//! let r = rip_testkit::Stage::new("rip-route")
//!     .args(["--final"])
//!     .stdin("{\"_type\":\"ref\",\"url\":\"http://h/a\"}\n")
//!     .run();
//! assert_eq!(r.code, 0, "{}", r.stderr);
//! assert_eq!(r.summary().stage, "rip-route");
//! assert_eq!(r.records().len(), 1);
//! ```

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use rip_core::{Kind, Line, Record, Summary};

/// One run of a workspace binary to set up: its arguments, environment, working folder
/// and stdin. [`Stage::run`] runs it to the end; [`Stage::command`] hands over the
/// command for tests that drive the process themselves (signals, kills, open stdin).
#[derive(Debug, Clone)]
pub struct Stage {
    program: String,
    prefix: Vec<OsString>,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    input: Option<Vec<u8>>,
}

impl Stage {
    /// The workspace binary `program` (found with [`crate::bin`]), no arguments, stdin
    /// closed at once.
    pub fn new(program: &str) -> Self {
        Self {
            program: program.to_owned(),
            prefix: Vec::new(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
            input: None,
        }
    }

    /// Runs the binary through a wrapper: `prefix[0] prefix[1..] <binary> <args>` (e.g.
    /// `unshare --user`). An empty prefix runs the binary itself.
    pub fn wrapped_in<S: AsRef<OsStr>>(mut self, prefix: impl IntoIterator<Item = S>) -> Self {
        self.prefix = prefix.into_iter().map(|s| s.as_ref().to_owned()).collect();
        self
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// More arguments.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args
            .extend(args.into_iter().map(|s| s.as_ref().to_owned()));
        self
    }

    /// An environment variable of the process.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The process's working folder (what a stage leaves there, e.g. `.rip-cache`,
    /// stays out of the checkout).
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// What the stage reads on stdin: written by a thread of its own while the stage runs
    /// (so a stage that writes as it reads never blocks the test), then closed. A stage
    /// that exits before reading it all is no error.
    pub fn stdin(mut self, input: impl AsRef<[u8]>) -> Self {
        self.input = Some(input.as_ref().to_vec());
        self
    }

    /// [`Stage::stdin`] when `input` is given; else stdin stays closed.
    pub fn maybe_stdin(self, input: Option<impl AsRef<[u8]>>) -> Self {
        match input {
            Some(input) => self.stdin(input),
            None => self,
        }
    }

    /// The command as [`Stage::run`] starts it: stdout and stderr piped, stdin piped when
    /// [`Stage::stdin`] was given (the caller writes it), else closed.
    pub fn command(&self) -> Command {
        let binary = crate::bin(&self.program);
        let mut cmd = match self.prefix.split_first() {
            Some((wrapper, rest)) => {
                let mut c = Command::new(wrapper);
                c.args(rest).arg(binary);
                c
            }
            None => Command::new(binary),
        };
        cmd.args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(if self.input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        cmd
    }

    /// Starts the stage with its stdin being written (see [`Stage::stdin`]); the caller
    /// waits for it, e.g. with [`Ran::wait`].
    pub fn spawn(&self) -> Child {
        let mut child = self
            .command()
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", self.program));
        if let (Some(input), Some(mut pipe)) = (self.input.clone(), child.stdin.take()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        child
    }

    /// Runs the stage to the end and returns what it did.
    pub fn run(&self) -> Ran {
        Ran::wait(&self.program, self.spawn())
    }
}

/// What a stage did: its exit code and output, the output readable as records.
#[derive(Debug)]
pub struct Ran {
    /// The program's name, for messages.
    pub program: String,
    /// The exit code; -1 when a signal ended the process.
    pub code: i32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    stream: OnceLock<Stream>,
    records: OnceLock<Vec<Record>>,
}

/// Stdout as a stage's stream: the lines before the closing summary, and the summary.
#[derive(Debug)]
struct Stream {
    lines: Vec<String>,
    summary: Summary,
}

impl Ran {
    /// Waits for `child` (a run of `program`) to end and collects its output. Panics when
    /// the output is not UTF-8: every stage writes UTF-8.
    pub fn wait(program: &str, child: Child) -> Self {
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("waiting for {program}: {e}"));
        Self::from_output(program, out)
    }

    /// The output of a finished run of `program`.
    pub fn from_output(program: &str, out: Output) -> Self {
        let text = |bytes: Vec<u8>, which: &str| {
            String::from_utf8(bytes)
                .unwrap_or_else(|e| panic!("{program}: its {which} is not UTF-8: {e}"))
        };
        let stderr = text(out.stderr, "stderr");
        Self {
            program: program.to_owned(),
            code: out.status.code().unwrap_or(-1),
            stdout: text(out.stdout, "stdout"),
            stderr,
            stream: OnceLock::new(),
            records: OnceLock::new(),
        }
    }

    fn stream(&self) -> &Stream {
        self.stream.get_or_init(|| self.split())
    }

    /// Splits stdout into its record lines and the closing summary; panics, with stderr,
    /// when the last line is not a summary.
    fn split(&self) -> Stream {
        let program = &self.program;
        let mut lines: Vec<String> = self.stdout.lines().map(str::to_owned).collect();
        let Some(last) = lines.pop() else {
            panic!("{program}: no output; stderr: {}", self.stderr)
        };
        let summary = match Line::from_text(last.as_str()).map(|l| l.decode()) {
            Ok(Ok(Record::Summary(s))) => s,
            _ => panic!(
                "{program}: the last line is not a summary: {last}\nstderr: {}",
                self.stderr
            ),
        };
        Stream { lines, summary }
    }

    /// The stdout lines before the closing summary, as written (unknown kinds included).
    pub fn lines(&self) -> &[String] {
        &self.stream().lines
    }

    /// The records before the closing summary, of the kinds rip-core knows (unknown kinds
    /// pass through and are compared as [`Ran::lines`]). Panics naming the line when one
    /// is not a record, or a known kind does not decode (a test of a stage passing on a
    /// broken record reads its [`Ran::lines`]).
    pub fn records(&self) -> &[Record] {
        self.records.get_or_init(|| {
            let program = &self.program;
            self.lines()
                .iter()
                .enumerate()
                .filter_map(|(i, text)| {
                    let line = Line::from_text(text.as_str()).unwrap_or_else(|e| {
                        panic!(
                            "{program}: output line {} is not a record: {e}: {text}",
                            i + 1
                        )
                    });
                    if matches!(line.kind(), Kind::Other(_)) {
                        return None;
                    }
                    Some(line.decode().unwrap_or_else(|e| {
                        panic!("{program}: output line {}: {e}: {text}", i + 1)
                    }))
                })
                .collect()
        })
    }

    /// The records of one kind, e.g. `of("doc")`.
    pub fn of(&self, kind: &str) -> Vec<&Record> {
        self.records()
            .iter()
            .filter(|r| r.kind().as_str() == kind)
            .collect()
    }

    /// The stage's closing `summary` record (stdout's last line).
    pub fn summary(&self) -> &Summary {
        &self.stream().summary
    }

    /// A counter of the summary (0 when absent).
    pub fn counter(&self, name: &str) -> u64 {
        self.summary().counters.get(name).copied().unwrap_or(0)
    }

    /// The lines before the closing summary as JSON values.
    pub fn values(&self) -> Vec<serde_json::Value> {
        self.lines()
            .iter()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: output line {l}: {e}", self.program))
            })
            .collect()
    }
}

/// One NDJSON line decoded as a rip-core record; panics naming the line when it is not one.
pub fn record(line: &str) -> Record {
    Line::from_text(line)
        .unwrap_or_else(|e| panic!("{e}: {line}"))
        .decode()
        .unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// A stage's whole output read back (e.g. from a file it wrote): every line a record of a
/// kind rip-core knows, the last one the closing summary. Panics naming what is not.
pub fn stream(text: &str) -> (Vec<Record>, Summary) {
    let mut records: Vec<Record> = text.lines().map(record).collect();
    match records.pop() {
        Some(Record::Summary(s)) => (records, s),
        other => panic!("the last line is not a summary: {other:?}\n{text}"),
    }
}

/// Sends SIGINT to a running process, as Ctrl-C in its terminal would (`kill -INT`).
pub fn interrupt(child: &Child) {
    let pid = child.id().to_string();
    let status = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("`kill` runs");
    assert!(status.success(), "kill -INT {pid}: {status}");
}
