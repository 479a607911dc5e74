//! Credentials in the environment (`RIP_BROKER` and `RIP_PROXY` with a password in the URL)
//! are used and never printed: `--help`, which shows the values of the variables it names,
//! names these without theirs.

#[test]
fn help_names_the_variables_but_not_a_password_they_hold() {
    let helps: [(&str, &[&str]); 5] = [
        ("rip-queue", &["--help"]),
        ("rip-queue", &["pull", "--help"]),
        ("rip-discover", &["--help"]),
        ("rip-fetch", &["--help"]),
        ("rip-render", &["--help"]),
    ];
    for (bin, args) in helps {
        let cwd = tempfile::tempdir().unwrap();
        let r = rip_testkit::Stage::new(bin)
            .args(args)
            .env("RIP_BROKER", "nats://alice:s3cret@127.0.0.1:1")
            .env("RIP_PROXY", "http://bob:pr0xy@127.0.0.1:1")
            .current_dir(cwd.path())
            .run();
        assert_eq!(r.code, 0, "{bin} {args:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("RIP_BROKER") || r.stdout.contains("RIP_PROXY"),
            "{bin} {args:?} names the variable: {}",
            r.stdout
        );
        for secret in ["s3cret", "pr0xy"] {
            assert!(
                !r.stdout.contains(secret) && !r.stderr.contains(secret),
                "{bin} {args:?} prints {secret}: {}",
                r.stdout
            );
        }
    }
}
