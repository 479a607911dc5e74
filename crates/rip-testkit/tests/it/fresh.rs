//! The stale-program trap, with real cargo: a scratch package built into a scratch target
//! folder, a source edited after the build, the binary refused with the command to run,
//! and, once rebuilt, run.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use rip_testkit::{Stale, check_fresh};

/// `cargo build` of the scratch package in `root`, into `root/target`, offline and without
/// what the outer build put in the environment (a clippy wrapper, another target folder).
fn build(root: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "scratch build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_main(root: &Path, says: &str) {
    fs::write(
        root.join("src/main.rs"),
        format!("fn main() {{ println!(\"{says}\"); }}\n"),
    )
    .unwrap();
}

fn run(bin: &Path) -> String {
    let out = Command::new(bin)
        .output()
        .expect("the scratch program runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn an_edit_after_the_build_refuses_the_program_until_it_is_rebuilt() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    write_main(root, "old");
    build(root);
    let dir = root.join("target/debug");
    let bin = dir.join("scratch");
    assert_eq!(check_fresh(&dir, "scratch"), Ok(()));
    assert_eq!(run(&bin), "old");

    // The edit, dated after the build whatever the file system's clock granularity.
    write_main(root, "new");
    let built = fs::metadata(&bin).unwrap().modified().unwrap();
    let edited = built.max(SystemTime::now()) + Duration::from_millis(50);
    let main = root.join("src/main.rs");
    fs::File::options()
        .append(true)
        .open(&main)
        .unwrap()
        .set_modified(edited)
        .unwrap();
    let stale = check_fresh(&dir, "scratch").unwrap_err();
    assert_eq!(
        stale,
        Stale::Older {
            binary: bin.clone(),
            source: main.canonicalize().unwrap(),
        }
    );
    let message = stale.to_string();
    assert!(
        message.contains("(hint: run `cargo build -p rip-bin --bins`"),
        "{message}"
    );

    // Rebuilt once the edit is in the past: fresh, and the new program runs.
    while SystemTime::now() <= edited + Duration::from_millis(50) {
        std::thread::sleep(Duration::from_millis(20));
    }
    build(root);
    assert_eq!(check_fresh(&dir, "scratch"), Ok(()));
    assert_eq!(run(&bin), "new");
}
