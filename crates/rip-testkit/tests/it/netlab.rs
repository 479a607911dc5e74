//! The lab network itself ([`rip_testkit::netlab`]): hosts reach each other over TCP, a
//! link's delay shows in the round trip, a cut host cannot connect and a healed one can.
//! As root with `ip` (here and in CI); elsewhere each test says so on stderr and passes.

use rip_testkit::netlab::{Host, Lab, Shape};
use rip_testkit::wait_for;
use std::process::{Child, Stdio};
use std::time::Duration;

/// An HTTP server (python's) on `host`, port 8000, serving an empty folder.
fn serve(host: &Host, dir: &std::path::Path) -> Child {
    host.command("python3")
        .args(["-m", "http.server", "8000", "--bind", &host.ip()])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `curl` from `from` to `to`'s server within `timeout`: the TCP connect time (one round
/// trip), or `None` when it could not connect.
fn connect(from: &Host, to: &Host, timeout: &str) -> Option<Duration> {
    let out = from
        .command("curl")
        .args(["-s", "-o", "/dev/null", "--connect-timeout", timeout])
        .args(["-w", "%{time_connect}"])
        .arg(format!("http://{}:8000/", to.ip()))
        .output()
        .unwrap();
    let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    (out.status.success() && secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

#[test]
fn hosts_of_a_lab_reach_each_other_with_the_links_delay() {
    let Some(lab) = Lab::new(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(lab.host(1), dir.path());
    wait_for("the server on host 1", Duration::from_secs(60), || {
        connect(lab.host(0), lab.host(1), "2").is_some()
    });
    // Host 0's link: 50 ms each way across it, so a round trip crosses it twice.
    lab.shape(
        0,
        Shape::new(Duration::from_millis(50), Duration::ZERO, 0.0),
    );
    let rtt = connect(lab.host(0), lab.host(1), "10").expect("a connection");
    assert!(rtt >= Duration::from_millis(100), "round trip {rtt:?}");
    eprintln!("round trip across a link of 50 ms: {rtt:?}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_cut_host_cannot_connect_and_a_healed_one_can() {
    let Some(lab) = Lab::new(3) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(lab.host(2), dir.path());
    wait_for("the server on host 2", Duration::from_secs(60), || {
        connect(lab.host(0), lab.host(2), "2").is_some()
    });
    lab.cut(0);
    assert_eq!(
        connect(lab.host(0), lab.host(2), "2"),
        None,
        "host 0 is cut"
    );
    // Host 1 is not cut: it still connects.
    assert!(connect(lab.host(1), lab.host(2), "10").is_some());
    lab.heal(0);
    assert!(connect(lab.host(0), lab.host(2), "10").is_some(), "healed");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_lab_leaves_no_namespace_behind() {
    let Some(lab) = Lab::new(2) else { return };
    let names: Vec<String> = lab.hosts().iter().map(|h| h.netns().to_owned()).collect();
    let listed = || {
        let out = std::process::Command::new("ip")
            .args(["netns", "list"])
            .output();
        String::from_utf8_lossy(&out.unwrap().stdout).into_owned()
    };
    assert!(names.iter().all(|n| listed().contains(n.as_str())));
    drop(lab);
    let after = listed();
    assert!(names.iter().all(|n| !after.contains(n.as_str())), "{after}");
}
