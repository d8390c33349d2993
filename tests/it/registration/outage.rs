//! The hub becomes unreachable and comes back: the agent keeps running, backs off, and resumes
//! its heartbeats with the same certificate — no new CSR, no new accept.
//!
//! The default test cuts the agent off through a TCP proxy of its own (TLS passes through
//! untouched: the hub's certificate names 127.0.0.1), so the shared hub apiserver stays up for
//! the tests running beside it. The test that stops the real hub apiserver is in the serial
//! `lifecycle` test binary (tests/lifecycle/hub_restart.rs).
use std::net::SocketAddr;
use std::time::Duration;

use kube::api::Api;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use clusteradm::api::cluster::ManagedCluster;

use super::fixture::{self, condition, wait_condition};
use crate::common;

/// A TCP proxy to the hub that can be taken down and brought back on the same port.
struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        Self {
            addr,
            upstream,
            task: Some(tokio::spawn(serve(listener, upstream))),
        }
    }

    /// Closes the port and every open connection: the hub is unreachable.
    fn down(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    async fn up(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.task = Some(tokio::spawn(serve(listener, self.upstream)));
    }
}

async fn serve(listener: TcpListener, upstream: SocketAddr) {
    // Dropped with the task: aborts every connection.
    let mut connections = JoinSet::new();
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            continue;
        };
        connections.spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

fn hub_addr() -> (String, SocketAddr) {
    let (server, ca) = common::server_and_ca(&common::env().hub);
    let authority = server.trim_start_matches("https://").trim_end_matches('/');
    (
        ca,
        authority
            .parse()
            .expect("the test hub listens on an IP:port"),
    )
}

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
