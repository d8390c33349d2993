//! What the pod tests share: the image, the kubeconfigs pods reach the API servers by, clients,
//! and waiting on pods and conditions.
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};

use crate::common;

/// The environment `scripts/test-pods` sets.
pub struct PodsEnv {
    /// Our image's reference, loaded into every node.
    pub image: String,
    /// Another tag of it, also on every node: what `upgrade` moves the fleet to.
    pub next_image: String,
    /// Hub kubeconfig naming the hub's node IP (what a join command run in a pod must name).
    pub hub: PathBuf,
    /// Managed cluster's kubeconfig, likewise.
    pub managed: PathBuf,
}

/// Variable `name` of the environment `scripts/test-pods` sets, failing with the command to run
/// when it is missing.
fn required(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the pod tests with scripts/test-pods (it starts the nodes, CP_HOSTED=1's clusters included, and builds the image)")
    })
}

/// Reads the environment.
pub fn env() -> PodsEnv {
    let get = required;
    PodsEnv {
        image: get("CLUSTERADM_IMAGE"),
        next_image: get("CLUSTERADM_IMAGE_NEXT"),
        hub: get("HUB_PODS_KUBECONFIG").into(),
        managed: get("MANAGED_PODS_KUBECONFIG").into(),
    }
}

/// The clusters of Hosted mode (`CP_HOSTED=1`, which `scripts/test-pods` sets).
pub struct HostedEnv {
    /// The management cluster's kubeconfig (with a node: the agents run there).
    pub management: PathBuf,
    /// The hosted (managed) cluster's kubeconfig as the management node's pods reach it.
    pub hosted: PathBuf,
}

/// Reads the Hosted mode environment.
pub fn hosted_env() -> HostedEnv {
    let get = required;
    HostedEnv {
        management: get("MANAGEMENT_PODS_KUBECONFIG").into(),
        hosted: get("HOSTED_PODS_KUBECONFIG").into(),
    }
}

/// Serialises the tests of this binary (they share one hub and one Klusterlet), and notes when
/// the current one started (see [`started`]).
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let guard = LOCK.lock().await;
    *STARTED.lock().unwrap() = Some(k8s_openapi::jiff::Timestamp::now());
    guard
}

static STARTED: std::sync::Mutex<Option<k8s_openapi::jiff::Timestamp>> =
    std::sync::Mutex::new(None);

/// When the test holding [`serial`] took it: what the clusters' audit logs hold from before is
/// another test's (whose teardown takes its agents' RBAC away while they stop).
pub fn started() -> Option<k8s_openapi::jiff::Timestamp> {
    *STARTED.lock().unwrap()
}

/// Runs clusteradm with `args`, asserting success, and returns its stdout.
pub fn clusteradm(args: &[&str]) -> String {
    let out = common::clusteradm()
        .args(args)
        .timeout(Duration::from_secs(300))
        .output()
        .expect("clusteradm runs");
    assert!(
        out.status.success(),
        "clusteradm {} failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ManifestWork API.
pub fn works(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("work.open-cluster-management.io", "v1", "ManifestWork");
    Api::namespaced_with(client.clone(), namespace, &ApiResource::from_gvk(&gvk))
}

/// An API of cluster-scoped OCM kind `kind` in `group`/`version`.
pub fn cluster_scoped(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Api::all_with(client.clone(), &ApiResource::from_gvk(&gvk))
}

/// Whether condition `type_` of an object's `status.conditions` is `True`.
pub fn condition_true(obj: &DynamicObject, type_: &str) -> bool {
    obj.data["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == type_ && c["status"] == "True")
        })
}

/// Whether a pod is Ready and not being deleted.
pub fn pod_ready(p: &Pod) -> bool {
    p.metadata.deletion_timestamp.is_none()
        && p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Waits until Deployment `namespace/name` has a ready pod; returns that pod.
pub async fn ready_pod(client: &Client, namespace: &str, app: &str, timeout: Duration) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    common::eventually(
        &format!("a ready pod of {namespace}/{app}"),
        timeout,
        || {
            let pods = pods.clone();
            async move {
                let list = pods
                    .list(&ListParams::default().labels(&format!("app={app}")))
                    .await
                    .ok()?;
                list.items.into_iter().find(pod_ready)
            }
        },
    )
    .await
}

/// Admin clients of the hub and the managed cluster.
pub async fn clients() -> (Client, Client) {
    let env = env();
    (
        common::client(&env.hub).await,
        common::client(&env.managed).await,
    )
}

/// The InternalIP of node `name`.
pub async fn node_address(client: &Client, name: &str) -> String {
    Api::<k8s_openapi::api::core::v1::Node>::all(client.clone())
        .get(name)
        .await
        .unwrap()
        .status
        .and_then(|s| s.addresses)
        .unwrap_or_default()
        .into_iter()
        .find(|a| a.type_ == "InternalIP")
        .expect("the node's address")
        .address
}
