//! The hub becomes unreachable and comes back: the agent keeps running, backs off, and resumes
//! its heartbeats with the same certificate — no new CSR, no new accept.
//!
//! The default test cuts the agent off through a TCP proxy of its own (TLS passes through
//! untouched: the hub's certificate names 127.0.0.1), so the shared hub apiserver stays up for
//! the tests running beside it. The test that stops the real hub apiserver is in the serial
//! `lifecycle` test binary (tests/lifecycle/hub_restart.rs).
use std::time::Duration;

use kube::api::Api;

use clusteradm::api::cluster::ManagedCluster;

use super::fixture::{self, condition, wait_condition};
use crate::common;
use crate::common::proxy::{Proxy, hub_addr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_rides_out_a_hub_outage() {
    let token = fixture::hub().await;
    let (ca, upstream) = hub_addr();
    let mut proxy = Proxy::start(upstream).await;
    let bootstrap = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: 'https://{}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{token: '{token}'}}}}]\ncontexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\ncurrent-context: hub\n",
        proxy.addr
    );
    let agent = fixture::start(
        fixture::options(common::managed().await, "it-outage"),
        &bootstrap,
    )
    .await;
    let c = agent.cluster().to_string();
    fixture::accept(&c).await;
    wait_condition(&c, "ManagedClusterConditionAvailable", "True").await;
    let cert = agent.hub_secret().await.data.unwrap()["tls.crt"].clone();
    let csrs = fixture::csr_count(&c).await;

    proxy.down();
    // Longer than five heartbeats: the hub notices the silence.
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    fixture::wait_for(
        api,
        &c,
        "Available=Unknown during the outage",
        |mc: Option<&ManagedCluster>| {
            condition(mc, "ManagedClusterConditionAvailable").as_deref() == Some("Unknown")
        },
        Duration::from_secs(90),
    )
    .await;
    proxy.up().await;

    wait_condition(&c, "ManagedClusterConditionAvailable", "True").await;
    assert_eq!(
        agent.hub_secret().await.data.unwrap()["tls.crt"],
        cert,
        "the certificate changed"
    );
    assert_eq!(
        fixture::csr_count(&c).await,
        csrs,
        "the agent asked for a new certificate"
    );
    agent.remove().await;
}
