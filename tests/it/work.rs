//! ManifestWorks end to end: `create work` / `get works` / `delete work` against the real hub, and
//! the work agent (run in-process, as `join --in-process` would) applying them on the real
//! managed cluster. Each test has its own cluster namespace on the hub and its own agent; objects
//! on the shared managed cluster get unique names, except in the docs example (below), the only
//! test using the docs' names.
//!
//! Submodules: `docs_example` (the OCM docs' first ManifestWork, through the CLI), `lifecycle` (overwrite, prune, delete, orphan, drift, offline agent),
//! `failures` (bad manifests the agent reports, bad input the CLI refuses), `executor` (escalation
//! through `spec.executor`, the review cache), `feedback` (status
//! feedback rules), `credential` (the
//! agent with exactly the RBAC an accepted cluster gets), `shared` (agents of several clusters
//! on one managed API server, as `scripts/bench/scale` runs them).
mod credential;
mod docs_example;
mod eviction;
mod exec_credentials;
mod executor;
mod failures;
mod feedback;
mod ignore_fields;
mod lifecycle;
mod rbac_last;
mod shared;
mod strategies;

use std::time::Duration;

use clusteradm::agent::work::{AppliedNames, WorkAgentOptions};
use clusteradm::api::conditions::{self, APPLIED, AVAILABLE};
use clusteradm::api::work::{AppliedManifestWork, ManifestWork};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::wait::await_condition;
use kube::{Client, ResourceExt as _};

use crate::common;

/// How long a test waits for the agent to act.
pub const WAIT: Duration = Duration::from_secs(60);

/// Holds the hub against tests that remove the hub CRDs (the ClusterManager cleanup deletes
/// them, which would take every ManifestWork with it). Take it before [`TestCluster::new`].
pub async fn hub_lock() -> tokio::sync::MutexGuard<'static, ()> {
    common::HUB_SINGLETON.lock().await
}

/// A cluster of one test: a fresh namespace on the hub, the CRDs installed on both sides. On
/// drop (also when the test fails) it removes what the test left: the hub namespace with its
/// works (finalizers stripped: their agent is gone), the managed namespaces it made, and the
/// agent's AppliedManifestWorks.
pub struct TestCluster {
    /// The cluster name = hub namespace.
    pub name: String,
    /// Admin client of the hub.
    pub hub: Client,
    /// Admin client of the managed cluster.
    pub managed: Client,
    managed_namespaces: std::sync::Mutex<Vec<String>>,
}

impl TestCluster {
    /// Installs the CRDs (idempotent) and creates the cluster namespace on the hub.
    pub async fn new(prefix: &str) -> Self {
        // The agent's logs, shown for failed tests with RUST_LOG=clusteradm=debug.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let (hub, managed) = (common::hub().await, common::managed().await);
        common::install_crds(&hub, &clusteradm::api::hub_crds(), WAIT).await;
        common::install_crds(&managed, &clusteradm::api::managed_crds(), WAIT).await;
        let name = common::unique(prefix);
        create_namespace(&hub, &name).await;
        Self {
            name,
            hub,
            managed,
            managed_namespaces: std::sync::Mutex::default(),
        }
    }

    /// A fresh namespace on the managed cluster for this test's objects.
    pub async fn managed_namespace(&self) -> String {
        let ns = common::unique("it-work-ns");
        create_namespace(&self.managed, &ns).await;
        self.managed_namespaces.lock().unwrap().push(ns.clone());
        ns
    }

    /// Creates the ManifestWork `name` with `spec` in this cluster's namespace on the hub;
    /// returns it as sent.
    pub async fn create_work(
        &self,
        name: &str,
        spec: clusteradm::api::work::ManifestWorkSpec,
    ) -> ManifestWork {
        let mut work = ManifestWork::new(name, spec);
        work.metadata.namespace = Some(self.name.clone());
        self.works()
            .create(&PostParams::default(), &work)
            .await
            .unwrap();
        work
    }

    /// The AppliedManifestWorks of this cluster's agent (its id is `<cluster>-agent`).
    pub async fn records(&self) -> Vec<AppliedManifestWork> {
        let agent = format!("{}-agent", self.name);
        Api::<AppliedManifestWork>::all(self.managed.clone())
            .list(&kube::api::ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|r| r.spec.agent_id.as_deref() == Some(agent.as_str()))
            .collect()
    }

    /// The works API of this cluster's namespace.
    pub fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.name)
    }

    /// Starts a work agent for this cluster with an admin hub client.
    pub fn agent(&self, resync: Duration) -> Agent {
        Agent::start(self.hub.clone(), self.managed.clone(), &self.name, resync)
    }

    /// Starts a work agent that shares the managed API server with other clusters' agents.
    pub fn sharing_agent(&self) -> Agent {
        Agent::start_with(self.hub.clone(), self.managed.clone(), &self.name, |opts| {
            opts.applied_names = AppliedNames::PerCluster;
        })
    }
}

/// A ManifestWork `name` of one ConfigMap `config_map` in `ns` (data `from: <config_map>`).
pub fn config_map_work(name: &str, ns: &str, config_map: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": config_map, "namespace": ns}, "data": {"from": config_map}}]}}
    })
}

/// `clusteradm ... --kubeconfig <hub>`.
pub fn hub_cli(args: &[&str]) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.args(args).arg("--kubeconfig").arg(&common::env().hub);
    cmd
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        let (hub, managed, cluster) = (self.hub.clone(), self.managed.clone(), self.name.clone());
        let namespaces = std::mem::take(&mut *self.managed_namespaces.lock().unwrap());
        run_from_drop(cleanup(hub, managed, cluster, namespaces));
    }
}

/// Runs an async cleanup from a destructor (also when the test failed): on its own thread and
/// runtime, waited for.
pub fn run_from_drop(cleanup: impl Future<Output = ()> + Send + 'static) {
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(cleanup);
    });
    let _ = thread.join();
}

async fn cleanup(hub: Client, managed: Client, cluster: String, namespaces: Vec<String>) {
    use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
    let strip = serde_json::json!({"metadata": {"finalizers": null}});
    let works: Api<ManifestWork> = Api::namespaced(hub.clone(), &cluster);
    for w in works
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let _ = works
            .patch(
                &w.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&strip),
            )
            .await;
    }
    let _ = Api::<Namespace>::all(hub)
        .delete(&cluster, &DeleteParams::default())
        .await;
    let records: Api<AppliedManifestWork> = Api::all(managed.clone());
    let agent_id = format!("{cluster}-agent");
    for r in records
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        if r.spec.agent_id.as_deref() == Some(agent_id.as_str()) {
            let _ = records
                .patch(
                    &r.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&strip),
                )
                .await;
            let _ = records
                .delete(&r.name_any(), &DeleteParams::default())
                .await;
        }
    }
    for ns in namespaces {
        let _ = Api::<Namespace>::all(managed.clone())
            .delete(&ns, &DeleteParams::default())
            .await;
    }
}

/// Creates a namespace (on the hub: a cluster namespace; on the managed cluster: a test's own).
pub async fn create_namespace(client: &Client, name: &str) {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
}

/// A work agent running in this process until stopped or dropped.
pub struct Agent {
    stop: Option<clusteradm::runtime::Shutdown>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Agent {
    /// Starts an agent for `cluster` with the given hub credential.
    pub fn start(hub: Client, managed: Client, cluster: &str, resync: Duration) -> Self {
        Self::start_with(hub, managed, cluster, |opts| opts.resync = resync)
    }

    /// Starts an agent for `cluster` with options changed by `tune`.
    pub fn start_with(
        hub: Client,
        managed: Client,
        cluster: &str,
        tune: impl FnOnce(&mut WorkAgentOptions),
    ) -> Self {
        let (server, _) = common::server_and_ca(&common::env().hub);
        let mut opts =
            WorkAgentOptions::new(hub, server, managed, cluster, format!("{cluster}-agent"));
        tune(&mut opts);
        let stop = clusteradm::runtime::Shutdown::new();
        let task = tokio::spawn(clusteradm::agent::work::run(opts, stop.clone()));
        Self {
            stop: Some(stop),
            task,
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
        self.task.abort();
    }
}

/// Waits (watching, bounded by [`WAIT`]) until the work satisfies `check`.
pub async fn wait_work(
    works: &Api<ManifestWork>,
    name: &str,
    what: &str,
    check: impl Fn(&ManifestWork) -> bool + Send + 'static,
) -> ManifestWork {
    tokio::time::timeout(
        WAIT,
        await_condition(works.clone(), name, move |w: Option<&ManifestWork>| {
            w.is_some_and(&check)
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for work {name} to be {what}"))
    .unwrap()
    .unwrap()
}

/// Applied and Available, for the current generation.
pub fn applied_and_available(w: &ManifestWork) -> bool {
    let Some(status) = &w.status else {
        return false;
    };
    [APPLIED, AVAILABLE].iter().all(|t| {
        conditions::find(&status.conditions, t)
            .is_some_and(|c| c.status == "True" && c.observed_generation == w.metadata.generation)
    })
}

/// Waits until `name` is gone from `api`.
pub async fn wait_gone<K>(api: Api<K>, name: &str, uid: &str)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
{
    tokio::time::timeout(
        WAIT,
        await_condition(api, name, kube::runtime::wait::conditions::is_deleted(uid)),
    )
    .await
    .unwrap_or_else(|_| panic!("{name} was not deleted within {WAIT:?}"))
    .unwrap();
}
