//! The Placement status the controller writes, with upstream's condition reasons and messages.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::groups::Decision;
use super::schedule::{Scheduled, Shortfall};
use ocm_api::cluster::{
    DecisionGroupStatus, PLACEMENT_MISCONFIGURED, PLACEMENT_SATISFIED, PlacementStatus,
};
use ocm_api::conditions::{self, Condition};

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> Condition {
    conditions::new(type_, status, reason, message, &Time(now))
}

/// `PlacementSatisfied` for `s`.
#[must_use]
pub fn satisfied(s: &Scheduled, now: Timestamp) -> Condition {
    let (status, reason, message) = match (&s.misconfigured, &s.shortfall) {
        (Some(m), _) => (conditions::FALSE, "NotAllDecisionsScheduled", m.clone()),
        (None, None) => (
            conditions::TRUE,
            "AllDecisionsScheduled",
            "All cluster decisions scheduled".into(),
        ),
        (None, Some(Shortfall::NoBindings)) => (
            conditions::FALSE,
            "NoManagedClusterSetBindings",
            "No valid ManagedClusterSetBindings found in placement namespace".into(),
        ),
        (None, Some(Shortfall::NoIntersection(sets))) => (
            conditions::FALSE,
            "NoIntersection",
            format!(
                "None of ManagedClusterSets [{}] is bound to placement namespace",
                sets.join(",")
            ),
        ),
        (None, Some(Shortfall::SetsEmpty(sets))) => (
            conditions::FALSE,
            "AllManagedClusterSetsEmpty",
            format!(
                "All ManagedClusterSets [{}] have no member ManagedCluster",
                sets.join(",")
            ),
        ),
        (None, Some(Shortfall::NoneMatched)) => (
            conditions::FALSE,
            "NoManagedClusterMatched",
            "No ManagedCluster matches any of the cluster predicate".into(),
        ),
        (None, Some(Shortfall::Unscheduled(n))) => (
            conditions::FALSE,
            "NotAllDecisionsScheduled",
            format!("{n} cluster decisions unscheduled"),
        ),
    };
    condition(PLACEMENT_SATISFIED, status, reason, message, now)
}

/// `PlacementMisconfigured` for `s` (upstream's reason `Succeedconfigured` is spelt as upstream).
#[must_use]
pub fn misconfigured(misconfiguration: Option<&str>, now: Timestamp) -> Condition {
    match misconfiguration {
        Some(m) => condition(
            PLACEMENT_MISCONFIGURED,
            conditions::TRUE,
            "Misconfigured",
            m.into(),
            now,
        ),
        None => condition(
            PLACEMENT_MISCONFIGURED,
            conditions::FALSE,
            "Succeedconfigured",
            "Placement configurations check pass".into(),
            now,
        ),
    }
}

/// The status for `decisions`, keeping the transition times of unchanged conditions in `old`.
#[must_use]
pub fn status(
    old: Option<&PlacementStatus>,
    scheduled: &Scheduled,
    misconfiguration: Option<&str>,
    decisions: &[Decision],
    now: Timestamp,
) -> PlacementStatus {
    let mut groups: Vec<DecisionGroupStatus> = Vec::new();
    for d in decisions {
        let index = i32::try_from(d.group_index).unwrap_or(i32::MAX);
        match groups.last_mut() {
            Some(g) if g.decision_group_index == Some(index) => {
                g.decisions.push(d.name.clone());
                g.cluster_count = Some(
                    g.cluster_count.unwrap_or(0) + i32::try_from(d.clusters.len()).unwrap_or(0),
                );
            }
            _ => groups.push(DecisionGroupStatus {
                decision_group_index: Some(index),
                decision_group_name: Some(d.group_name.clone()),
                decisions: vec![d.name.clone()],
                cluster_count: Some(i32::try_from(d.clusters.len()).unwrap_or(0)),
            }),
        }
    }
    let mut conds = old.map(|s| s.conditions.clone()).unwrap_or_default();
    conditions::set(&mut conds, satisfied(scheduled, now));
    conditions::set(&mut conds, misconfigured(misconfiguration, now));
    PlacementStatus {
        number_of_selected_clusters: Some(
            i32::try_from(decisions.iter().map(|d| d.clusters.len()).sum::<usize>())
                .unwrap_or(i32::MAX),
        ),
        decision_groups: groups,
        conditions: conds,
        last_score_update_time: old.and_then(|s| s.last_score_update_time.clone()),
    }
}
