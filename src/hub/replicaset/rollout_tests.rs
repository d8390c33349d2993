//! Rollout plans from statuses; no cluster.
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::{Group, Since, Status, plan};
use crate::api::rollout::RolloutStrategy;

fn now() -> Timestamp {
    "2026-01-01T00:10:00Z".parse().unwrap()
}

fn minutes_ago(m: i64) -> Timestamp {
    now() - SignedDuration::from_mins(m)
}

#[allow(clippy::needless_pass_by_value)] // called with json! literals
fn strategy(v: serde_json::Value) -> RolloutStrategy {
    serde_json::from_value(v).unwrap()
}

fn group(index: i32, name: &str, clusters: &[&str]) -> Group {
    Group {
        index,
        name: name.into(),
        clusters: clusters.iter().map(|c| (*c).to_owned()).collect(),
    }
}

fn statuses(of: &[(&str, Status, Option<Timestamp>)]) -> BTreeMap<String, Since> {
    of.iter()
        .map(|(c, status, since)| {
            (
                (*c).to_owned(),
                Since {
                    status: *status,
                    since: *since,
                },
            )
        })
        .collect()
}

#[test]
fn all_applies_everywhere_and_removes_what_left() {
    let groups = [group(0, "", &["a", "b", "c"])];
    let s = statuses(&[
        ("a", Status::Succeeded, Some(minutes_ago(1))),
        ("gone", Status::Succeeded, None),
    ]);
    let p = plan(&strategy(json!({"type": "All"})), &groups, &s, now()).unwrap();
    assert_eq!(p.to_apply, ["b", "c"]);
    assert_eq!(p.removed, ["gone"]);
}

#[test]
fn progressive_keeps_max_concurrency_in_flight() {
    let groups = [group(0, "", &["a", "b", "c", "d"])];
    let one = strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": 1}}));
    assert_eq!(
        plan(&one, &groups, &statuses(&[]), now()).unwrap().to_apply,
        ["a"]
    );
    let a_busy = statuses(&[("a", Status::Progressing, Some(minutes_ago(1)))]);
    assert!(
        plan(&one, &groups, &a_busy, now())
            .unwrap()
            .to_apply
            .is_empty()
    );
    let a_done = statuses(&[("a", Status::Succeeded, Some(minutes_ago(1)))]);
    assert_eq!(plan(&one, &groups, &a_done, now()).unwrap().to_apply, ["b"]);
    // 50% of 4 is 2 in flight.
    let half = strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": "50%"}}));
    assert_eq!(
        plan(&half, &groups, &a_done, now()).unwrap().to_apply,
        ["b", "c"]
    );
    // A soak keeps a succeeded cluster in flight, and says when to look again.
    let soak = strategy(
        json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "minSuccessTime": "5m"}}),
    );
    let p = plan(&soak, &groups, &a_done, now()).unwrap();
    assert!(p.to_apply.is_empty());
    assert_eq!(p.recheck_after, Some(Duration::from_secs(240)));
    let bad = strategy(json!({"type": "Progressive", "progressive": {"maxConcurrency": "lots"}}));
    assert!(plan(&bad, &groups, &a_done, now()).is_err());
}

#[test]
fn a_failure_past_the_deadline_stops_the_rollout() {
    let groups = [group(0, "", &["a", "b", "c"])];
    let strict = strategy(
        json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "progressDeadline": "5m"}}),
    );
    let stuck = statuses(&[("a", Status::Progressing, Some(minutes_ago(10)))]);
    let stopped = plan(&strict, &groups, &stuck, now()).unwrap();
    assert!(stopped.to_apply.is_empty());
    assert_eq!(stopped.timed_out, ["a"]);
    assert!(stopped.in_flight.is_empty());
    let tolerant = strategy(
        json!({"type": "Progressive", "progressive": {"maxConcurrency": 1, "progressDeadline": "5m", "maxFailures": 1}}),
    );
    assert_eq!(
        plan(&tolerant, &groups, &stuck, now()).unwrap().to_apply,
        ["b"]
    );
}

#[test]
fn per_group_waits_for_each_group_and_mandatory_groups_go_first() {
    let groups = [
        group(0, "canary", &["a", "b"]),
        group(1, "rest", &["c", "d"]),
    ];
    let per_group = strategy(json!({"type": "ProgressivePerGroup"}));
    assert_eq!(
        plan(&per_group, &groups, &statuses(&[]), now())
            .unwrap()
            .to_apply,
        ["a", "b"]
    );
    let half = statuses(&[
        ("a", Status::Succeeded, None),
        ("b", Status::Progressing, None),
    ]);
    assert!(
        plan(&per_group, &groups, &half, now())
            .unwrap()
            .to_apply
            .is_empty()
    );
    let first_done = statuses(&[
        ("a", Status::Succeeded, None),
        ("b", Status::Succeeded, None),
    ]);
    assert_eq!(
        plan(&per_group, &groups, &first_done, now())
            .unwrap()
            .to_apply,
        ["c", "d"]
    );

    let mandatory = strategy(
        json!({"type": "Progressive", "progressive": {"mandatoryDecisionGroups": [{"groupName": "rest"}], "maxConcurrency": 1}}),
    );
    assert_eq!(
        plan(&mandatory, &groups, &statuses(&[]), now())
            .unwrap()
            .to_apply,
        ["c", "d"]
    );
    let rest_done = statuses(&[
        ("c", Status::Succeeded, None),
        ("d", Status::Succeeded, None),
    ]);
    assert_eq!(
        plan(&mandatory, &groups, &rest_done, now())
            .unwrap()
            .to_apply,
        ["a"]
    );
}
