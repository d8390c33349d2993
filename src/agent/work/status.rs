//! Status of a ManifestWork as the agent reports it, computed purely from what applying each
//! manifest did: per manifest `Applied` and `Available`, and for the whole work `Applied` and
//! `Available` with `observedGeneration`. Reasons and messages are upstream's, so tools written
//! against upstream read ours. Transition times stay put while a status does not change.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::feedback::{Feedback, STATUS_FEEDBACK_SYNCED};
use crate::api::conditions::{self, APPLIED, AVAILABLE, Condition, FALSE, TRUE, UNKNOWN};
use crate::api::work::{
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

/// A manifest's status entry: its previous one updated by this pass's result. Feedback values
/// stay as they were when the object could not be read.
fn manifest_status(
    previous: Option<&ManifestCondition>,
    result: &ManifestResult,
    now: &Time,
) -> ManifestCondition {
    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    conds.retain(|c| [APPLIED, AVAILABLE, STATUS_FEEDBACK_SYNCED].contains(&c.type_.as_str()));
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
        .map(|r| manifest_status(previous_of(old_manifests, &r.meta), r, now))
        .collect();
    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    match work_applied(results, generation, now) {
        Some(c) => {
            conditions::set(&mut conds, c);
        }
        None => conds.retain(|c| c.type_ != APPLIED),
    }
    conditions::set(&mut conds, work_available(results, generation, now));
    ManifestWorkStatus {
        conditions: conds,
        resource_status: Some(ManifestResourceStatus { manifests }),
    }
}

/// Now, to the second (what the apiserver stores), so a re-computed status compares equal.
#[must_use]
pub fn now() -> Time {
    let secs = k8s_openapi::jiff::Timestamp::now().as_second();
    Time(k8s_openapi::jiff::Timestamp::from_second(secs).expect("current time is in range"))
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
