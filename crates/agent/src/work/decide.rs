//! What a pass over a work does, decided from what was read and nothing else, so every rule is
//! tested without a cluster.
use kube::ResourceExt as _;

use ocm_api::work::{MANIFEST_WORK_FINALIZER, ManifestWork};

/// What a pass does with a work, by its finalizer and its deletion: the finalizer is added before
/// anything is applied, and removed only once what the work applied is gone from the managed
/// cluster (kube's finalizer helper's states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Add the finalizer; nothing else (the change wakes the work again).
    AddFinalizer,
    /// Apply the work.
    Apply,
    /// Deleted: remove what it applied, then the finalizer, found at this index of the list.
    Finalize {
        /// Where the finalizer is in `metadata.finalizers`.
        index: usize,
    },
    /// Deleted, and the finalizer gone already: nothing to do.
    Gone,
}

/// The stage of `work`.
#[must_use]
pub fn stage(work: &ManifestWork) -> Stage {
    let index = work
        .finalizers()
        .iter()
        .position(|f| f == MANIFEST_WORK_FINALIZER);
    match (index, work.metadata.deletion_timestamp.is_some()) {
        (None, false) => Stage::AddFinalizer,
        (Some(_), false) => Stage::Apply,
        (Some(index), true) => Stage::Finalize { index },
        (None, true) => Stage::Gone,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn work(finalizers: &[&str], deleted: bool) -> ManifestWork {
        let mut w = ManifestWork::new("w", ocm_api::work::ManifestWorkSpec::default());
        w.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
        w.metadata.deletion_timestamp = deleted.then_some(Time(Timestamp::UNIX_EPOCH));
        w
    }

    #[test]
    fn the_finalizer_comes_first_and_goes_last() {
        assert_eq!(stage(&work(&[], false)), Stage::AddFinalizer);
        assert_eq!(stage(&work(&["other"], false)), Stage::AddFinalizer);
        assert_eq!(
            stage(&work(&["other", MANIFEST_WORK_FINALIZER], false)),
            Stage::Apply
        );
        assert_eq!(
            stage(&work(&["other", MANIFEST_WORK_FINALIZER], true)),
            Stage::Finalize { index: 1 }
        );
        assert_eq!(stage(&work(&["other"], true)), Stage::Gone);
    }
}
