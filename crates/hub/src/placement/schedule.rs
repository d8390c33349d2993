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
use crate::clustersets::decide::Membership;
use ocm_api::cluster::{
    ClusterClaimSelector, ManagedCluster, ManagedClusterSet, Placement, ScoreCoordinateType, Taint,
    TaintEffect, Toleration,
};
use ocm_api::quantity::parse_milli;

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
    /// Each selected cluster's total weighted score (what `sortBy: Score` orders and records).
    pub scores: BTreeMap<String, i64>,
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

impl std::fmt::Display for Prioritizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BuiltIn(name) => f.write_str(name),
            Self::AddOn { resource, score } => write!(f, "AddOn/{resource}/{score}"),
        }
    }
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

/// One cluster's score: each prioritizer's `(name, score, weight)` and their weighted total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    /// The cluster.
    pub cluster: String,
    /// Each prioritizer's score and weight.
    pub parts: Vec<(String, i64, i64)>,
    /// The sum of score × weight.
    pub total: i64,
}

/// `feasible` scored, best first: total weighted score descending, ties by name.
fn rank(
    feasible: &[&ManagedCluster],
    weights: &BTreeMap<Prioritizer, i64>,
    inputs: &Inputs<'_>,
    expiry: &mut Option<Timestamp>,
) -> Vec<Score> {
    let wants = |name: &str| weights.contains_key(&Prioritizer::BuiltIn(name.into()));
    let cpu = wants("ResourceAllocatableCPU").then(|| allocatable(feasible, "cpu"));
    let memory = wants("ResourceAllocatableMemory").then(|| allocatable(feasible, "memory"));
    let most_chosen = inputs.others.values().copied().max().unwrap_or(0);
    let from = |m: Option<&HashMap<String, i64>>, name: &str| {
        m.and_then(|m| m.get(name).copied()).unwrap_or(0)
    };
    let mut score = |name: &str| -> Vec<(String, i64, i64)> {
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
                (prioritizer.to_string(), s, *w)
            })
            .collect()
    };
    let mut ranked: Vec<Score> = feasible
        .iter()
        .map(|mc| {
            let cluster = mc.name_any();
            let parts = score(&cluster);
            let total = parts.iter().map(|(_, s, w)| s * w).sum();
            Score {
                cluster,
                parts,
                total,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.total
            .cmp(&a.total)
            .then_with(|| a.cluster.cmp(&b.cluster))
    });
    ranked
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

/// A label-and-claim test and a CEL selector.
type CompiledPredicate = (Box<dyn Fn(&ManagedCluster) -> bool>, cel::Selector);

/// `p`'s predicates, compiled; the error is upstream's `PlacementMisconfigured` message.
fn compile_predicates(p: &Placement) -> Result<Vec<CompiledPredicate>, String> {
    let mut predicates: Vec<CompiledPredicate> = Vec::new();
    for pred in &p.spec.predicates {
        let s = pred.required_cluster_selector.clone().unwrap_or_default();
        let labels_and_claims = predicate(s.label_selector.as_ref(), s.claim_selector.as_ref())?;
        let expressions = s
            .cel_selector
            .map(|c| c.cel_expressions)
            .unwrap_or_default();
        let cel = cel::Selector::compile(&expressions)?;
        predicates.push((Box::new(labels_and_claims), cel));
    }
    Ok(predicates)
}

/// Schedules `inputs.placement`.
#[must_use]
pub fn schedule(inputs: &Inputs<'_>) -> Scheduled {
    run(inputs, None)
}

/// Why each cluster was or was not selected (`clusteradm get placements --explain`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Clusters left out before scoring, with why.
    pub excluded: BTreeMap<String, String>,
    /// Clusters that passed the predicates (before taints), in the order scheduled.
    pub passed_predicates: Vec<String>,
    /// Clusters that passed the predicates and taints, scored, best first.
    pub scored: Vec<Score>,
}

impl Trace {
    /// Records why the clusters not `available` are not.
    fn unavailable(
        &mut self,
        clusters: &[std::sync::Arc<ManagedCluster>],
        available: &[&ManagedCluster],
    ) {
        let available: BTreeSet<String> = available.iter().map(|a| a.name_any()).collect();
        for mc in clusters {
            if available.contains(&mc.name_any()) {
                continue;
            }
            let why = if mc.metadata.deletion_timestamp.is_some() {
                "being deleted"
            } else {
                "not in a cluster set bound to the namespace (and named by the placement)"
            };
            self.excluded.insert(mc.name_any(), why.into());
        }
    }

    /// Records that `mc` has a taint the placement does not tolerate.
    fn tainted(&mut self, mc: &ManagedCluster) {
        let taints: Vec<String> = mc
            .spec
            .taints
            .iter()
            .map(|t| {
                format!(
                    "{}={}:{:?}",
                    t.key,
                    t.value.as_deref().unwrap_or_default(),
                    t.effect
                )
            })
            .collect();
        self.excluded.insert(
            mc.name_any(),
            format!("a taint it does not tolerate, of {}", taints.join(", ")),
        );
    }
}

/// Schedules `inputs.placement` and says why each cluster was or was not selected.
#[must_use]
pub fn explain(inputs: &Inputs<'_>) -> (Scheduled, Trace) {
    let mut trace = Trace::default();
    let scheduled = run(inputs, Some(&mut trace));
    (scheduled, trace)
}

fn run(inputs: &Inputs<'_>, mut trace: Option<&mut Trace>) -> Scheduled {
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
        Err(s) => {
            let scheduled = short(s);
            if let Some(trace) = trace.as_deref_mut() {
                let why = super::status::satisfied(&scheduled, inputs.now).message;
                for mc in inputs.clusters {
                    trace.excluded.insert(mc.name_any(), why.clone());
                }
            }
            return scheduled;
        }
    };
    if let Some(trace) = trace.as_deref_mut() {
        trace.unavailable(inputs.clusters, &available);
    }

    let predicates = match compile_predicates(p) {
        Ok(predicates) => predicates,
        Err(m) => return misconfigured(m),
    };
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
            Ok(false) => {
                if let Some(trace) = trace.as_deref_mut() {
                    trace.excluded.insert(
                        mc.name_any(),
                        "matches no predicate (label, claim and CEL selectors)".into(),
                    );
                }
                continue;
            }
            Err(cel::Exceeded(m)) => {
                return Scheduled {
                    out_of_budget: true,
                    ..misconfigured(m)
                };
            }
        }
        if let Some(trace) = trace.as_deref_mut() {
            trace.passed_predicates.push(mc.name_any());
        }
        let decided = inputs.current.contains(&mc.name_any());
        if passes_taints(mc, &p.spec.tolerations, decided, inputs.now, &mut expiry) {
            feasible.push(mc);
        } else if let Some(trace) = trace.as_deref_mut() {
            trace.tainted(mc);
        }
    }

    let ranked = rank(&feasible, &weights, inputs, &mut expiry);
    let names: Vec<String> = ranked.iter().map(|s| s.cluster.clone()).collect();
    let (clusters, shortfall) = select(p, names, &feasible);
    let scores = totals_of(&ranked, &clusters);
    if let Some(trace) = trace {
        trace.scored = ranked;
    }
    Scheduled {
        clusters,
        misconfigured: None,
        shortfall,
        requeue_in: expiry.map(|e: Timestamp| e.duration_since(inputs.now).unsigned_abs()),
        out_of_budget: false,
        scores,
    }
}

/// The total scores of `clusters`, as `ranked` scored them.
fn totals_of(ranked: &[Score], clusters: &[String]) -> BTreeMap<String, i64> {
    let totals: HashMap<&str, i64> = ranked
        .iter()
        .map(|s| (s.cluster.as_str(), s.total))
        .collect();
    clusters
        .iter()
        .map(|c| (c.clone(), totals.get(c.as_str()).copied().unwrap_or(0)))
        .collect()
}

/// The best of `ranked` as many as `p` wants (by its spread policy, if any), and the shortfall.
fn select(
    p: &Placement,
    ranked: Vec<String>,
    feasible: &[&ManagedCluster],
) -> (Vec<String>, Option<Shortfall>) {
    let wanted = p
        .spec
        .number_of_clusters
        .map(|n| usize::try_from(n).unwrap_or(0));
    let clusters: Vec<String> = match &p.spec.spread_policy {
        Some(policy) => spread(policy, ranked, feasible, wanted),
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
    (clusters, shortfall)
}

#[cfg(test)]
pub(super) mod tests {
    //! Scheduling from minimal objects; no cluster.
    use std::collections::{BTreeSet, HashMap};
    use std::sync::Arc;

    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    use super::{Inputs, Scheduled, Shortfall, schedule};
    use crate::clustersets::decide::builtin_sets;
    use ocm_api::cluster::{AddOnPlacementScore, ManagedCluster, ManagedClusterSet, Placement};

    /// A placement `ns/p` with `spec` (the other placement tests use it too).
    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    pub(in crate::placement) fn placement(spec: serde_json::Value) -> Placement {
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": spec
        }))
        .unwrap()
    }

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn cluster(name: &str, extra: serde_json::Value) -> Arc<ManagedCluster> {
        let mut v = json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": "default"}}, "spec": {}});
        if let (Some(v), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            for (k, x) in e {
                if k == "labels" {
                    for (lk, lv) in x.as_object().unwrap() {
                        v["metadata"]["labels"][lk] = lv.clone();
                    }
                } else {
                    v.insert(k.clone(), x.clone());
                }
            }
        }
        Arc::new(serde_json::from_value(v).unwrap())
    }

    struct Fixture {
        sets: Vec<ManagedClusterSet>,
        clusters: Vec<Arc<ManagedCluster>>,
        current: BTreeSet<String>,
        others: HashMap<String, usize>,
        scores: Vec<Arc<AddOnPlacementScore>>,
    }

    impl Fixture {
        fn new(clusters: Vec<Arc<ManagedCluster>>) -> Self {
            Self {
                sets: builtin_sets().to_vec(),
                clusters,
                current: BTreeSet::new(),
                others: HashMap::new(),
                scores: Vec::new(),
            }
        }
        fn run(&self, p: &Placement, bound: &[&str]) -> Scheduled {
            schedule(&Inputs {
                placement: p,
                bound_sets: self
                    .sets
                    .iter()
                    .filter(|s| bound.contains(&s.metadata.name.as_deref().unwrap()))
                    .collect(),
                clusters: &self.clusters,
                current: &self.current,
                others: &self.others,
                scores: {
                    let scores = self.scores.clone();
                    Arc::new(move |cluster: &str, resource: &str| {
                        scores
                            .iter()
                            .find(|s| {
                                s.metadata.namespace.as_deref() == Some(cluster)
                                    && s.metadata.name.as_deref() == Some(resource)
                            })
                            .cloned()
                    })
                },
                now: "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap(),
            })
        }
    }

    #[test]
    fn sets_must_be_bound_and_intersect() {
        let f = Fixture::new(vec![cluster("a", json!({}))]);
        assert_eq!(
            f.run(&placement(json!({})), &[]).shortfall,
            Some(Shortfall::NoBindings)
        );
        let p = placement(json!({"clusterSets": ["prod"]}));
        assert_eq!(
            f.run(&p, &["default"]).shortfall,
            Some(Shortfall::NoIntersection(vec!["prod".into()]))
        );
        let empty = Fixture::new(vec![]);
        assert_eq!(
            empty
                .run(&placement(json!({})), &["default", "global"])
                .shortfall,
            Some(Shortfall::SetsEmpty(vec![
                "default".into(),
                "global".into()
            ]))
        );
        assert_eq!(f.run(&placement(json!({})), &["default"]).clusters, ["a"]);
    }

    #[test]
    fn predicates_are_ored_and_selectors_within_one_anded() {
        let f = Fixture::new(vec![
            cluster(
                "a",
                json!({"labels": {"env": "prod"}, "status": {"clusterClaims": [{"name": "region", "value": "eu"}]}}),
            ),
            cluster("b", json!({"labels": {"env": "prod"}})),
            cluster("c", json!({"labels": {"env": "dev"}})),
        ]);
        let p = placement(json!({"predicates": [
        {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}},
            "claimSelector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["eu"]}]}}},
        {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "dev"}}}}]}));
        assert_eq!(f.run(&p, &["default"]).clusters, ["a", "c"]);
        let none = placement(
            json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "qa"}}}}]}),
        );
        assert_eq!(
            f.run(&none, &["default"]).shortfall,
            Some(Shortfall::NoneMatched)
        );
    }

    #[test]
    fn taints_need_tolerations_until_they_run_out() {
        let taint = |effect: &str, added: &str| json!({"spec": {"taints": [{"key": "cluster.open-cluster-management.io/unreachable", "effect": effect, "timeAdded": added}]}});
        let mut f = Fixture::new(vec![
            cluster("a", json!({})),
            cluster("b", taint("NoSelect", "2025-12-31T23:59:00Z")),
            cluster("c", taint("NoSelectIfNew", "2025-12-31T23:59:00Z")),
            cluster("d", taint("PreferNoSelect", "2025-12-31T23:59:00Z")),
        ]);
        assert_eq!(
            f.run(&placement(json!({})), &["default"]).clusters,
            ["a", "d"]
        );
        f.current.insert("c".into());
        assert_eq!(
            f.run(&placement(json!({})), &["default"]).clusters,
            ["c", "a", "d"]
        );
        // Tolerated for 5 minutes from timeAdded: still (1 minute in), and a requeue at the end.
        let p = placement(
            json!({"tolerations": [{"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}]}),
        );
        let s = f.run(&p, &["default"]);
        assert!(s.clusters.contains(&"b".to_string()));
        assert_eq!(s.requeue_in, Some(std::time::Duration::from_secs(240)));
        let expired = placement(
            json!({"tolerations": [{"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists", "tolerationSeconds": 30}]}),
        );
        assert!(
            !f.run(&expired, &["default"])
                .clusters
                .contains(&"b".to_string())
        );
        let bad = placement(json!({"tolerations": [{"operator": "Equal", "value": "x"}]}));
        assert!(
            f.run(&bad, &["default"])
                .misconfigured
                .unwrap()
                .contains("operator must be Exists")
        );
    }

    #[test]
    fn an_empty_spread_policy_still_takes_number_of_clusters() {
        // What a Go client sends for a placement without spread constraints.
        let f = Fixture::new(vec![
            cluster("a", json!({})),
            cluster("b", json!({})),
            cluster("c", json!({})),
        ]);
        let p = placement(json!({"numberOfClusters": 2, "spreadPolicy": {}}));
        assert_eq!(f.run(&p, &["default"]).clusters.len(), 2);
    }

    #[test]
    fn prioritizers_rank_and_number_of_clusters_cuts() {
        let alloc =
            |cpu: &str| json!({"status": {"allocatable": {"cpu": cpu}, "capacity": {"cpu": cpu}}});
        let mut f = Fixture::new(vec![
            cluster("a", alloc("2")),
            cluster("b", alloc("8")),
            cluster("c", alloc("4")),
        ]);
        let cpu = placement(
            json!({"numberOfClusters": 2, "prioritizerPolicy": {"mode": "Exact",
        "configurations": [{"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}}]}}),
        );
        assert_eq!(f.run(&cpu, &["default"]).clusters, ["b", "c"]);
        // Steady (Additive default) keeps what was decided; Balance avoids what others chose.
        f.current.insert("a".into());
        let one = placement(json!({"numberOfClusters": 1}));
        assert_eq!(f.run(&one, &["default"]).clusters, ["a"]);
        f.current.clear();
        f.others.insert("a".into(), 3);
        f.others.insert("b".into(), 1);
        assert_eq!(f.run(&one, &["default"]).clusters, ["c"]);
        let three = placement(json!({"numberOfClusters": 5}));
        assert_eq!(
            f.run(&three, &["default"]).shortfall,
            Some(Shortfall::Unscheduled(2))
        );
        let bad = placement(
            json!({"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Fastest"}}]}}),
        );
        assert!(
            f.run(&bad, &["default"])
                .misconfigured
                .unwrap()
                .contains("incorrect builtin prioritizer: Fastest")
        );
    }

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn score(cluster: &str, status: serde_json::Value) -> Arc<AddOnPlacementScore> {
        Arc::new(
        serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
            "metadata": {"name": "usage", "namespace": cluster}, "status": status
        }))
        .unwrap(),
    )
    }

    #[test]
    fn addon_scores_rank_until_they_expire() {
        let mut f = Fixture::new(vec![
            cluster("a", json!({})),
            cluster("b", json!({})),
            cluster("c", json!({})),
        ]);
        f.scores = vec![
            score("a", json!({"scores": [{"name": "cpuFree", "value": 10}]})),
            score(
                "b",
                json!({"scores": [{"name": "cpuFree", "value": 90}], "validUntil": "2026-01-01T00:10:00Z"}),
            ),
            score(
                "c",
                json!({"scores": [{"name": "cpuFree", "value": 99}], "validUntil": "2025-12-31T00:00:00Z"}),
            ),
        ];
        let p = placement(
            json!({"numberOfClusters": 2, "prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "cpuFree"}}, "weight": 2}]}}),
        );
        // c's score has expired (0), so b (90) then a (10); b's validUntil brings a requeue.
        let s = f.run(&p, &["default"]);
        assert_eq!(s.clusters, ["b", "a"]);
        assert_eq!(s.requeue_in, Some(std::time::Duration::from_secs(600)));
        let missing_name = placement(
            json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "nope"}}}]}}),
        );
        assert_eq!(f.run(&missing_name, &["default"]).clusters, ["a", "b", "c"]);
        let no_addon = placement(
            json!({"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "AddOn"}}]}}),
        );
        assert_eq!(
            f.run(&no_addon, &["default"]).misconfigured.as_deref(),
            Some("Prioritizers:addOn should not be empty")
        );
    }

    #[test]
    fn spread_keeps_skew_within_max_skew() {
        let zone = |z: &str| json!({"labels": {"zone": z}});
        let mut f = Fixture::new(vec![
            cluster("a1", zone("a")),
            cluster("a2", zone("a")),
            cluster("a3", zone("a")),
            cluster("b1", zone("b")),
            cluster(
                "c1",
                json!({"status": {"clusterClaims": [{"name": "zone", "value": "c"}]}}),
            ),
        ]);
        // Without spread, 3 of zone a win by name; with it, one per zone first.
        let spec = |when: &str, count: Option<i32>| {
            placement(
                json!({"numberOfClusters": count, "spreadPolicy": {"spreadConstraints": [
            {"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 1, "whenUnsatisfiable": when}]}}),
            )
        };
        assert_eq!(
            f.run(&placement(json!({"numberOfClusters": 3})), &["default"])
                .clusters,
            ["a1", "a2", "a3"]
        );
        // Hard: c1 has no zone label, and zone a may lead b by one at most.
        let hard = f.run(&spec("DoNotSchedule", Some(4)), &["default"]);
        assert_eq!(hard.clusters, ["a1", "b1", "a2"]);
        assert_eq!(hard.shortfall, Some(Shortfall::Unscheduled(1)));
        // Soft: the same order, then the rest when nothing better is left.
        assert_eq!(
            f.run(&spec("ScheduleAnyway", Some(4)), &["default"])
                .clusters,
            ["a1", "b1", "a2", "a3"]
        );
        // A claim topology sees c1 in zone c.
        let claim = placement(
            json!({"numberOfClusters": 3, "spreadPolicy": {"spreadConstraints": [
        {"topologyKey": "zone", "topologyKeyType": "Claim", "whenUnsatisfiable": "DoNotSchedule"}]}}),
        );
        assert_eq!(f.run(&claim, &["default"]).clusters, ["c1"]);
        f.clusters
            .push(cluster("c2", json!({"labels": {"zone": "c"}})));
        assert_eq!(
            f.run(&spec("DoNotSchedule", None), &["default"]).clusters,
            ["a1", "b1", "c2", "a2"]
        );
    }
}
