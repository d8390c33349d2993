//! Upstream's `ResourceCleanup` gate on the real hub, in-process. Off: deleting a ManagedCluster
//! removes its RBAC and leaves its ManifestWorks, add-ons and namespace; the cluster stays
//! deleting until its works are deleted by someone, as upstream's hub. On (the default): its
//! add-ons and works are deleted with it, then its namespace.
use std::time::Duration;

use clusteradm::api::addon::ManagedClusterAddOn;
use clusteradm::api::cluster::ManagedCluster;
use clusteradm::api::work::ManifestWork;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

/// An accepted cluster (its namespace and ClusterRole made by the hub) holding a ManifestWork
/// and a ManagedClusterAddOn.
async fn cluster_with_work_and_addon(client: &Client, prefix: &str) -> String {
    let cluster = common::unique(prefix);
    let mc: ManagedCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": cluster}, "spec": {"hubAcceptsClient": true}}))
    .unwrap();
    Api::<ManagedCluster>::all(client.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
    common::eventually("the cluster's ClusterRole", WAIT, || {
        let (roles, name) = (Api::<ClusterRole>::all(client.clone()), role(&cluster));
        async move { roles.get_opt(&name).await.ok().flatten() }
    })
    .await;
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "kept", "namespace": cluster},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kept", "namespace": "default"}}]}}}))
    .unwrap();
    Api::<ManifestWork>::namespaced(client.clone(), &cluster)
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
    let addon: ManagedClusterAddOn = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
        "metadata": {"name": "kept", "namespace": cluster}, "spec": {}}))
    .unwrap();
    Api::<ManagedClusterAddOn>::namespaced(client.clone(), &cluster)
        .create(&PostParams::default(), &addon)
        .await
        .unwrap();
    cluster
}

fn role(cluster: &str) -> String {
    format!("open-cluster-management:managedcluster:{cluster}")
}

/// `Some` once `name` is gone from `api` (`None` while it is there, or the read fails).
async fn absent<K>(api: Api<K>, name: String) -> Option<()>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.get_opt(&name).await.ok()?.is_none().then_some(())
}

#[tokio::test]
async fn a_deleted_clusters_works_and_addons_go_only_with_resource_cleanup() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    patch_spec(
        &client,
        json!({"registrationConfiguration": {
            "featureGates": [{"feature": "ResourceCleanup", "mode": "Disable"}]}}),
    )
    .await;
    wait_applied(&client).await;
    let clusters = Api::<ManagedCluster>::all(client.clone());

    // Off: the RBAC goes; the work, the add-on and the cluster stay.
    let kept = cluster_with_work_and_addon(&client, "lc-rc-off").await;
    let works = Api::<ManifestWork>::namespaced(client.clone(), &kept);
    let addons = Api::<ManagedClusterAddOn>::namespaced(client.clone(), &kept);
    clusters
        .delete(&kept, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the deleted cluster's ClusterRole gone", WAIT, || {
        absent(Api::<ClusterRole>::all(client.clone()), role(&kept))
    })
    .await;
    common::never(
        "the cluster, its work or its add-on gone while its work remains",
        Duration::from_secs(3),
        || {
            let (clusters, works, addons, kept) = (
                clusters.clone(),
                works.clone(),
                addons.clone(),
                kept.clone(),
            );
            async move {
                let mut gone = Vec::new();
                for (what, missing) in [
                    ("cluster", absent(clusters, kept.clone()).await),
                    ("work", absent(works, "kept".into()).await),
                    ("add-on", absent(addons, "kept".into()).await),
                ] {
                    if missing.is_some() {
                        gone.push(what);
                    }
                }
                (!gone.is_empty()).then_some(gone)
            }
        },
    )
    .await;
    // Its work deleted by hand, the cluster goes; the namespace and the add-on stay.
    works
        .delete("kept", &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the cluster gone once its work is", WAIT, || {
        absent(clusters.clone(), kept.clone())
    })
    .await;
    let namespace = Api::<Namespace>::all(client.clone())
        .get(&kept)
        .await
        .unwrap();
    assert!(
        namespace.metadata.deletion_timestamp.is_none(),
        "the namespace is being deleted with ResourceCleanup off"
    );
    assert!(addons.get_opt("kept").await.unwrap().is_some());

    // On: the add-on and the work go with the cluster, then the namespace.
    patch_spec(
        &client,
        json!({"registrationConfiguration": {"featureGates": []}}),
    )
    .await;
    wait_applied(&client).await;
    deleted_with_everything(&client).await;

    let _ = Api::<Namespace>::all(client.clone())
        .delete(&kept, &DeleteParams::default())
        .await;
    teardown(&client, op).await;
}

/// With `ResourceCleanup` on: a deleted cluster's work and add-on go with it, then its namespace.
async fn deleted_with_everything(client: &Client) {
    let clusters = Api::<ManagedCluster>::all(client.clone());
    let cleaned = cluster_with_work_and_addon(client, "lc-rc-on").await;
    clusters
        .delete(&cleaned, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the cluster gone with its work and add-on", WAIT, || {
        let (clusters, works, addons, cleaned) = (
            clusters.clone(),
            Api::<ManifestWork>::namespaced(client.clone(), &cleaned),
            Api::<ManagedClusterAddOn>::namespaced(client.clone(), &cleaned),
            cleaned.clone(),
        );
        async move {
            absent(works, "kept".into()).await?;
            absent(addons, "kept".into()).await?;
            absent(clusters, cleaned).await
        }
    })
    .await;
    common::eventually("its namespace deleting", WAIT, || {
        let (namespaces, cleaned) = (Api::<Namespace>::all(client.clone()), cleaned.clone());
        async move {
            let ns = namespaces.get_opt(&cleaned).await.ok()?;
            ns.is_none_or(|n| n.metadata.deletion_timestamp.is_some())
                .then_some(())
        }
    })
    .await;
}
