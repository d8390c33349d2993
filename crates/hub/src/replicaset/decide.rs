//! What a ManifestWorkReplicaSet needs, from the stores: which works to create or bring up to
//! the template (by each placement's [`rollout`]), which to delete, and the
//! status — as upstream's work hub controller (`pkg/work/hub/controllers/
//! manifestworkreplicasetcontroller`), pure.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use super::rollout::{self, Group, Since, Status};
use ocm_api::cluster::{
    DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL, Placement, PlacementDecision,
};
use ocm_api::conditions::{self, AVAILABLE, Condition, DEGRADED, FALSE, PROGRESSING, TRUE};
use ocm_api::work::{
    LocalPlacementReference, MANIFEST_WORK_APPLIED, ManifestWork, ManifestWorkReplicaSet,
    ManifestWorkReplicaSetStatus, ManifestWorkReplicaSetSummary, PLACEMENT_ROLLED_OUT,
    PLACEMENT_VERIFIED, PlacementSummary, REPLICA_SET_PLACEMENT_LABEL,
};

/// One placement reference with what the stores hold for it.
pub struct PlacementInputs<'a> {
    /// The Placement, if it exists.
    pub placement: Option<&'a Placement>,
    /// Its PlacementDecisions.
    pub decisions: Vec<&'a PlacementDecision>,
}

/// A work to write: created, or brought up to the template.
#[derive(Debug, PartialEq, Eq)]
pub struct Apply {
    /// The cluster (the work's namespace).
    pub cluster: String,
    /// The placement that chose it.
    pub placement: String,
    /// The work there now, if any (its name is kept).
    pub existing: Option<String>,
}

/// Everything to do for one replica set.
#[derive(Debug, Default)]
pub struct Decision {
    /// Works to create or update.
    pub apply: Vec<Apply>,
    /// Works to delete: (namespace, name).
    pub delete: Vec<(String, String)>,
    /// The status to write.
    pub status: ManifestWorkReplicaSetStatus,
    /// Look again then (a rollout soak or deadline ends).
    pub requeue: Option<Duration>,
}

/// A placement's decision groups, from its PlacementDecisions' labels.
#[must_use]
pub fn groups(decisions: &[&PlacementDecision]) -> Vec<Group> {
    let mut by_index: BTreeMap<i32, Group> = BTreeMap::new();
    for d in decisions {
        let labels = d.labels();
        let index = labels
            .get(DECISION_GROUP_INDEX_LABEL)
            .and_then(|i| i.parse().ok())
            .unwrap_or(0);
        let group = by_index.entry(index).or_insert_with(|| Group {
            index,
            name: labels
                .get(DECISION_GROUP_NAME_LABEL)
                .cloned()
                .unwrap_or_default(),
            clusters: BTreeSet::new(),
        });
        group.clusters.extend(
            d.status
                .iter()
                .flat_map(|s| &s.decisions)
                .map(|c| c.cluster_name.clone()),
        );
    }
    by_index.into_values().collect()
}

/// Where a cluster's up-to-date work stands, as upstream reads it — with one difference: a work
/// without a `Progressing` condition (the agent sets one only from condition rules) counts as
/// succeeded once Applied and Available at its generation, and as progressing before. Upstream
/// leaves such a work "to apply" for ever, which stalls every progressive rollout.
#[must_use]
pub fn rollout_status(work: &ManifestWork) -> Since {
    let generation = work.metadata.generation;
    let conds: &[Condition] = work.status.as_ref().map_or(&[], |s| &s.conditions);
    let current = |type_: &str| {
        conditions::find(conds, type_).filter(|c| c.observed_generation == generation)
    };
    let since = |c: &Condition| Some(c.last_transition_time.0);
    let to_apply = Since {
        status: Status::ToApply,
        since: None,
    };
    let Some(applied) = current(conditions::APPLIED) else {
        return to_apply;
    };
    if applied.status != TRUE {
        return to_apply;
    }
    if conditions::find(conds, DEGRADED).is_some() && current(DEGRADED).is_none() {
        return to_apply;
    }
    let degraded = current(DEGRADED).filter(|c| c.status == TRUE);
    match current(PROGRESSING) {
        Some(p) if p.status == TRUE => match degraded {
            Some(d) => Since {
                status: Status::Failed,
                since: since(d),
            },
            None => Since {
                status: Status::Progressing,
                since: since(p),
            },
        },
        Some(p) if p.status == FALSE => Since {
            status: Status::Succeeded,
            since: since(p),
        },
        Some(p) => Since {
            status: Status::Progressing,
            since: since(p),
        },
        None if conditions::find(conds, PROGRESSING).is_some() => to_apply,
        None => match current(AVAILABLE) {
            Some(a) if a.status == TRUE => Since {
                status: Status::Succeeded,
                since: since(a),
            },
            _ => Since {
                status: Status::Progressing,
                since: since(applied),
            },
        },
    }
}

fn condition(type_: &str, ok: bool, reason: &str, now: &Time) -> Condition {
    conditions::new(type_, if ok { TRUE } else { FALSE }, reason, "", now)
}

/// One placement's share: its writes, its summary, and how many of its clusters succeeded.
struct Part {
    apply: Vec<Apply>,
    delete: Vec<(String, String)>,
    summary: PlacementSummary,
    succeeded: i64,
    requeue: Option<Duration>,
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The works, summary and rollout of one placement reference; `Err` is the `PlacementVerified`
/// reason when it cannot be rolled out.
fn part(
    set: &ManifestWorkReplicaSet,
    reference: &LocalPlacementReference,
    inputs: &PlacementInputs<'_>,
    works: &[Arc<ManifestWork>],
    now: Timestamp,
) -> Result<Part, &'static str> {
    let placement = inputs.placement.ok_or("PlacementDecisionNotFound")?;
    let template = &set.spec.manifest_work_template;
    let mine: Vec<&Arc<ManifestWork>> = works
        .iter()
        .filter(|w| w.labels().get(REPLICA_SET_PLACEMENT_LABEL) == Some(&reference.name))
        .collect();
    let current = |w: &ManifestWork| &w.spec == template && w.metadata.deletion_timestamp.is_none();
    // Up-to-date works by cluster; an outdated one is "not yet deployed".
    let mut statuses = BTreeMap::new();
    let mut existing: BTreeMap<String, String> = BTreeMap::new();
    for w in &mine {
        let cluster = w.namespace().unwrap_or_default();
        existing.insert(cluster.clone(), w.name_any());
        if current(w) {
            statuses.insert(cluster, rollout_status(w));
        }
    }
    let strategy = reference.rollout_strategy.clone().unwrap_or_default();
    let plan =
        rollout::plan(&strategy, &groups(&inputs.decisions), &statuses, now).map_err(|e| {
            tracing::debug!(set = %set.name_any(), "rollout of {}: {e}", reference.name);
            "NotAsExpected"
        })?;
    let mut deployed: BTreeSet<String> = statuses.keys().cloned().collect();
    let mut out = Part {
        apply: Vec::new(),
        delete: Vec::new(),
        summary: PlacementSummary::default(),
        succeeded: count(
            statuses
                .values()
                .filter(|s| s.status == Status::Succeeded)
                .count(),
        ),
        requeue: plan.recheck_after,
    };
    for cluster in plan.to_apply {
        deployed.insert(cluster.clone());
        out.apply.push(Apply {
            existing: existing.get(&cluster).cloned(),
            placement: reference.name.clone(),
            cluster,
        });
    }
    for cluster in plan.removed {
        deployed.remove(&cluster);
        if let Some(name) = existing.get(&cluster) {
            out.delete.push((cluster, name.clone()));
        }
    }
    let placement_status = placement.status.clone().unwrap_or_default();
    let decided = i64::from(placement_status.number_of_selected_clusters.unwrap_or(0));
    let total = count(deployed.len());
    let up_to_date: Vec<&&Arc<ManifestWork>> = mine.iter().filter(|w| current(w)).collect();
    let counted = |type_: &str| {
        count(
            up_to_date
                .iter()
                .filter(|w| {
                    w.status
                        .as_ref()
                        .is_some_and(|s| conditions::is_true(&s.conditions, type_))
                })
                .count(),
        )
    };
    out.summary = PlacementSummary {
        name: reference.name.clone(),
        available_decision_groups: format!(
            "{} ({total} / {decided} clusters applied)",
            placement_status.decision_groups.len()
        ),
        summary: ManifestWorkReplicaSetSummary {
            total,
            desired_total: decided,
            applied: counted(conditions::APPLIED),
            available: counted(AVAILABLE),
            degraded: counted(DEGRADED),
            progressing: counted(PROGRESSING),
            updated: count(up_to_date.len()),
        },
    };
    Ok(out)
}

/// Decides for `set`, whose works (labelled with it) are `works`, and whose `placementRefs`
/// resolve to `placements` (same order).
#[must_use]
pub fn decide(
    set: &ManifestWorkReplicaSet,
    placements: &[PlacementInputs<'_>],
    works: &[Arc<ManifestWork>],
    now: Timestamp,
) -> Decision {
    let stamp = Time(now);
    let refs: Vec<&str> = set
        .spec
        .placement_refs
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    let mut out = Decision::default();
    let mut status = set.status.clone().unwrap_or_default();

    // Works of placements no longer referenced go.
    for w in works {
        let placement = w.labels().get(REPLICA_SET_PLACEMENT_LABEL);
        if !placement.is_some_and(|p| refs.contains(&p.as_str())) {
            out.delete
                .push((w.namespace().unwrap_or_default(), w.name_any()));
        }
    }
    let (mut summaries, mut succeeded) = (Vec::new(), 0);
    for (reference, inputs) in set.spec.placement_refs.iter().zip(placements) {
        let part = match part(set, reference, inputs, works, now) {
            Ok(part) => part,
            Err(reason) => {
                conditions::set(
                    &mut status.conditions,
                    condition(PLACEMENT_VERIFIED, false, reason, &stamp),
                );
                out.status = status;
                return out;
            }
        };
        out.apply.extend(part.apply);
        out.delete.extend(part.delete);
        out.requeue = match (out.requeue, part.requeue) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        succeeded += part.succeeded;
        summaries.push(part.summary);
    }
    let mut summary = ManifestWorkReplicaSetSummary::default();
    for s in summaries.iter().map(|s| &s.summary) {
        summary.total += s.total;
        summary.desired_total += s.desired_total;
        summary.applied += s.applied;
        summary.available += s.available;
        summary.degraded += s.degraded;
        summary.progressing += s.progressing;
        summary.updated += s.updated;
    }
    set_conditions(&mut status.conditions, &summary, succeeded, &stamp);
    status.summary = as_reported(&summary);
    status.placement_summary = summaries
        .into_iter()
        .map(|mut p| {
            p.summary = as_reported(&p.summary);
            p
        })
        .collect();
    out.status = status;
    out
}

/// A summary as OCM v1.3.1's controller writes it: `desiredTotal` and `updated` exist in its API
/// but it never sets them (they stay 0), and clients compare whole summaries, so they are counted
/// here for the conditions only.
fn as_reported(summary: &ManifestWorkReplicaSetSummary) -> ManifestWorkReplicaSetSummary {
    ManifestWorkReplicaSetSummary {
        desired_total: 0,
        updated: 0,
        ..summary.clone()
    }
}

/// Upstream's three conditions, from the summed summary and the clusters that succeeded.
fn set_conditions(
    conds: &mut Vec<Condition>,
    summary: &ManifestWorkReplicaSetSummary,
    succeeded: i64,
    stamp: &Time,
) {
    let verified = summary.total > 0;
    let reason = if verified {
        "AsExpected"
    } else {
        "PlacementDecisionEmpty"
    };
    conditions::set(
        conds,
        condition(PLACEMENT_VERIFIED, verified, reason, stamp),
    );
    let rolled_out = summary.desired_total == succeeded;
    let reason = if rolled_out {
        "Complete"
    } else {
        "Progressing"
    };
    conditions::set(
        conds,
        condition(PLACEMENT_ROLLED_OUT, rolled_out, reason, stamp),
    );
    let (ok, reason) = if summary.total == 0 {
        (false, "PlacementDecisionEmpty")
    } else if summary.available == summary.total
        && summary.progressing == 0
        && summary.degraded == 0
    {
        (true, "AsExpected")
    } else if summary.progressing > 0 && summary.degraded == 0 {
        (false, "Processing")
    } else {
        (false, "NotAsExpected")
    };
    conditions::set(conds, condition(MANIFEST_WORK_APPLIED, ok, reason, stamp));
}
