//! The registration agent rides out a restart of the real hub apiserver: it keeps running, backs
//! off, and resumes heartbeats when the hub returns, with no new CSR and no new accept. It stops
//! the shared hub apiserver, so it lives in this serial binary.
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use clusteradm::api::cluster::CLUSTER_LEASE_NAME;

use crate::common;
use crate::control_plane;
use crate::registration_fixture::{self as fixture, wait_condition};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_rides_out_a_hub_apiserver_restart() {
    let _one_at_a_time = crate::serial().await;
    // Only the local control plane can be stopped and started by this test: against another
    // cluster, skip it by name (`-- --skip the_agent_rides_out`) rather than pass unseen.
    assert!(
        std::env::var_os("CP_DIR").is_some(),
        "this test restarts the local control plane's hub API server: run it with CP_DIR set \
         (eval \"$(scripts/control-plane env)\"), or skip it by name"
    );
    let agent = fixture::joined(fixture::options(common::managed().await, "it-restart")).await;
    let c = agent.cluster().to_string();
    let cert = agent.hub_secret().await.data.unwrap()["tls.crt"].clone();
    let csrs = fixture::csr_count(&c).await;
    tokio::task::spawn_blocking(|| control_plane("stop-hub-apiserver"))
        .await
        .unwrap();
    // The outage itself (longer than two heartbeats of the test's 5 s lease) is what is simulated.
    tokio::time::sleep(Duration::from_secs(12)).await;
    tokio::task::spawn_blocking(|| control_plane("start-hub-apiserver"))
        .await
        .unwrap();
    let back = k8s_openapi::jiff::Timestamp::now();
    let leases: Api<Lease> = Api::namespaced(common::hub().await, &c);
    fixture::wait(
        leases,
        CLUSTER_LEASE_NAME,
        "a heartbeat after the restart",
        move |l: Option<&Lease>| {
            l.and_then(|l| l.spec.as_ref()?.renew_time.clone())
                .is_some_and(|t| t.0 > back)
        },
    )
    .await;
    wait_condition(&c, "ManagedClusterConditionAvailable", "True").await;
    assert_eq!(
        agent.hub_secret().await.data.unwrap()["tls.crt"],
        cert,
        "no new certificate was needed"
    );
    assert_eq!(fixture::csr_count(&c).await, csrs, "no new CSR was sent");
    agent.remove().await;
    // The shared hub leads the admission configurations: the operator tests' hubs must be the
    // only ones doing so while they run.
    tokio::task::spawn_blocking(fixture::stop_hub_controller)
        .await
        .unwrap();
}
