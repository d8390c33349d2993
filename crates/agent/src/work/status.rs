//! Status of a ManifestWork as the agent reports it, computed purely from what applying each
//! manifest did: per manifest `Applied` and `Available` (and what its condition rules set), and
//! for the whole work `Applied` and `Available` with `observedGeneration`, and each rule
//! condition aggregated over the manifests (`ConditionRulesAggregated`, as upstream's). Reasons and messages are upstream's, so tools written
//! against upstream read ours. Transition times stay put while a status does not change.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::condition_rules::REASON_PREFIX;
use super::feedback::{Feedback, STATUS_FEEDBACK_SYNCED};
use ocm_api::conditions::{self, APPLIED, AVAILABLE, Condition, FALSE, TRUE, UNKNOWN};
use ocm_api::work::{
    ManifestCondition, ManifestResourceMeta, ManifestResourceStatus, ManifestWorkStatus,
    StatusFeedbackResult,
};

/// Whether a manifest's object is there on the managed cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// It exists.
    Available,
    /// It does not exist.
    NotAvailable,
    /// Reading it failed.
    FetchFailed(String),
    /// The manifest could not be resolved to a resource, so there is nothing to look at.
    Incomplete,
}

/// What processing one manifest did.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestResult {
    /// Which manifest, as far as it could be resolved.
    pub meta: ManifestResourceMeta,
    /// Ok, or why applying it failed.
    pub applied: Result<(), String>,
    /// Whether its object exists.
    pub available: Availability,
    /// What its feedback rules read, when the object was read.
    pub feedback: Option<Feedback>,
}

fn condition(type_: &str, status: &str, reason: &str, message: String, now: &Time) -> Condition {
    conditions::new(type_, status, reason, message, now)
}

/// The `Applied` and `Available` conditions of one manifest.
#[must_use]
pub fn manifest_conditions(result: &ManifestResult, now: &Time) -> [Condition; 2] {
    let applied = match &result.applied {
        Ok(()) => condition(
            APPLIED,
            TRUE,
            "AppliedManifestComplete",
            "Apply manifest complete".into(),
            now,
        ),
        Err(e) => condition(
            APPLIED,
            FALSE,
            "AppliedManifestFailed",
            format!("Failed to apply manifest: {e}"),
            now,
        ),
    };
    let available = match &result.available {
        Availability::Available => condition(
            AVAILABLE,
            TRUE,
            "ResourceAvailable",
            "Resource is available".into(),
            now,
        ),
        Availability::NotAvailable => condition(
            AVAILABLE,
            FALSE,
            "ResourceNotAvailable",
            "Resource is not available".into(),
            now,
        ),
        Availability::FetchFailed(e) => condition(
            AVAILABLE,
            UNKNOWN,
            "FetchingResourceFailed",
            format!("Failed to fetch resource: {e}"),
            now,
        ),
        Availability::Incomplete => condition(
            AVAILABLE,
            UNKNOWN,
            "IncompleteResourceMeta",
            "Resource meta is incomplete".into(),
            now,
        ),
    };
    [applied, available]
}

/// The `StatusFeedbackSynced` condition of a manifest whose object was read, with upstream's
/// reasons and message.
fn feedback_condition(feedback: &Feedback, now: &Time) -> Condition {
    if !feedback.configured {
        return condition(
            STATUS_FEEDBACK_SYNCED,
            TRUE,
            "NoStatusFeedbackSynced",
            String::new(),
            now,
        );
    }
    match feedback.errors.as_slice() {
        [] => condition(
            STATUS_FEEDBACK_SYNCED,
            TRUE,
            "StatusFeedbackSynced",
            String::new(),
            now,
        ),
        errors => {
            // As Go's aggregated errors print: one bare, several in brackets.
            let joined = errors.join(", ");
            let text = if errors.len() == 1 {
                joined
            } else {
                format!("[{joined}]")
            };
            condition(
                STATUS_FEEDBACK_SYNCED,
                FALSE,
                "StatusFeedbackSyncFailed",
                format!("Sync status feedback failed with error {text}"),
                now,
            )
        }
    }
}

/// Whether a condition was set by a condition rule (its reason says so, as upstream tells them).
fn by_rule(c: &Condition) -> bool {
    c.reason.starts_with(REASON_PREFIX)
}

/// A manifest's status entry: its previous one updated by this pass's result. Feedback values
/// and rule conditions stay as they were when the object could not be read.
fn manifest_status(
    previous: Option<&ManifestCondition>,
    result: &ManifestResult,
    generation: Option<i64>,
    now: &Time,
) -> ManifestCondition {
    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    conds.retain(|c| {
        [APPLIED, AVAILABLE, STATUS_FEEDBACK_SYNCED].contains(&c.type_.as_str()) || by_rule(c)
    });
    for c in manifest_conditions(result, now) {
        conditions::set(&mut conds, c);
    }
    let mut status_feedback = previous.and_then(|p| p.status_feedback.clone());
    if let Some(feedback) = &result.feedback {
        let values = Some(StatusFeedbackResult {
            values: feedback.values.clone(),
        })
        .filter(|v| !v.values.is_empty());
        if values != status_feedback {
            // New values are a transition of their own, as upstream records them.
            conds.retain(|c| c.type_ != STATUS_FEEDBACK_SYNCED);
            status_feedback = values;
        }
        conditions::set(&mut conds, feedback_condition(feedback, now));
        // The rules' conditions now: those of a rule that is gone go.
        conds.retain(|c| !by_rule(c) || feedback.conditions.iter().any(|r| r.type_ == c.type_));
        for rule in &feedback.conditions {
            let mut c = condition(
                &rule.type_,
                rule.status,
                rule.reason,
                rule.message.clone(),
                now,
            );
            c.observed_generation = generation;
            conditions::set(&mut conds, c);
        }
    }
    ManifestCondition {
        resource_meta: result.meta.clone(),
        status_feedback,
        conditions: conds,
    }
}

/// The work-level `Applied` condition, if there is any manifest to judge by.
fn work_applied(
    results: &[ManifestResult],
    generation: Option<i64>,
    now: &Time,
) -> Option<Condition> {
    if results.is_empty() {
        return None;
    }
    let mut c = if results.iter().all(|r| r.applied.is_ok()) {
        condition(
            APPLIED,
            TRUE,
            "AppliedManifestWorkComplete",
            "Apply manifest work complete".into(),
            now,
        )
    } else {
        condition(
            APPLIED,
            FALSE,
            "AppliedManifestWorkFailed",
            "Failed to apply manifest work".into(),
            now,
        )
    };
    c.observed_generation = generation;
    Some(c)
}

/// The work-level `Available` condition: False if any object is missing, Unknown if any is
/// unknown (or there is none), else True.
fn work_available(results: &[ManifestResult], generation: Option<i64>, now: &Time) -> Condition {
    let total = results.len();
    let count = |f: fn(&Availability) -> bool| results.iter().filter(|r| f(&r.available)).count();
    let missing = count(|a| *a == Availability::NotAvailable);
    let unknown = count(|a| matches!(a, Availability::FetchFailed(_) | Availability::Incomplete));
    let mut c = if missing > 0 {
        condition(
            AVAILABLE,
            FALSE,
            "ResourcesNotAvailable",
            format!("{missing} of {total} resources are not available"),
            now,
        )
    } else if unknown > 0 {
        condition(
            AVAILABLE,
            UNKNOWN,
            "ResourcesStatusUnknown",
            format!("{unknown} of {total} resources have unknown status"),
            now,
        )
    } else if total == 0 {
        condition(
            AVAILABLE,
            UNKNOWN,
            "ResourcesStatusUnknown",
            "cannot get any available resource".into(),
            now,
        )
    } else {
        condition(
            AVAILABLE,
            TRUE,
            "ResourcesAvailable",
            "All resources are available".into(),
            now,
        )
    };
    c.observed_generation = generation;
    c
}

/// The previous status entry of the manifest `meta` describes: same identity, ordinal aside.
fn previous_of<'a>(
    previous: &'a [ManifestCondition],
    meta: &ManifestResourceMeta,
) -> Option<&'a ManifestCondition> {
    let same = |m: &ManifestResourceMeta| {
        (&m.group, &m.version, &m.kind, &m.name, &m.namespace)
            == (
                &meta.group,
                &meta.version,
                &meta.kind,
                &meta.name,
                &meta.namespace,
            )
    };
    previous
        .iter()
        .find(|p| p.resource_meta == *meta)
        .or_else(|| previous.iter().find(|p| same(&p.resource_meta)))
}

/// The new status of a work from this pass's results, merged into the previous status so that
/// unchanged conditions keep their transition times and conditions others set are kept.
#[must_use]
pub fn work_status(
    previous: Option<&ManifestWorkStatus>,
    results: &[ManifestResult],
    generation: Option<i64>,
    now: &Time,
) -> ManifestWorkStatus {
    let old_manifests = previous
        .and_then(|p| p.resource_status.as_ref())
        .map(|r| r.manifests.as_slice())
        .unwrap_or_default();
    let manifests = results
        .iter()
        .map(|r| manifest_status(previous_of(old_manifests, &r.meta), r, generation, now))
        .collect::<Vec<_>>();
    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    match work_applied(results, generation, now) {
        Some(c) => {
            conditions::set(&mut conds, c);
        }
        None => conds.retain(|c| c.type_ != APPLIED),
    }
    conditions::set(&mut conds, work_available(results, generation, now));
    let aggregated = aggregated_rule_conditions(&manifests, generation, now);
    conds.retain(|c| !by_rule(c) || aggregated.iter().any(|a| a.type_ == c.type_));
    for c in aggregated {
        conditions::set(&mut conds, c);
    }
    ManifestWorkStatus {
        conditions: conds,
        resource_status: Some(ManifestResourceStatus { manifests }),
    }
}

/// Each condition the manifests' rules set, aggregated for the work as upstream's agent does:
/// False if any manifest's is False, else Unknown if any is Unknown, else True (`Progressing`:
/// True if any is True); the one manifest's message, or how many were aggregated.
fn aggregated_rule_conditions(
    manifests: &[ManifestCondition],
    generation: Option<i64>,
    now: &Time,
) -> Vec<Condition> {
    #[derive(Default)]
    struct Counts {
        true_: usize,
        false_: usize,
        unknown: usize,
        message: String,
    }
    let mut by_type: std::collections::BTreeMap<&str, Counts> = std::collections::BTreeMap::new();
    for c in manifests
        .iter()
        .flat_map(|m| &m.conditions)
        .filter(|c| by_rule(c))
    {
        let counts = by_type.entry(c.type_.as_str()).or_default();
        match c.status.as_str() {
            TRUE => counts.true_ += 1,
            FALSE => counts.false_ += 1,
            _ => counts.unknown += 1,
        }
        if !c.message.is_empty() {
            counts.message.clone_from(&c.message);
        }
    }
    by_type
        .into_iter()
        .map(|(type_, n)| {
            let status = if type_ == "Progressing" {
                if n.true_ > 0 {
                    TRUE
                } else if n.unknown > 0 {
                    UNKNOWN
                } else {
                    FALSE
                }
            } else if n.false_ > 0 {
                FALSE
            } else if n.unknown > 0 || n.true_ == 0 {
                UNKNOWN
            } else {
                TRUE
            };
            let total = n.true_ + n.false_ + n.unknown;
            let message = if total == 1 && !n.message.is_empty() {
                n.message
            } else {
                format!("Aggregated from {total} manifest conditions")
            };
            let mut c = condition(type_, status, "ConditionRulesAggregated", message, now);
            c.observed_generation = generation;
            c
        })
        .collect()
}

/// Now, to the second (what the apiserver stores), so a re-computed status compares equal.
#[must_use]
pub fn now() -> Time {
    let secs = k8s_openapi::jiff::Timestamp::now().as_second();
    Time(k8s_openapi::jiff::Timestamp::from_second(secs).expect("current time is in range"))
}

#[cfg(test)]
mod tests {
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
        use ocm_api::work::{FeedbackValue, FieldValue, ValueType};
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
                conditions: Vec::new(),
            }),
            ..ok(0, "a")
        }
    }

    #[test]
    fn rule_conditions_are_set_aggregated_and_dropped_with_their_rule() {
        use super::super::condition_rules::{EVALUATED, RuleCondition};
        let with_rules = |name: &str, rules: &[(&str, &'static str)]| ManifestResult {
            feedback: Some(Feedback {
                configured: false,
                conditions: rules
                    .iter()
                    .map(|(type_, status)| RuleCondition {
                        type_: (*type_).into(),
                        status,
                        reason: EVALUATED,
                        message: format!("{name} {type_}"),
                    })
                    .collect(),
                ..Feedback::default()
            }),
            ..ok(0, name)
        };
        let first = work_status(
            None,
            &[
                with_rules("a", &[("Complete", TRUE)]),
                with_rules("b", &[("Complete", FALSE), ("Ready", TRUE)]),
            ],
            Some(3),
            &at(10),
        );
        let manifest = &first.resource_status.as_ref().unwrap().manifests[1];
        let ready = find(&manifest.conditions, "Ready");
        assert_eq!(
            (ready.status.as_str(), ready.observed_generation),
            (TRUE, Some(3))
        );
        let complete = find(&first.conditions, "Complete");
        assert_eq!(
            (
                complete.status.as_str(),
                complete.reason.as_str(),
                complete.message.as_str()
            ),
            (
                FALSE,
                "ConditionRulesAggregated",
                "Aggregated from 2 manifest conditions"
            )
        );
        assert_eq!(find(&first.conditions, "Ready").message, "b Ready");
        // The Ready rule removed: its conditions go, on the manifest and the work.
        let second = work_status(
            Some(&first),
            &[
                with_rules("a", &[("Complete", TRUE)]),
                with_rules("b", &[("Complete", TRUE)]),
            ],
            Some(4),
            &at(20),
        );
        assert!(!second.conditions.iter().any(|c| c.type_ == "Ready"));
        assert!(
            !second.resource_status.unwrap().manifests[1]
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready")
        );
        let complete = find(&second.conditions, "Complete");
        assert_eq!(
            (
                complete.status.as_str(),
                complete.last_transition_time.clone()
            ),
            (TRUE, at(20))
        );
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
}
