//! What upstream's mutating ManagedCluster webhook fills in, done by the hub controller right
//! after the write instead (so no mutating webhook is needed): the `default` cluster-set label
//! when a cluster has none and `default_set` says so (upstream's `DefaultClusterSet` gate, on by
//! default), and the time
//! each taint was added. The admission policy refuses users who set a taint's time themselves
//! (the operator's `desired::admission`). Also upstream's taint controller:
//! [`UNREACHABLE_TAINT`] while the cluster's availability is Unknown (or not reported),
//! [`UNAVAILABLE_TAINT`] while it is False, neither once it is True.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use ocm_api::cluster::{
    CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET, MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster,
    Taint, TaintEffect, UNAVAILABLE_TAINT, UNREACHABLE_TAINT,
};
use ocm_api::conditions;

fn lacks_set(mc: &ManagedCluster) -> bool {
    mc.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_SET_LABEL))
        .is_none_or(String::is_empty)
}

/// The hub taint `mc`'s availability calls for.
fn hub_taint(mc: &ManagedCluster) -> Option<&'static str> {
    let available = mc
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE))
        .map(|c| c.status.as_str());
    match available {
        Some(conditions::TRUE) => None,
        Some(conditions::FALSE) => Some(UNAVAILABLE_TAINT),
        _ => Some(UNREACHABLE_TAINT),
    }
}

/// `mc`'s taints with the hub taint its availability calls for and every time filled in, or
/// `None` when they are already so.
fn taints(mc: &ManagedCluster, now: Timestamp) -> Option<Vec<Taint>> {
    let wanted = hub_taint(mc);
    let mut taints = mc.spec.taints.clone();
    taints.retain(|t| {
        ![UNAVAILABLE_TAINT, UNREACHABLE_TAINT].contains(&t.key.as_str())
            || Some(t.key.as_str()) == wanted
    });
    if let Some(key) = wanted
        && !taints.iter().any(|t| t.key == key)
    {
        taints.push(Taint {
            key: key.into(),
            value: None,
            effect: TaintEffect::NoSelect,
            time_added: None,
        });
    }
    for t in &mut taints {
        t.time_added.get_or_insert(Time(now));
    }
    (taints != mc.spec.taints).then_some(taints)
}

/// Whether `mc` lacks something the hub fills in (the default set only with `default_set`).
#[must_use]
pub fn needed(mc: &ManagedCluster, default_set: bool) -> bool {
    mc.metadata.deletion_timestamp.is_none()
        && ((default_set && lacks_set(mc)) || taints(mc, Timestamp::UNIX_EPOCH).is_some())
}

/// The merge patch that fills in what `mc` lacks at `now`, guarded by its resourceVersion (a
/// concurrent write fails it, and the controller looks again), or `None`.
#[must_use]
pub fn patch(mc: &ManagedCluster, now: Timestamp, default_set: bool) -> Option<Value> {
    if !needed(mc, default_set) {
        return None;
    }
    let mut patch = json!({"metadata": {"resourceVersion": mc.metadata.resource_version}});
    if default_set && lacks_set(mc) {
        patch["metadata"]["labels"] = json!({CLUSTER_SET_LABEL: DEFAULT_CLUSTER_SET});
    }
    if let Some(taints) = taints(mc, now) {
        // A merge patch replaces the whole list: send every taint.
        patch["spec"] = json!({"taints": taints});
    }
    Some(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::cluster::Taint;

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn cluster(labels: Value, taints: Value) -> ManagedCluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c1", "resourceVersion": "7", "labels": labels},
            "spec": {"taints": taints},
            "status": {"conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
                "reason": "R", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap()
    }

    #[test]
    fn a_cluster_without_a_set_goes_to_default() {
        let now = Timestamp::UNIX_EPOCH;
        let p = patch(&cluster(json!({}), json!([])), now, true).unwrap();
        assert_eq!(p["metadata"]["labels"][CLUSTER_SET_LABEL], "default");
        assert_eq!(p["metadata"]["resourceVersion"], "7");
        assert!(p.get("spec").is_none());
        let empty = json!({CLUSTER_SET_LABEL: ""});
        assert!(patch(&cluster(empty, json!([])), now, true).is_some());
        // `DefaultClusterSet` off: left in no set.
        assert!(patch(&cluster(json!({}), json!([])), now, false).is_none());
    }

    #[test]
    fn only_taints_without_a_time_get_one() {
        let now: Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        let labels = json!({CLUSTER_SET_LABEL: "s"});
        let taints = json!([
            {"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"},
            {"key": "b", "effect": "NoSelect", "timeAdded": null}
        ]);
        let p = patch(&cluster(labels, taints), now, true).unwrap();
        assert!(p["metadata"].get("labels").is_none());
        let taints: Vec<Taint> = serde_json::from_value(p["spec"]["taints"].clone()).unwrap();
        assert_eq!(
            taints[0].time_added.as_ref().unwrap().0.to_string(),
            "2020-01-01T00:00:00Z"
        );
        assert_eq!(taints[1].time_added, Some(Time(now)));
    }

    #[test]
    fn the_hub_taints_follow_availability() {
        let now = Timestamp::UNIX_EPOCH;
        let labels = json!({CLUSTER_SET_LABEL: "s"});
        let mut mc = cluster(labels, json!([]));
        assert!(!needed(&mc, true));
        mc.status.as_mut().unwrap().conditions[0].status = "Unknown".into();
        let p = patch(&mc, now, true).unwrap();
        assert_eq!(p["spec"]["taints"][0]["key"], UNREACHABLE_TAINT);
        assert_eq!(p["spec"]["taints"][0]["effect"], "NoSelect");
        mc.spec.taints = serde_json::from_value(p["spec"]["taints"].clone()).unwrap();
        assert!(!needed(&mc, true));
        mc.status.as_mut().unwrap().conditions[0].status = "False".into();
        let p = patch(&mc, now, true).unwrap();
        let keys: Vec<&str> = p["spec"]["taints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, [UNAVAILABLE_TAINT]);
        mc.spec.taints = serde_json::from_value(p["spec"]["taints"].clone()).unwrap();
        mc.status = None;
        let p = patch(&mc, now, true).unwrap();
        assert_eq!(p["spec"]["taints"][0]["key"], UNREACHABLE_TAINT);
    }

    #[test]
    fn nothing_to_do_leaves_the_cluster_alone() {
        let labels = json!({CLUSTER_SET_LABEL: "s"});
        let taints =
            json!([{"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"}]);
        let mc = cluster(labels, taints);
        assert!(!needed(&mc, true));
        assert!(patch(&mc, Timestamp::UNIX_EPOCH, true).is_none());
    }
}
