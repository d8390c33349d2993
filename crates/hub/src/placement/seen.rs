//! What placement reads of each cluster, hashed part by part: a cluster update that changes none
//! of it (a condition's heartbeat, the agent's version) wakes no placement, and one that changes
//! a part only some placements read (a label no selector names) wakes only those. In a fleet
//! with a thousand placements, a label change otherwise queues every one of them ahead of the
//! placement that selects by it.
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher as _};
use std::sync::{Mutex, MutexGuard, PoisonError};

use kube::ResourceExt as _;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::clustersets::decide::Membership;
use ocm_api::cluster::{ManagedCluster, ManagedClusterSet, Placement, TopologyKeyType};

/// Parts of a cluster some placements read and others do not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Parts {
    pub labels: bool,
    pub claims: bool,
    /// `status.allocatable` and `status.capacity`.
    pub resources: bool,
    /// Anything else (read only by CEL selectors).
    pub rest: bool,
}

impl Parts {
    fn any(self) -> bool {
        self.labels || self.claims || self.resources || self.rest
    }

    /// What placement `p` reads: CEL selectors read the whole cluster.
    pub(super) fn read_by(p: &Placement) -> Self {
        let spec = &p.spec;
        let selectors = spec
            .predicates
            .iter()
            .filter_map(|pr| pr.required_cluster_selector.as_ref());
        let cel = selectors.clone().any(|s| {
            s.cel_selector
                .as_ref()
                .is_some_and(|c| !c.cel_expressions.is_empty())
        });
        let groups = spec
            .decision_strategy
            .iter()
            .flat_map(|d| &d.group_strategy)
            .flat_map(|g| &g.decision_groups)
            .map(|g| &g.group_cluster_selector);
        let spread = spec
            .spread_policy
            .iter()
            .flat_map(|s| &s.spread_constraints);
        let labels = selectors.clone().any(|s| s.label_selector.is_some())
            || groups.clone().any(|g| g.label_selector.is_some())
            || spread
                .clone()
                .any(|c| c.topology_key_type == TopologyKeyType::Label);
        let claims = selectors.clone().any(|s| s.claim_selector.is_some())
            || groups.clone().any(|g| g.claim_selector.is_some())
            || spread
                .clone()
                .any(|c| c.topology_key_type == TopologyKeyType::Claim);
        let resources = spec
            .prioritizer_policy
            .iter()
            .flat_map(|policy| &policy.configurations)
            .filter_map(|c| c.score_coordinate.built_in.as_deref())
            .any(|b| b.starts_with("ResourceAllocatable"));
        Self {
            labels: labels || cel,
            claims: claims || cel,
            resources: resources || cel,
            rest: cel,
        }
    }

    /// Whether a change of `changed` can move a placement that reads `self`.
    pub(super) fn meets(self, changed: Self) -> bool {
        (self.labels && changed.labels)
            || (self.claims && changed.claims)
            || (self.resources && changed.resources)
            || (self.rest && changed.rest)
    }
}

/// How a cluster changed since it was last seen.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Change {
    /// In nothing placement reads.
    None,
    /// In these parts only.
    Parts(Parts),
    /// So that any placement may decide otherwise: new, deleted or deleting, re-tainted, or
    /// moved between sets.
    All,
}

/// A cluster's hashed parts.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Digest {
    /// Which sets it belongs to, whether it is being deleted, and its taints: read by every
    /// placement.
    common: u64,
    labels: u64,
    claims: u64,
    resources: u64,
    rest: u64,
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn json_hash(value: Option<&serde_json::Value>) -> u64 {
    hash_of(&value.map(ToString::to_string))
}

impl Digest {
    fn of(mc: &ManagedCluster, sets: &[Membership]) -> Self {
        let member_of: Vec<bool> = sets.iter().map(|m| m.contains(mc.labels())).collect();
        let mut json = serde_json::to_value(mc).unwrap_or_default();
        let mut take = |pointer: &str| json.pointer_mut(pointer).map(serde_json::Value::take);
        let taints = take("/spec/taints");
        let claims = take("/status/clusterClaims");
        let resources = (take("/status/allocatable"), take("/status/capacity"));
        for part in [
            "/metadata/labels",
            "/metadata/resourceVersion",
            "/metadata/managedFields",
            "/metadata/generation",
        ] {
            take(part);
        }
        if let Some(conditions) = json.pointer_mut("/status/conditions") {
            // Transition times and messages no; statuses yes.
            *conditions = conditions
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .map(|c| c["type"].to_string() + &c["status"].to_string())
                        .collect()
                })
                .unwrap_or_default();
        }
        Self {
            common: hash_of(&(
                member_of,
                mc.metadata.deletion_timestamp.is_some(),
                taints.map(|t| t.to_string()),
            )),
            labels: hash_of(mc.labels()),
            claims: json_hash(claims.as_ref()),
            resources: hash_of(&(
                resources.0.map(|r| r.to_string()),
                resources.1.map(|r| r.to_string()),
            )),
            rest: json_hash(Some(&json)),
        }
    }

    fn change_from(self, before: Option<Self>) -> Change {
        let Some(before) = before else {
            return Change::All;
        };
        if before.common != self.common {
            return Change::All;
        }
        let parts = Parts {
            labels: before.labels != self.labels,
            claims: before.claims != self.claims,
            resources: before.resources != self.resources,
            rest: before.rest != self.rest,
        };
        if parts.any() {
            Change::Parts(parts)
        } else {
            Change::None
        }
    }
}

/// The last digest of each cluster, the store to tell deletions by, and the sets.
pub(super) struct Seen {
    digests: Mutex<HashMap<String, Digest>>,
    clusters: Store<ManagedCluster>,
    sets: Store<ManagedClusterSet>,
}

impl Seen {
    pub(super) fn new(clusters: Store<ManagedCluster>, sets: Store<ManagedClusterSet>) -> Self {
        Self {
            digests: Mutex::default(),
            clusters,
            sets,
        }
    }

    /// How `mc` differs from when last seen, for scheduling; remembers it.
    pub(super) fn change(&self, mc: &ManagedCluster) -> Change {
        // Gone from the store (which is written before subscribers hear): deleted, which its
        // digest cannot show.
        if self.clusters.get(&ObjectRef::from_obj(mc)).is_none() {
            self.lock().remove(&mc.name_any());
            return Change::All;
        }
        let mut sets = self.sets.state();
        sets.sort_by_key(|s| s.name_any());
        let memberships: Vec<Membership> =
            sets.iter().filter_map(|s| Membership::of(s).ok()).collect();
        let digest = Digest::of(mc, &memberships);
        let before = self.lock().insert(mc.name_any(), digest);
        digest.change_from(before)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Digest>> {
        self.digests.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;
    use crate::placement::schedule::tests::placement;

    fn cluster(env: &str, heartbeat: &str, cpu: &str) -> ManagedCluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c", "labels": {"env": env}, "resourceVersion": heartbeat},
            "spec": {}, "status": {"allocatable": {"cpu": cpu}, "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
                "reason": "R", "message": heartbeat, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap()
    }

    #[test]
    fn only_what_placement_reads_wakes_placements() {
        let (store, mut writer) = reflector::store();
        let (sets, _) = reflector::store();
        let seen = Seen::new(store, sets);
        let first = cluster("prod", "1", "4");
        writer.apply_watcher_event(&Event::Apply(first.clone()));
        assert_eq!(seen.change(&first), Change::All, "a new cluster");
        assert_eq!(
            seen.change(&cluster("prod", "2", "4")),
            Change::None,
            "a heartbeat"
        );
        let labels = Parts {
            labels: true,
            ..Parts::default()
        };
        assert_eq!(
            seen.change(&cluster("dev", "3", "4")),
            Change::Parts(labels)
        );
        let resources = Parts {
            resources: true,
            ..Parts::default()
        };
        assert_eq!(
            seen.change(&cluster("dev", "4", "8")),
            Change::Parts(resources)
        );
        writer.apply_watcher_event(&Event::Delete(cluster("dev", "5", "8")));
        assert_eq!(
            seen.change(&cluster("dev", "5", "8")),
            Change::All,
            "a deletion"
        );
    }

    #[test]
    fn a_placement_reads_what_its_selectors_and_prioritizers_name() {
        let plain = Parts::read_by(&placement(json!({"numberOfClusters": 1})));
        assert_eq!(plain, Parts::default());
        let by_label = Parts::read_by(&placement(
            json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"a": "b"}}}}]}),
        ));
        assert!(by_label.labels && !by_label.claims && !by_label.resources);
        let by_cpu = Parts::read_by(&placement(json!({"prioritizerPolicy": {"configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}}]}})));
        assert!(by_cpu.resources && !by_cpu.labels);
        let spread = Parts::read_by(&placement(json!({"spreadPolicy": {"spreadConstraints": [
            {"topologyKey": "zone", "topologyKeyType": "Claim"}]}})));
        assert!(spread.claims && !spread.labels);
        let cel = Parts::read_by(&placement(
            json!({"predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": ["true"]}}}]}),
        ));
        assert!(cel.labels && cel.claims && cel.resources && cel.rest);
        let labels_only = Parts {
            labels: true,
            ..Parts::default()
        };
        assert!(
            by_label.meets(labels_only) && !plain.meets(labels_only) && !by_cpu.meets(labels_only)
        );
    }
}
