//! ManagedClusterSet `spec.managedNamespaces` on the real control plane, as upstream's e2e
//! (`test/e2e/managed_namespace_test.go`) checks it: the hub lists a set's namespaces in each
//! member's `status.managedNamespaces`, the agent creates them on the managed cluster labelled
//! `clusterset.open-cluster-management.io/<hub hash>: "true"` and reports `NamespaceAvailable`,
//! and a namespace no longer asked for is relabelled `"false"`, not deleted.
//!
//! Each test's agent reaches the hub through a TCP proxy of its own, so its hub URL, hash and
//! label are its own: the other tests' agents share the managed cluster and, like upstream's,
//! release every namespace labelled for their hub that their own cluster does not list.
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::agent::registration::namespaces::decide::{NAMESPACE_AVAILABLE, label_for_hub};
use clusteradm::api::cluster::{CLUSTER_SET_LABEL, ManagedCluster, ManagedClusterSet};
use clusteradm::api::conditions;

use crate::common;
use crate::common::proxy::{Proxy, hub_addr};
use crate::registration::fixture::{self, Agent, wait, wait_condition};

/// An accepted, available agent whose bootstrap kubeconfig names the hub through `proxy`, and
/// the label it puts on managed namespaces.
struct Joined {
    agent: Agent,
    label: String,
    _proxy: Proxy,
}

async fn joined(prefix: &str) -> Joined {
    let token = fixture::hub().await;
    let (ca, upstream) = hub_addr();
    let proxy = Proxy::start(upstream).await;
    let server = format!("https://{}", proxy.addr);
    let bootstrap = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{token: '{token}'}}}}]\ncontexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\ncurrent-context: hub\n"
    );
    let agent = fixture::start(
        fixture::options(common::managed().await, prefix),
        &bootstrap,
    )
    .await;
    fixture::accept(agent.cluster()).await;
    wait_condition(agent.cluster(), "ManagedClusterConditionAvailable", "True").await;
    Joined {
        agent,
        label: label_for_hub(&server),
        _proxy: proxy,
    }
}

async fn create_set(name: &str, selector: serde_json::Value, namespaces: &[&str]) {
    let ns: Vec<_> = namespaces.iter().map(|n| json!({"name": n})).collect();
    let set: ManagedClusterSet = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
        "metadata": {"name": name},
        "spec": {"clusterSelector": selector, "managedNamespaces": ns}
    }))
    .unwrap();
    Api::<ManagedClusterSet>::all(common::hub().await)
        .create(&PostParams::default(), &set)
        .await
        .unwrap();
}

async fn patch<K>(api: &Api<K>, name: &str, body: serde_json::Value)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .unwrap();
}

/// Waits until the cluster's `status.managedNamespaces` is `want` (set, namespace), in order,
/// each entry `NamespaceAvailable=True` with reason `NamespaceApplied`.
async fn wait_listed(cluster: &str, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(s, n)| ((*s).to_string(), (*n).to_string()))
        .collect();
    let what = format!("status.managedNamespaces {want:?}, each available");
    wait(
        Api::<ManagedCluster>::all(common::hub().await),
        cluster,
        &what,
        move |mc: Option<&ManagedCluster>| {
            let list = mc
                .and_then(|mc| mc.status.as_ref())
                .map(|s| s.managed_namespaces.clone())
                .unwrap_or_default();
            let listed: Vec<(String, String)> = list
                .iter()
                .map(|m| (m.cluster_set.clone(), m.name.clone()))
                .collect();
            listed == want
                && list.iter().all(|m| {
                    conditions::find(&m.conditions, NAMESPACE_AVAILABLE).is_some_and(|c| {
                        c.status == conditions::TRUE && c.reason == "NamespaceApplied"
                    })
                })
        },
    )
    .await;
}

/// Waits until namespace `name` on the managed cluster carries `label: value`.
async fn wait_labelled(name: &str, label: &str, value: &str) {
    let (label, value) = (label.to_string(), value.to_string());
    wait(
        Api::<Namespace>::all(common::managed().await),
        name,
        &format!("the namespace labelled {label}={value}"),
        move |ns: Option<&Namespace>| {
            ns.and_then(|ns| ns.metadata.labels.as_ref())
                .and_then(|l| l.get(&label))
                == Some(&value)
        },
    )
    .await;
}

async fn clean_up(joined: Joined, sets: &[&str], namespaces: &[&str]) {
    let hub_sets: Api<ManagedClusterSet> = Api::all(common::hub().await);
    for set in sets {
        let _ = hub_sets.delete(set, &DeleteParams::default()).await;
    }
    joined.agent.remove().await;
    let managed: Api<Namespace> = Api::all(common::managed().await);
    for ns in namespaces {
        let _ = managed.delete(ns, &DeleteParams::default()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sets_namespaces_are_created_labelled_reported_then_released_when_the_cluster_leaves() {
    let j = joined("it-mns").await;
    let c = j.agent.cluster().to_string();
    let set = common::unique("it-mns-set");
    let (a, b) = (common::unique("it-mns-a"), common::unique("it-mns-b"));
    let exclusive = json!({"selectorType": "ExclusiveClusterSetLabel"});
    create_set(&set, exclusive, &[&b, &a]).await;
    let clusters: Api<ManagedCluster> = Api::all(common::hub().await);
    patch(
        &clusters,
        &c,
        json!({"metadata": {"labels": {CLUSTER_SET_LABEL: set}}}),
    )
    .await;

    // The hub lists them (sorted), the agent creates them labelled and reports them available.
    wait_listed(&c, &[(&set, &a), (&set, &b)]).await;
    assert!(
        j.label
            .starts_with("clusterset.open-cluster-management.io/")
    );
    assert_eq!(
        j.label.len(),
        "clusterset.open-cluster-management.io/".len() + 63
    );
    wait_labelled(&a, &j.label, "true").await;
    wait_labelled(&b, &j.label, "true").await;

    // A namespace taken out of the set is relabelled "false", the other stays managed.
    let sets: Api<ManagedClusterSet> = Api::all(common::hub().await);
    patch(
        &sets,
        &set,
        json!({"spec": {"managedNamespaces": [{"name": b}]}}),
    )
    .await;
    wait_listed(&c, &[(&set, &b)]).await;
    wait_labelled(&a, &j.label, "false").await;
    wait_labelled(&b, &j.label, "true").await;

    // The cluster leaves the set: its list empties and the namespace is released, not deleted.
    patch(
        &clusters,
        &c,
        json!({"metadata": {"labels": {CLUSTER_SET_LABEL: null}}}),
    )
    .await;
    wait_listed(&c, &[]).await;
    wait_labelled(&b, &j.label, "false").await;
    wait_labelled(&a, &j.label, "false").await;

    clean_up(j, &[&set], &[&a, &b]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_of_every_set_of_the_cluster_are_managed_and_a_deleted_sets_released() {
    let j = joined("it-mns2").await;
    let c = j.agent.cluster().to_string();
    let (own, selecting) = (common::unique("it-mns2-own"), common::unique("it-mns2-sel"));
    let (a, b) = (common::unique("it-mns2-a"), common::unique("it-mns2-b"));
    create_set(
        &own,
        json!({"selectorType": "ExclusiveClusterSetLabel"}),
        &[&a],
    )
    .await;
    create_set(
        &selecting,
        json!({"selectorType": "LabelSelector",
               "labelSelector": {"matchLabels": {CLUSTER_SET_LABEL: own}}}),
        &[&b],
    )
    .await;
    let clusters: Api<ManagedCluster> = Api::all(common::hub().await);
    patch(
        &clusters,
        &c,
        json!({"metadata": {"labels": {CLUSTER_SET_LABEL: own}}}),
    )
    .await;

    // Sorted by set name: `it-mns2-own-…` before `it-mns2-sel-…`.
    wait_listed(&c, &[(&own, &a), (&selecting, &b)]).await;
    wait_labelled(&a, &j.label, "true").await;
    wait_labelled(&b, &j.label, "true").await;

    Api::<ManagedClusterSet>::all(common::hub().await)
        .delete(&selecting, &DeleteParams::default())
        .await
        .unwrap();
    wait_listed(&c, &[(&own, &a)]).await;
    wait_labelled(&b, &j.label, "false").await;
    wait_labelled(&a, &j.label, "true").await;

    clean_up(j, &[&own], &[&a, &b]).await;
}
