//! Which add-on feature labels a ManagedCluster carries, as upstream's
//! AddOnFeatureDiscoveryController decides them (no I/O): one per add-on on it, saying how its
//! `Available` condition is; none for an add-on gone or being deleted.
use std::collections::BTreeMap;

use kube::ResourceExt as _;

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::{MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster};
use ocm_api::conditions::{self, FALSE, TRUE};

/// The label key prefix; the add-on's name follows.
pub const FEATURE_PREFIX: &str = "feature.open-cluster-management.io/addon-";
/// Label value: the add-on is available.
pub const AVAILABLE: &str = "available";
/// Label value: the add-on says it is not available.
pub const UNHEALTHY: &str = "unhealthy";
/// Label value: nothing is known of the add-on's health.
pub const UNREACHABLE: &str = "unreachable";

/// The label value saying how `addon` is.
#[must_use]
pub fn label_value(addon: &ManagedClusterAddOn) -> &'static str {
    let available = addon
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, conditions::AVAILABLE));
    match available.map(|c| c.status.as_str()) {
        Some(TRUE) => AVAILABLE,
        Some(FALSE) => UNHEALTHY,
        _ => UNREACHABLE,
    }
}

/// What to merge into `cluster`'s labels for its `addons` (a label to remove maps to `None`);
/// `None` when nothing changes or the cluster is to be left alone.
#[must_use]
pub fn decide(
    cluster: &ManagedCluster,
    addons: &[&ManagedClusterAddOn],
) -> Option<BTreeMap<String, Option<String>>> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let conditions = cluster.status.as_ref().map(|s| s.conditions.as_slice());
    conditions::find(
        conditions.unwrap_or_default(),
        MANAGED_CLUSTER_CONDITION_AVAILABLE,
    )?;
    let wanted: BTreeMap<String, &str> = addons
        .iter()
        .filter(|a| a.metadata.deletion_timestamp.is_none())
        .map(|a| (format!("{FEATURE_PREFIX}{}", a.name_any()), label_value(a)))
        .collect();
    let current = cluster.labels();
    let mut out: BTreeMap<String, Option<String>> = current
        .keys()
        .filter(|k| k.starts_with(FEATURE_PREFIX) && !wanted.contains_key(*k))
        .map(|k| (k.clone(), None))
        .collect();
    out.extend(
        wanted
            .into_iter()
            .filter(|(k, v)| current.get(k).map(String::as_str) != Some(*v))
            .map(|(k, v)| (k, Some(v.to_string()))),
    );
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(labels: &[(&str, &str)], available: Option<&str>) -> ManagedCluster {
        let conditions: Vec<_> = available
            .map(|s| {
                json!({"type": MANAGED_CLUSTER_CONDITION_AVAILABLE, "status": s, "reason": "r",
                    "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"})
            })
            .into_iter()
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "c1",
                "labels": labels.iter().copied().collect::<BTreeMap<_, _>>()},
            "spec": {},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    fn addon(name: &str, available: Option<&str>) -> ManagedClusterAddOn {
        let conditions: Vec<_> = available
            .map(|s| {
                json!({"type": "Available", "status": s, "reason": "r", "message": "",
                    "lastTransitionTime": "2025-01-01T00:00:00Z"})
            })
            .into_iter()
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "c1"},
            "spec": {},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    fn key(addon: &str) -> String {
        format!("feature.open-cluster-management.io/addon-{addon}")
    }

    #[test]
    fn each_add_on_is_labelled_by_its_available_condition() {
        let addons = [
            addon("a", Some("True")),
            addon("b", Some("False")),
            addon("c", Some("Unknown")),
            addon("d", None),
        ];
        let got = decide(
            &cluster(&[], Some("True")),
            &addons.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        let want: BTreeMap<String, Option<String>> = [
            ("a", "available"),
            ("b", "unhealthy"),
            ("c", "unreachable"),
            ("d", "unreachable"),
        ]
        .into_iter()
        .map(|(a, v)| (key(a), Some(v.to_string())))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn labels_of_add_ons_gone_or_deleting_are_removed_others_kept() {
        let mut deleting = addon("going", Some("True"));
        deleting.metadata.deletion_timestamp =
            Some(serde_json::from_value(json!("2025-01-01T00:00:00Z")).unwrap());
        let kept = addon("kept", Some("True"));
        let c = cluster(
            &[
                (&key("gone"), "available"),
                (&key("going"), "available"),
                (&key("kept"), "available"),
                ("feature.open-cluster-management.io/other", "x"),
            ],
            Some("Unknown"),
        );
        let got = decide(&c, &[&deleting, &kept]).unwrap();
        assert_eq!(
            got,
            BTreeMap::from([(key("gone"), None), (key("going"), None)])
        );
    }

    #[test]
    fn nothing_when_labels_are_right_or_the_cluster_is_not_ready_for_them() {
        let a = addon("a", Some("True"));
        let c = cluster(&[(&key("a"), "available")], Some("True"));
        assert_eq!(decide(&c, &[&a]), None);
        assert_eq!(decide(&cluster(&[], None), &[&a]), None, "no Available yet");
        let mut deleting = cluster(&[], Some("True"));
        deleting.metadata.deletion_timestamp =
            Some(serde_json::from_value(json!("2025-01-01T00:00:00Z")).unwrap());
        assert_eq!(decide(&deleting, &[&a]), None, "cluster being deleted");
    }
}
