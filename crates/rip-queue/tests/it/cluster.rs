//! A broker of three clustered nats-servers (issue 41): streams and tables kept by all three,
//! and a reader that goes on when the node it is connected to dies.

use super::{refs, wait_for};
use rip_testkit::{NatsCluster, Ran, Stage};
use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `rip-queue --broker <every node>`.
fn queue(cluster: &NatsCluster) -> Stage {
    Stage::new("rip-queue").arg("--broker").arg(cluster.urls())
}

/// The replicas of stream `name` (prefix `rip`) as the cluster has it.
fn replicas_of(cluster: &NatsCluster, name: &str) -> usize {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(cluster.url(0)).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        let mut stream = js.get_stream(format!("rip_{name}")).await.expect("stream");
        stream.info().await.expect("info").config.num_replicas
    })
}

fn push(cluster: &NatsCluster, urls: &[String]) {
    let ran = queue(cluster).args(["push", "s"]).stdin(refs(urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn a_stream_on_a_cluster_of_three_is_kept_by_all_three() {
    let cluster = NatsCluster::start(3);
    push(&cluster, &["http://h/a".to_owned()]);
    assert_eq!(replicas_of(&cluster, "s"), 3);
    // Asked for, one server keeps it.
    let ran = queue(&cluster)
        .args(["--replicas", "1", "push", "t"])
        .stdin(refs(&["http://h/b".to_owned()]))
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(replicas_of(&cluster, "t"), 1);
}

#[test]
fn a_following_pull_goes_on_whichever_node_dies() {
    let mut cluster = NatsCluster::start(3);
    push(&cluster, &["http://h/0".to_owned()]);
    let mut child = queue(&cluster).args(["pull", "s", "--follow"]).spawn();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.stdout.take().expect("piped stdout");
    let gathered = lines.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            gathered.lock().unwrap().push(line);
        }
    });
    let count = |lines: &Arc<Mutex<Vec<String>>>| lines.lock().unwrap().len();
    wait_for("the first record", Duration::from_secs(60), || {
        count(&lines) == 1
    });
    // Each node in turn dies: one of them is the node the reader is connected to.
    for node in 0..3 {
        cluster.kill(node);
        push(&cluster, &[format!("http://h/{}", node + 1)]);
        wait_for(
            &format!("the record pushed with node {node} dead"),
            Duration::from_secs(90),
            || count(&lines) == node + 2,
        );
        cluster.restart(node);
    }
    std::thread::sleep(Duration::from_secs(1)); // nothing more comes
    child.kill().ok();
    let ran = Ran::wait("rip-queue pull", child);
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 4, "{lines:?} {}", ran.stderr);
    for (i, line) in lines.iter().enumerate() {
        assert!(line.contains(&format!("http://h/{i}\"")), "{lines:?}");
    }
}
