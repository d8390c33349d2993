//! Status of a ManifestWork as the agent reports it, computed purely from what applying each
//! manifest did: per manifest `Applied` and `Available`, and for the whole work `Applied` and
//! `Available` with `observedGeneration`. Reasons and messages are upstream's, so tools written
//! against upstream read ours. Transition times stay put while a status does not change.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::conditions::{self, APPLIED, AVAILABLE, Condition, FALSE, TRUE, UNKNOWN};
use crate::api::work::{
    ManifestCondition, ManifestResourceMeta, ManifestResourceStatus, ManifestWorkStatus,
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
        .map(|r| {
            let mut conds = previous_of(old_manifests, &r.meta)
                .map(|p| p.conditions.clone())
                .unwrap_or_default();
            conds.retain(|c| c.type_ == APPLIED || c.type_ == AVAILABLE);
            for c in manifest_conditions(r, now) {
                conditions::set(&mut conds, c);
            }
            ManifestCondition {
                resource_meta: r.meta.clone(),
                status_feedback: None,
                conditions: conds,
            }
        })
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
