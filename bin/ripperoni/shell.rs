//! `ripperoni completions` and `ripperoni man`: shell completions (clap_complete) and man
//! pages (clap_mangen) for every program, made from the clap definitions their `--help`
//! shows ([`rip_bin::commands`]), so that they cannot drift from the programs.

use anyhow::Context as _;
use clap_complete::Shell;
use rip_bin::ripperoni::CompletionShell;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The completion script of `cmd` (named as its program) for `shell`.
fn script(shell: Shell, mut cmd: clap::Command) -> Vec<u8> {
    let name = cmd.get_name().to_owned();
    let mut buf = Vec::new();
    // Into memory: clap_complete panics on a failed write (a closed stdout, a full disk).
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    buf
}

/// The file name under which `shell` finds a program's completions by the program's name.
fn file_name(shell: CompletionShell, program: &str) -> String {
    match shell {
        CompletionShell::Bash => program.to_owned(),
        CompletionShell::Zsh => format!("_{program}"),
        CompletionShell::Fish => format!("{program}.fish"),
    }
}

/// `ripperoni completions SHELL [--dir DIR]`: every program's script, to `out` as one
/// script, or one file per program in `dir` (their paths to `out`, one a line).
pub fn completions(
    shell: CompletionShell,
    dir: Option<&Path>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let generator = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    if let Some(dir) = dir {
        create_dir(dir)?;
    }
    for cmd in rip_bin::commands() {
        let name = cmd.get_name().to_owned();
        let text = script(generator, cmd);
        match dir {
            None => out.write_all(&text)?,
            Some(dir) => {
                let path = dir.join(file_name(shell, &name));
                write_file(&path, &text)?;
                writeln!(out, "{}", path.display())?;
            }
        }
    }
    Ok(())
}

/// `ripperoni man DIR`: a page per program and per subcommand (`rip-queue-push.1`), their
/// paths to `out`, one a line.
pub fn man(dir: &Path, out: &mut impl Write) -> anyhow::Result<()> {
    create_dir(dir)?;
    for cmd in rip_bin::commands() {
        let mut cmd = cmd.disable_help_subcommand(true);
        // Built, each subcommand is named as its page (`rip-queue push` → `rip-queue-push`).
        cmd.build();
        for path in pages(&cmd, dir)? {
            writeln!(out, "{}", path.display())?;
        }
    }
    Ok(())
}

/// The pages of a built `cmd` and of its subcommands, written to `dir`.
fn pages(cmd: &clap::Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let page = clap_mangen::Man::new(cmd.clone()).manual("ripperoni");
    let path = dir.join(page.get_filename());
    let mut text = Vec::new();
    page.render(&mut text)?;
    let text = String::from_utf8(text).context("a man page that is not UTF-8")?;
    write_file(&path, ascii_roff(&text).as_bytes())?;
    let mut written = vec![path];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(pages(sub, dir)?);
    }
    Ok(written)
}

/// `roff` in ASCII, each other character written as a groff glyph that every output
/// device has (`…` as `\&...`, `×` as `\(mu`), else as `\[uXXXX]` (what `preconv` does
/// for `man`): troff reads its input as Latin-1 and warns of every byte of UTF-8 past
/// ASCII (`groff -ww -man`), and `man` in the C locale has no glyph for most of them.
fn ascii_roff(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for c in roff.chars() {
        match c {
            _ if c.is_ascii() => out.push(c),
            '…' => out.push_str("\\&..."),
            '×' => out.push_str("\\(mu"),
            '—' => out.push_str("\\(em"),
            '–' => out.push_str("\\(en"),
            '→' => out.push_str("\\(->"),
            '←' => out.push_str("\\(<-"),
            '‘' => out.push_str("\\(oq"),
            '’' => out.push_str("\\(cq"),
            '“' => out.push_str("\\(lq"),
            '”' => out.push_str("\\(rq"),
            '≤' => out.push_str("\\(<="),
            '≥' => out.push_str("\\(>="),
            _ => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

fn create_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot make the folder {}", dir.display()))
}

fn write_file(path: &Path, text: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
