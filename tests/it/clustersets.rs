//! Cluster sets on the real hub: the hub's cluster-set controllers (built-in `default` and
//! `global`, `ClusterSetEmpty`, `Bound`) and the commands that manage sets and bindings, with
//! their refusals.
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use clusteradm::api::cluster::{
    CLUSTER_SET_LABEL, ClusterSetStatus, ManagedCluster, ManagedClusterSet,
    ManagedClusterSetBinding,
};
use clusteradm::api::conditions;

use crate::common;
use crate::registration::fixture;

/// Whether `status` holds condition `type_` with `status_` and `detail` as its reason or message.
fn says(status: Option<&ClusterSetStatus>, type_: &str, status_: &str, detail: &str) -> bool {
    status
        .and_then(|st| conditions::find(&st.conditions, type_))
        .is_some_and(|c| c.status == status_ && (c.reason == detail || c.message == detail))
}

async fn cluster(hub: &kube::Client, name: &str) {
    let mc: ManagedCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name}, "spec": {}
    }))
    .unwrap();
    Api::<ManagedCluster>::all(hub.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
}

async fn namespace(hub: &kube::Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one set's life, from create to delete
async fn the_hub_keeps_the_builtin_sets_and_reports_membership_and_binding() {
    fixture::hub().await;
    let hub = common::hub().await;
    let sets: Api<ManagedClusterSet> = Api::all(hub.clone());
    for name in ["default", "global"] {
        fixture::wait(
            sets.clone(),
            name,
            "the built-in set",
            |s: Option<&ManagedClusterSet>| s.is_some(),
        )
        .await;
    }

    let set = common::unique("it-set");
    let (code, out, err) = fixture::on_hub(&["create", "clusterset", &set]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), format!("Clusterset {set} is created"));
    let (_, out, _) = fixture::on_hub(&["create", "clusterset", &set]).await;
    assert_eq!(out.trim(), format!("Clusterset {set} is already created"));
    fixture::wait(
        sets.clone(),
        &set,
        "an empty set",
        |s: Option<&ManagedClusterSet>| {
            says(
                s.and_then(|s| s.status.as_ref()),
                "ClusterSetEmpty",
                "True",
                "NoClusterMatched",
            )
        },
    )
    .await;

    let (c1, c2) = (common::unique("it-set-c"), common::unique("it-set-c"));
    cluster(&hub, &c1).await;
    cluster(&hub, &c2).await;
    let both = format!("{c1},{c2}");
    let (code, out, err) = fixture::on_hub(&["clusterset", "set", &set, "--clusters", &both]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("Cluster {c1} is set")), "{out}");
    let (_, out, _) = fixture::on_hub(&["clusterset", "set", &set, "--clusters", &c1]).await;
    assert_eq!(
        out.trim(),
        format!("Cluster {c1} is already in Clusterset {set}")
    );
    let mcs: Api<ManagedCluster> = Api::all(hub.clone());
    let labelled = mcs.get(&c2).await.unwrap();
    assert_eq!(labelled.metadata.labels.unwrap()[CLUSTER_SET_LABEL], set);
    // `get clusters --clusterset`, as upstream's: the set's clusters only; an unknown set refused.
    let (code, out, err) = fixture::on_hub(&["get", "clusters", "--clusterset", &set]).await;
    assert_eq!(code, 0, "{err}");
    let mut names: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    names.sort_unstable();
    let mut wanted = [c1.as_str(), c2.as_str()];
    wanted.sort_unstable();
    assert_eq!(names, wanted, "{out}");
    let (code, _, err) = fixture::on_hub(&["get", "clusters", "--clusterset", "no-such-set"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("cluster set no-such-set not found"), "{err}");
    fixture::wait(
        sets.clone(),
        &set,
        "two members",
        |s: Option<&ManagedClusterSet>| {
            says(
                s.and_then(|s| s.status.as_ref()),
                "ClusterSetEmpty",
                "False",
                "2 ManagedClusters selected",
            )
        },
    )
    .await;

    let ns = common::unique("it-set-ns");
    namespace(&hub, &ns).await;
    let (code, out, err) = fixture::on_hub(&["clusterset", "bind", &set, "--namespace", &ns]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        format!("Clusterset {set} is bound to Namespace {ns}")
    );
    let (_, out, _) = fixture::on_hub(&["clusterset", "bind", &set, "--namespace", &ns]).await;
    assert!(out.contains("already bound"), "{out}");
    let bindings: Api<ManagedClusterSetBinding> = Api::namespaced(hub.clone(), &ns);
    fixture::wait(
        bindings.clone(),
        &set,
        "Bound",
        |b: Option<&ManagedClusterSetBinding>| {
            says(
                b.and_then(|b| b.status.as_ref()),
                "Bound",
                "True",
                "ClusterSetBound",
            )
        },
    )
    .await;
    let (code, out, _) = fixture::on_hub(&["get", "clustersets"]).await;
    assert_eq!(code, 0);
    let row = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(set.as_str()))
        .unwrap_or_else(|| panic!("{set} missing from {out}"));
    assert!(row.contains(&ns) && row.trim_end().ends_with('2'), "{row}");

    // A set still bound is not deleted; unbound, it is, and a second delete says so.
    let (code, _, err) = fixture::on_hub(&["delete", "clusterset", &set]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "clusteradm clusterset unbind {set} --namespace {ns}"
        )),
        "{err}"
    );
    let (code, out, _) = fixture::on_hub(&["clusterset", "unbind", &set, "--namespace", &ns]).await;
    assert_eq!(code, 0);
    assert!(out.contains("is unbind from namespace"), "{out}");
    let (code, out, err) = fixture::on_hub(&["delete", "clusterset", &set]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), format!("Clusterset {set} is deleted"));
    let (_, out, _) = fixture::on_hub(&["delete", "clusterset", &set]).await;
    assert!(out.contains("not found or is already deleted"), "{out}");

    // A binding to a set that does not exist is not Bound.
    let orphan: ManagedClusterSetBinding = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": set, "namespace": ns}, "spec": {"clusterSet": set}
    }))
    .unwrap();
    bindings
        .create(&PostParams::default(), &orphan)
        .await
        .unwrap();
    fixture::wait(
        bindings.clone(),
        &set,
        "not Bound",
        |b: Option<&ManagedClusterSetBinding>| {
            says(
                b.and_then(|b| b.status.as_ref()),
                "Bound",
                "False",
                "ClusterSetNotFound",
            )
        },
    )
    .await;

    for c in [&c1, &c2] {
        mcs.delete(c, &DeleteParams::default()).await.unwrap();
    }
    let _ = Api::<Namespace>::all(hub)
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_set_commands_refuse_bad_input_and_change_nothing() {
    fixture::hub().await;
    let hub = common::hub().await;
    let set = common::unique("it-set-bad");
    let (code, _, err) = fixture::on_hub(&["create", "clusterset", "Not_A_Label"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("invalid cluster set name"), "{err}");
    let (code, _, err) = fixture::on_hub(&["delete", "clusterset", "default"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("cannot be deleted"), "{err}");
    // No --namespace: `default`, as upstream's.
    let (code, _, err) = fixture::on_hub(&["clusterset", "bind", &set]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("clusteradm create clusterset {set}")),
        "{err}"
    );

    assert_eq!(fixture::on_hub(&["create", "clusterset", &set]).await.0, 0);
    let (code, _, err) = fixture::on_hub(&[
        "clusterset",
        "bind",
        &set,
        "--namespace",
        "no-such-namespace-here",
    ])
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("namespace no-such-namespace-here not found"),
        "{err}"
    );
    // One unknown cluster: none is moved.
    let known = common::unique("it-set-known");
    cluster(&hub, &known).await;
    let list = format!("{known},no-such-cluster");
    let (code, _, err) = fixture::on_hub(&["clusterset", "set", &set, "--clusters", &list]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("no-such-cluster not found on the hub: no cluster was moved"),
        "{err}"
    );
    let mcs: Api<ManagedCluster> = Api::all(hub.clone());
    let unmoved = mcs.get(&known).await.unwrap();
    assert_ne!(
        unmoved
            .metadata
            .labels
            .unwrap_or_default()
            .get(CLUSTER_SET_LABEL),
        Some(&set)
    );
    common::eventually("the set's deletion", Duration::from_secs(30), || async {
        (fixture::on_hub(&["delete", "clusterset", &set]).await.0 == 0).then_some(())
    })
    .await;
    mcs.delete(&known, &DeleteParams::default()).await.unwrap();
}
