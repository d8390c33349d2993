//! Test support for registration: a hub with the OCM CRDs and one hub registration controller
//! for the whole test binary, agents in unique namespaces with unique cluster names, and waits.
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ObjectMeta, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

use clusteradm::agent::registration::{self as agent, AgentOptions};
use clusteradm::api::cluster::{ClientConfig, ManagedCluster};
use clusteradm::operator::cluster_manager::desired::{admission, hub};

use crate::{
    self as common,
    open_watches::{self, OpenWatches},
};

/// Installs the managed cluster's CRDs, as the klusterlet operator would before its agents start.
pub async fn install_managed_crds(managed: &Client) {
    common::install_crds(
        managed,
        &clusteradm::api::managed_crds(),
        Duration::from_secs(60),
    )
    .await;
}

/// The label that puts an object under the admission policies (and not only the webhooks).
pub const POLICIES_LABEL: &str = "it.clusteradm.io/admission-policies";

/// Makes the hub an OCM hub (init, holding the singleton lock only while it runs), installs the
/// hub CRDs, starts the shared hub controllers, and returns a bootstrap token.
pub async fn hub() -> String {
    let out = {
        let _hub = common::HUB_SINGLETON.lock().await;
        let mut init = common::clusteradm();
        init.args(["init", "-o", "json", "--kubeconfig"])
            .arg(common::env().hub)
            .args(common::SHARED_HUB_GATES);
        run(init).await
    };
    assert!(
        out.status.success(),
        "init failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The CRDs, and the admission policies bound to the objects `tests/it/admission.rs` labels
    // for them: every other test of this binary runs under the shared hub's admission webhooks
    // (the default mode), which it points at itself below.
    let crds = clusteradm::api::hub_crds()
        .iter()
        .map(clusteradm::apply::to_dynamic)
        .chain(
            admission::policies()
                .iter()
                .map(clusteradm::apply::to_dynamic),
        )
        .chain(admission::bindings().into_iter().map(|mut b| {
            b.spec.match_resources = Some(
                serde_json::from_value(serde_json::json!({
                    "objectSelector": {"matchLabels": {POLICIES_LABEL: "true"}}
                }))
                .unwrap(),
            );
            clusteradm::apply::to_dynamic(&b)
        }))
        // What the operator gives the identity our add-on manager binds templates' hub
        // permissions as: no operator runs here, the hub controllers run in this process.
        .chain([
            clusteradm::apply::to_dynamic(&Namespace {
                metadata: ObjectMeta {
                    name: Some(clusteradm::api::names::HUB_NAMESPACE.into()),
                    ..Default::default()
                },
                ..Default::default()
            }),
            clusteradm::apply::to_dynamic(&hub::addon_manager_service_account()),
            clusteradm::apply::to_dynamic(&hub::addon_manager_cluster_role()),
            clusteradm::apply::to_dynamic(&hub::addon_manager_cluster_role_binding()),
        ])
        .collect();
    clusteradm::apply::Applier::new(common::hub().await, Duration::from_secs(60))
        .apply(crds)
        .await
        .unwrap();
    start_hub_controller();
    webhooks_answer().await;
    json["hub-token"].as_str().unwrap().to_string()
}

/// Waits until the shared hub's admission webhooks answer: until then a ManagedCluster write may
/// reach the configurations an earlier run's hub left naming a server that is gone (they fail
/// closed), before this hub points them at itself.
async fn webhooks_answer() {
    let clusters: Api<DynamicObject> = Api::all_with(
        common::hub().await,
        &ApiResource::erase::<clusteradm::api::cluster::ManagedCluster>(&()),
    );
    let probe: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": "it-webhook-probe"}, "spec": {}
    }))
    .unwrap();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    common::eventually(
        "the hub's admission webhooks",
        Duration::from_secs(60),
        || {
            let (clusters, probe, dry) = (clusters.clone(), probe.clone(), dry.clone());
            async move { clusters.create(&dry, &probe).await.ok() }
        },
    )
    .await;
}

/// `clusteradm <args> --kubeconfig <hub>`, off the async threads: (exit code, stdout, stderr).
pub async fn on_hub(args: &[&str]) -> (i32, String, String) {
    let mut cmd = common::clusteradm();
    cmd.args(args).arg("--kubeconfig").arg(common::env().hub);
    let out = run(cmd).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary off the async threads (an agent in this runtime may be what it waits for).
pub async fn run(mut cmd: assert_cmd::Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// The watches the hub controllers of [`start_hub_controller`] hold open.
pub fn hub_watches() -> Arc<OpenWatches> {
    static WATCHES: OnceLock<Arc<OpenWatches>> = OnceLock::new();
    WATCHES.get_or_init(Arc::default).clone()
}

/// The shared hub controllers: how to stop them, and their thread.
type SharedHub = (clusteradm::runtime::Shutdown, std::thread::JoinHandle<()>);

static SHARED_HUB: std::sync::Mutex<Option<SharedHub>> = std::sync::Mutex::new(None);

/// One hub registration controller for every test of the binary, on its own thread and runtime,
/// as one would run on a real hub. It leads the admission webhook configurations too, so a
/// binary whose other tests run hubs of their own stops it when done ([`stop_hub_controller`]).
pub fn start_hub_controller() {
    let mut shared = SHARED_HUB
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if shared.is_some() {
        return;
    }
    let shutdown = clusteradm::runtime::Shutdown::new();
    let token = shutdown.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let hub = open_watches::counting(common::hub().await, hub_watches());
            clusteradm::inprocess::hub::controllers(
                hub,
                clusteradm::hub::webhook::Webhook::Leader(common::hub_url()),
                token,
            )
            .await
            .unwrap();
        });
    });
    *shared = Some((shutdown, thread));
}

/// Stops the shared hub controllers, stepping down as a hub does (its admission configurations
/// removed), and waits until they have.
#[allow(
    dead_code,
    reason = "the it binary's shared hub runs until the binary ends"
)]
pub fn stop_hub_controller() {
    let shared = SHARED_HUB
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some((shutdown, thread)) = shared {
        shutdown.cancel();
        thread.join().expect("the shared hub controllers stop");
    }
}

/// Agent options for a fresh cluster: unique names, a 5 s lease, the managed cluster's URL.
#[must_use]
pub fn options(managed: Client, prefix: &str) -> AgentOptions {
    let cluster = common::unique(prefix);
    let mut opts = AgentOptions::new(managed, cluster.clone());
    opts.namespace = format!("{cluster}-agent");
    opts.lease_duration_seconds = Some(5);
    opts.max_backoff = Duration::from_secs(2);
    let (url, ca) = common::server_and_ca(&common::env().managed);
    opts.client_config = Some(ClientConfig {
        url,
        ca_bundle: Some(ByteString(
            base64::engine::general_purpose::STANDARD
                .decode(ca)
                .unwrap(),
        )),
    });
    opts
}

/// A running agent.
pub struct Agent {
    /// Its options.
    pub opts: AgentOptions,
    stop: Option<clusteradm::runtime::Shutdown>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

/// Creates the agent namespace and the bootstrap secret (kubeconfig `bootstrap`), then starts the agent.
pub async fn start(opts: AgentOptions, bootstrap: &str) -> Agent {
    let name = opts.bootstrap_secret.clone();
    start_with_secrets(opts, &[(&name, bootstrap)]).await
}

/// Creates the agent namespace and bootstrap secrets (name, kubeconfig), then starts the agent.
pub async fn start_with_secrets(opts: AgentOptions, bootstraps: &[(&str, &str)]) -> Agent {
    let ns: Api<Namespace> = Api::all(opts.managed.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(opts.namespace.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    ns.create(&PostParams::default(), &namespace).await.unwrap();
    let secrets: Api<Secret> = Api::namespaced(opts.managed.clone(), &opts.namespace);
    for (name, kubeconfig) in bootstraps {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some((*name).to_string()),
                ..Default::default()
            },
            string_data: Some(BTreeMap::from([(
                "kubeconfig".to_string(),
                (*kubeconfig).to_string(),
            )])),
            ..Default::default()
        };
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
    }
    let mut agent = Agent {
        opts,
        stop: None,
        task: None,
    };
    agent.resume();
    agent
}

impl Agent {
    /// The cluster name.
    #[must_use]
    pub fn cluster(&self) -> &str {
        &self.opts.cluster_name
    }

    /// Starts (again) the agent loop.
    pub fn resume(&mut self) {
        let token = clusteradm::runtime::Shutdown::new();
        let opts = self.opts.clone();
        self.task = Some(tokio::spawn(agent::run(opts, token.clone())));
        self.stop = Some(token);
    }

    /// Stops the agent loop and waits for it to end.
    pub async fn stop(&mut self) {
        if let Some(token) = self.stop.take() {
            token.cancel();
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("the agent stops promptly")
                .unwrap()
                .unwrap();
        }
    }

    /// Stops the agent, deletes the ManagedCluster (the hub controller cleans up and lets it go)
    /// and the agent namespace.
    pub async fn remove(mut self) {
        self.stop().await;
        let hub = common::hub().await;
        let api: Api<ManagedCluster> = Api::all(hub.clone());
        if let Ok(mc) = api.delete(self.cluster(), &DeleteParams::default()).await {
            let uid = mc.left().and_then(|m| m.metadata.uid).unwrap_or_default();
            wait_deleted(api, self.cluster(), &uid).await;
        }
        let ns: Api<Namespace> = Api::all(self.opts.managed.clone());
        let _ = ns
            .delete(&self.opts.namespace, &DeleteParams::default())
            .await;
    }

    /// The hub kubeconfig secret once it holds a certificate.
    pub async fn hub_secret(&self) -> Secret {
        let secrets: Api<Secret> = Api::namespaced(self.opts.managed.clone(), &self.opts.namespace);
        wait(
            secrets,
            &self.opts.hub_secret,
            "the hub kubeconfig secret",
            |s: Option<&Secret>| {
                s.and_then(|s| s.data.as_ref())
                    .is_some_and(|d| d.contains_key("tls.crt"))
            },
        )
        .await
    }
}

/// A hub client with the certificate of a hub kubeconfig secret.
pub async fn cert_client(secret: &Secret) -> Client {
    let data = secret.data.as_ref().unwrap();
    let text = |k: &str| String::from_utf8(data[k].0.clone()).unwrap();
    common::hub_client_with_cert(&text("tls.crt"), &text("tls.key")).await
}

/// Waits (watching, bounded) until `cond` holds for the object `name`.
pub async fn wait<K>(
    api: Api<K>,
    name: &str,
    what: &str,
    cond: impl kube::runtime::wait::Condition<K>,
) -> K
where
    K: Resource + Clone + std::fmt::Debug + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    wait_for(api, name, what, cond, Duration::from_secs(90)).await
}

/// [`wait`] with an explicit timeout.
pub async fn wait_for<K>(
    api: Api<K>,
    name: &str,
    what: &str,
    cond: impl kube::runtime::wait::Condition<K>,
    timeout: Duration,
) -> K
where
    K: Resource + Clone + std::fmt::Debug + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    tokio::time::timeout(timeout, await_condition(api, name, cond))
        .await
        .unwrap_or_else(|_| panic!("timed out after {timeout:?} waiting for {what} ({name})"))
        .unwrap()
        .unwrap_or_else(|| panic!("{name} is gone while waiting for {what}"))
}

/// Waits (watching, bounded) until the object `name` with `uid` is gone.
pub async fn wait_deleted<K>(api: Api<K>, name: &str, uid: &str)
where
    K: Resource + Clone + std::fmt::Debug + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    tokio::time::timeout(
        Duration::from_secs(90),
        await_condition(api, name, conditions::is_deleted(uid)),
    )
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {name} to be deleted"))
    .unwrap();
}

/// A ManagedCluster condition's status.
#[must_use]
pub fn condition(mc: Option<&ManagedCluster>, type_: &str) -> Option<String> {
    let status = mc?.status.as_ref()?;
    clusteradm::api::conditions::find(&status.conditions, type_).map(|c| c.status.clone())
}

/// Waits until the cluster's condition `type_` has `status`.
pub async fn wait_condition(cluster: &str, type_: &str, status: &str) -> ManagedCluster {
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    let (t, s) = (type_.to_string(), status.to_string());
    wait(
        api,
        cluster,
        &format!("{type_}={status}"),
        move |mc: Option<&ManagedCluster>| condition(mc, &t).as_deref() == Some(s.as_str()),
    )
    .await
}

/// Accepts the cluster with the binary (`--wait`: the agent may not have asked yet).
pub async fn accept(cluster: &str) -> std::process::Output {
    let mut cmd = common::clusteradm();
    cmd.args([
        "accept",
        "--wait",
        "--timeout",
        "90",
        "--clusters",
        cluster,
        "--kubeconfig",
    ])
    .arg(common::env().hub);
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "accept failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Starts an agent with `opts`, accepts it, and waits until it is joined and available.
pub async fn joined(opts: AgentOptions) -> Agent {
    let token = hub().await;
    let agent = start(opts, &common::hub_kubeconfig_with_token(&token)).await;
    accept(agent.cluster()).await;
    wait_condition(agent.cluster(), "ManagedClusterJoined", "True").await;
    wait_condition(agent.cluster(), "ManagedClusterConditionAvailable", "True").await;
    agent
}

/// How many CSRs cluster `cluster`'s agents have sent.
pub async fn csr_count(cluster: &str) -> usize {
    let api: Api<k8s_openapi::api::certificates::v1::CertificateSigningRequest> =
        Api::all(common::hub().await);
    let selector = format!("open-cluster-management.io/cluster-name={cluster}");
    api.list(&kube::api::ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
        .len()
}
