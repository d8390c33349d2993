//! Placements whose CEL selectors ran out of their budget, by generation: such a placement is
//! reported misconfigured and not evaluated again until its spec changes, so a few costly
//! placements cannot spend the hub's CPU on every cluster event.
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use kube::ResourceExt as _;

use ocm_api::cluster::Placement;

/// Namespace and name of a placement.
/// A placement's `(namespace, name)`, by which the per-placement memories key it.
pub(super) type Key = (String, String);

/// The placements that ran out of budget, with the generation and the message.
#[derive(Default)]
pub(super) struct OverBudget(Mutex<HashMap<Key, (Option<i64>, String)>>);

pub(super) fn key(p: &Placement) -> Key {
    (p.namespace().unwrap_or_default(), p.name_any())
}

impl OverBudget {
    /// The misconfiguration `p` ran into at its current generation, if it did.
    pub(super) fn get(&self, p: &Placement) -> Option<String> {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let key = key(p);
        match seen.get(&key) {
            Some((generation, message)) if *generation == p.metadata.generation => {
                Some(message.clone())
            }
            Some(_) => {
                seen.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Remembers that `p` ran out of budget at its current generation.
    pub(super) fn remember(&self, p: &Placement, message: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key(p), (p.metadata.generation, message.to_owned()));
    }

    /// Forgets a deleted placement.
    pub(super) fn forget(&self, p: &Placement) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(generation: i64) -> Placement {
        let mut p = Placement::new("p", ocm_api::cluster::PlacementSpec::default());
        p.metadata.namespace = Some("ns".into());
        p.metadata.generation = Some(generation);
        p
    }

    #[test]
    fn a_placement_is_evaluated_again_once_its_spec_changed() {
        let over = OverBudget::default();
        over.remember(&placement(1), "Predicate:over");
        assert_eq!(over.get(&placement(1)).as_deref(), Some("Predicate:over"));
        assert_eq!(over.get(&placement(2)), None);
        assert_eq!(over.get(&placement(1)), None, "forgotten once edited");
        over.remember(&placement(2), "x");
        over.forget(&placement(2));
        assert_eq!(over.get(&placement(2)), None);
    }
}
