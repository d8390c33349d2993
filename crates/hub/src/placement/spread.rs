//! `spreadPolicy`: upstream's API has it, its controller ignores it; here it is honoured, in the
//! manner of Kubernetes' pod topology spread. Each constraint names a topology (a cluster label or
//! claim); its domains are the values the feasible clusters carry. Clusters are taken best first
//! while, for every constraint, the chosen count of the cluster's domain minus the smallest
//! domain's count stays within `maxSkew`. `DoNotSchedule` constraints are never broken (a cluster
//! without the key is not chosen); `ScheduleAnyway` ones are broken only when nothing else is
//! left, and then by the cluster that breaks them least.
use std::collections::HashMap;

use kube::ResourceExt as _;

use ocm_api::cluster::{
    ManagedCluster, SpreadConstraint, SpreadPolicy, TopologyKeyType, WhenUnsatisfiable,
};

/// One constraint, with the domain of every feasible cluster and the count chosen per domain.
struct Topology {
    hard: bool,
    max_skew: usize,
    domain_of: HashMap<String, String>,
    chosen: HashMap<String, usize>,
}

impl Topology {
    fn new(c: &SpreadConstraint, feasible: &[&ManagedCluster]) -> Self {
        let domain_of: HashMap<String, String> = feasible
            .iter()
            .filter_map(|mc| Some((mc.name_any(), domain(c, mc)?)))
            .collect();
        let chosen = domain_of.values().map(|d| (d.clone(), 0)).collect();
        Self {
            hard: c.when_unsatisfiable == Some(WhenUnsatisfiable::DoNotSchedule),
            max_skew: usize::try_from(c.max_skew.unwrap_or(1).max(1)).unwrap_or(1),
            domain_of,
            chosen,
        }
    }

    /// How far over `maxSkew` choosing `cluster` would take this topology (0: within it);
    /// `None` when the cluster has no domain here.
    fn excess(&self, cluster: &str) -> Option<usize> {
        let domain = self.domain_of.get(cluster)?;
        let after = self.chosen[domain] + 1;
        let min = self
            .chosen
            .iter()
            .map(|(d, n)| if d == domain { after } else { *n })
            .min()
            .unwrap_or(0);
        Some((after - min).saturating_sub(self.max_skew))
    }

    fn choose(&mut self, cluster: &str) {
        if let Some(domain) = self.domain_of.get(cluster) {
            *self.chosen.entry(domain.clone()).or_default() += 1;
        }
    }
}

/// The value of `c`'s topology key on `mc`.
fn domain(c: &SpreadConstraint, mc: &ManagedCluster) -> Option<String> {
    match c.topology_key_type {
        TopologyKeyType::Label => mc.labels().get(&c.topology_key).cloned(),
        TopologyKeyType::Claim => mc
            .status
            .iter()
            .flat_map(|s| &s.cluster_claims)
            .find(|claim| claim.name.as_deref() == Some(c.topology_key.as_str()))
            .and_then(|claim| claim.value.clone()),
    }
}

/// Up to `wanted` (all when `None`) of `ranked` (cluster names, best first), spread by `policy`.
#[must_use]
pub fn spread(
    policy: &SpreadPolicy,
    ranked: Vec<String>,
    feasible: &[&ManagedCluster],
    wanted: Option<usize>,
) -> Vec<String> {
    if policy.spread_constraints.is_empty() {
        // An empty policy (Go clients send `spreadPolicy: {}`) spreads nothing, but the count
        // still holds.
        return ranked
            .into_iter()
            .take(wanted.unwrap_or(usize::MAX))
            .collect();
    }
    let mut topologies: Vec<Topology> = policy
        .spread_constraints
        .iter()
        .map(|c| Topology::new(c, feasible))
        .collect();
    let limit = wanted.unwrap_or(ranked.len());
    let mut left = ranked;
    let mut chosen = Vec::new();
    while chosen.len() < limit {
        // Per cluster: None if a hard constraint forbids it, else the summed soft excess.
        let cost = |cluster: &str| -> Option<usize> {
            topologies
                .iter()
                .try_fold(0, |sum, t| match (t.excess(cluster), t.hard) {
                    (Some(0), _) => Some(sum),
                    (Some(_) | None, true) => None,
                    (Some(over), false) => Some(sum + over),
                    (None, false) => Some(sum + usize::MAX / 2),
                })
        };
        // Best first among the cheapest: `min_by_key` keeps the first of equals.
        let Some((i, _)) = left
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, cost(c)?)))
            .min_by_key(|(_, cost)| *cost)
        else {
            break;
        };
        let cluster = left.remove(i);
        for t in &mut topologies {
            t.choose(&cluster);
        }
        chosen.push(cluster);
    }
    chosen
}
