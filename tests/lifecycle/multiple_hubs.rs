//! `MultipleHubs` on two real hubs: the shared hub and a second one the control plane starts on
//! demand (`scripts/control-plane start-hub2`, its own CA and signer), each with its own
//! in-process hub controllers. An agent given both hubs' bootstrap secrets joins the first, moves
//! to the second when the first stops accepting it, and back to the first when the second's API
//! server is stopped for longer than the connection timeout. An agent without the list (the gate
//! off) stays where it was refused. It stops an API server and runs a second hub leading its own
//! admission configurations, so it lives in this serial binary.
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams};

use clusteradm::agent::registration::hubs::HubList;
use clusteradm::api::cluster::ManagedCluster;

use crate::common;
use crate::control_plane;
use crate::registration_fixture::{self as fixture, condition};

const HUB1_SECRET: &str = "hub1-bootstrap";
const HUB2_SECRET: &str = "hub2-bootstrap";
/// The agent's `hubConnectionTimeoutSeconds`, short for the test (the CRD's minimum is 180).
const TIMEOUT: Duration = Duration::from_secs(10);
/// The earliest the agent may leave a stopped hub: the timeout less the fixture's 5 s lease
/// (the heartbeat period), as the timeout runs from the last heartbeat that reached it.
const EARLIEST_MOVE: Duration = Duration::from_secs(5);
const WAIT: Duration = Duration::from_secs(120);

/// The second hub: its kubeconfig, an admin client, and its controllers' stop token.
struct SecondHub {
    kubeconfig: PathBuf,
    client: Client,
    stop: clusteradm::runtime::Shutdown,
    controllers: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl SecondHub {
    /// Starts the second hub's API server (if not running), makes it an OCM hub as the shared
    /// one is (`init`, the CRDs) and runs its hub controllers in this process. Returns its
    /// bootstrap token too.
    async fn start() -> (Self, String) {
        tokio::task::spawn_blocking(|| control_plane("start-hub2"))
            .await
            .unwrap();
        let kubeconfig = PathBuf::from(std::env::var("CP_DIR").unwrap()).join("hub2.kubeconfig");
        let mut init = common::clusteradm();
        init.args(["init", "-o", "json", "--kubeconfig"])
            .arg(&kubeconfig);
        let out = fixture::run(init).await;
        assert!(
            out.status.success(),
            "init on the second hub: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let client = common::client(&kubeconfig).await;
        common::install_crds(&client, &clusteradm::api::hub_crds(), WAIT).await;
        let (server, _) = common::server_and_ca(&kubeconfig);
        let stop = clusteradm::runtime::Shutdown::new();
        let controllers = tokio::spawn(clusteradm::inprocess::hub::controllers(
            client.clone(),
            clusteradm::hub::webhook::Webhook::Leader(server.parse().unwrap()),
            stop.clone(),
        ));
        let token = json["hub-token"].as_str().unwrap().to_string();
        (
            Self {
                kubeconfig,
                client,
                stop,
                controllers,
            },
            token,
        )
    }

    /// Brings its API server back, stops its controllers (they remove their admission
    /// configurations), then stops the second hub.
    async fn stop(self) {
        tokio::task::spawn_blocking(|| control_plane("start-hub2"))
            .await
            .unwrap();
        self.stop.cancel();
        tokio::time::timeout(WAIT, self.controllers)
            .await
            .expect("the second hub's controllers stop")
            .unwrap()
            .unwrap();
        tokio::task::spawn_blocking(|| control_plane("stop-hub2"))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_moves_to_the_next_hub_when_refused_or_cut_off() {
    let _one_at_a_time = crate::serial().await;
    assert!(
        std::env::var_os("CP_DIR").is_some(),
        "this test starts and stops a second hub on the local control plane: run it with CP_DIR \
         set (eval \"$(scripts/control-plane env)\"), or skip it by name"
    );
    let token1 = fixture::hub().await;
    let (hub2, token2) = SecondHub::start().await;
    let hub1 = common::hub().await;
    let bootstraps = [
        (
            HUB1_SECRET,
            common::kubeconfig_with_token(&common::env().hub, &token1),
        ),
        (
            HUB2_SECRET,
            common::kubeconfig_with_token(&hub2.kubeconfig, &token2),
        ),
    ];
    let bootstraps: Vec<(&str, &str)> = bootstraps.iter().map(|(n, k)| (*n, k.as_str())).collect();

    let mut opts = fixture::options(common::managed().await, "it-hubs");
    opts.hubs = Some(HubList {
        secrets: vec![HUB1_SECRET.into(), HUB2_SECRET.into()],
        timeout: TIMEOUT,
    });
    let agent = fixture::start_with_secrets(opts, &bootstraps).await;
    let c = agent.cluster().to_string();
    // The gate off: the one default secret (hub 1), the second hub's beside it, unused.
    let mut off = fixture::options(common::managed().await, "it-hubs-off");
    off.bootstrap_secret = HUB1_SECRET.into();
    let off = fixture::start_with_secrets(off, &bootstraps).await;
    let c_off = off.cluster().to_string();

    // 1. The first hub of the list.
    fixture::accept(&c).await;
    fixture::accept(&c_off).await;
    available(&hub1, &c).await;
    available(&hub1, &c_off).await;
    assert_eq!(hub_of(&agent).await, server(&common::env().hub));

    // 2. Hub 1 stops accepting both clusters: the agent with the list moves to hub 2 at once.
    set_accepted(&hub1, &c, false).await;
    set_accepted(&hub1, &c_off, false).await;
    accept_on(&hub2.kubeconfig, &c).await;
    available(&hub2.client, &c).await;
    assert_eq!(hub_of(&agent).await, server(&hub2.kubeconfig));
    // Without the list, the refused agent stays with hub 1 and never registers on hub 2.
    assert_eq!(hub_of(&off).await, server(&common::env().hub));
    let on_hub2: Api<ManagedCluster> = Api::all(hub2.client.clone());
    assert!(
        on_hub2.get_opt(&c_off).await.unwrap().is_none(),
        "the agent without MultipleHubs registered on the second hub"
    );
    off.remove().await;

    // 3. Hub 1 accepts the cluster again; hub 2's API server stops: after the timeout the agent
    // selects again, hub 2 is unreachable, and it bootstraps on hub 1 (a new CSR, accepted).
    set_accepted(&hub1, &c, true).await;
    let csrs = csr_names(&hub1, &c).await;
    let stopped = tokio::time::Instant::now();
    tokio::task::spawn_blocking(|| control_plane("stop-hub2-apiserver"))
        .await
        .unwrap();
    let new_csr = common::eventually("a new CSR on hub 1", WAIT, || {
        let (hub1, c, csrs) = (hub1.clone(), c.clone(), csrs.clone());
        async move {
            csr_names(&hub1, &c)
                .await
                .into_iter()
                .find(|n| !csrs.contains(n))
        }
    })
    .await;
    let moved_after = stopped.elapsed();
    assert!(
        moved_after >= EARLIEST_MOVE,
        "the agent left hub 2 {moved_after:?} after it stopped, before its {TIMEOUT:?} timeout"
    );
    fixture::accept(&c).await;
    // Hub 1's Available=True may be left from step 1: wait for the agent's new credential first.
    let hub1_server = server(&common::env().hub);
    common::eventually("the agent's credential for hub 1", WAIT, || {
        let hub1_server = hub1_server.clone();
        let agent = &agent;
        async move { (hub_of(agent).await == hub1_server).then_some(()) }
    })
    .await;
    available(&hub1, &c).await;
    eprintln!("moved back to hub 1 {moved_after:?} after hub 2 stopped (CSR {new_csr})");

    agent.remove().await;
    hub2.stop().await;
    // The shared hub leads the admission configurations: the operator tests' hubs must be the
    // only ones doing so while they run.
    tokio::task::spawn_blocking(fixture::stop_hub_controller)
        .await
        .unwrap();
}

/// `clusteradm accept` on the hub of `kubeconfig`.
async fn accept_on(kubeconfig: &PathBuf, cluster: &str) {
    let mut cmd = common::clusteradm();
    cmd.args(["accept", "--wait", "--timeout", "90", "--clusters", cluster])
        .arg("--kubeconfig")
        .arg(kubeconfig);
    let out = fixture::run(cmd).await;
    assert!(
        out.status.success(),
        "accept on {}: {}",
        kubeconfig.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until `cluster` is Available on `hub`.
async fn available(hub: &Client, cluster: &str) {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    fixture::wait_for(
        api,
        cluster,
        "Available=True",
        |mc: Option<&ManagedCluster>| {
            condition(mc, "ManagedClusterConditionAvailable").as_deref() == Some("True")
        },
        WAIT,
    )
    .await;
}

async fn set_accepted(hub: &Client, cluster: &str, accepted: bool) {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    api.patch(
        cluster,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"hubAcceptsClient": accepted}})),
    )
    .await
    .unwrap();
}

/// The server an agent's hub kubeconfig secret names.
async fn hub_of(agent: &fixture::Agent) -> String {
    let secret: Secret = agent.hub_secret().await;
    let text = clusteradm::secrets::field(&secret, "kubeconfig").unwrap();
    clusteradm::agent::registration::bootstrap::hub_endpoint(&text)
        .unwrap()
        .0
}

fn server(kubeconfig: &PathBuf) -> String {
    common::server_and_ca(kubeconfig).0
}

async fn csr_names(hub: &Client, cluster: &str) -> Vec<String> {
    let api: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let selector = format!("open-cluster-management.io/cluster-name={cluster}");
    api.list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect()
}
