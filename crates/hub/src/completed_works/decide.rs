//! Whether a completed ManifestWork's time is up, as upstream's garbage collector decides it:
//! pure, so deadlines are tested without a cluster.
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use ocm_api::conditions;
use ocm_api::work::COMPLETE;
use ocm_api::work::ManifestWork;
use ocm_api::work::REPLICA_SET_LABEL;

/// The longest wait before a work is looked at again.
const MAX_WAIT_SECONDS: u64 = 24 * 60 * 60;

/// What to do with a work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not this controller's: no TTL, not complete, being deleted, or a replica set's.
    Keep,
    /// Complete; deleted once this much more time has passed.
    Wait(Duration),
    /// Complete for its TTL: delete it.
    Delete,
}

/// The verdict on `work` at `now`.
#[must_use]
pub fn verdict(work: &ManifestWork, now: Timestamp) -> Verdict {
    if work.metadata.deletion_timestamp.is_some() || work.labels().contains_key(REPLICA_SET_LABEL) {
        return Verdict::Keep;
    }
    let Some(ttl) = work
        .spec
        .delete_option
        .as_ref()
        .and_then(|d| d.ttl_seconds_after_finished)
    else {
        return Verdict::Keep;
    };
    let Some(complete) = work
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, COMPLETE))
        .filter(|c| c.status == conditions::TRUE)
    else {
        return Verdict::Keep;
    };
    // Any int64 is a valid TTL: a huge one is "not for a very long time", never an overflow.
    let deadline = complete
        .last_transition_time
        .0
        .as_second()
        .saturating_add(ttl.max(0));
    let left = deadline.saturating_sub(now.as_second());
    if left > 0 {
        // Looked at again at least daily (a timer that far out is all the same).
        Verdict::Wait(Duration::from_secs(
            left.unsigned_abs().min(MAX_WAIT_SECONDS),
        ))
    } else {
        Verdict::Delete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(yaml_extra: &str) -> ManifestWork {
        ocm_api::yaml::from_str(&format!(
            "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata: {{name: w, namespace: c1}}\n{yaml_extra}"
        ))
        .unwrap()
    }

    const COMPLETED: &str = "status: {conditions: [{type: Complete, status: 'True', reason: ConditionRulesAggregated, message: m, lastTransitionTime: '2026-01-01T00:00:00Z'}]}\n";

    #[test]
    fn a_completed_work_goes_after_its_ttl_and_others_stay() {
        let at = |s: &str| s.parse::<Timestamp>().unwrap();
        let ttl = work(&format!(
            "spec: {{workload: {{}}, deleteOption: {{ttlSecondsAfterFinished: 60}}}}\n{COMPLETED}"
        ));
        assert_eq!(
            verdict(&ttl, at("2026-01-01T00:00:20Z")),
            Verdict::Wait(Duration::from_secs(40))
        );
        assert_eq!(verdict(&ttl, at("2026-01-01T00:01:00Z")), Verdict::Delete);
        let zero = work(&format!(
            "spec: {{workload: {{}}, deleteOption: {{ttlSecondsAfterFinished: 0}}}}\n{COMPLETED}"
        ));
        assert_eq!(verdict(&zero, at("2026-01-01T00:00:00Z")), Verdict::Delete);
        let forever = work(&format!(
            "spec: {{workload: {{}}, deleteOption: {{ttlSecondsAfterFinished: {}}}}}\n{COMPLETED}",
            i64::MAX
        ));
        assert_eq!(
            verdict(&forever, at("2030-01-01T00:00:00Z")),
            Verdict::Wait(Duration::from_secs(MAX_WAIT_SECONDS))
        );
        let no_ttl = work(&format!("spec: {{workload: {{}}}}\n{COMPLETED}"));
        assert_eq!(verdict(&no_ttl, at("2030-01-01T00:00:00Z")), Verdict::Keep);
        let running = work("spec: {workload: {}, deleteOption: {ttlSecondsAfterFinished: 1}}\n");
        assert_eq!(verdict(&running, at("2030-01-01T00:00:00Z")), Verdict::Keep);
        let mut replica = ttl.clone();
        replica
            .labels_mut()
            .insert(REPLICA_SET_LABEL.into(), "rs".into());
        assert_eq!(verdict(&replica, at("2030-01-01T00:00:00Z")), Verdict::Keep);
    }
}
