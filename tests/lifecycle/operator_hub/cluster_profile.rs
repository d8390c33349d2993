//! Upstream's `ClusterProfile` gate on the real hub, in-process: switched on, the operator
//! installs the ClusterInventory CRD and the hub writes a ClusterProfile per cluster of each set
//! bound to a namespace, mirroring the cluster (and follows it, and the binding); switched off,
//! the hub stops writing and leaves the profiles.
use clusteradm::api::cluster::{ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding};
use clusteradm::api::conditions;
use clusteradm::api::inventory::{self, ClusterProfile};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use std::time::Duration;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

async fn create<K>(api: &Api<K>, value: serde_json::Value) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap()
}

async fn switch_gate(client: &Client, on: bool) {
    let mode = if on { "Enable" } else { "Disable" };
    let gate = json!({"registrationConfiguration": {
        "featureGates": [{"feature": "ClusterProfile", "mode": mode}]}});
    patch_spec(client, gate).await;
    wait_applied(client).await;
}

async fn bound(bindings: &Api<ManagedClusterSetBinding>, name: &str) {
    common::eventually("the binding Bound", WAIT, || {
        let bindings = bindings.clone();
        let name = name.to_string();
        async move {
            let b = bindings.get(&name).await.ok()?;
            conditions::is_true(&b.status?.conditions, "Bound").then_some(())
        }
    })
    .await;
}

/// The report of a joined cluster whose `id.k8s.io` claim is `claim`.
fn report(claim: &str) -> serde_json::Value {
    json!({"status": {"version": {"kubernetes": "v1.36.2"},
        "clusterClaims": [{"name": "id.k8s.io", "value": claim}],
        "conditions": [{"type": "ManagedClusterJoined", "status": "True", "reason": "ManagedClusterJoined",
                        "message": "joined", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
}

/// Two namespaces, a set and a cluster in it that reports itself: `(namespace, later namespace,
/// cluster)`.
async fn arrange(client: &Client, id: &str) -> (String, String, String) {
    let (ns, ns_later, cluster) = (
        format!("{id}-inv"),
        format!("{id}-late"),
        format!("{id}-c1"),
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in [&ns, &ns_later] {
        create(
            &namespaces,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        )
        .await;
    }
    create(
        &Api::<ManagedClusterSet>::all(client.clone()),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
               "metadata": {"name": id}, "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}),
    )
    .await;
    let clusters: Api<ManagedCluster> = Api::all(client.clone());
    create(
        &clusters,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
               "metadata": {"name": cluster, "labels": {"cluster.open-cluster-management.io/clusterset": id}},
               "spec": {"hubAcceptsClient": true,
                        "managedClusterClientConfigs": [{"url": "https://127.0.0.1:16999", "caBundle": "aGVsbG8="}]}}),
    )
    .await;
    clusters
        .patch_status(
            &cluster,
            &PatchParams::default(),
            &Patch::Merge(report("first")),
        )
        .await
        .unwrap();
    (ns, ns_later, cluster)
}

/// `profile` is ours and says what the cluster reports (see [`arrange`]).
fn assert_mirrors(profile: ClusterProfile, set: &str, cluster: &str) {
    assert_eq!(profile.spec.cluster_manager.name, "open-cluster-management");
    assert_eq!(profile.labels()[inventory::LABEL_CLUSTER_SET], set);
    assert_eq!(
        profile.labels()[inventory::LABEL_CLUSTER_MANAGER],
        "open-cluster-management"
    );
    assert_eq!(
        profile.labels()["open-cluster-management.io/cluster-name"],
        cluster
    );
    let status = profile.status.unwrap();
    assert_eq!(status.version.kubernetes, "v1.36.2");
    assert_eq!(status.properties[0].name, "id.k8s.io");
    assert!(conditions::is_true(&status.conditions, inventory::JOINED));
    let access = &status.access_providers[0];
    assert_eq!(access.cluster.server, "https://127.0.0.1:16999");
    assert_eq!(
        access.cluster.extensions[0].extension["clusterName"],
        cluster
    );
}

#[tokio::test]
async fn profiles_follow_bound_sets_while_the_gate_is_on() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    let id = common::unique("lc-prof");
    let (ns, ns_later, cluster) = arrange(&client, &id).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let clusters: Api<ManagedCluster> = Api::all(client.clone());
    let bindings: Api<ManagedClusterSetBinding> = Api::namespaced(client.clone(), &ns);
    let binding = json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
                         "metadata": {"name": id}, "spec": {"clusterSet": id}});
    create(&bindings, binding.clone()).await;
    bound(&bindings, &id).await;

    // On: the CRD is installed, and the namespace gets a profile mirroring the cluster.
    switch_gate(&client, true).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    assert!(crds.get_opt(inventory::CRD_NAME).await.unwrap().is_some());
    let profiles: Api<ClusterProfile> = Api::namespaced(client.clone(), &ns);
    let mirrored = |claim: &'static str| {
        let (profiles, cluster) = (profiles.clone(), cluster.clone());
        move || {
            let (profiles, cluster) = (profiles.clone(), cluster.clone());
            async move {
                let p = profiles.get(&cluster).await.ok()?;
                let status = p.status.clone()?;
                (status.properties.first()?.value == claim).then_some(p)
            }
        }
    };
    let profile = common::eventually("a profile of the cluster", WAIT, mirrored("first")).await;
    assert_mirrors(profile, &id, &cluster);

    // It follows the cluster, and the binding.
    clusters
        .patch_status(
            &cluster,
            &PatchParams::default(),
            &Patch::Merge(report("second")),
        )
        .await
        .unwrap();
    common::eventually("the profile follows the claim", WAIT, mirrored("second")).await;
    bindings
        .delete(&id, &DeleteParams::default())
        .await
        .unwrap();
    common::eventually("the profile goes with the binding", WAIT, || {
        let (profiles, cluster) = (profiles.clone(), cluster.clone());
        async move {
            profiles
                .get_opt(&cluster)
                .await
                .ok()?
                .is_none()
                .then_some(())
        }
    })
    .await;
    create(&bindings, binding.clone()).await;
    common::eventually(
        "the profile back with the binding",
        WAIT,
        mirrored("second"),
    )
    .await;

    // Off: the hub stops writing and leaves the profiles; a new binding gets none (on, it got
    // one within a fraction of a second above).
    switch_gate(&client, false).await;
    let later: Api<ManagedClusterSetBinding> = Api::namespaced(client.clone(), &ns_later);
    create(&later, binding).await;
    bound(&later, &id).await;
    let later_profiles = Api::<ClusterProfile>::namespaced(client.clone(), &ns_later);
    common::never(
        "a profile written with the gate off",
        Duration::from_secs(3),
        || {
            let later_profiles = later_profiles.clone();
            async move {
                let list = later_profiles
                    .list(&kube::api::ListParams::default())
                    .await
                    .ok()?;
                list.items.first().map(ResourceExt::name_any)
            }
        },
    )
    .await;
    assert!(
        profiles.get_opt(&cluster).await.unwrap().is_some(),
        "left as it was"
    );

    let _ = clusters.delete(&cluster, &DeleteParams::default()).await;
    let _ = Api::<ManagedClusterSet>::all(client.clone())
        .delete(&id, &DeleteParams::default())
        .await;
    for name in [&ns, &ns_later] {
        let _ = namespaces.delete(name, &DeleteParams::default()).await;
    }
    teardown(&client, op).await;
}
