//! The example add-on on the Rust add-on framework (`crates/status-report`) as users deploy it:
//! its manager as its own Deployment on the hub node (`crates/status-report/deploy/manager.yaml`,
//! behind a NodePort), its agent as a Deployment the manager's work puts on the managed node,
//! which reports to the manager over HTTPS with the certificate the manager signed for it; the
//! report makes the add-on Available. Neither identity is refused anything.
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams};

use crate::addon::{addons, on_hub};
use crate::common;
use crate::fixture::{self, ready_pod};
use crate::fleet::{assert_no_refusals, gone};

const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/status-report/deploy/manager.yaml"
);
const NAMESPACE: &str = "status-report";
const NAME: &str = "status-report";
const INSTALL: &str = "open-cluster-management-agent-addon";

/// Deploys the manager, enables the add-on on `cluster`, waits for the agent's report, then
/// removes it all; returns enable → Available by the first report.
pub async fn reports_from_the_managed_node(
    hub: &kube::Client,
    managed: &kube::Client,
    cluster: &str,
) -> Duration {
    deploy_manager(hub).await;

    let t = Instant::now();
    on_hub(&["addon", "enable", "--names", NAME, "--clusters", cluster]);
    let agent = ready_pod(managed, INSTALL, NAME, Duration::from_secs(180)).await;
    assert_eq!(
        agent.spec.as_ref().unwrap().node_name.as_deref(),
        Some("managed-node")
    );
    let available = common::eventually(
        "the add-on Available by its agent's report",
        Duration::from_secs(180),
        || {
            let addons = addons(hub, cluster);
            async move {
                let addon = addons.get(NAME).await.ok()?;
                let conditions = addon.data["status"]["conditions"].as_array()?.clone();
                conditions
                    .into_iter()
                    .find(|c| c["type"] == "Available" && c["status"] == "True")
                    .filter(|c| c["reason"] == "StatusReported")
            }
        },
    )
    .await;
    let enable_to_available = t.elapsed();
    assert!(
        available["message"]
            .as_str()
            .unwrap_or_default()
            .contains("v1."),
        "the managed cluster's version: {available}"
    );
    assert_no_refusals(
        "hub",
        "system:serviceaccount:status-report:status-report-manager",
    );

    remove(hub, cluster).await;
    enable_to_available
}

/// The manager's Deployment, Service, RBAC and ClusterManagementAddOn on the hub, from the
/// shipped manifest; waits for its pod on the hub node.
async fn deploy_manager(hub: &kube::Client) {
    let image = std::env::var("STATUS_REPORT_IMAGE")
        .expect("STATUS_REPORT_IMAGE is not set: run the pod tests with scripts/test-pods");
    let url = format!(
        "https://{}:31443",
        fixture::node_address(hub, "hub-node").await
    );
    let text = std::fs::read_to_string(MANIFEST)
        .unwrap()
        .replace("{{IMAGE}}", &image)
        .replace("{{URL}}", &url);
    let objects = clusteradm::runtime::apply::parse_objects(&text, MANIFEST).unwrap();
    clusteradm::apply::Applier::new(hub.clone(), Duration::from_secs(60))
        .apply(objects)
        .await
        .unwrap();
    let manager_pod = ready_pod(
        hub,
        NAMESPACE,
        "status-report-manager",
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(
        manager_pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("hub-node")
    );
}

/// Disables the add-on on `cluster` (its work goes) and removes the manager.
async fn remove(hub: &kube::Client, cluster: &str) {
    on_hub(&["addon", "disable", "--names", NAME, "--clusters", cluster]);
    gone(
        &fixture::works(hub, cluster),
        &format!("addon-{NAME}-deploy-0"),
    )
    .await;
    let cmas = fixture::cluster_scoped(
        hub,
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ClusterManagementAddOn",
    );
    cmas.delete(NAME, &DeleteParams::default()).await.unwrap();
    gone(&cmas, NAME).await;
    let dp = DeleteParams::default();
    let role = "open-cluster-management:status-report:manager";
    Api::<ClusterRoleBinding>::all(hub.clone())
        .delete(role, &dp)
        .await
        .unwrap();
    Api::<ClusterRole>::all(hub.clone())
        .delete(role, &dp)
        .await
        .unwrap();
    Api::<Namespace>::all(hub.clone())
        .delete(NAMESPACE, &dp)
        .await
        .unwrap();
    common::eventually(
        "the manager's namespace gone",
        Duration::from_secs(120),
        || {
            let namespaces = Api::<Namespace>::all(hub.clone());
            async move { matches!(namespaces.get_opt(NAMESPACE).await, Ok(None)).then_some(()) }
        },
    )
    .await;
}
