//! Upstream's `DefaultClusterSet` gate on the real hub, in-process. Off: a new cluster stays in
//! no set and a deleted `default` set is not made again. On (upstream's default): the cluster is
//! put into `default`, and the set is made again.
use std::time::Duration;

use clusteradm::api::cluster::{
    CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET, ManagedCluster, ManagedClusterSet,
};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::wait::{await_condition, conditions::is_deleted};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

fn gate(mode: &str) -> serde_json::Value {
    json!({"registrationConfiguration": {"featureGates": [{"feature": "DefaultClusterSet", "mode": mode}]}})
}

/// `Some(set)` once the cluster is labelled with a set.
async fn set_of(clusters: Api<ManagedCluster>, name: String) -> Option<String> {
    clusters
        .get_opt(&name)
        .await
        .ok()??
        .labels()
        .get(CLUSTER_SET_LABEL)
        .filter(|s| !s.is_empty())
        .cloned()
}

/// `Some` once the `default` set exists.
async fn default_set(sets: Api<ManagedClusterSet>) -> Option<()> {
    sets.get_opt(DEFAULT_CLUSTER_SET).await.ok()?.map(|_| ())
}

#[tokio::test]
async fn new_clusters_go_into_default_only_with_the_gate_on() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    patch_spec(&client, gate("Disable")).await;
    wait_applied(&client).await;
    let clusters = Api::<ManagedCluster>::all(client.clone());
    let sets = Api::<ManagedClusterSet>::all(client.clone());

    // Off: no set for a new cluster, and the deleted `default` set stays deleted.
    let name = common::unique("lc-defset");
    create_cluster(&client, &name).await;
    delete_default_set(&sets).await;
    common::never(
        "a set label or the default set with the gate off",
        Duration::from_secs(4),
        || {
            let (clusters, sets, name) = (clusters.clone(), sets.clone(), name.clone());
            async move {
                if let Some(set) = set_of(clusters, name).await {
                    return Some(format!("the cluster is in {set}"));
                }
                default_set(sets)
                    .await
                    .map(|()| "the default set was made again".to_string())
            }
        },
    )
    .await;

    // On: both.
    patch_spec(&client, gate("Enable")).await;
    let set = common::eventually("the cluster in a set with the gate on", WAIT, || {
        set_of(clusters.clone(), name.clone())
    })
    .await;
    assert_eq!(set, DEFAULT_CLUSTER_SET);
    common::eventually("the default set made again", WAIT, || {
        default_set(sets.clone())
    })
    .await;

    let _ = clusters.delete(&name, &DeleteParams::default()).await;
    teardown(&client, op).await;
}

async fn create_cluster(client: &Client, name: &str) {
    let mc: ManagedCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name}, "spec": {"hubAcceptsClient": false}}))
    .unwrap();
    Api::<ManagedCluster>::all(client.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
}

/// Deletes the `default` set (if there) and waits until it is gone.
async fn delete_default_set(sets: &Api<ManagedClusterSet>) {
    let Some(set) = sets.get_opt(DEFAULT_CLUSTER_SET).await.unwrap() else {
        return;
    };
    sets.delete(DEFAULT_CLUSTER_SET, &DeleteParams::default())
        .await
        .unwrap();
    let uid = set.metadata.uid.unwrap_or_default();
    tokio::time::timeout(
        WAIT,
        await_condition(sets.clone(), DEFAULT_CLUSTER_SET, is_deleted(&uid)),
    )
    .await
    .expect("the default set is deleted")
    .unwrap();
}
