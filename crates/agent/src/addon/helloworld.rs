//! The agent of the example add-on `helloworld`, as upstream's (addon-framework
//! `examples/helloworld_agent`): it copies every ConfigMap of its cluster's namespace on the hub
//! into the add-on's install namespace on the managed cluster (labelled `synced-from-hub`), and
//! renews the Lease named after the add-on there. It talks to the hub only with the add-on's own
//! identity (`<addon>-hub-kubeconfig`), which the template lets read ConfigMaps in that one
//! namespace and nothing else.
//!
//! `clusteradm addon agent helloworld` runs it from a kubeconfig file, as the template's
//! Deployment does; `join --in-process` runs it from the secret, in the agent's process.
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use ocm_runtime::Shutdown;

/// The example add-on's name.
pub const NAME: &str = "helloworld";
/// The ServiceAccount its Deployment runs as (in the install namespace), which the in-process
/// agent impersonates.
pub const SERVICE_ACCOUNT: &str = "helloworld-agent";
/// Label on the ConfigMaps the agent copied.
pub const SYNCED_LABEL: &str = "synced-from-hub";
const FIELD_MANAGER: &str = "helloworld-agent";
const LEASE_DURATION_SECONDS: i32 = 60;
const RENEW_EVERY: Duration = Duration::from_secs(20);

/// Where the agent works.
#[derive(Clone)]
pub struct Options {
    /// Hub client with the add-on's identity.
    pub hub: Client,
    /// Managed-cluster client: where the ConfigMaps go.
    pub managed: Client,
    /// Client of the cluster the agent runs on, where it renews its Lease: the managed cluster,
    /// or a Hosted add-on's hosting cluster (as upstream's agent, which renews it in-cluster).
    pub local: Client,
    /// The cluster's name on the hub (the namespace it reads).
    pub cluster: String,
    /// The add-on's name (its Lease's name).
    pub addon: String,
    /// The install namespace on the managed cluster.
    pub namespace: String,
}

/// The managed-cluster client the in-process agent uses: `managed` acting as the Deployment's
/// ServiceAccount in `namespace`, never as the klusterlet. The namespace comes from the add-on's
/// status, which the cluster's hub credential may write, so only that account's RBAC (granted by
/// the add-on's own manifests, in its install namespace) bounds what the agent touches.
#[must_use]
pub fn managed_client(managed: &Client, namespace: &str) -> Client {
    let (user, groups) = ocm_runtime::impersonate::service_account(namespace, SERVICE_ACCOUNT);
    ocm_runtime::impersonate::as_user(managed, &user, &groups)
}

/// Copies ConfigMaps and renews the lease until `shutdown` is cancelled.
pub async fn run(opts: Options, shutdown: Shutdown) {
    tokio::select! {
        () = shutdown.cancelled() => {}
        () = copy_config_maps(&opts) => {}
        () = renew_lease(&opts) => {}
    }
}

async fn copy_config_maps(opts: &Options) {
    let hub: Api<ConfigMap> = Api::namespaced(opts.hub.clone(), &opts.cluster);
    let managed: Api<ConfigMap> = Api::namespaced(opts.managed.clone(), &opts.namespace);
    let mut events = watcher(hub, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(event) = events.next().await {
        let cm = match event {
            Ok(cm) => cm,
            Err(e) => {
                tracing::debug!(cluster = %opts.cluster, "helloworld: watching ConfigMaps on the hub: {e}");
                continue;
            }
        };
        let copy = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": cm.name_any(), "namespace": opts.namespace, "labels": {SYNCED_LABEL: ""}},
            "data": cm.data,
            "binaryData": cm.binary_data,
        });
        match managed
            .patch(
                &cm.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&copy),
            )
            .await
        {
            Ok(_) => {
                tracing::info!(cluster = %opts.cluster, "helloworld: copied ConfigMap {}", cm.name_any());
            }
            Err(e) => {
                tracing::warn!(cluster = %opts.cluster, "helloworld: copying ConfigMap {}: {e}", cm.name_any());
            }
        }
    }
}

async fn renew_lease(opts: &Options) {
    let leases: Api<Lease> = Api::namespaced(opts.local.clone(), &opts.namespace);
    loop {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": opts.addon, "namespace": opts.namespace},
            "spec": {"leaseDurationSeconds": LEASE_DURATION_SECONDS, "renewTime": now},
        });
        if let Err(e) = leases
            .patch(
                &opts.addon,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&lease),
            )
            .await
        {
            tracing::debug!(cluster = %opts.cluster, "helloworld: renewing its lease: {e}");
        }
        tokio::time::sleep(RENEW_EVERY).await;
    }
}
