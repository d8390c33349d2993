//! Upstream's `ManifestWorkReplicaSet` gate (off by default) on the real hub, in-process: with it
//! off a replica set is left alone (no work on the cluster its placement chose); switched on,
//! the set's work appears.
use std::time::Duration;

use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::work::{ManifestWork, REPLICA_SET_LABEL};
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use serde_json::json;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

/// Creates `object` (any kind) with the admin client.
async fn create(client: &Client, object: serde_json::Value) {
    let obj: DynamicObject = serde_json::from_value(object).unwrap();
    let resolver = clusteradm::apply::Resolver::new(client.clone());
    let gvk = clusteradm::apply::gvk_of(&obj).unwrap();
    let api = resolver
        .api_for(&gvk, obj.metadata.namespace.as_deref())
        .await
        .unwrap();
    api.create(&PostParams::default(), &obj).await.unwrap();
}

/// The works replica set `set` of namespace `ns` made.
async fn works_of(client: &Client, cluster: &str, ns: &str, set: &str) -> Vec<ManifestWork> {
    Api::<ManifestWork>::namespaced(client.clone(), cluster)
        .list(&ListParams::default().labels(&format!("{REPLICA_SET_LABEL}={ns}.{set}")))
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

#[tokio::test]
async fn replica_sets_are_reconciled_only_with_their_gate_on() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    let gate = |mode: &str| json!({"workConfiguration": {"featureGates": [{"feature": "ManifestWorkReplicaSet", "mode": mode}]}});
    // Upstream's default, whatever an earlier run left.
    patch_spec(&client, gate("Disable")).await;
    wait_applied(&client).await;
    // A cluster (accepted: the hub makes its namespace), chosen by a placement in `ns`.
    let cluster = common::unique("lc-mwrs");
    let ns = format!("{cluster}-sets");
    let mc: ManagedCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": cluster, "labels": {"lc-mwrs": cluster}},
        "spec": {"hubAcceptsClient": true}}))
    .unwrap();
    Api::<ManagedCluster>::all(client.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": "global", "namespace": ns}, "spec": {"clusterSet": "global"}}),
    )
    .await;
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "chosen", "namespace": ns},
            // No agent: the cluster is tainted unreachable.
            "spec": {"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"lc-mwrs": cluster}}}}],
                     "tolerations": [{"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
                                     {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"}]}}),
    )
    .await;

    // Off: the set is left alone, and `create work --replicaset` says why.
    let manifest = common::temp_file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: before, namespace: default}\n",
    );
    let mut cmd = common::clusteradm();
    cmd.args(["create", "work", "before", "--replicaset", "-f"])
        .arg(&manifest)
        .args(["--placement", &format!("{ns}/chosen"), "--kubeconfig"])
        .arg(common::env().hub);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("ManifestWorkReplicaSet gate is off"), "{err}");
    common::never(
        "a work of the set with the gate off",
        Duration::from_secs(4),
        || {
            let (client, cluster, ns) = (client.clone(), cluster.clone(), ns.clone());
            async move {
                let works = works_of(&client, &cluster, &ns, "before").await;
                (!works.is_empty()).then_some(works.len())
            }
        },
    )
    .await;

    // On: the set's work appears on the chosen cluster.
    patch_spec(&client, gate("Enable")).await;
    common::eventually("the set's work with the gate on", WAIT, || {
        let (client, cluster, ns) = (client.clone(), cluster.clone(), ns.clone());
        async move {
            let works = works_of(&client, &cluster, &ns, "before").await;
            (works.len() == 1).then_some(())
        }
    })
    .await;

    let _ = Api::<ManagedCluster>::all(client.clone())
        .delete(&cluster, &DeleteParams::default())
        .await;
    let _ = Api::<Namespace>::all(client.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
    teardown(&client, op).await;
}
