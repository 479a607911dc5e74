//! Folders in tests: what is in one, a JSON file in one, a folder a stage may not write
//! to, and an output folder made from a stream as `rip-write --jsonl` leaves it.

use std::path::Path;
use std::process::Command;

/// Every file below `dir`, as its path relative to `dir` with `/` between the parts,
/// sorted; none when `dir` does not exist.
pub fn files_below(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("below the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// A JSON file read whole; panics naming the file when it cannot be read or is not JSON.
pub fn read_json(path: impl AsRef<Path>) -> serde_json::Value {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Makes `dir` (created if missing) read-only: mode 0555.
pub fn make_read_only(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
}

/// The words to put before a command so that it cannot write into a read-only folder:
/// none for a normal user; `unshare --user` for root, which ignores permissions in the
/// init namespace but not inside a new user namespace. Panics with a hint where root
/// cannot make one.
pub fn unprivileged_prefix() -> Vec<String> {
    let uid = Command::new("id").arg("-u").output().expect("`id -u` runs");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Vec::new();
    }
    let namespace = Command::new("unshare").args(["--user", "true"]).status();
    assert!(
        namespace.is_ok_and(|s| s.success()),
        "cannot run unprivileged here: root writes into a read-only folder unless inside \
         `unshare --user` (hint: run as a normal user, or allow `unshare --user`)"
    );
    vec!["unshare".to_owned(), "--user".to_owned()]
}

/// Writes the docs, error documents and expected records of an NDJSON `stream` to `dir`
/// as `rip-write --jsonl` leaves them: `docs.jsonl`, `errors.jsonl`, `expected.jsonl`,
/// each line as it was.
pub fn jsonl_folder(stream: &str, dir: &Path) {
    for (kind, file) in [
        ("doc", "docs.jsonl"),
        ("error", "errors.jsonl"),
        ("expected", "expected.jsonl"),
    ] {
        let prefix = format!("{{\"_type\":\"{kind}\"");
        let lines: String = stream
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(dir.join(file), lines).unwrap();
    }
}
