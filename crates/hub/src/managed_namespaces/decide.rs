//! Which namespaces a cluster's sets ask it to manage, as upstream's hub
//! `managedNamespaceController` (`pkg/registration/hub/managedcluster/`) lists them in
//! `status.managedNamespaces`: pure, so membership, ordering and what a set change touches are
//! tested without a cluster.
use std::collections::BTreeSet;
use std::sync::Arc;

use kube::ResourceExt as _;

use crate::clustersets::decide::Membership;
use ocm_api::cluster::{ClusterSetManagedNamespace, ManagedCluster, ManagedClusterSet};

/// `status.managedNamespaces` of `cluster`: every `spec.managedNamespaces` entry of every set the
/// cluster belongs to (sets being deleted left out), sorted by set then namespace name, as
/// upstream sorts them. Upstream's hub writes the entries without conditions; here an entry that
/// stays keeps the conditions the agent reported on it, so the hub rewriting the list (it is
/// woken by every change of the cluster, the agent's own status writes included) never makes the
/// agent report them again. A set whose selector does not parse fails the whole list, as
/// upstream's does (its `ClusterSetEmpty` says why).
pub fn managed_namespaces(
    cluster: &ManagedCluster,
    sets: &[Arc<ManagedClusterSet>],
) -> Result<Vec<ClusterSetManagedNamespace>, String> {
    let current = cluster
        .status
        .as_ref()
        .map(|s| s.managed_namespaces.as_slice())
        .unwrap_or_default();
    let mut wanted = Vec::new();
    for set in sets {
        if set.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if !Membership::of(set)?.contains(cluster.labels()) {
            continue;
        }
        let set_name = set.name_any();
        for ns in &set.spec.managed_namespaces {
            let conditions = current
                .iter()
                .find(|c| c.cluster_set == set_name && c.name == ns.name)
                .map(|c| c.conditions.clone())
                .unwrap_or_default();
            wanted.push(ClusterSetManagedNamespace {
                name: ns.name.clone(),
                cluster_set: set_name.clone(),
                conditions,
            });
        }
    }
    wanted.sort_by(|a, b| (&a.cluster_set, &a.name).cmp(&(&b.cluster_set, &b.name)));
    Ok(wanted)
}

/// The clusters a change of `set` may concern: its members now, and those whose status still
/// lists a namespace of it (they may have just left it, or it may be gone).
#[must_use]
pub fn clusters_of_set(set: &ManagedClusterSet, clusters: &[Arc<ManagedCluster>]) -> Vec<String> {
    let name = set.name_any();
    let membership = Membership::of(set).ok();
    let listed = |c: &ManagedCluster| {
        c.status
            .as_ref()
            .is_some_and(|s| s.managed_namespaces.iter().any(|m| m.cluster_set == name))
    };
    clusters
        .iter()
        .filter(|c| membership.as_ref().is_some_and(|m| m.contains(c.labels())) || listed(c))
        .map(|c| c.name_any())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    use super::*;
    use ocm_api::cluster::{CLUSTER_SET_LABEL, ManagedClusterStatus};
    use ocm_api::conditions;

    fn set(name: &str, namespaces: &[&str]) -> Arc<ManagedClusterSet> {
        let ns: Vec<_> = namespaces.iter().map(|n| json!({"name": n})).collect();
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"},
                         "managedNamespaces": ns}
            }))
            .unwrap(),
        )
    }

    fn selecting(
        name: &str,
        labels: &serde_json::Value,
        namespaces: &[&str],
    ) -> Arc<ManagedClusterSet> {
        let mut s = (*set(name, namespaces)).clone();
        s.spec.cluster_selector = serde_json::from_value(
            json!({"selectorType": "LabelSelector", "labelSelector": {"matchLabels": labels}}),
        )
        .unwrap();
        Arc::new(s)
    }

    fn cluster(name: &str, set: &str, listed: &[(&str, &str)]) -> ManagedCluster {
        let mut c = ManagedCluster::new(name, ocm_api::cluster::ManagedClusterSpec::default());
        if !set.is_empty() {
            c.labels_mut().insert(CLUSTER_SET_LABEL.into(), set.into());
        }
        c.status = Some(ManagedClusterStatus {
            managed_namespaces: listed.iter().map(|(s, n)| entry(s, n)).collect(),
            ..Default::default()
        });
        c
    }

    fn entry(set: &str, name: &str) -> ClusterSetManagedNamespace {
        ClusterSetManagedNamespace {
            name: name.into(),
            cluster_set: set.into(),
            conditions: vec![],
        }
    }

    fn pairs(list: &[ClusterSetManagedNamespace]) -> Vec<(&str, &str)> {
        list.iter()
            .map(|m| (m.cluster_set.as_str(), m.name.as_str()))
            .collect()
    }

    #[test]
    fn a_cluster_gets_the_namespaces_of_every_set_it_is_in_sorted_by_set_then_name() {
        let c = cluster("c1", "set1", &[]);
        let sets = [
            selecting("set2", &json!({CLUSTER_SET_LABEL: "set1"}), &["namespace2"]),
            set("set1", &["b", "a"]),
            set("other", &["x"]),
        ];
        let got = managed_namespaces(&c, &sets).unwrap();
        assert_eq!(
            pairs(&got),
            [("set1", "a"), ("set1", "b"), ("set2", "namespace2")]
        );
        assert!(got.iter().all(|m| m.conditions.is_empty()));
    }

    #[test]
    fn leaving_the_set_or_a_deleted_set_clears_the_list() {
        let left = cluster("c1", "", &[("set1", "namespace1")]);
        assert_eq!(
            managed_namespaces(&left, &[set("set1", &["namespace1"])]),
            Ok(vec![])
        );
        let mut deleting = (*set("set1", &["namespace1"])).clone();
        deleting.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        let member = cluster("c1", "set1", &[("set1", "namespace1")]);
        assert_eq!(
            managed_namespaces(&member, &[Arc::new(deleting)]),
            Ok(vec![])
        );
    }

    #[test]
    fn the_agents_conditions_stay_on_entries_that_stay() {
        let mut c = cluster("c1", "set1", &[("set1", "namespace1"), ("set1", "gone")]);
        let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let ok = conditions::new("NamespaceAvailable", "True", "NamespaceApplied", "", &now);
        for m in &mut c.status.as_mut().unwrap().managed_namespaces {
            m.conditions = vec![ok.clone()];
        }
        let got = managed_namespaces(&c, &[set("set1", &["namespace1", "new"])]).unwrap();
        assert_eq!(pairs(&got), [("set1", "namespace1"), ("set1", "new")]);
        assert_eq!(got[0].conditions, [ok]);
        assert!(got[1].conditions.is_empty());
    }

    #[test]
    fn an_unparsable_set_selector_fails_the_list() {
        let mut bad = (*set("bad", &["n"])).clone();
        bad.spec.cluster_selector = serde_json::from_value(json!({"selectorType": "LabelSelector",
            "labelSelector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}}))
        .unwrap();
        let bad = Arc::new(bad);
        assert!(managed_namespaces(&cluster("c1", "set1", &[]), &[bad]).is_err());
    }

    #[test]
    fn a_set_change_concerns_its_members_and_the_clusters_still_listing_it() {
        let clusters = [
            Arc::new(cluster("member", "set1", &[])),
            Arc::new(cluster("left", "", &[("set1", "namespace1")])),
            Arc::new(cluster("other", "set2", &[("set2", "namespace1")])),
        ];
        assert_eq!(
            clusters_of_set(&set("set1", &["namespace1"]), &clusters),
            ["left", "member"]
        );
    }
}
