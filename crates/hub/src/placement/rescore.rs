//! `scoreRateLimit`: under `sortBy: Score` the decisions record scores, and a change of scores
//! alone (the same clusters in the same decisions) is written at most once per the placement's
//! limit (default `1m`), so a fleet whose resource scores move every heartbeat does not rewrite
//! its decisions every heartbeat. A change of the chosen clusters is written at once.
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::budget::{Key, key};
use super::groups::Decision;
use ocm_api::cluster::Placement;

/// The default limit (the CRD's default).
const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

/// `p`'s `scoreRateLimit` (`<n>h`, `<n>m` or `<n>s`, as the CRD's pattern allows).
#[must_use]
pub fn limit(p: &Placement) -> Duration {
    let Some(text) = p.spec.score_rate_limit.as_deref() else {
        return DEFAULT_LIMIT;
    };
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    let unit_secs = match unit {
        "h" => 3600,
        "m" => 60,
        "s" => 1,
        _ => return DEFAULT_LIMIT,
    };
    digits.parse::<u64>().map_or(DEFAULT_LIMIT, |n| {
        Duration::from_secs(n.saturating_mul(unit_secs))
    })
}

/// Whether `want` differs from `have` in scores or order only.
#[must_use]
pub fn only_scores_differ(want: &[Decision], have: &[Decision]) -> bool {
    let key = |d: &Decision| {
        let mut clusters = d.clusters.clone();
        clusters.sort();
        (
            d.name.clone(),
            d.group_index,
            d.group_name.clone(),
            clusters,
        )
    };
    want != have && want.len() == have.len() && want.iter().zip(have).all(|(w, h)| key(w) == key(h))
}

/// How long a change of scores alone waits, last written at `last`, under `limit`, at `now`:
/// `None` when it may be written now.
#[must_use]
pub fn wait(last: Option<Timestamp>, limit: Duration, now: Timestamp) -> Option<Duration> {
    let since = now.duration_since(last?);
    let limit = SignedDuration::try_from(limit).unwrap_or(SignedDuration::MAX);
    (since < limit).then(|| (limit - since).unsigned_abs())
}

/// When this process last wrote each placement's scores.
#[derive(Default)]
pub(super) struct Rescored(Mutex<HashMap<Key, Timestamp>>);

impl Rescored {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Timestamp>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When `p`'s scores were last written.
    pub(super) fn last(&self, p: &Placement) -> Option<Timestamp> {
        self.lock().get(&key(p)).copied()
    }

    /// Notes that `p`'s scores were written at `now`.
    pub(super) fn wrote(&self, p: &Placement, now: Timestamp) {
        self.lock().insert(key(p), now);
    }

    /// Forgets a deleted placement.
    pub(super) fn forget(&self, p: &Placement) {
        self.lock().remove(&key(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::schedule::tests::placement;
    use serde_json::json;

    fn decision(clusters: &[&str], scores: &[i64]) -> Decision {
        Decision {
            name: "p-decision-1".into(),
            group_index: 0,
            group_name: String::new(),
            clusters: clusters.iter().map(ToString::to_string).collect(),
            scores: scores.to_vec(),
        }
    }

    #[test]
    fn the_limit_reads_hours_minutes_and_seconds_and_defaults_to_a_minute() {
        let with = |l: &str| limit(&placement(json!({"scoreRateLimit": l})));
        assert_eq!(with("2h"), Duration::from_secs(7200));
        assert_eq!(with("5m"), Duration::from_secs(300));
        assert_eq!(with("30s"), Duration::from_secs(30));
        assert_eq!(limit(&placement(json!({}))), DEFAULT_LIMIT);
    }

    #[test]
    fn new_scores_or_order_alone_are_held_and_new_clusters_are_not() {
        let have = [decision(&["a", "b"], &[10, 5])];
        assert!(only_scores_differ(&[decision(&["b", "a"], &[9, 7])], &have));
        assert!(only_scores_differ(
            &[decision(&["a", "b"], &[11, 5])],
            &have
        ));
        assert!(!only_scores_differ(
            &[decision(&["a", "c"], &[10, 5])],
            &have
        ));
        assert!(!only_scores_differ(&have, &have), "nothing to hold");
    }

    #[test]
    fn a_change_waits_for_the_rest_of_the_limit_after_the_last_write() {
        let now = Timestamp::now();
        let minute = Duration::from_secs(60);
        assert_eq!(wait(None, minute, now), None, "never written: at once");
        let last = now - SignedDuration::from_secs(20);
        assert_eq!(wait(Some(last), minute, now), Some(Duration::from_secs(40)));
        let long_ago = now - SignedDuration::from_secs(61);
        assert_eq!(wait(Some(long_ago), minute, now), None);
    }
}
