//! Shell integration: `ripperoni completions bash|zsh|fish` and `ripperoni man`, for every
//! program but rip-testserver (a test tool). Bash is asked for the completions of partial
//! command lines the way it asks when Tab is pressed (the function `complete -p` names,
//! called with `COMP_WORDS`), fish with `complete -C`, zsh is checked to register every
//! program; every man page is rendered by `man -l` and troff with warnings on. bash, zsh,
//! fish, bash-completion, man-db and groff are installed by `scripts/setup test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::flags::{PROGRAMS, flags, help, subcommands};

const RIPPERONI: &str = env!("CARGO_BIN_EXE_ripperoni");

/// The programs with completions and man pages: all but the test server.
fn programs() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    PROGRAMS
        .iter()
        .filter(|(name, _)| *name != "rip-testserver")
}

/// A fresh folder for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("rip-shell-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `ripperoni ARGS`, which must succeed; its stdout.
fn ripperoni(args: &[&str]) -> String {
    let out = Command::new(RIPPERONI).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ripperoni {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `PATH` with `first` before the rest.
fn path_with(first: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let all = std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&rest));
    std::env::join_paths(all).unwrap()
}

/// `cmd` run, or a panic naming the tool and what installs it.
fn tool(cmd: &mut Command, what: &str) -> Output {
    cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {what} ({e}): run `scripts/setup test` to install it")
    })
}

/// Bash's answer to Tab at the end of `line`, with `script` sourced: the completion
/// function `complete -p` names for the command, called as bash calls it (`COMP_WORDS`,
/// `COMP_CWORD`, `COMP_LINE`, `COMP_POINT`; the command, the word and the word before),
/// and its `COMPREPLY`, sorted.
const ASK_BASH: &str = r#"
source "$1" || exit 3
line="$2"
read -r -a COMP_WORDS <<<"$line"
[[ "$line" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$line"
COMP_POINT=${#line}
spec=$(complete -p "${COMP_WORDS[0]}") || exit 4
func=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
prev=""
[ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"
"$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "$prev"
printf '%s\n' "${COMPREPLY[@]}" | sort
"#;

fn bash_completes(script: &Path, line: &str) -> Vec<String> {
    let out = tool(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c", ASK_BASH, "bash"])
            .arg(script)
            .arg(line),
        "bash",
    );
    assert!(
        out.status.success(),
        "bash completing {line:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn sorted(words: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    v.sort();
    v
}

#[test]
fn bash_completes_partial_command_lines_of_every_program() {
    let dir = Scratch::new("bash");
    let script = dir.0.join("ripperoni.bash");
    std::fs::write(&script, ripperoni(&["completions", "bash"])).unwrap();

    assert_eq!(
        bash_completes(&script, "rip-fetch --wa"),
        sorted(&["--warc", "--warc-compression", "--warc-max-size"])
    );
    assert_eq!(
        bash_completes(&script, "rip-queue p"),
        sorted(&["pull", "push"])
    );
    let shells = bash_completes(&script, "ripperoni completions ");
    for shell in ["bash", "fish", "zsh"] {
        assert!(shells.contains(&shell.to_owned()), "{shells:?}");
    }
    assert_eq!(
        bash_completes(&script, "rip-write --layout "),
        sorted(&["flat", "sharded"]),
        "a value from the parser's ValueEnum"
    );

    // Every program is registered, by `complete -F`; the test server is not.
    let mut check = String::from("source \"$1\" || exit 3\n");
    for (name, _) in programs() {
        check.push_str(&format!("complete -p {name} || exit 5\n"));
    }
    check.push_str("complete -p rip-testserver 2>/dev/null && exit 6\nexit 0\n");
    let out = tool(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &check, "bash"])
            .arg(&script),
        "bash",
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{listed}");
    assert_eq!(listed.lines().count(), programs().count(), "{listed}");
    assert!(
        listed.contains("-F _rip__fetch rip-fetch"),
        "complete -p rip-fetch: {listed}"
    );
}

/// The documented install for bash: one file per program where bash-completion looks them
/// up by name, loaded on first use.
#[test]
fn bash_completion_loads_each_program_from_its_own_file() {
    let dir = Scratch::new("bash-dir");
    let completions = dir.0.join("bash-completion/completions");
    let listed = ripperoni(&[
        "completions",
        "bash",
        "--dir",
        completions.to_str().unwrap(),
    ]);
    assert_eq!(listed.lines().count(), programs().count(), "{listed}");
    let loader = "/usr/share/bash-completion/bash_completion";
    assert!(
        Path::new(loader).exists(),
        "{loader} is missing: run `scripts/setup test` to install bash-completion"
    );
    let script = format!(
        "source {loader}\ncomplete -p rip-warc 2>/dev/null && exit 7\n\
         __load_completion rip-warc || exit 8\ncomplete -p rip-warc"
    );
    let out = tool(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &script])
            .env("XDG_DATA_HOME", &dir.0),
        "bash",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("-F _rip__warc rip-warc"), "{text}");
}

#[test]
fn zsh_registers_every_program() {
    let dir = Scratch::new("zsh");
    let script = dir.0.join("ripperoni.zsh");
    std::fs::write(&script, ripperoni(&["completions", "zsh"])).unwrap();
    let syntax = tool(Command::new("zsh").arg("-n").arg(&script), "zsh");
    assert!(
        syntax.status.success(),
        "zsh -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // Sourced after compinit, and autoloaded from a folder of $fpath (--dir): the same
    // function for each program either way.
    let fpath = dir.0.join("functions");
    ripperoni(&["completions", "zsh", "--dir", fpath.to_str().unwrap()]);
    let names: Vec<&str> = programs().map(|(name, _)| *name).collect();
    let compinit = "autoload -U compinit && compinit -u -D";
    for how in [
        format!("{compinit}\nsource \"$1\""),
        format!("fpath=(\"$2\" $fpath)\n{compinit}"),
    ] {
        let check = format!(
            "{how}\nfor p in {}; do print -r -- \"$p $_comps[$p]\"; done",
            names.join(" ")
        );
        let out = tool(
            Command::new("zsh")
                .args(["-f", "-c", &check, "zsh"])
                .arg(&script)
                .arg(&fpath)
                .env("HOME", &dir.0),
            "zsh",
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{how}: {text}");
        for name in &names {
            assert!(text.contains(&format!("{name} _{name}\n")), "{how}: {text}");
        }
    }
}

#[test]
fn fish_completes_partial_command_lines() {
    let dir = Scratch::new("fish");
    let script = dir.0.join("ripperoni.fish");
    std::fs::write(&script, ripperoni(&["completions", "fish"])).unwrap();
    let syntax = tool(
        Command::new("fish").arg("--no-execute").arg(&script),
        "fish",
    );
    assert!(
        syntax.status.success(),
        "fish --no-execute: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let check = "source $argv[1]; complete -C'rip-fetch --wa'; complete -C'rip-queue p'";
    let out = tool(
        Command::new("fish")
            .args(["--no-config", "-c", check])
            .arg(&script)
            .env("HOME", &dir.0)
            .env("XDG_CONFIG_HOME", &dir.0)
            .env("XDG_DATA_HOME", &dir.0),
        "fish",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let words: Vec<&str> = text.lines().filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(
        words,
        [
            "--warc",
            "--warc-compression",
            "--warc-max-size",
            "pull",
            "push"
        ],
        "{text}"
    );

    // The documented install: one file a program where fish finds it by the program's
    // name, when the program is on PATH (fish autoloads completions only then, and not
    // with --no-config; the configuration read is the empty one of this folder).
    let config = dir.0.join("config");
    let folder = config.join("fish/completions");
    ripperoni(&["completions", "fish", "--dir", folder.to_str().unwrap()]);
    let path = path_with(Path::new(RIPPERONI).parent().unwrap());
    let out = tool(
        Command::new("fish")
            .args(["-c", "complete -C'rip-warc i'"])
            .env("PATH", path)
            .env("HOME", &dir.0)
            .env("XDG_CONFIG_HOME", &config)
            .env("XDG_DATA_HOME", &dir.0),
        "fish",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("index\t"), "{text}");
}

/// `man -l PAGE` in `locale`: its text, and its stderr (troff's warnings).
fn man(page: &Path, locale: &str) -> (String, String) {
    let out = tool(
        Command::new("man")
            .args(["--warnings=w", "-l"])
            .arg(page)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("LC_ALL", locale),
        "man",
    );
    assert!(out.status.success(), "man -l {}", page.display());
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn man_pages_for_every_program_and_subcommand_render_without_warnings() {
    let home = Scratch::new("man");
    // The documented install: `man` finds ~/.local/share/man when ~/.local/bin is on PATH.
    let dir = Scratch(home.0.join(".local/share/man/man1"));
    let listed = ripperoni(&["man", dir.0.to_str().unwrap()]);
    let mut expected = Vec::new();
    for (name, path) in programs() {
        expected.push(format!("{name}.1"));
        for sub in subcommands(&help(path, &["--help"])) {
            expected.push(format!("{name}-{sub}.1"));
        }
    }
    let mut written: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    expected.sort();
    assert_eq!(written, expected);
    assert_eq!(listed.lines().count(), expected.len(), "{listed}");

    for page in &written {
        let path = dir.0.join(page);
        let troff = tool(
            Command::new("groff").args(["-ww", "-man", "-z"]).arg(&path),
            "groff",
        );
        let warned = String::from_utf8_lossy(&troff.stderr);
        assert!(warned.is_empty(), "groff -ww -man {page}: {warned}");
        for locale in ["C", "C.UTF-8"] {
            let (_, warned) = man(&path, locale);
            assert!(
                warned.is_empty(),
                "man --warnings -l {page} ({locale}): {warned}"
            );
        }
    }
    let bin = home.0.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = path_with(&bin);
    let found = tool(
        Command::new("man")
            .args(["-w", "rip-queue-push"])
            .env("HOME", &home.0)
            .env("PATH", path)
            .env_remove("MANPATH"),
        "man",
    );
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).trim(),
        dir.0.join("rip-queue-push.1").to_str().unwrap()
    );

    // Each page has every long flag its program's --help lists: the same definitions.
    for (name, path) in programs() {
        let (text, _) = man(&dir.0.join(format!("{name}.1")), "C");
        for flag in flags(name, &help(path, &["--help"])) {
            let Some(long) = flag.long else { continue };
            assert!(text.contains(&long), "{name}.1 lacks {long}");
        }
    }
}
