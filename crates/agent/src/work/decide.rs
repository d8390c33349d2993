//! What a pass over a work does, decided from what was read and nothing else, so every rule is
//! tested without a cluster: its stage (the finalizer first, the clean-up last), what becomes of
//! its AppliedManifestWork record before anything is applied, which recorded resources are stale
//! and what is recorded after the pass, and when the work is due again; which records concern the
//! agent, and what the sweep does with each of its own. What a manifest is and how
//! it is applied is [`super::build`]'s; its status, [`super::status`]'s.
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use super::build::Key;
use super::delete::Removal;
use super::eviction::{self, Verdict};
use ocm_api::work::{
    APPLIED_MANIFEST_WORK_FINALIZER, AppliedManifestResourceMeta, AppliedManifestWork,
    AppliedManifestWorkSpec, MANIFEST_WORK_FINALIZER, ManifestWork,
};

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

/// What becomes of a work's AppliedManifestWork, there already, before anything is applied (one
/// that is not there is created).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// It is as it should be (or being deleted: the pass cleans up after it).
    Keep,
    /// Its spec or finalizer is not this agent's: write `spec` and these finalizers.
    Fix {
        /// The finalizers it keeps, with the record's own added.
        finalizers: Vec<String>,
    },
}

/// What becomes of `existing`, the record this agent wants with `spec`.
#[must_use]
pub fn record(existing: &AppliedManifestWork, spec: &AppliedManifestWorkSpec) -> Record {
    let has_finalizer = existing
        .finalizers()
        .iter()
        .any(|f| f == APPLIED_MANIFEST_WORK_FINALIZER);
    if existing.spec == *spec && has_finalizer || existing.metadata.deletion_timestamp.is_some() {
        return Record::Keep;
    }
    let mut finalizers = existing.finalizers().to_vec();
    if !has_finalizer {
        finalizers.push(APPLIED_MANIFEST_WORK_FINALIZER.into());
    }
    Record::Fix { finalizers }
}

/// The finalizers `record` keeps once what it lists is removed: all but its own.
#[must_use]
pub fn released(record: &AppliedManifestWork) -> Vec<String> {
    record
        .finalizers()
        .iter()
        .filter(|f| *f != APPLIED_MANIFEST_WORK_FINALIZER)
        .cloned()
        .collect()
}

/// Whether a record on the managed cluster concerns this agent: one of its own (its `agent_id`:
/// the sweep's), or one it would read by name (its names start with `prefix`, whoever wrote it).
/// Agents of other clusters sharing the managed API server have theirs.
#[must_use]
pub fn concerns(record: &AppliedManifestWork, agent_id: &str, prefix: &str) -> bool {
    record.spec.agent_id.as_deref() == Some(agent_id) || record.name_any().starts_with(prefix)
}

/// What the sweep does with one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Nothing: another agent's, being deleted, or managed.
    Leave,
    /// Managed again: clear the eviction start it records.
    Cancel,
    /// Unmanaged from now: record `now` as its eviction start.
    Start,
    /// Unmanaged, within its grace period: look again after this long.
    Wait(Duration),
    /// Unmanaged for the whole grace period: remove what it applied, then the record.
    Evict,
}

/// What the sweep does with `record` of this agent (`agent_id`, talking to the hub of
/// `hub_hash`) at `now`: it is managed when it was written for this hub and its work is there
/// (`work_exists`); [`eviction::decide`] says the rest.
#[must_use]
pub fn sweep(
    record: &AppliedManifestWork,
    agent_id: &str,
    hub_hash: &str,
    work_exists: bool,
    now: Timestamp,
    grace: Duration,
) -> Sweep {
    if record.spec.agent_id.as_deref() != Some(agent_id)
        || record.metadata.deletion_timestamp.is_some()
    {
        return Sweep::Leave;
    }
    let managed = record.spec.hub_hash == hub_hash && work_exists;
    let started = record
        .status
        .as_ref()
        .and_then(|s| s.eviction_start_time.as_ref())
        .map(|t| t.0);
    match eviction::decide(managed, started, now, grace) {
        Verdict::Keep if started.is_some() => Sweep::Cancel,
        Verdict::Keep => Sweep::Leave,
        Verdict::Start => Sweep::Start,
        Verdict::Wait(left) => Sweep::Wait(left),
        Verdict::Evict => Sweep::Evict,
    }
}

/// The resources to record after an apply pass: what was applied now, plus what was recorded
/// before and is still wanted (its apply failed this time; forgetting it would leak it). Sorted,
/// so an unchanged set compares equal.
#[must_use]
pub fn next_applied(
    previous: &[AppliedManifestResourceMeta],
    applied_now: &[AppliedManifestResourceMeta],
    wanted: &[Key],
) -> Vec<AppliedManifestResourceMeta> {
    let now_keys: Vec<Key> = applied_now.iter().map(Key::of).collect();
    let mut out: Vec<AppliedManifestResourceMeta> = applied_now.to_vec();
    out.extend(
        previous
            .iter()
            .filter(|p| {
                let k = Key::of(p);
                wanted.contains(&k) && !now_keys.contains(&k)
            })
            .cloned(),
    );
    out.sort_by_key(Key::of);
    out.dedup_by_key(|m| Key::of(m));
    out
}

/// Recorded resources no manifest of the work names any more: they are to be deleted.
#[must_use]
pub fn stale(
    previous: &[AppliedManifestResourceMeta],
    wanted: &[Key],
) -> Vec<AppliedManifestResourceMeta> {
    previous
        .iter()
        .filter(|p| !wanted.contains(&Key::of(p)))
        .cloned()
        .collect()
}

/// What the record lists after a pass: [`next_applied`], and the `stale` resources whose removal
/// is not done (they stay recorded, to be removed on a later pass); sorted. `None` when that is
/// what `previous` lists already: nothing to write.
#[must_use]
pub fn recorded(
    previous: &[AppliedManifestResourceMeta],
    next: Vec<AppliedManifestResourceMeta>,
    stale: &[AppliedManifestResourceMeta],
    removals: &[Removal],
) -> Option<Vec<AppliedManifestResourceMeta>> {
    let mut next = next;
    for (res, removal) in stale.iter().zip(removals) {
        if *removal != Removal::Done {
            next.push(res.clone());
        }
    }
    next.sort_by_key(Key::of);
    let mut sorted_previous = previous.to_vec();
    sorted_previous.sort_by_key(Key::of);
    (next != sorted_previous).then_some(next)
}

/// How many removals are not done.
#[must_use]
pub fn left(removals: &[Removal]) -> usize {
    removals.iter().filter(|r| **r != Removal::Done).count()
}

/// Whether `work` asks for status feedback or condition rules: they are read from the objects as
/// applying returns them, so such a work is applied again more often, to keep them as fresh as
/// upstream's (a Job's `Complete` starts a completed work's TTL).
#[must_use]
pub fn wants_feedback(work: &ManifestWork) -> bool {
    work.spec
        .manifest_configs
        .iter()
        .any(|c| !c.feedback_rules.is_empty() || !c.condition_rules.is_empty())
}

/// When a work is due again after a pass: soon (`retry`) after a failure or with removals left,
/// every `status_sync` for feedback, else every `resync`; never later than `resync`.
#[must_use]
pub fn due(
    failed_or_pending: bool,
    wants_feedback: bool,
    resync: Duration,
    retry: Duration,
    status_sync: Duration,
) -> Duration {
    if failed_or_pending {
        resync.min(retry)
    } else if wants_feedback {
        resync.min(status_sync)
    } else {
        resync
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::work::build::tests::applied;

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

    #[test]
    fn applied_set_keeps_failed_but_wanted_and_drops_unwanted() {
        let a = applied("", "configmaps", "ns", "a");
        let b = applied("apps", "deployments", "ns", "b");
        let c = applied("", "serviceaccounts", "ns", "c");
        let wanted = [Key::of(&a), Key::of(&b)];
        // a applied now, b failed this time but is still wanted, c is no longer wanted.
        let next = next_applied(&[b.clone(), c.clone()], std::slice::from_ref(&a), &wanted);
        assert_eq!(next, vec![a.clone(), b.clone()]);
        assert_eq!(stale(&[a.clone(), b.clone(), c.clone()], &wanted), vec![c]);
        // A re-applied resource with a new UID replaces the recorded one.
        let mut a2 = a.clone();
        a2.uid = Some("new".into());
        assert_eq!(next_applied(&[a], &[a2.clone()], &wanted), vec![a2]);
    }

    #[test]
    fn a_stale_resource_not_removed_yet_stays_recorded() {
        let (a, b, c) = (
            applied("", "configmaps", "ns", "a"),
            applied("", "configmaps", "ns", "b"),
            applied("", "configmaps", "ns", "c"),
        );
        let previous = [c.clone(), a.clone(), b.clone()];
        let stale = [b.clone(), c.clone()];
        let removals = [Removal::Pending, Removal::Done];
        assert_eq!(
            recorded(&previous, vec![a.clone()], &stale, &removals),
            Some(vec![a.clone(), b.clone()])
        );
        // All of it still there, in another order: nothing to write.
        assert_eq!(recorded(&previous, vec![a, b, c.clone()], &[], &[]), None);
        assert_eq!(
            left(&[Removal::Done, Removal::Failed("x".into()), Removal::Pending]),
            2
        );
    }

    #[test]
    fn a_record_is_fixed_or_kept_and_released_of_its_finalizer() {
        let spec = AppliedManifestWorkSpec {
            hub_hash: "hub".into(),
            agent_id: Some("agent".into()),
            manifest_work_name: "w".into(),
        };
        let mut have = AppliedManifestWork::new("hub-w", spec.clone());
        have.metadata.finalizers = Some(vec!["other".into()]);
        assert_eq!(
            record(&have, &spec),
            Record::Fix {
                finalizers: vec!["other".into(), APPLIED_MANIFEST_WORK_FINALIZER.into()]
            }
        );
        have.metadata.finalizers =
            Some(vec!["other".into(), APPLIED_MANIFEST_WORK_FINALIZER.into()]);
        assert_eq!(record(&have, &spec), Record::Keep);
        assert_eq!(released(&have), ["other"]);
        have.spec.agent_id = Some("another agent".into());
        assert!(matches!(record(&have, &spec), Record::Fix { .. }));
        // Being deleted: left to the pass that cleans up after it.
        have.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        assert_eq!(record(&have, &spec), Record::Keep);
    }

    #[test]
    fn an_agent_keeps_its_own_records_and_those_named_as_its_own() {
        let named = |name: &str, agent: &str| {
            let mut r = AppliedManifestWork::new(name, AppliedManifestWorkSpec::default());
            r.spec.agent_id = Some(agent.into());
            r
        };
        assert!(concerns(
            &named("hash-c1-w", "c1-agent"),
            "c1-agent",
            "hash-c1-"
        ));
        // Another hub's record of this agent: the sweep's.
        assert!(concerns(
            &named("old-c1-w", "c1-agent"),
            "c1-agent",
            "hash-c1-"
        ));
        // Named as this agent's, written by another: taken over by name.
        assert!(concerns(
            &named("hash-c1-w", "before"),
            "c1-agent",
            "hash-c1-"
        ));
        assert!(!concerns(
            &named("hash-c2-w", "c2-agent"),
            "c1-agent",
            "hash-c1-"
        ));
    }

    #[test]
    fn the_sweep_evicts_only_this_agents_unmanaged_records() {
        let at = |secs: i64| Timestamp::from_second(1_800_000_000 + secs).unwrap();
        let grace = Duration::from_secs(600);
        let mut r = AppliedManifestWork::new(
            "hub-w",
            AppliedManifestWorkSpec {
                hub_hash: "hub".into(),
                agent_id: Some("agent".into()),
                manifest_work_name: "w".into(),
            },
        );
        let sweep =
            |r: &AppliedManifestWork, exists| sweep(r, "agent", "hub", exists, at(60), grace);
        assert_eq!(sweep(&r, true), Sweep::Leave);
        assert_eq!(sweep(&r, false), Sweep::Start);
        r.status = Some(ocm_api::work::AppliedManifestWorkStatus {
            eviction_start_time: Some(Time(at(0))),
            ..Default::default()
        });
        assert_eq!(sweep(&r, false), Sweep::Wait(Duration::from_secs(540)));
        assert_eq!(sweep(&r, true), Sweep::Cancel);
        // Written for another hub: unmanaged though its work's name is there.
        r.spec.hub_hash = "old".into();
        assert_eq!(sweep(&r, true), Sweep::Wait(Duration::from_secs(540)));
        r.spec.agent_id = Some("another agent".into());
        assert_eq!(sweep(&r, false), Sweep::Leave);
    }

    #[test]
    fn failures_come_back_soon_and_feedback_at_the_status_sync() {
        let s = Duration::from_secs;
        assert_eq!(due(true, true, s(60), s(5), s(10)), s(5));
        assert_eq!(due(false, true, s(60), s(5), s(10)), s(10));
        assert_eq!(due(false, false, s(60), s(5), s(10)), s(60));
        assert_eq!(due(true, false, s(2), s(5), s(10)), s(2));
    }
}
