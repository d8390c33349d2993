//! When an AppliedManifestWork that no work on the hub manages any more is evicted, as upstream's
//! work agent decides it (`unmanaged_appliedmanifestwork_controller.go`): a record is unmanaged
//! when its ManifestWork is missing on the hub **or** it was written for another hub (the agent
//! now talks to a new or rebuilt hub). It is evicted, with what it applied, only once it has
//! been unmanaged for the grace period (`workConfiguration.appliedManifestWorkEvictionGracePeriod`,
//! 60 minutes by default; 100 years or more turns eviction off), counted from the
//! `status.evictionStartTime` the agent records; the work coming back cancels it. This is what
//! keeps a hub restored from a backup, or a hub migration, from deleting a fleet's workloads.
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

/// Upstream's default grace period.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60 * 60);
/// A grace period this long or longer turns eviction off (upstream's `EvictionGracePeriodBound`).
pub const DISABLED_AT: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// What to do with one record of this agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Managed (or eviction is off): nothing, and any eviction start recorded is cleared.
    Keep,
    /// Unmanaged from now: record `now` as the eviction start.
    Start,
    /// Unmanaged, within its grace period: look again after this long.
    Wait(Duration),
    /// Unmanaged for the whole grace period: remove what it applied, then the record.
    Evict,
}

/// The verdict for a record that is `managed` (its work on this hub exists), whose eviction
/// started at `started` (if it did), at `now`, with grace period `grace`.
#[must_use]
pub fn decide(
    managed: bool,
    started: Option<Timestamp>,
    now: Timestamp,
    grace: Duration,
) -> Verdict {
    if managed || grace >= DISABLED_AT {
        return Verdict::Keep;
    }
    let Some(started) = started else {
        return Verdict::Start;
    };
    let elapsed = now
        .duration_since(started)
        .try_into()
        .unwrap_or(Duration::ZERO);
    match grace.checked_sub(elapsed) {
        Some(left) if !left.is_zero() => Verdict::Wait(left),
        _ => Verdict::Evict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    #[test]
    fn an_unmanaged_record_waits_out_its_grace_period() {
        let grace = Duration::from_secs(600);
        assert_eq!(decide(false, None, at(0), grace), Verdict::Start);
        assert_eq!(
            decide(false, Some(at(0)), at(60), grace),
            Verdict::Wait(Duration::from_secs(540))
        );
        assert_eq!(decide(false, Some(at(0)), at(600), grace), Verdict::Evict);
        assert_eq!(decide(false, Some(at(0)), at(9_000), grace), Verdict::Evict);
        // A start in the future (another clock) waits the whole period.
        assert_eq!(
            decide(false, Some(at(100)), at(0), grace),
            Verdict::Wait(grace)
        );
    }

    #[test]
    fn a_managed_record_or_eviction_off_is_kept() {
        assert_eq!(
            decide(true, Some(at(0)), at(10_000), DEFAULT_GRACE),
            Verdict::Keep
        );
        assert_eq!(
            decide(false, Some(at(0)), at(i64::from(u32::MAX)), DISABLED_AT),
            Verdict::Keep
        );
        assert_eq!(
            decide(false, None, at(0), DISABLED_AT + Duration::from_secs(1)),
            Verdict::Keep
        );
    }
}
