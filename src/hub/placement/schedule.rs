//! Which clusters a Placement selects, as upstream's scheduler (`pkg/placement/`): pure, from
//! the stores. Eligible clusters are the members of the sets bound to the placement's namespace
//! (narrowed to `spec.clusterSets`); predicates (ORed, each a label AND claim AND CEL selector) and
//! taints filter them; prioritizers score them; the best `numberOfClusters` are selected (ties
//! by name).
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use kube::core::{Selector, SelectorExt as _};

use super::cel;
pub use super::cel::Scores;
use super::spread::spread;
use crate::api::cluster::{
    ClusterClaimSelector, ManagedCluster, ManagedClusterSet, Placement, ScoreCoordinateType, Taint,
    TaintEffect, Toleration,
};
use crate::api::quantity::parse_milli;
use crate::hub::clustersets::decide::Membership;

/// The built-in prioritizers upstream knows.
pub const BUILTINS: &[&str] = &[
    "Balance",
    "Steady",
    "ResourceAllocatableCPU",
    "ResourceAllocatableMemory",
];

/// What the scheduler reads.
pub struct Inputs<'a> {
    /// The placement.
    pub placement: &'a Placement,
    /// The sets that bindings in its namespace name and that exist.
    pub bound_sets: Vec<&'a ManagedClusterSet>,
    /// Every cluster of the hub.
    pub clusters: &'a [std::sync::Arc<ManagedCluster>],
    /// The clusters this placement has decided now (for `Steady` and `NoSelectIfNew`).
    pub current: &'a BTreeSet<String>,
    /// How many decisions of other placements name each cluster (for `Balance`).
    pub others: &'a HashMap<String, usize>,
    /// Finds the AddOnPlacementScore named (second) in a cluster's namespace (first).
    pub scores: Scores,
    /// Now.
    pub now: Timestamp,
}

/// Why nothing (or not everything) could be scheduled, with upstream's reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortfall {
    /// No binding in the namespace names an existing set.
    NoBindings,
    /// None of `spec.clusterSets` is bound (the names).
    NoIntersection(Vec<String>),
    /// The eligible sets have no clusters (the sets).
    SetsEmpty(Vec<String>),
    /// No cluster passed the predicates and taints.
    NoneMatched,
    /// Fewer clusters than `numberOfClusters` (how many short).
    Unscheduled(usize),
}

/// The scheduler's answer.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scheduled {
    /// Selected clusters, best first.
    pub clusters: Vec<String>,
    /// The spec is unusable: the message (upstream's `plugin:message`).
    pub misconfigured: Option<String>,
    /// Why fewer than wanted were selected.
    pub shortfall: Option<Shortfall>,
    /// Look again then (a toleration or an add-on score runs out).
    pub requeue_in: Option<Duration>,
    /// `misconfigured` says a CEL evaluation ran out of its budget.
    pub out_of_budget: bool,
}

/// Whether scheduling `p` evaluates CEL expressions.
#[must_use]
pub fn evaluates_cel(p: &Placement) -> bool {
    p.spec.predicates.iter().any(|pred| {
        pred.required_cluster_selector
            .as_ref()
            .and_then(|s| s.cel_selector.as_ref())
            .is_some_and(|c| !c.cel_expressions.is_empty())
    })
}

/// A compiled predicate: label AND claim selector.
struct Predicate {
    labels: Selector,
    claims: Selector,
}

impl Predicate {
    fn matches(&self, mc: &ManagedCluster) -> bool {
        self.labels.matches(mc.labels()) && self.claims.matches(&claims(mc))
    }
}

fn claims(mc: &ManagedCluster) -> BTreeMap<String, String> {
    mc.status
        .iter()
        .flat_map(|s| &s.cluster_claims)
        .filter_map(|c| Some((c.name.clone()?, c.value.clone()?)))
        .collect()
}

/// A label selector and a claim selector as one predicate; an error names what does not parse.
pub fn predicate(
    labels: Option<&LabelSelector>,
    claims: Option<&ClusterClaimSelector>,
) -> Result<impl Fn(&ManagedCluster) -> bool + use<>, String> {
    let labels = Selector::try_from(labels.cloned().unwrap_or_default())
        .map_err(|e| format!("Predicate:invalid label selector: {e}"))?;
    let claims = Selector::try_from(LabelSelector {
        match_expressions: claims.map(|c| c.match_expressions.clone()),
        match_labels: None,
    })
    .map_err(|e| format!("Predicate:invalid claim selector: {e}"))?;
    let p = Predicate { labels, claims };
    Ok(move |mc: &ManagedCluster| p.matches(mc))
}

/// Upstream's toleration checks.
fn check_tolerations(tolerations: &[Toleration]) -> Result<(), String> {
    for t in tolerations {
        let key_empty = t.key.as_deref().unwrap_or_default().is_empty();
        let exists = t.operator.as_deref() == Some("Exists");
        if key_empty && !exists {
            return Err("TaintToleration:If the key is empty, operator must be Exists.".into());
        }
        if exists && !t.value.as_deref().unwrap_or_default().is_empty() {
            return Err(
                "TaintToleration:If the operator is Exists, the value should be empty.".into(),
            );
        }
        if let Some(op) = t.operator.as_deref()
            && !["Equal", "Exists", ""].contains(&op)
        {
            return Err(format!("TaintToleration:invalid toleration operator {op}"));
        }
    }
    Ok(())
}

fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    let effect_ok = t.effect.is_none_or(|e| e == taint.effect);
    let key = t.key.as_deref().unwrap_or_default();
    let key_ok = key.is_empty() || key == taint.key;
    let value_ok = match t.operator.as_deref() {
        Some("Exists") => true,
        _ => t.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default(),
    };
    effect_ok && key_ok && value_ok
}

/// Whether `mc` passes its taints; `expiry` learns when a timed toleration runs out.
fn passes_taints(
    mc: &ManagedCluster,
    tolerations: &[Toleration],
    decided: bool,
    now: Timestamp,
    expiry: &mut Option<Timestamp>,
) -> bool {
    mc.spec.taints.iter().all(|taint| {
        match taint.effect {
            TaintEffect::PreferNoSelect => return true,
            TaintEffect::NoSelectIfNew if decided => return true,
            _ => {}
        }
        tolerations.iter().filter(|t| tolerates(t, taint)).any(|t| {
            let Some(seconds) = t.toleration_seconds else {
                return true;
            };
            let Some(added) = taint.time_added.as_ref() else {
                return false;
            };
            let until = added
                .0
                .checked_add(SignedDuration::from_secs(seconds))
                .unwrap_or(Timestamp::MAX);
            if now < until {
                *expiry = Some(expiry.map_or(until, |e| e.min(until)));
                true
            } else {
                false
            }
        })
    })
}

/// A source of scores.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Prioritizer {
    /// One of [`BUILTINS`].
    BuiltIn(String),
    /// Score `score` of the AddOnPlacementScore `resource` in each cluster's namespace.
    AddOn { resource: String, score: String },
}

/// The prioritizers and their weights: upstream's defaults (`Balance` and `Steady`, weight 1)
/// overlaid by the spec in `Additive` mode, the spec alone in `Exact` mode.
fn weights(p: &Placement) -> Result<BTreeMap<Prioritizer, i64>, String> {
    let policy = p.spec.prioritizer_policy.clone().unwrap_or_default();
    let builtin = |name: &str| Prioritizer::BuiltIn(name.into());
    let mut weights: BTreeMap<Prioritizer, i64> = match policy.mode.as_deref() {
        None | Some("" | "Additive") => [(builtin("Balance"), 1), (builtin("Steady"), 1)].into(),
        Some("Exact") => BTreeMap::new(),
        Some(other) => {
            return Err(format!(
                "Prioritizers:incorrect prioritizer policy mode: {other}"
            ));
        }
    };
    for c in &policy.configurations {
        let weight = i64::from(c.weight.unwrap_or(1));
        let prioritizer = match c.score_coordinate.type_ {
            ScoreCoordinateType::BuiltIn => {
                let name = c.score_coordinate.built_in.clone().unwrap_or_default();
                if !BUILTINS.contains(&name.as_str()) {
                    return Err(format!(
                        "Prioritizers:incorrect builtin prioritizer: {name}"
                    ));
                }
                Prioritizer::BuiltIn(name)
            }
            ScoreCoordinateType::AddOn => match &c.score_coordinate.add_on {
                Some(a) if !a.resource_name.is_empty() && !a.score_name.is_empty() => {
                    Prioritizer::AddOn {
                        resource: a.resource_name.clone(),
                        score: a.score_name.clone(),
                    }
                }
                _ => return Err("Prioritizers:addOn should not be empty".into()),
            },
        };
        weights.insert(prioritizer, weight);
    }
    weights.retain(|_, w| *w != 0);
    Ok(weights)
}

/// Upstream's `AddOn` prioritizer: the named score of the cluster's AddOnPlacementScore, 0 when
/// it or the score is missing or its `validUntil` has passed; `expiry` learns the next
/// `validUntil`, when the placement must be scored again.
fn addon_score(
    inputs: &Inputs<'_>,
    cluster: &str,
    resource: &str,
    score: &str,
    expiry: &mut Option<Timestamp>,
) -> i64 {
    let Some(found) = (inputs.scores)(cluster, resource) else {
        return 0;
    };
    let Some(status) = found.status.as_ref() else {
        return 0;
    };
    if let Some(until) = status.valid_until.as_ref().map(|t| t.0) {
        if inputs.now >= until {
            return 0;
        }
        *expiry = Some(expiry.map_or(until, |e| e.min(until)));
    }
    status
        .scores
        .iter()
        .find(|s| s.name == score)
        .map_or(0, |s| i64::from(s.value))
}

/// Upstream's `Balance`: 100 for a cluster no other placement chose, down to -100 for the one
/// chosen most (`max` times).
fn balance(cluster: &str, others: &HashMap<String, usize>, max: usize) -> i64 {
    match others.get(cluster) {
        None | Some(0) => 100,
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        Some(&n) => 2 * (100.0 * (0.5 - n as f64 / max as f64)) as i64,
    }
}

/// Upstream's `ResourceAllocatable*`: -100 for the least allocatable `resource`, 100 for the
/// most, linear between; clusters that report none score 0.
fn allocatable(clusters: &[&ManagedCluster], resource: &str) -> HashMap<String, i64> {
    let values: Vec<(String, i128)> = clusters
        .iter()
        .filter_map(|mc| {
            let q = mc.status.as_ref()?.allocatable.get(resource)?;
            Some((mc.name_any(), parse_milli(&q.0)?))
        })
        .collect();
    let (Some(min), Some(max)) = (
        values.iter().map(|v| v.1).min(),
        values.iter().map(|v| v.1).max(),
    ) else {
        return HashMap::new();
    };
    values
        .into_iter()
        .map(|(name, v)| {
            #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
            let score = if max == min {
                100
            } else {
                (((v - min) as f64 / (max - min) as f64 - 0.5) * 200.0) as i64
            };
            (name, score)
        })
        .collect()
}

/// `feasible` ordered best first: total weighted score descending, ties by name.
fn rank(
    feasible: &[&ManagedCluster],
    weights: &BTreeMap<Prioritizer, i64>,
    inputs: &Inputs<'_>,
    expiry: &mut Option<Timestamp>,
) -> Vec<String> {
    let wants = |name: &str| weights.contains_key(&Prioritizer::BuiltIn(name.into()));
    let cpu = wants("ResourceAllocatableCPU").then(|| allocatable(feasible, "cpu"));
    let memory = wants("ResourceAllocatableMemory").then(|| allocatable(feasible, "memory"));
    let most_chosen = inputs.others.values().copied().max().unwrap_or(0);
    let from = |m: Option<&HashMap<String, i64>>, name: &str| {
        m.and_then(|m| m.get(name).copied()).unwrap_or(0)
    };
    let mut score = |name: &str| -> i64 {
        weights
            .iter()
            .map(|(prioritizer, w)| {
                let s = match prioritizer {
                    Prioritizer::BuiltIn(b) => match b.as_str() {
                        "Balance" => balance(name, inputs.others, most_chosen),
                        "Steady" if inputs.current.contains(name) => 100,
                        "ResourceAllocatableCPU" => from(cpu.as_ref(), name),
                        "ResourceAllocatableMemory" => from(memory.as_ref(), name),
                        _ => 0,
                    },
                    Prioritizer::AddOn { resource, score } => {
                        addon_score(inputs, name, resource, score, expiry)
                    }
                };
                s * w
            })
            .sum()
    };
    let mut ranked: Vec<(i64, String)> = feasible
        .iter()
        .map(|mc| {
            let name = mc.name_any();
            (score(&name), name)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, n)| n).collect()
}

/// The clusters of the bound sets the placement names that are not being deleted; else why
/// there are none.
fn available<'a>(inputs: &Inputs<'a>) -> Result<Vec<&'a ManagedCluster>, Shortfall> {
    let p = inputs.placement;
    if inputs.bound_sets.is_empty() {
        return Err(Shortfall::NoBindings);
    }
    let mut eligible: Vec<&ManagedClusterSet> = inputs
        .bound_sets
        .iter()
        .copied()
        .filter(|s| p.spec.cluster_sets.is_empty() || p.spec.cluster_sets.contains(&s.name_any()))
        .collect();
    if eligible.is_empty() {
        return Err(Shortfall::NoIntersection(p.spec.cluster_sets.clone()));
    }
    eligible.sort_by_key(|s| s.name_any());
    let memberships: Vec<Membership> = eligible
        .iter()
        .filter_map(|s| Membership::of(s).ok())
        .collect();
    let available: Vec<&ManagedCluster> = inputs
        .clusters
        .iter()
        .map(AsRef::as_ref)
        .filter(|mc| mc.metadata.deletion_timestamp.is_none())
        .filter(|mc| memberships.iter().any(|m| m.contains(mc.labels())))
        .collect();
    if available.is_empty() {
        return Err(Shortfall::SetsEmpty(
            eligible.iter().map(|s| s.name_any()).collect(),
        ));
    }
    Ok(available)
}

/// Schedules `inputs.placement`.
#[must_use]
pub fn schedule(inputs: &Inputs<'_>) -> Scheduled {
    let p = inputs.placement;
    let misconfigured = |m: String| Scheduled {
        misconfigured: Some(m),
        ..Scheduled::default()
    };
    if let Err(m) = check_tolerations(&p.spec.tolerations) {
        return misconfigured(m);
    }
    let weights = match weights(p) {
        Ok(w) => w,
        Err(m) => return misconfigured(m),
    };
    let short = |s: Shortfall| Scheduled {
        shortfall: Some(s),
        ..Scheduled::default()
    };

    // What needs no evaluation first: a placement that can select nothing never runs its CEL.
    let available = match available(inputs) {
        Ok(a) => a,
        Err(s) => return short(s),
    };

    let mut predicates = Vec::new();
    for pred in &p.spec.predicates {
        let s = pred.required_cluster_selector.clone().unwrap_or_default();
        let labels_and_claims =
            match predicate(s.label_selector.as_ref(), s.claim_selector.as_ref()) {
                Ok(f) => f,
                Err(m) => return misconfigured(m),
            };
        let expressions = s
            .cel_selector
            .map(|c| c.cel_expressions)
            .unwrap_or_default();
        let cel = match cel::Selector::compile(&expressions) {
            Ok(c) => c,
            Err(m) => return misconfigured(m),
        };
        predicates.push((labels_and_claims, cel));
    }
    // One budget for every CEL evaluation of this scheduling; CEL last: it is the dearest.
    let mut budget = cel::BUDGET;
    let mut selected = |mc: &ManagedCluster| -> Result<bool, cel::Exceeded> {
        if predicates.is_empty() {
            return Ok(true);
        }
        for (labels_and_claims, cel) in &predicates {
            if labels_and_claims(mc) && cel.matches(mc, &inputs.scores, &mut budget)? {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let mut expiry = None;
    let mut feasible: Vec<&ManagedCluster> = Vec::new();
    for mc in available {
        match selected(mc) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(cel::Exceeded(m)) => {
                return Scheduled {
                    out_of_budget: true,
                    ..misconfigured(m)
                };
            }
        }
        let decided = inputs.current.contains(&mc.name_any());
        if passes_taints(mc, &p.spec.tolerations, decided, inputs.now, &mut expiry) {
            feasible.push(mc);
        }
    }

    let ranked = rank(&feasible, &weights, inputs, &mut expiry);
    let wanted = p
        .spec
        .number_of_clusters
        .map(|n| usize::try_from(n).unwrap_or(0));
    let clusters = match &p.spec.spread_policy {
        Some(policy) => spread(policy, ranked, &feasible, wanted),
        None => ranked
            .into_iter()
            .take(wanted.unwrap_or(usize::MAX))
            .collect(),
    };
    let shortfall = if clusters.is_empty() {
        Some(Shortfall::NoneMatched)
    } else {
        match wanted {
            Some(n) if n > clusters.len() => Some(Shortfall::Unscheduled(n - clusters.len())),
            _ => None,
        }
    };
    Scheduled {
        clusters,
        misconfigured: None,
        shortfall,
        requeue_in: expiry.map(|e: Timestamp| e.duration_since(inputs.now).unsigned_abs()),
        out_of_budget: false,
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
pub(super) mod tests;
