//! What passes between a ManagedCluster and its add-ons on the hub, as upstream's e2e checks it
//! (`addon_install_test.go`, `addon_lease_test.go`): the cluster's add-on annotations carried to
//! the add-ons a placement installs, `feature.open-cluster-management.io/addon-<name>` labels on
//! the cluster saying how each add-on is, and add-ons made Unknown when their cluster is.
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::addon::{ClusterManagementAddOn, ManagedClusterAddOn};
use clusteradm::api::cluster::{ManagedCluster, PlacementDecision};

use super::clusters;
use super::template::{condition, supervised_agent};
use crate::common;
use crate::registration::fixture;

const HOSTING: &str = "addon.open-cluster-management.io/hosting-cluster-name";
const TEST_ANNOTATION: &str = "addon.open-cluster-management.io/test-annotation";

fn feature(addon: &str) -> String {
    format!("feature.open-cluster-management.io/addon-{addon}")
}

/// Waits until `cluster`'s feature label of `addon` is `value` (`None`: absent).
async fn labelled(hub: &kube::Client, cluster: &str, addon: &str, value: Option<&str>) {
    let (key, want) = (feature(addon), value.map(str::to_owned));
    fixture::wait(
        Api::<ManagedCluster>::all(hub.clone()),
        cluster,
        &format!("label {key}={value:?}"),
        move |c: Option<&ManagedCluster>| {
            c.and_then(|c| c.metadata.labels.as_ref())
                .and_then(|l| l.get(&key))
                == want.as_ref()
        },
    )
    .await;
}

/// Sets `cluster`'s `ManagedClusterConditionAvailable`, as its agent or the hub would.
async fn cluster_available(hub: &kube::Client, cluster: &str, status: &str, reason: &str) {
    let condition = json!({"type": "ManagedClusterConditionAvailable", "status": status,
        "reason": reason, "message": "Registration agent stopped updating its lease.",
        "lastTransitionTime": Timestamp::now().to_string()});
    Api::<ManagedCluster>::all(hub.clone())
        .patch_status(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [condition]}})),
        )
        .await
        .unwrap();
}

/// A ManagedClusterAddOn made by hand (no ClusterManagementAddOn: no hub controller deploys it).
async fn addon_on(hub: &kube::Client, cluster: &str, addon: &str) -> Api<ManagedClusterAddOn> {
    let api = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster);
    let mca: ManagedClusterAddOn = serde_json::from_value(
        json!({"metadata": {"name": addon, "namespace": cluster}, "spec": {}}),
    )
    .unwrap();
    api.create(&PostParams::default(), &mca).await.unwrap();
    api
}

/// Sets the add-on's `Available` condition, as its agent would.
async fn addon_available(api: &Api<ManagedClusterAddOn>, addon: &str, status: &str) {
    let condition = json!({"type": "Available", "status": status, "reason": "Test",
        "message": "", "lastTransitionTime": Timestamp::now().to_string()});
    api.patch_status(
        addon,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": [condition]}})),
    )
    .await
    .unwrap();
}

async fn remove_clusters(hub: &kube::Client, clusters: &[String]) {
    for c in clusters {
        let _ = Api::<ManagedCluster>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
        let _ = Api::<Namespace>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
    }
}

/// Waits until `cluster`'s add-on has exactly the add-on annotations `want`.
async fn annotated(hub: &kube::Client, cluster: &str, addon: &str, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    fixture::wait(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster),
        addon,
        &format!("add-on annotations {want:?}"),
        move |m: Option<&ManagedClusterAddOn>| {
            m.is_some_and(|m| {
                let got: Vec<(String, String)> = m
                    .metadata
                    .annotations
                    .iter()
                    .flatten()
                    .filter(|(k, _)| k.starts_with("addon.open-cluster-management.io"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                got == want
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_addon_annotations_follow_it_to_placed_addons() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon-ann").await;
    let clusters_api = Api::<ManagedCluster>::all(hub.clone());
    let annotate =
        |value: serde_json::Value| Patch::Merge(json!({"metadata": {"annotations": value}}));
    clusters_api
        .patch(
            &c[0],
            &PatchParams::default(),
            &annotate(
                json!({HOSTING: "hosting-cluster", TEST_ANNOTATION: "test-value",
                "foo.example.com/bar": "value1"}),
            ),
        )
        .await
        .unwrap();
    clusters_api
        .patch(
            &c[1],
            &PatchParams::default(),
            &annotate(json!({"foo.example.com/bar": "value1"})),
        )
        .await
        .unwrap();

    // Installed by a placement's decision on both clusters.
    let addon = common::unique("it-ann-addon");
    let placement = common::unique("it-ann");
    let cma: ClusterManagementAddOn = serde_json::from_value(json!({
        "metadata": {"name": addon},
        "spec": {"installStrategy": {"type": "Placements", "placements": [
            {"namespace": "default", "name": placement, "rolloutStrategy": {"type": "All"}}]}},
    }))
    .unwrap();
    let cmas = Api::<ClusterManagementAddOn>::all(hub.clone());
    cmas.create(&PostParams::default(), &cma).await.unwrap();
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), "default");
    let decision_name = format!("{placement}-decision-1");
    let decision: PlacementDecision = serde_json::from_value(json!({
        "metadata": {"name": decision_name, "namespace": "default",
            "labels": {"cluster.open-cluster-management.io/placement": placement,
                       "cluster.open-cluster-management.io/decision-group-index": "0"}},
    }))
    .unwrap();
    decisions
        .create(&PostParams::default(), &decision)
        .await
        .unwrap();
    let decided: Vec<_> = c
        .iter()
        .map(|c| json!({"clusterName": c, "reason": ""}))
        .collect();
    decisions
        .patch_status(
            &decision_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": decided}})),
        )
        .await
        .unwrap();

    annotated(
        &hub,
        &c[0],
        &addon,
        &[
            (HOSTING, "hosting-cluster"),
            (TEST_ANNOTATION, "test-value"),
        ],
    )
    .await;
    annotated(&hub, &c[1], &addon, &[]).await;

    // Changed and removed on the cluster: changed and removed on the add-on.
    clusters_api
        .patch(
            &c[0],
            &PatchParams::default(),
            &annotate(json!({HOSTING: null, TEST_ANNOTATION: "updated-value"})),
        )
        .await
        .unwrap();
    annotated(&hub, &c[0], &addon, &[(TEST_ANNOTATION, "updated-value")]).await;

    let _ = cmas.delete(&addon, &DeleteParams::default()).await;
    let _ = decisions
        .delete(&decision_name, &DeleteParams::default())
        .await;
    remove_clusters(&hub, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_is_labelled_with_each_addons_availability() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon-feat").await;
    let cluster = &c[0];
    // A label of an add-on the cluster does not have: removed.
    let stale = common::unique("it-stale");
    Api::<ManagedCluster>::all(hub.clone())
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {feature(&stale): "available"}}})),
        )
        .await
        .unwrap();
    cluster_available(&hub, cluster, "True", "ManagedClusterAvailable").await;
    labelled(&hub, cluster, &stale, None).await;

    let addon = common::unique("it-feat");
    let api = addon_on(&hub, cluster, &addon).await;
    labelled(&hub, cluster, &addon, Some("unreachable")).await;
    addon_available(&api, &addon, "True").await;
    labelled(&hub, cluster, &addon, Some("available")).await;
    addon_available(&api, &addon, "False").await;
    labelled(&hub, cluster, &addon, Some("unhealthy")).await;

    // The add-on gone: so is its label.
    api.delete(&addon, &DeleteParams::default()).await.unwrap();
    labelled(&hub, cluster, &addon, None).await;
    remove_clusters(&hub, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_cluster_makes_its_addons_unknown() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon-hc").await;
    let cluster = &c[0];
    cluster_available(&hub, cluster, "True", "ManagedClusterAvailable").await;
    let addon = common::unique("it-hc");
    let api = addon_on(&hub, cluster, &addon).await;
    addon_available(&api, &addon, "True").await;
    labelled(&hub, cluster, &addon, Some("available")).await;

    // The agent stopped renewing the cluster's lease.
    cluster_available(&hub, cluster, "Unknown", "ManagedClusterLeaseUpdateStopped").await;
    fixture::wait(
        api,
        &addon,
        "Available Unknown from the cluster",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|a| {
                a.status == "Unknown"
                    && a.reason == "ManagedClusterLeaseUpdateStopped"
                    && a.message == "Registration agent stopped updating its lease."
            })
        },
    )
    .await;
    labelled(&hub, cluster, &addon, Some("unreachable")).await;
    remove_clusters(&hub, &c).await;
}

/// Upstream's `addon_lease_test.go`: an add-on with no ClusterManagementAddOn, its install
/// namespace in its status, and a lease there that the test renews, lets lapse and deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_addons_lease_labels_its_cluster_available_unhealthy_then_unreachable() {
    let (agent, shutdown) = supervised_agent("it-addon-lease").await;
    let (hub, managed) = (common::hub().await, common::managed().await);
    let cluster = agent.cluster().to_string();
    let addon = common::unique("addon");
    let api = addon_on(&hub, &cluster, &addon).await;
    api.patch_status(
        &addon,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"namespace": addon}})),
    )
    .await
    .unwrap();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": addon}})).unwrap();
    Api::<Namespace>::all(managed.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let leases = Api::<Lease>::namespaced(managed.clone(), &addon);
    let renewed = |at: Timestamp| -> Lease {
        serde_json::from_value(json!({"metadata": {"name": addon, "namespace": addon},
            "spec": {"renewTime": MicroTime(at)}}))
        .unwrap()
    };
    leases
        .create(&PostParams::default(), &renewed(Timestamp::now()))
        .await
        .unwrap();
    let available = |status: &'static str| {
        move |m: Option<&ManagedClusterAddOn>| {
            condition(m, "Available").is_some_and(|a| a.status == status)
        }
    };
    fixture::wait(api.clone(), &addon, "Available", available("True")).await;
    labelled(&hub, &cluster, &addon, Some("available")).await;

    let past = Timestamp::now() - SignedDuration::from_mins(10);
    leases
        .patch(
            &addon,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"renewTime": MicroTime(past)}})),
        )
        .await
        .unwrap();
    fixture::wait(api.clone(), &addon, "not Available", available("False")).await;
    labelled(&hub, &cluster, &addon, Some("unhealthy")).await;

    leases
        .delete(&addon, &DeleteParams::default())
        .await
        .unwrap();
    fixture::wait(
        api.clone(),
        &addon,
        "Available Unknown",
        available("Unknown"),
    )
    .await;
    labelled(&hub, &cluster, &addon, Some("unreachable")).await;

    shutdown.cancel();
    let _ = api.delete(&addon, &DeleteParams::default()).await;
    let _ = Api::<Namespace>::all(managed)
        .delete(&addon, &DeleteParams::default())
        .await;
    agent.remove().await;
}
