//! Refusing a stale program: a test that starts a workspace binary must run the program its
//! sources make today, not one left in `target/` by an earlier build.
//!
//! The binaries live in package `rip-bin`, so `cargo test -p rip-discover` after an edit
//! rebuilds the library and its tests but not the `rip-discover` program they start. Cargo
//! writes, beside every binary, `target/<profile>/<bin>.d`: the dep-info listing every
//! source file of the workspace the binary was built from (its own, and the libraries'). A
//! binary is fresh when that list exists and no file on it is newer than the binary or gone;
//! anything else is refused with the command that builds it again.
//!
//! Cargo decides freshness from the same modification times, so whatever it would rebuild
//! is refused here, and what it would not (a fresh clone, where the checkout predates the
//! build) passes. Each binary is checked once per test process; a check reads one small
//! `.d` file and stats the ~250 files on it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// Why a workspace binary may not be run: it was not built, or not from today's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// No binary at this path.
    Missing(PathBuf),
    /// The binary has no dep-info (`<bin>.d`) beside it, so its sources are unknown.
    NoDepInfo(PathBuf),
    /// A source the binary was built from changed after it was built.
    Older {
        /// The binary.
        binary: PathBuf,
        /// The first source found newer than it.
        source: PathBuf,
    },
    /// A source the binary was built from is gone (moved or deleted since).
    SourceGone {
        /// The binary.
        binary: PathBuf,
        /// The source that no longer exists.
        source: PathBuf,
    },
}

impl Stale {
    /// The binary refused.
    fn binary(&self) -> &Path {
        match self {
            Self::Missing(b) | Self::NoDepInfo(b) => b,
            Self::Older { binary, .. } | Self::SourceGone { binary, .. } => binary,
        }
    }

    /// The command that builds the binaries of the profile folder the binary is in.
    fn command(&self) -> String {
        let profile = self
            .binary()
            .parent()
            .and_then(Path::file_name)
            .and_then(|p| p.to_str())
            .unwrap_or("debug");
        match profile {
            "debug" => "cargo build -p rip-bin --bins".to_owned(),
            "release" => "cargo build --release -p rip-bin --bins".to_owned(),
            other => format!("cargo build --profile {other} -p rip-bin --bins"),
        }
    }
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(b) => write!(f, "program {} not built", b.display())?,
            Self::NoDepInfo(b) => write!(
                f,
                "program {} has no dep-info beside it, so its sources are unknown",
                b.display()
            )?,
            Self::Older { binary, source } => write!(
                f,
                "program {} is stale: {} changed after it was built",
                binary.display(),
                source.display()
            )?,
            Self::SourceGone { binary, source } => write!(
                f,
                "program {} is stale: {}, one of its sources, is gone",
                binary.display(),
                source.display()
            )?,
        }
        write!(
            f,
            " (hint: run `{}`, or the whole suite with `make test`)",
            self.command()
        )
    }
}

/// Whether the workspace binary `name` in `dir` (a `target/<profile>/` folder) was built
/// from the sources as they are now: `Ok`, or why it must not run, naming the command that
/// builds it.
pub fn check_fresh(dir: &Path, name: &str) -> Result<(), Stale> {
    check_with(dir, name, &mut HashMap::new())
}

/// Each of `programs` in `dir`, checked as [`check_fresh`] does; the first one missing or
/// stale. Other binaries in `dir` are not looked at: one left there by a program renamed or
/// removed since has sources that are gone, and no build will ever make it fresh.
pub fn check_all_fresh(dir: &Path, programs: &[impl AsRef<str>]) -> Result<(), Stale> {
    let mut mtimes = HashMap::new();
    programs
        .iter()
        .try_for_each(|n| check_with(dir, n.as_ref(), &mut mtimes))
}

/// The programs a `Cargo.toml` builds: the names of its `[[bin]]` targets, in its order.
pub(crate) fn programs_in(manifest: &Path) -> Result<Vec<String>, String> {
    let text = fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    let bins = table.get("bin").and_then(toml::Value::as_array);
    Ok(bins
        .into_iter()
        .flatten()
        .filter_map(|b| Some(b.get("name")?.as_str()?.to_owned()))
        .collect())
}

/// [`check_fresh`], the sources' modification times kept in `mtimes` across binaries (the
/// programs share most of their sources).
fn check_with(
    dir: &Path,
    name: &str,
    mtimes: &mut HashMap<PathBuf, Option<SystemTime>>,
) -> Result<(), Stale> {
    let binary = dir.join(name);
    let Ok(built) = fs::metadata(&binary).and_then(|m| m.modified()) else {
        return Err(Stale::Missing(binary));
    };
    let Ok(dep_info) = fs::read_to_string(dir.join(format!("{name}.d"))) else {
        return Err(Stale::NoDepInfo(binary));
    };
    for source in sources(&dep_info) {
        let changed = *mtimes
            .entry(source.clone())
            .or_insert_with(|| fs::metadata(&source).and_then(|m| m.modified()).ok());
        match changed {
            None => return Err(Stale::SourceGone { binary, source }),
            Some(t) if t > built => return Err(Stale::Older { binary, source }),
            Some(_) => {}
        }
    }
    Ok(())
}

/// The prerequisites of a dep-info's first rule (`target: src1 src2 …`), spaces inside a
/// path escaped as `\ `, as cargo writes them.
fn sources(dep_info: &str) -> Vec<PathBuf> {
    let rule = dep_info
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    // The target is a path too: its colon is the first one followed by a space.
    let Some((_, prerequisites)) = rule.split_once(": ") else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = prerequisites.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => paths.extend(take_path(&mut current)),
            c => current.push(c),
        }
    }
    paths.extend(take_path(&mut current));
    paths
}

fn take_path(current: &mut String) -> Option<PathBuf> {
    (!current.is_empty()).then(|| PathBuf::from(std::mem::take(current)))
}

/// Panics with the reason when `name` in `dir` is stale, or not one of `programs`; checks
/// each binary once per process.
pub(crate) fn assert_fresh(dir: &Path, name: &str, programs: &[String]) {
    static CHECKED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let binary = dir.join(name);
    let checked = CHECKED.get_or_init(Mutex::default);
    if checked.lock().is_ok_and(|c| c.contains(&binary)) {
        return;
    }
    assert!(
        programs.iter().any(|p| p == name),
        "no program {name} in the workspace (bin/Cargo.toml builds {})",
        programs.join(", ")
    );
    if let Err(stale) = check_fresh(dir, name) {
        panic!("{stale}");
    }
    if let Ok(mut c) = checked.lock() {
        c.insert(binary);
    }
}

/// Panics with the reason when one of `programs` in `dir` is missing or stale; checks the
/// folder once per process.
pub(crate) fn assert_all_fresh(dir: &Path, programs: &[String]) {
    static CHECKED: OnceLock<Result<(), Stale>> = OnceLock::new();
    if let Err(stale) = CHECKED.get_or_init(|| check_all_fresh(dir, programs)) {
        panic!("{stale}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A fake `target/debug/` with program `rip-x` built at `built` from `src/a.rs` and
    /// `src/b c.rs`, both changed at `sources`.
    fn fake(built: SystemTime, sources: SystemTime) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let src = root.path().join("src");
        let dir = root.path().join("debug");
        fs::create_dir_all(&src).unwrap();
        fs::create_dir_all(&dir).unwrap();
        for f in ["a.rs", "b c.rs"] {
            set_mtime(&src.join(f), sources);
        }
        let s = src.display();
        let d = format!("{}/rip-x: {s}/a.rs {s}/b\\ c.rs\n", dir.display());
        fs::write(dir.join("rip-x.d"), d).unwrap();
        set_mtime(&dir.join("rip-x"), built);
        root
    }

    fn set_mtime(path: &Path, t: SystemTime) {
        let f = fs::File::options()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.set_modified(t).unwrap();
    }

    fn hour_ago() -> SystemTime {
        SystemTime::now() - Duration::from_secs(3600)
    }

    #[test]
    fn a_binary_built_after_its_sources_is_fresh() {
        let root = fake(SystemTime::now(), hour_ago());
        let dir = root.path().join("debug");
        assert_eq!(check_fresh(&dir, "rip-x"), Ok(()));
        assert_eq!(check_all_fresh(&dir, &["rip-x"]), Ok(()));
    }

    #[test]
    fn a_source_changed_after_the_build_refuses_the_binary_naming_the_command() {
        let root = fake(hour_ago(), SystemTime::now());
        let dir = root.path().join("debug");
        let stale = check_fresh(&dir, "rip-x").unwrap_err();
        assert_eq!(
            stale,
            Stale::Older {
                binary: dir.join("rip-x"),
                source: root.path().join("src/a.rs"),
            }
        );
        let message = stale.to_string();
        assert!(
            message.contains("`cargo build -p rip-bin --bins`"),
            "{message}"
        );
        assert!(message.contains("src/a.rs changed after"), "{message}");
        assert_eq!(check_all_fresh(&dir, &["rip-x"]), Err(stale));
    }

    #[test]
    fn a_path_with_a_space_in_the_dep_info_is_one_source() {
        let root = fake(SystemTime::now(), hour_ago());
        set_mtime(
            &root.path().join("src/b c.rs"),
            SystemTime::now() + Duration::from_secs(60),
        );
        let stale = check_fresh(&root.path().join("debug"), "rip-x").unwrap_err();
        assert!(matches!(&stale, Stale::Older { source, .. } if source.ends_with("b c.rs")));
    }

    #[test]
    fn a_source_gone_or_no_dep_info_or_no_binary_is_refused() {
        let root = fake(SystemTime::now(), hour_ago());
        let dir = root.path().join("debug");
        fs::remove_file(root.path().join("src/a.rs")).unwrap();
        assert!(matches!(
            check_fresh(&dir, "rip-x"),
            Err(Stale::SourceGone { .. })
        ));
        fs::remove_file(dir.join("rip-x.d")).unwrap();
        let stale = check_fresh(&dir, "rip-x").unwrap_err();
        assert_eq!(stale, Stale::NoDepInfo(dir.join("rip-x")));
        assert!(stale.to_string().contains("cargo build -p rip-bin --bins"));
        assert_eq!(check_all_fresh(&dir, &["rip-x"]), Err(stale));
        let missing = check_fresh(&dir, "rip-y").unwrap_err();
        assert_eq!(missing, Stale::Missing(dir.join("rip-y")));
        assert_eq!(check_all_fresh(&dir, &["rip-y"]), Err(missing));
    }

    #[test]
    fn a_leftover_binary_of_a_program_no_longer_built_does_not_refuse_the_others() {
        let root = fake(SystemTime::now(), hour_ago());
        let dir = root.path().join("debug");
        // A program renamed or removed since: its binary and dep-info stay in target/, its
        // sources are gone, and `cargo build --bins` will never build it again.
        let gone = root.path().join("src/old.rs");
        let d = format!("{}/rip-old: {}\n", dir.display(), gone.display());
        fs::write(dir.join("rip-old.d"), d).unwrap();
        set_mtime(&dir.join("rip-old"), SystemTime::now());
        assert_eq!(check_all_fresh(&dir, &["rip-x"]), Ok(()));
        assert!(matches!(
            check_fresh(&dir, "rip-old"),
            Err(Stale::SourceGone { .. })
        ));
    }

    #[test]
    fn the_programs_are_the_bin_targets_of_a_manifest() {
        let root = tempfile::tempdir().unwrap();
        let manifest = root.path().join("Cargo.toml");
        let text = "[package]\nname = \"p\"\n\n[[bin]]\nname = \"rip-a\"\npath = \"a.rs\"\n\n\
                    [[bin]]\nname = \"rip-b\"\npath = \"b.rs\"\n";
        fs::write(&manifest, text).unwrap();
        assert_eq!(programs_in(&manifest).unwrap(), ["rip-a", "rip-b"]);
        fs::write(&manifest, "[package]\nname = \"p\"\n").unwrap();
        assert_eq!(programs_in(&manifest).unwrap(), Vec::<String>::new());
        let bad = programs_in(&root.path().join("none.toml")).unwrap_err();
        assert!(bad.contains("none.toml"), "{bad}");
    }

    #[test]
    fn the_command_names_the_profile_the_binary_was_built_in() {
        let release = Stale::Missing(PathBuf::from("/t/release/rip-x"));
        assert!(
            release
                .to_string()
                .contains("`cargo build --release -p rip-bin --bins`")
        );
        let bench = Stale::Missing(PathBuf::from("/t/bench/rip-x"));
        assert!(
            bench
                .to_string()
                .contains("`cargo build --profile bench -p rip-bin --bins`")
        );
    }
}
