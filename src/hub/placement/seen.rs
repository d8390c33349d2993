//! What placement reads of each cluster, hashed: a cluster update that changes none of it
//! (a condition's heartbeat, the agent's version) wakes no placement.
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::sync::{Mutex, MutexGuard, PoisonError};

use kube::ResourceExt as _;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::api::cluster::ManagedCluster;

/// The last hash of each cluster, and the store to tell deletions by.
pub(super) struct Seen {
    hashes: Mutex<HashMap<String, u64>>,
    clusters: Store<ManagedCluster>,
}

impl Seen {
    pub(super) fn new(clusters: Store<ManagedCluster>) -> Self {
        Self {
            hashes: Mutex::default(),
            clusters,
        }
    }

    /// Whether `mc` differs from when last seen, for scheduling; remembers it.
    pub(super) fn changed(&self, mc: &ManagedCluster) -> bool {
        // Gone from the store (which is written before subscribers hear): deleted, which its
        // hash cannot show.
        if self.clusters.get(&ObjectRef::from_obj(mc)).is_none() {
            self.lock().remove(&mc.name_any());
            return true;
        }
        let mut h = DefaultHasher::new();
        mc.labels().hash(&mut h);
        mc.metadata.deletion_timestamp.is_some().hash(&mut h);
        // The rest by its JSON: taints, claims, allocatable and anything a CEL selector reads.
        let mut rest = serde_json::to_value(mc).unwrap_or_default();
        if let Some(conditions) = rest.pointer_mut("/status/conditions") {
            // Transition times and messages only; statuses stay.
            *conditions = conditions
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .map(|c| c["type"].to_string() + &c["status"].to_string())
                        .collect()
                })
                .unwrap_or_default();
        }
        if let Some(meta) = rest.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            for volatile in ["resourceVersion", "managedFields", "generation"] {
                meta.remove(volatile);
            }
        }
        rest.to_string().hash(&mut h);
        let hash = h.finish();
        self.lock().insert(mc.name_any(), hash) != Some(hash)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.hashes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn cluster(env: &str, heartbeat: &str) -> ManagedCluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": "c", "labels": {"env": env}, "resourceVersion": heartbeat},
            "spec": {}, "status": {"conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
                "reason": "R", "message": heartbeat, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap()
    }

    #[test]
    fn only_what_placement_reads_wakes_placements() {
        let (store, mut writer) = reflector::store();
        let seen = Seen::new(store);
        let first = cluster("prod", "1");
        writer.apply_watcher_event(&Event::Apply(first.clone()));
        assert!(seen.changed(&first));
        assert!(!seen.changed(&cluster("prod", "2")), "a heartbeat");
        assert!(seen.changed(&cluster("dev", "3")), "a label");
        writer.apply_watcher_event(&Event::Delete(cluster("dev", "3")));
        assert!(seen.changed(&cluster("dev", "3")), "a deletion");
    }
}
