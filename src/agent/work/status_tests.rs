//! Unit tests of the work status computation.
use k8s_openapi::jiff::Timestamp;

use super::*;

fn at(secs: i64) -> Time {
    Time(Timestamp::from_second(secs).unwrap())
}

fn meta(ordinal: i32, kind: &str, name: &str) -> ManifestResourceMeta {
    ManifestResourceMeta {
        ordinal,
        group: Some(String::new()),
        version: Some("v1".into()),
        kind: Some(kind.into()),
        resource: Some(format!("{}s", kind.to_lowercase())),
        name: Some(name.into()),
        namespace: Some("ns".into()),
    }
}

fn ok(ordinal: i32, name: &str) -> ManifestResult {
    ManifestResult {
        meta: meta(ordinal, "ConfigMap", name),
        applied: Ok(()),
        available: Availability::Available,
        feedback: None,
    }
}

fn find<'a>(conds: &'a [Condition], type_: &str) -> &'a Condition {
    conditions::find(conds, type_).unwrap()
}

#[test]
fn all_applied_and_available() {
    let s = work_status(None, &[ok(0, "a"), ok(1, "b")], Some(3), &at(10));
    let applied = find(&s.conditions, APPLIED);
    assert_eq!(
        (
            applied.status.as_str(),
            applied.reason.as_str(),
            applied.observed_generation
        ),
        (TRUE, "AppliedManifestWorkComplete", Some(3))
    );
    let available = find(&s.conditions, AVAILABLE);
    assert_eq!(
        (available.status.as_str(), available.reason.as_str()),
        (TRUE, "ResourcesAvailable")
    );
    let manifests = &s.resource_status.unwrap().manifests;
    assert_eq!(manifests.len(), 2);
    assert_eq!(
        find(&manifests[1].conditions, APPLIED).reason,
        "AppliedManifestComplete"
    );
    assert_eq!(
        find(&manifests[1].conditions, AVAILABLE).reason,
        "ResourceAvailable"
    );
}

#[test]
fn one_failure_fails_the_work_but_only_that_manifest() {
    let bad = ManifestResult {
        meta: ManifestResourceMeta {
            ordinal: 1,
            kind: Some("Nope".into()),
            ..Default::default()
        },
        applied: Err("the managed cluster has no resource for kind Nope".into()),
        available: Availability::Incomplete,
        feedback: None,
    };
    let s = work_status(None, &[ok(0, "a"), bad, ok(2, "c")], Some(1), &at(10));
    assert_eq!(
        find(&s.conditions, APPLIED).reason,
        "AppliedManifestWorkFailed"
    );
    let available = find(&s.conditions, AVAILABLE);
    assert_eq!(
        (available.status.as_str(), available.message.as_str()),
        (UNKNOWN, "1 of 3 resources have unknown status")
    );
    let m = s.resource_status.unwrap().manifests;
    assert_eq!(find(&m[0].conditions, APPLIED).status, TRUE);
    let failed = find(&m[1].conditions, APPLIED);
    assert_eq!(
        (failed.status.as_str(), failed.reason.as_str()),
        (FALSE, "AppliedManifestFailed")
    );
    assert!(failed.message.contains("kind Nope"));
    assert_eq!(
        find(&m[1].conditions, AVAILABLE).reason,
        "IncompleteResourceMeta"
    );
    assert_eq!(find(&m[2].conditions, APPLIED).status, TRUE);
}

#[test]
fn missing_beats_unknown() {
    let missing = ManifestResult {
        available: Availability::NotAvailable,
        ..ok(0, "a")
    };
    let unknown = ManifestResult {
        available: Availability::FetchFailed("timeout".into()),
        ..ok(1, "b")
    };
    let s = work_status(None, &[missing, unknown], None, &at(1));
    let available = find(&s.conditions, AVAILABLE);
    assert_eq!(
        (
            available.status.as_str(),
            available.reason.as_str(),
            available.message.as_str()
        ),
        (
            FALSE,
            "ResourcesNotAvailable",
            "1 of 2 resources are not available"
        )
    );
    let m = s.resource_status.unwrap().manifests;
    assert_eq!(
        find(&m[1].conditions, AVAILABLE).reason,
        "FetchingResourceFailed"
    );
}

#[test]
fn no_manifests_has_no_applied_and_unknown_availability() {
    let s = work_status(None, &[], Some(1), &at(1));
    assert!(conditions::find(&s.conditions, APPLIED).is_none());
    assert_eq!(find(&s.conditions, AVAILABLE).status, UNKNOWN);
}

#[test]
fn recomputing_keeps_transition_times_and_other_conditions() {
    let first = work_status(None, &[ok(0, "a")], Some(1), &at(10));
    let mut with_extra = first.clone();
    with_extra.conditions.push(Condition {
        type_: "Progressing".into(),
        status: FALSE.into(),
        reason: "Done".into(),
        message: String::new(),
        last_transition_time: at(5),
        observed_generation: None,
    });
    let again = work_status(Some(&with_extra), &[ok(0, "a")], Some(1), &at(99));
    assert_eq!(again, with_extra, "nothing changed, so nothing to write");

    // The manifest moved to another ordinal: still the same object, its times stay.
    let moved = work_status(Some(&first), &[ok(0, "z"), ok(1, "a")], Some(2), &at(50));
    let m = moved.resource_status.unwrap().manifests;
    assert_eq!(find(&m[1].conditions, APPLIED).last_transition_time, at(10));
    assert_eq!(find(&m[0].conditions, APPLIED).last_transition_time, at(50));
    assert_eq!(
        find(&moved.conditions, APPLIED).observed_generation,
        Some(2)
    );
    assert_eq!(
        find(&moved.conditions, APPLIED).last_transition_time,
        at(10)
    );

    // A failure flips the status and takes the new time.
    let failing = ManifestResult {
        applied: Err("boom".into()),
        ..ok(0, "a")
    };
    let failed = work_status(Some(&first), &[failing], Some(3), &at(70));
    let applied = find(&failed.conditions, APPLIED);
    assert_eq!(
        (
            applied.status.as_str(),
            applied.last_transition_time.clone()
        ),
        (FALSE, at(70))
    );
}

fn with_feedback(values: &[(&str, i64)], errors: &[&str]) -> ManifestResult {
    use crate::api::work::{FeedbackValue, FieldValue, ValueType};
    ManifestResult {
        feedback: Some(Feedback {
            values: values
                .iter()
                .map(|(name, i)| FeedbackValue {
                    name: (*name).into(),
                    field_value: FieldValue {
                        type_: ValueType::Integer,
                        integer: Some(*i),
                        ..FieldValue::default()
                    },
                })
                .collect(),
            configured: true,
            errors: errors.iter().map(|e| (*e).to_string()).collect(),
        }),
        ..ok(0, "a")
    }
}

#[test]
fn feedback_values_and_their_condition_are_reported() {
    let s = work_status(
        None,
        &[with_feedback(&[("Replicas", 1)], &[])],
        None,
        &at(1),
    );
    let m = &s.resource_status.unwrap().manifests[0];
    let values = &m.status_feedback.as_ref().unwrap().values;
    assert_eq!(
        (values[0].name.as_str(), values[0].field_value.integer),
        ("Replicas", Some(1))
    );
    let synced = find(&m.conditions, STATUS_FEEDBACK_SYNCED);
    assert_eq!(
        (synced.status.as_str(), synced.reason.as_str()),
        (TRUE, "StatusFeedbackSynced")
    );

    let plain = work_status(None, &[ok(0, "a")], None, &at(1));
    let m = &plain.resource_status.unwrap().manifests[0];
    assert!(conditions::find(&m.conditions, STATUS_FEEDBACK_SYNCED).is_none());
    let read = ManifestResult {
        feedback: Some(Feedback::default()),
        ..ok(0, "a")
    };
    let none = work_status(None, &[read], None, &at(1));
    let m = &none.resource_status.unwrap().manifests[0];
    assert_eq!(
        find(&m.conditions, STATUS_FEEDBACK_SYNCED).reason,
        "NoStatusFeedbackSynced"
    );
}

#[test]
fn failed_paths_are_named_as_upstream_aggregates_them() {
    let one = work_status(None, &[with_feedback(&[], &["e1"])], None, &at(1));
    let m = &one.resource_status.unwrap().manifests[0];
    let c = find(&m.conditions, STATUS_FEEDBACK_SYNCED);
    assert_eq!(
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
        (
            FALSE,
            "StatusFeedbackSyncFailed",
            "Sync status feedback failed with error e1"
        )
    );
    let two = work_status(None, &[with_feedback(&[], &["e1", "e2"])], None, &at(1));
    let m = &two.resource_status.unwrap().manifests[0];
    assert_eq!(
        find(&m.conditions, STATUS_FEEDBACK_SYNCED).message,
        "Sync status feedback failed with error [e1, e2]"
    );
}

#[test]
fn new_values_move_the_condition_time_and_unread_objects_keep_theirs() {
    let first = work_status(
        None,
        &[with_feedback(&[("Replicas", 1)], &[])],
        None,
        &at(10),
    );
    let same = work_status(
        Some(&first),
        &[with_feedback(&[("Replicas", 1)], &[])],
        None,
        &at(20),
    );
    let time = |s: &ManifestWorkStatus| {
        let m = &s.resource_status.as_ref().unwrap().manifests[0];
        find(&m.conditions, STATUS_FEEDBACK_SYNCED)
            .last_transition_time
            .clone()
    };
    assert_eq!(time(&same), at(10));
    let moved = work_status(
        Some(&same),
        &[with_feedback(&[("Replicas", 2)], &[])],
        None,
        &at(30),
    );
    assert_eq!(time(&moved), at(30));
    // Unread (say the object is gone): the last values and condition stay.
    let unread = ManifestResult {
        available: Availability::NotAvailable,
        ..ok(0, "a")
    };
    let kept = work_status(Some(&moved), &[unread], None, &at(40));
    let m = &kept.resource_status.as_ref().unwrap().manifests[0];
    assert_eq!(
        m.status_feedback.as_ref().unwrap().values[0]
            .field_value
            .integer,
        Some(2)
    );
    assert_eq!(time(&kept), at(30));
}

#[test]
fn now_has_whole_seconds() {
    assert_eq!(now().0.subsec_nanosecond(), 0);
}
