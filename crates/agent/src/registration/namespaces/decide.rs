//! What the agent does about its cluster's `status.managedNamespaces`, as upstream's
//! `managedNamespaceReconcile` (`pkg/registration/spoke/managedcluster/`): the hub-specific label,
//! which namespaces to label managed (`"true"`) or no longer managed (`"false"`: never deleted,
//! so a namespace that held workloads keeps them), and the `NamespaceAvailable` condition of each
//! entry. Pure, so every rule is tested without a cluster.
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use ocm_api::cluster::{ClusterSetManagedNamespace, ManagedCluster};
use ocm_api::conditions;

/// Prefix of the label the agent puts on the namespaces it manages for a hub (upstream's).
pub const CLUSTER_SET_LABEL_PREFIX: &str = "clusterset.open-cluster-management.io/";
/// Longest name part of a prefixed label: the hub hash is cut to it.
pub const MAX_LABEL_NAME_LENGTH: usize = 63;
/// Condition of a managed namespace entry: the namespace is there, labelled.
pub const NAMESPACE_AVAILABLE: &str = "NamespaceAvailable";
/// `NamespaceAvailable=True` reason.
pub const NAMESPACE_APPLIED: &str = "NamespaceApplied";
/// `NamespaceAvailable=False` reason.
pub const NAMESPACE_APPLY_FAILED: &str = "NamespaceApplyFailed";
/// Label value of a namespace managed for the hub.
pub const MANAGED: &str = "true";
/// Label value of a namespace the hub no longer manages.
pub const UNMANAGED: &str = "false";

/// `clusterset.open-cluster-management.io/<hub hash>`, the hash cut to
/// [`MAX_LABEL_NAME_LENGTH`] (upstream's `GetHubClusterSetLabel`).
#[must_use]
pub fn hub_cluster_set_label(hub_hash: &str) -> String {
    let name: String = hub_hash.chars().take(MAX_LABEL_NAME_LENGTH).collect();
    format!("{CLUSTER_SET_LABEL_PREFIX}{name}")
}

/// The label for the hub at `server`, as the bootstrap kubeconfig spells it: upstream hashes the
/// host of the bootstrap kubeconfig (hex SHA-256, as the work agent's hub hash).
#[must_use]
pub fn label_for_hub(server: &str) -> String {
    hub_cluster_set_label(&crate::work::build::hub_hash(server))
}

/// The namespace writes one pass makes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Namespaces to create, or label [`MANAGED`]: listed in the status, not labelled yet.
    pub apply: Vec<String>,
    /// Namespaces labelled [`MANAGED`] that are no longer listed: label [`UNMANAGED`].
    pub release: Vec<String>,
}

/// The writes for `cluster`, given the namespaces already labelled [`MANAGED`]: every one when
/// the cluster is being deleted is released, as upstream's agent does.
#[must_use]
pub fn plan(cluster: &ManagedCluster, labelled: &BTreeSet<String>) -> Plan {
    let listed: BTreeSet<String> = if cluster.metadata.deletion_timestamp.is_some() {
        BTreeSet::new()
    } else {
        entries(cluster).iter().map(|m| m.name.clone()).collect()
    };
    Plan {
        apply: listed.difference(labelled).cloned().collect(),
        release: labelled.difference(&listed).cloned().collect(),
    }
}

/// The cluster's `status.managedNamespaces`.
#[must_use]
pub fn entries(cluster: &ManagedCluster) -> &[ClusterSetManagedNamespace] {
    cluster
        .status
        .as_ref()
        .map(|s| s.managed_namespaces.as_slice())
        .unwrap_or_default()
}

/// The entries with their `NamespaceAvailable` condition: False with the error for a namespace
/// in `failed`, True otherwise (the time changes only when the status does).
#[must_use]
pub fn report(
    current: &[ClusterSetManagedNamespace],
    failed: &BTreeMap<String, String>,
    now: &Time,
) -> Vec<ClusterSetManagedNamespace> {
    current
        .iter()
        .map(|entry| {
            let condition = match failed.get(&entry.name) {
                None => conditions::new(
                    NAMESPACE_AVAILABLE,
                    conditions::TRUE,
                    NAMESPACE_APPLIED,
                    "Namespace successfully applied and managed",
                    now,
                ),
                Some(why) => conditions::new(
                    NAMESPACE_AVAILABLE,
                    conditions::FALSE,
                    NAMESPACE_APPLY_FAILED,
                    format!("Failed to apply namespace: {why}"),
                    now,
                ),
            };
            let mut entry = entry.clone();
            conditions::set(&mut entry.conditions, condition);
            entry
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::cluster::ManagedClusterStatus;

    fn cluster(listed: &[(&str, &str)]) -> ManagedCluster {
        let mut c = ManagedCluster::new("c1", ocm_api::cluster::ManagedClusterSpec::default());
        c.status = Some(ManagedClusterStatus {
            managed_namespaces: listed
                .iter()
                .map(|(set, name)| ClusterSetManagedNamespace {
                    name: (*name).into(),
                    cluster_set: (*set).into(),
                    conditions: vec![],
                })
                .collect(),
            ..Default::default()
        });
        c
    }

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(ToString::to_string).collect()
    }

    fn now(s: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(s).unwrap())
    }

    #[test]
    fn the_label_names_the_hub_by_its_hash_cut_to_63() {
        assert_eq!(
            hub_cluster_set_label("abcd1234"),
            "clusterset.open-cluster-management.io/abcd1234"
        );
        assert_eq!(hub_cluster_set_label(""), CLUSTER_SET_LABEL_PREFIX);
        let long = "this-is-a-very-long-hub-hash-that-exceeds-the-maximum-label-name-length-limit";
        assert_eq!(
            hub_cluster_set_label(long),
            format!("{CLUSTER_SET_LABEL_PREFIX}{}", &long[..63])
        );
        // SHA-256 of the URL is 64 hex digits: the label keeps 63.
        let label = label_for_hub("https://hub:6443");
        let hash = crate::work::build::hub_hash("https://hub:6443");
        assert_eq!(label, format!("{CLUSTER_SET_LABEL_PREFIX}{}", &hash[..63]));
    }

    #[test]
    fn listed_namespaces_are_applied_and_unlisted_ones_released() {
        let c = cluster(&[("set1", "a"), ("set2", "a"), ("set1", "b")]);
        assert_eq!(
            plan(&c, &names(&["b", "old"])),
            Plan {
                apply: vec!["a".into()],
                release: vec!["old".into()],
            }
        );
        assert_eq!(plan(&c, &names(&["a", "b"])), Plan::default());
        assert_eq!(
            plan(&cluster(&[]), &names(&["a"])).release,
            ["a"],
            "an empty list releases every labelled namespace"
        );
    }

    #[test]
    fn a_cluster_being_deleted_releases_everything() {
        let mut c = cluster(&[("set1", "a")]);
        c.metadata.deletion_timestamp = Some(now(1));
        assert_eq!(
            plan(&c, &names(&["a", "b"])),
            Plan {
                apply: vec![],
                release: vec!["a".into(), "b".into()],
            }
        );
    }

    #[test]
    fn each_entry_reports_namespace_available_with_upstreams_reasons() {
        let c = cluster(&[("set1", "a"), ("set1", "b")]);
        let failed = BTreeMap::from([("b".to_string(), "forbidden".to_string())]);
        let got = report(entries(&c), &failed, &now(1));
        let a = conditions::find(&got[0].conditions, NAMESPACE_AVAILABLE).unwrap();
        assert_eq!(
            (a.status.as_str(), a.reason.as_str(), a.message.as_str()),
            (
                "True",
                "NamespaceApplied",
                "Namespace successfully applied and managed"
            )
        );
        let b = conditions::find(&got[1].conditions, NAMESPACE_AVAILABLE).unwrap();
        assert_eq!(
            (b.status.as_str(), b.reason.as_str(), b.message.as_str()),
            (
                "False",
                "NamespaceApplyFailed",
                "Failed to apply namespace: forbidden"
            )
        );
        // Reported again later: nothing changes, the transition time included.
        assert_eq!(report(&got, &failed, &now(99)), got);
    }
}
