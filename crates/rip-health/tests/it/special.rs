//! `--json` and `--html` onto a path that is not a regular file (`/dev/null`, `/dev/stdout`,
//! a FIFO): the report is written into it, never put in its place by a rename.

use super::{golden, run};
use std::os::unix::fs::FileTypeExt;
use std::process::{Command, Stdio};

/// Run as root, `rip-health --json /dev/null` once replaced the machine's `/dev/null` with a
/// regular file; a FIFO shows the same without root.
#[test]
fn a_report_onto_a_fifo_goes_into_it_and_the_fifo_stays() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--json", "--html"] {
        let fifo = dir.path().join(format!("report{flag}.fifo"));
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success(), "mkfifo {}", fifo.display());
        let mut reader = Command::new("cat")
            .arg(&fifo)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let fifo_arg = fifo.to_str().unwrap();
        let r = run(
            &["-q", flag, fifo_arg],
            Some(&golden("site.reconciled.ndjson")),
        );
        let still_fifo = std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo();
        if !still_fifo {
            // Nothing will open the FIFO that was there: let its reader go.
            reader.kill().unwrap();
        }
        let read = reader.wait_with_output().unwrap();
        assert!(still_fifo, "{flag}: the FIFO was replaced by a file");
        assert_eq!(r.code, 2, "item-99 is missing: {}", r.stderr);
        let text = String::from_utf8(read.stdout).unwrap();
        let wanted = if flag == "--json" {
            "\"totals\""
        } else {
            "</html>"
        };
        assert!(text.contains(wanted), "{flag}: read from the FIFO: {text}");
    }
}
