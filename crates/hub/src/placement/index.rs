//! Which clusters each placement's PlacementDecisions name, and how many decisions name each
//! cluster, kept up to date from the decision watch's events: a placement reads its own clusters
//! (for `Steady` and `NoSelectIfNew`) and everyone else's counts (for `Balance`) without
//! scanning every decision of the hub, which with 10,000 placements was most of the work.
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use kube::ResourceExt as _;
use kube::runtime::watcher::Event;

use ocm_api::cluster::{PLACEMENT_LABEL, PlacementDecision};

/// `(namespace, name)`.
type Key = (String, String);

#[derive(Default)]
struct State {
    /// Each decision: its placement and its clusters.
    decisions: HashMap<Key, (Key, Vec<String>)>,
    /// Decisions naming each cluster.
    counts: HashMap<String, usize>,
    /// Each placement's decisions.
    by_placement: HashMap<Key, BTreeSet<String>>,
}

impl State {
    fn insert(&mut self, d: &PlacementDecision) {
        self.remove(d);
        let (Some(ns), Some(placement)) = (d.namespace(), d.labels().get(PLACEMENT_LABEL)) else {
            return;
        };
        let clusters: Vec<String> = d
            .status
            .iter()
            .flat_map(|s| &s.decisions)
            .map(|c| c.cluster_name.clone())
            .collect();
        for c in &clusters {
            *self.counts.entry(c.clone()).or_default() += 1;
        }
        let owner = (ns.clone(), placement.clone());
        self.by_placement
            .entry(owner.clone())
            .or_default()
            .insert(d.name_any());
        self.decisions.insert((ns, d.name_any()), (owner, clusters));
    }

    fn remove(&mut self, d: &PlacementDecision) {
        let key = (d.namespace().unwrap_or_default(), d.name_any());
        let Some((owner, clusters)) = self.decisions.remove(&key) else {
            return;
        };
        for c in clusters {
            if let Some(n) = self.counts.get_mut(&c) {
                *n -= 1;
                if *n == 0 {
                    self.counts.remove(&c);
                }
            }
        }
        if let Some(names) = self.by_placement.get_mut(&owner) {
            names.remove(&key.1);
            if names.is_empty() {
                self.by_placement.remove(&owner);
            }
        }
    }
}

/// The index, and the one being rebuilt while the watch relists.
#[derive(Default)]
pub struct Index {
    state: Mutex<State>,
    relisting: Mutex<Option<State>>,
}

/// What one placement sees.
pub struct View {
    /// The names of its decisions.
    pub decisions: BTreeSet<String>,
    /// The clusters they name.
    pub current: BTreeSet<String>,
    /// Decisions of other placements naming each cluster.
    pub others: HashMap<String, usize>,
}

impl Index {
    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows one event of the decision watch.
    pub(super) fn observe(&self, event: &Event<PlacementDecision>) {
        match event {
            Event::Apply(d) => Self::lock(&self.state).insert(d),
            Event::Delete(d) => Self::lock(&self.state).remove(d),
            Event::Init => *Self::lock(&self.relisting) = Some(State::default()),
            Event::InitApply(d) => {
                if let Some(s) = Self::lock(&self.relisting).as_mut() {
                    s.insert(d);
                }
            }
            Event::InitDone => {
                if let Some(fresh) = Self::lock(&self.relisting).take() {
                    *Self::lock(&self.state) = fresh;
                }
            }
        }
    }

    /// The index of `decisions` as they are (for a one-off reading, such as
    /// `get placements --explain`).
    #[must_use]
    pub fn of(decisions: &[PlacementDecision]) -> Self {
        let index = Self::default();
        let mut state = Self::lock(&index.state);
        for d in decisions {
            state.insert(d);
        }
        drop(state);
        index
    }

    /// What placement `name` in `ns` sees.
    #[must_use]
    pub fn view(&self, ns: &str, name: &str) -> View {
        let state = Self::lock(&self.state);
        let decisions = state
            .by_placement
            .get(&(ns.to_owned(), name.to_owned()))
            .cloned()
            .unwrap_or_default();
        let mut others = state.counts.clone();
        let mut current = BTreeSet::new();
        for d in &decisions {
            let Some((_, clusters)) = state.decisions.get(&(ns.to_owned(), d.clone())) else {
                continue;
            };
            for c in clusters {
                current.insert(c.clone());
                if let Some(n) = others.get_mut(c) {
                    *n -= 1;
                    if *n == 0 {
                        others.remove(c);
                    }
                }
            }
        }
        View {
            decisions,
            current,
            others,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decision(name: &str, placement: &str, clusters: &[&str]) -> PlacementDecision {
        let decisions: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c, "reason": ""}))
            .collect();
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
            "metadata": {"name": name, "namespace": "ns", "labels": {PLACEMENT_LABEL: placement}},
            "status": {"decisions": decisions}
        }))
        .unwrap()
    }

    #[test]
    fn counts_follow_updates_deletes_and_relists() {
        let index = Index::default();
        index.observe(&Event::Apply(decision("a-1", "a", &["c1", "c2"])));
        index.observe(&Event::Apply(decision("b-1", "b", &["c1"])));
        let a = index.view("ns", "a");
        assert_eq!(a.current, ["c1".to_owned(), "c2".to_owned()].into());
        assert_eq!(a.others, [("c1".to_owned(), 1)].into());
        index.observe(&Event::Apply(decision("b-1", "b", &["c2"])));
        assert_eq!(index.view("ns", "a").others, [("c2".to_owned(), 1)].into());
        index.observe(&Event::Delete(decision("b-1", "b", &["c2"])));
        assert!(index.view("ns", "a").others.is_empty());
        index.observe(&Event::Init);
        index.observe(&Event::InitApply(decision("b-1", "b", &["c3"])));
        assert_eq!(
            index.view("ns", "a").decisions.len(),
            1,
            "the old state serves until InitDone"
        );
        index.observe(&Event::InitDone);
        assert!(index.view("ns", "a").decisions.is_empty());
        assert_eq!(index.view("ns", "a").others, [("c3".to_owned(), 1)].into());
    }
}
