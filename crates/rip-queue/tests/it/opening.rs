//! Many workers opening the same streams at once (issue 41): every one of them gets the
//! stream, and nothing that reads as a failure is said when nothing failed.

use rip_queue::{Broker, BrokerOptions};
use rip_testkit::{NatsCluster, NatsServer};

/// `n` connections to `url` open the stream `name` at once, as `n` workers starting together
/// do, every other one asking for `replicas` (a worker connected to a server that did not
/// yet know the whole cluster once asked for 2 where the others asked for 3); each one's
/// error, if any, and how often they waited for the broker (each wait said on stderr).
async fn open_at_once(url: &str, n: usize, name: &str, replicas: usize) -> (Vec<String>, u64) {
    let mut brokers = Vec::new();
    for i in 0..n {
        let mut options = BrokerOptions::new(url);
        options.patience = std::time::Duration::from_secs(30);
        options.replicas = (i % 2 == 1).then_some(replicas);
        brokers.push(Broker::connect(&options).await.expect("connect"));
    }
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = tokio::task::JoinSet::new();
    for broker in brokers {
        let (barrier, name) = (barrier.clone(), name.to_owned());
        tasks.spawn(async move {
            barrier.wait().await;
            let error = broker.stream(&name).await.err().map(|e| e.to_string());
            (error, broker.waits())
        });
    }
    let (mut errors, mut waits) = (Vec::new(), 0);
    while let Some(done) = tasks.join_next().await {
        let (error, waited) = done.expect("task");
        errors.extend(error);
        waits += waited;
    }
    (errors, waits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_opening_a_stream_at_once_all_get_it_on_one_server() {
    let nats = NatsServer::start();
    for round in 0..10 {
        let (errors, waits) = open_at_once(&nats.url(), 8, &format!("docs{round}"), 1).await;
        assert!(errors.is_empty(), "round {round}: {errors:?}");
        assert_eq!(
            waits, 0,
            "round {round}: a wait said, nothing having failed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_opening_a_stream_at_once_all_get_it_on_a_cluster() {
    let cluster = NatsCluster::start(3);
    for round in 0..6 {
        // Every other opener asks for 3 replicas as the others do, then for 2.
        let replicas = if round % 2 == 0 { 3 } else { 2 };
        let name = format!("docs{round}");
        let (errors, waits) = open_at_once(&cluster.urls(), 8, &name, replicas).await;
        assert!(errors.is_empty(), "round {round}: {errors:?}");
        assert_eq!(
            waits, 0,
            "round {round}: a wait said, nothing having failed"
        );
    }
}
