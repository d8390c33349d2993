//! What upstream's mutating ManagedCluster webhook fills in, done by the hub controller right
//! after the write instead (so no mutating webhook is needed): the `default` cluster-set label
//! when a cluster has none (upstream's `DefaultClusterSet` feature, on by default), and the time
//! each taint was added. The admission policy refuses users who set a taint's time themselves
//! (`crate::operator::cluster_manager::build::admission`).
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::api::cluster::{CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET, ManagedCluster};

fn lacks_set(mc: &ManagedCluster) -> bool {
    mc.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_SET_LABEL))
        .is_none_or(String::is_empty)
}

fn lacks_taint_time(mc: &ManagedCluster) -> bool {
    mc.spec.taints.iter().any(|t| t.time_added.is_none())
}

/// Whether `mc` lacks something the hub fills in.
#[must_use]
pub fn needed(mc: &ManagedCluster) -> bool {
    mc.metadata.deletion_timestamp.is_none() && (lacks_set(mc) || lacks_taint_time(mc))
}

/// The merge patch that fills in what `mc` lacks at `now`, guarded by its resourceVersion (a
/// concurrent write fails it, and the controller looks again), or `None`.
#[must_use]
pub fn patch(mc: &ManagedCluster, now: Timestamp) -> Option<Value> {
    if !needed(mc) {
        return None;
    }
    let mut patch = json!({"metadata": {"resourceVersion": mc.metadata.resource_version}});
    if lacks_set(mc) {
        patch["metadata"]["labels"] = json!({CLUSTER_SET_LABEL: DEFAULT_CLUSTER_SET});
    }
    if lacks_taint_time(mc) {
        // A merge patch replaces the whole list: send every taint, the new times filled in.
        let mut taints = mc.spec.taints.clone();
        for t in &mut taints {
            t.time_added.get_or_insert(Time(now));
        }
        patch["spec"] = json!({"taints": taints});
    }
    Some(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cluster::Taint;

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn cluster(labels: Value, taints: Value) -> ManagedCluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c1", "resourceVersion": "7", "labels": labels},
            "spec": {"taints": taints}
        }))
        .unwrap()
    }

    #[test]
    fn a_cluster_without_a_set_goes_to_default() {
        let now = Timestamp::UNIX_EPOCH;
        let p = patch(&cluster(json!({}), json!([])), now).unwrap();
        assert_eq!(p["metadata"]["labels"][CLUSTER_SET_LABEL], "default");
        assert_eq!(p["metadata"]["resourceVersion"], "7");
        assert!(p.get("spec").is_none());
        let empty = json!({CLUSTER_SET_LABEL: ""});
        assert!(patch(&cluster(empty, json!([])), now).is_some());
    }

    #[test]
    fn only_taints_without_a_time_get_one() {
        let now: Timestamp = "2026-01-02T03:04:05Z".parse().unwrap();
        let labels = json!({CLUSTER_SET_LABEL: "s"});
        let taints = json!([
            {"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"},
            {"key": "b", "effect": "NoSelect", "timeAdded": null}
        ]);
        let p = patch(&cluster(labels, taints), now).unwrap();
        assert!(p["metadata"].get("labels").is_none());
        let taints: Vec<Taint> = serde_json::from_value(p["spec"]["taints"].clone()).unwrap();
        assert_eq!(
            taints[0].time_added.as_ref().unwrap().0.to_string(),
            "2020-01-01T00:00:00Z"
        );
        assert_eq!(taints[1].time_added, Some(Time(now)));
    }

    #[test]
    fn nothing_to_do_leaves_the_cluster_alone() {
        let labels = json!({CLUSTER_SET_LABEL: "s"});
        let taints =
            json!([{"key": "a", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"}]);
        let mc = cluster(labels, taints);
        assert!(!needed(&mc));
        assert!(patch(&mc, Timestamp::UNIX_EPOCH).is_none());
    }
}
