//! Each controller's queue depth for `/metrics`: how many objects of its kind changed since it
//! last reconciled them. kube-runtime keeps its scheduler's queue to itself, so this compares the
//! controller's store (every change it was told of) with the version each object had when its last
//! reconcile ended: its resourceVersion, or for a controller that only wakes for spec changes
//! ([`Wakes::OnSpec`]) its generation. A change that arrives during a reconcile is counted as done with it,
//! though kube-runtime reconciles the object again; wake-ups from other kinds (watches) and
//! requeues are not counted. Computed when the metrics are read, so it costs nothing between
//! scrapes.
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};

/// An object's key: namespace and name.
type Key = (Option<String>, String);

/// What the metrics read of one controller.
trait Depth: Send + Sync {
    /// Records that the object's reconcile ended now.
    fn reconciled(&self, key: Key);
    /// Objects changed since their last reconcile ended.
    fn depth(&self) -> usize;
}

/// Which changes wake a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakes {
    /// Any change (a new resourceVersion).
    OnAnyChange,
    /// A change of the spec (a new generation): its own status writes do not wake it.
    OnSpec,
}

struct Tracker<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    wakes: Wakes,
    /// The version each object had when its last reconcile ended.
    done: Mutex<HashMap<Key, Option<String>>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Tracker<K> {
    fn version(&self, object: &K) -> Option<String> {
        let meta = object.meta();
        match (self.wakes, meta.generation) {
            (Wakes::OnSpec, Some(generation)) => Some(generation.to_string()),
            _ => meta.resource_version.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static> Depth for Tracker<K> {
    fn reconciled(&self, key: Key) {
        let mut reference = ObjectRef::<K>::new(&key.1);
        if let Some(ns) = &key.0 {
            reference = reference.within(ns);
        }
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        match self.store.get(&reference) {
            Some(object) => {
                done.insert(key, self.version(&object));
            }
            None => {
                done.remove(&key);
            }
        }
    }

    fn depth(&self) -> usize {
        let objects = self.store.state();
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget objects that are gone, so the map never outgrows the store.
        let present: std::collections::HashSet<Key> =
            objects.iter().map(|o| key_of(&**o)).collect();
        done.retain(|k, _| present.contains(k));
        objects
            .iter()
            .filter(|o| done.get(&key_of(&***o)) != Some(&self.version(o)))
            .count()
    }
}

fn key_of<K: Resource>(object: &K) -> Key {
    let meta = object.meta();
    (
        meta.namespace.clone(),
        meta.name.clone().unwrap_or_default(),
    )
}

static TRACKERS: LazyLock<Mutex<HashMap<String, Arc<dyn Depth>>>> = LazyLock::new(Mutex::default);

/// Reports the queue depth of `controller` (the name it reports its results under) from `store`,
/// the store of the kind it reconciles, which `wakes` it. A later call for the same name replaces
/// the earlier one.
pub fn track<K>(controller: &str, store: Store<K>, wakes: Wakes)
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let tracker: Arc<dyn Depth> = Arc::new(Tracker {
        store,
        wakes,
        done: Mutex::default(),
    });
    TRACKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(controller.to_owned(), tracker);
}

/// Records that `controller` finished reconciling the object `namespace/name` (a no-op for a
/// controller not tracked).
pub fn reconciled(controller: &str, namespace: Option<&str>, name: &str) {
    let tracker = TRACKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(controller)
        .cloned();
    if let Some(tracker) = tracker {
        tracker.reconciled((namespace.map(str::to_owned), name.to_owned()));
    }
}

/// The queue depth of every tracked controller.
#[must_use]
pub fn depths() -> Vec<(String, usize)> {
    let trackers: Vec<(String, Arc<dyn Depth>)> = TRACKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(name, t)| (name.clone(), t.clone()))
        .collect();
    trackers
        .into_iter()
        .map(|(name, t)| (name, t.depth()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::watcher::Event;

    fn cm(name: &str, version: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.resource_version = Some(version.into());
        cm
    }

    #[test]
    fn depth_counts_objects_changed_since_their_last_reconcile() {
        let (store, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        writer.apply_watcher_event(&Event::Apply(cm("a", "1")));
        writer.apply_watcher_event(&Event::Apply(cm("b", "1")));
        track("queue-test", store, Wakes::OnAnyChange);
        let depth = || {
            depths()
                .into_iter()
                .find(|(n, _)| n == "queue-test")
                .map(|(_, d)| d)
        };
        assert_eq!(depth(), Some(2), "both wait for their first reconcile");
        reconciled("queue-test", Some("ns"), "a");
        assert_eq!(depth(), Some(1));
        writer.apply_watcher_event(&Event::Apply(cm("a", "2")));
        assert_eq!(depth(), Some(2), "a changed again");
        reconciled("queue-test", Some("ns"), "a");
        reconciled("queue-test", Some("ns"), "b");
        assert_eq!(depth(), Some(0));
        writer.apply_watcher_event(&Event::Delete(cm("b", "1")));
        reconciled("untracked", None, "x");
        assert_eq!(depth(), Some(0));
    }

    #[test]
    fn a_controller_woken_by_spec_changes_counts_new_generations_only() {
        let (store, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        let with_generation = |version: &str, generation: i64| {
            let mut c = cm("w", version);
            c.metadata.generation = Some(generation);
            c
        };
        writer.apply_watcher_event(&Event::Apply(with_generation("1", 1)));
        track("queue-spec-test", store, Wakes::OnSpec);
        let depth = || {
            depths()
                .into_iter()
                .find(|(n, _)| n == "queue-spec-test")
                .map(|(_, d)| d)
        };
        reconciled("queue-spec-test", Some("ns"), "w");
        writer.apply_watcher_event(&Event::Apply(with_generation("2", 1)));
        assert_eq!(depth(), Some(0), "its own status write is not queued");
        writer.apply_watcher_event(&Event::Apply(with_generation("3", 2)));
        assert_eq!(depth(), Some(1));
    }
}
