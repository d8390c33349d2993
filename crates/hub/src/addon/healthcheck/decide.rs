//! Which add-ons of a ManagedCluster lose their health, as upstream's
//! ManagedClusterAddonHealthCheckController decides it (no I/O): while the cluster's
//! availability is Unknown, each of its add-ons gets `Available` Unknown with the cluster
//! condition's reason and message.
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::{MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster};
use ocm_api::conditions::{self, Condition, UNKNOWN};

/// The `Available` condition every add-on of `cluster` gets, at `now`: `None` unless the
/// cluster's availability is Unknown.
#[must_use]
pub fn unknown(cluster: &ManagedCluster, now: &Time) -> Option<Condition> {
    let status = cluster.status.as_ref()?;
    let available = conditions::find(&status.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE)?;
    (available.status == UNKNOWN).then(|| {
        conditions::new(
            conditions::AVAILABLE,
            UNKNOWN,
            &available.reason,
            available.message.clone(),
            now,
        )
    })
}

/// `addon`'s conditions with `wanted` set; `None` when it already says so.
#[must_use]
pub fn updated(addon: &ManagedClusterAddOn, wanted: Condition) -> Option<Vec<Condition>> {
    let mut conditions = addon
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    conditions::set(&mut conditions, wanted).then_some(conditions)
}

/// Each of `addons` (the cluster's) whose conditions change, with its conditions as they should
/// be at `now`: none unless the cluster's availability is Unknown.
#[must_use]
pub fn decide<'a>(
    cluster: &ManagedCluster,
    addons: &'a [Arc<ManagedClusterAddOn>],
    now: &Time,
) -> Vec<(&'a ManagedClusterAddOn, Vec<Condition>)> {
    let Some(wanted) = unknown(cluster, now) else {
        return Vec::new();
    };
    addons
        .iter()
        .filter_map(|addon| Some((addon.as_ref(), updated(addon, wanted.clone())?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> Time {
        serde_json::from_value(json!(s)).unwrap()
    }

    fn cluster(status: &str) -> ManagedCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "c1"},
            "spec": {},
            "status": {"conditions": [{"type": MANAGED_CLUSTER_CONDITION_AVAILABLE,
                "status": status, "reason": "ManagedClusterLeaseUpdateStopped",
                "message": "Registration agent stopped updating its lease.",
                "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
        }))
        .unwrap()
    }

    fn addon(available: &str) -> ManagedClusterAddOn {
        serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "c1"},
            "spec": {},
            "status": {"conditions": [
                {"type": "Available", "status": available, "reason": "ManagedClusterAddOnLeaseUpdated",
                 "message": "a add-on is available.", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "Other", "status": "True", "reason": "r", "message": "",
                 "lastTransitionTime": "2025-01-01T00:00:00Z"}]},
        }))
        .unwrap()
    }

    #[test]
    fn an_unknown_cluster_makes_its_add_ons_unknown_with_its_reason() {
        let now = at("2025-06-01T00:00:00Z");
        let wanted = unknown(&cluster("Unknown"), &now).unwrap();
        let got = updated(&addon("True"), wanted.clone()).unwrap();
        let available = conditions::find(&got, "Available").unwrap();
        assert_eq!(
            (
                available.status.as_str(),
                available.reason.as_str(),
                available.message.as_str()
            ),
            (
                "Unknown",
                "ManagedClusterLeaseUpdateStopped",
                "Registration agent stopped updating its lease."
            )
        );
        assert_eq!(available.last_transition_time, now);
        assert!(conditions::find(&got, "Other").is_some(), "others kept");
        let mut already = addon("True");
        already.status.as_mut().unwrap().conditions = got;
        assert_eq!(updated(&already, wanted), None, "written once");
    }

    #[test]
    fn a_true_or_false_or_silent_cluster_leaves_add_ons_to_its_agent() {
        let now = at("2025-06-01T00:00:00Z");
        assert!(unknown(&cluster("True"), &now).is_none());
        assert!(unknown(&cluster("False"), &now).is_none());
        let mut silent = cluster("True");
        silent.status = None;
        assert!(unknown(&silent, &now).is_none());
    }

    #[test]
    fn only_the_add_ons_not_yet_unknown_are_marked() {
        let now = at("2025-06-01T00:00:00Z");
        let (known, mut marked) = (addon("True"), addon("True"));
        marked.metadata.name = Some("b".into());
        let wanted = unknown(&cluster("Unknown"), &now).unwrap();
        marked.status.as_mut().unwrap().conditions = updated(&marked, wanted).unwrap();
        let addons = [Arc::new(known), Arc::new(marked)];
        let got = decide(&cluster("Unknown"), &addons, &now);
        let names: Vec<_> = got
            .iter()
            .map(|(a, _)| a.metadata.name.as_deref())
            .collect();
        assert_eq!(names, [Some("a")]);
        assert!(decide(&cluster("True"), &addons, &now).is_empty());
    }
}
