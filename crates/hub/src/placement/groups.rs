//! Decision groups and the PlacementDecisions that hold them, as upstream: the named groups of
//! `decisionStrategy` take their clusters first (first match wins, in spec order), the rest form
//! unnamed groups; each group is split into `clustersPerDecisionGroup`-sized groups, sorted by
//! name, and each group into PlacementDecisions of at most [`MAX_PER_DECISION`] clusters, named
//! `<placement>-decision-<n>` with `n` counting from 1 across groups. Under `sortBy: Score`
//! groups and decisions are ordered by score instead (best first, ties by name) and the
//! decisions record each cluster's score, as the API describes (upstream v1.3.1 does neither).
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use ocm_api::cluster::{ManagedCluster, Placement, SortBy};

/// Most clusters in one PlacementDecision (upstream's).
pub const MAX_PER_DECISION: usize = 100;

/// One decision group: its name (`""` for unnamed) and clusters, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// `groupName` of the strategy, or `""`.
    pub name: String,
    /// Its clusters.
    pub clusters: Vec<String>,
}

/// One PlacementDecision to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `<placement>-decision-<n>`.
    pub name: String,
    /// Index of its group.
    pub group_index: usize,
    /// Name of its group.
    pub group_name: String,
    /// Its clusters, in the placement's order.
    pub clusters: Vec<String>,
    /// Their scores, under `sortBy: Score`; empty otherwise (nothing recorded).
    pub scores: Vec<i64>,
}

/// The order of clusters in groups and decisions.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a> {
    /// Under `sortBy: Score`, each cluster's score.
    scores: Option<&'a BTreeMap<String, i64>>,
}

impl<'a> Order<'a> {
    /// By name.
    pub const BY_NAME: Order<'static> = Order { scores: None };

    /// `p`'s order, `scores` being its selected clusters' scores.
    #[must_use]
    pub fn of(p: &Placement, scores: &'a BTreeMap<String, i64>) -> Self {
        Self {
            scores: (p.spec.sort_by == Some(SortBy::Score)).then_some(scores),
        }
    }

    fn sort(self, clusters: &mut [String]) {
        match self.scores {
            None => clusters.sort(),
            Some(scores) => {
                let score = |c: &String| scores.get(c).copied().unwrap_or(0);
                clusters.sort_by(|a, b| score(b).cmp(&score(a)).then_with(|| a.cmp(b)));
            }
        }
    }

    fn recorded(self, clusters: &[String]) -> Vec<i64> {
        self.scores.map_or_else(Vec::new, |scores| {
            clusters
                .iter()
                .map(|c| scores.get(c).copied().unwrap_or(0))
                .collect()
        })
    }
}

/// How many clusters go in each group: `clustersPerDecisionGroup` of `total`.
fn group_length(p: &Placement, total: usize) -> Result<usize, String> {
    let per = p
        .spec
        .decision_strategy
        .as_ref()
        .and_then(|d| d.group_strategy.as_ref())
        .and_then(|g| g.clusters_per_decision_group.clone());
    let length = match per {
        None => total,
        Some(IntOrString::Int(n)) => usize::try_from(n).unwrap_or(0),
        Some(IntOrString::String(s)) => {
            let percent = s
                .strip_suffix('%')
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    format!("DecisionGroups:{s} invalid type: string is not a percentage")
                })?;
            (percent * total).div_ceil(100)
        }
    };
    Ok(if length == 0 || length > total {
        total
    } else {
        length
    })
}

fn chunks(
    name: &str,
    mut clusters: Vec<String>,
    length: usize,
    order: Order<'_>,
    out: &mut Vec<Group>,
) {
    order.sort(&mut clusters);
    for chunk in clusters.chunks(length.max(1)) {
        out.push(Group {
            name: name.to_string(),
            clusters: chunk.to_vec(),
        });
    }
}

/// The groups of `selected` (the scheduler's clusters) under `p`'s decision strategy, each in
/// `order`; always at least one (empty) group.
pub fn groups(
    p: &Placement,
    selected: &[&ManagedCluster],
    order: Order<'_>,
) -> Result<Vec<Group>, String> {
    use kube::ResourceExt as _;
    let length = group_length(p, selected.len())?;
    let mut left: Vec<&ManagedCluster> = selected.to_vec();
    let mut out = Vec::new();
    let named = p
        .spec
        .decision_strategy
        .iter()
        .filter_map(|d| d.group_strategy.as_ref())
        .flat_map(|g| &g.decision_groups);
    for g in named {
        let s = &g.group_cluster_selector;
        let matches =
            super::schedule::predicate(s.label_selector.as_ref(), s.claim_selector.as_ref())
                .map_err(|m| m.replacen("Predicate:", "DecisionGroups:", 1))?;
        let (taken, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(|mc| matches(mc));
        left = rest;
        if !taken.is_empty() {
            chunks(
                &g.group_name,
                taken.iter().map(|mc| mc.name_any()).collect(),
                length,
                order,
                &mut out,
            );
        }
    }
    if !left.is_empty() {
        chunks(
            "",
            left.iter().map(|mc| mc.name_any()).collect(),
            length,
            order,
            &mut out,
        );
    }
    if out.is_empty() {
        out.push(Group {
            name: String::new(),
            clusters: Vec::new(),
        });
    }
    Ok(out)
}

/// The PlacementDecisions of `groups` for the placement `name`: every group gets at least one.
#[must_use]
pub fn decisions(name: &str, groups: &[Group], order: Order<'_>) -> Vec<Decision> {
    let mut out = Vec::new();
    for (index, g) in groups.iter().enumerate() {
        let parts: Vec<&[String]> = if g.clusters.is_empty() {
            vec![&[]]
        } else {
            g.clusters.chunks(MAX_PER_DECISION).collect()
        };
        for part in parts {
            out.push(Decision {
                name: format!("{name}-decision-{}", out.len() + 1),
                group_index: index,
                group_name: g.name.clone(),
                clusters: part.to_vec(),
                scores: order.recorded(part),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt as _;
    use ocm_api::cluster::ManagedClusterSpec;

    fn cluster(name: &str, labels: &[(&str, &str)]) -> ManagedCluster {
        let mut mc = ManagedCluster::new(name, ManagedClusterSpec::default());
        for (k, v) in labels {
            mc.labels_mut().insert((*k).into(), (*v).into());
        }
        mc
    }

    #[allow(clippy::needless_pass_by_value)] // called with json! literals
    fn placement(strategy: serde_json::Value) -> Placement {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": {"decisionStrategy": strategy}
        }))
        .unwrap()
    }

    #[test]
    fn named_groups_take_first_then_the_rest_split_by_length() {
        let clusters: Vec<ManagedCluster> = (0..5)
            .map(|i| {
                cluster(
                    &format!("c{i}"),
                    &[("canary", if i < 2 { "true" } else { "false" })],
                )
            })
            .collect();
        let refs: Vec<&ManagedCluster> = clusters.iter().collect();
        let p = placement(serde_json::json!({"groupStrategy": {
            "clustersPerDecisionGroup": "50%",
            "decisionGroups": [{"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"canary": "true"}}}}]}}));
        let groups = groups(&p, &refs, Order::BY_NAME).unwrap();
        let shape: Vec<(&str, Vec<&str>)> = groups
            .iter()
            .map(|g| {
                (
                    g.name.as_str(),
                    g.clusters.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [("canary", vec!["c0", "c1"]), ("", vec!["c2", "c3", "c4"])]
        );
        let ds = decisions("p", &groups, Order::BY_NAME);
        assert_eq!(
            ds.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["p-decision-1", "p-decision-2"]
        );
        assert_eq!(ds[1].group_index, 1);
    }

    #[test]
    fn decisions_hold_at_most_a_hundred_and_nothing_still_makes_one() {
        let clusters: Vec<ManagedCluster> = (0..250)
            .map(|i| cluster(&format!("c{i:03}"), &[]))
            .collect();
        let refs: Vec<&ManagedCluster> = clusters.iter().collect();
        let g = groups(&placement(serde_json::Value::Null), &refs, Order::BY_NAME).unwrap();
        let ds = decisions("p", &g, Order::BY_NAME);
        assert_eq!(
            ds.iter().map(|d| d.clusters.len()).collect::<Vec<_>>(),
            [100, 100, 50]
        );
        assert_eq!(ds[2].name, "p-decision-3");
        let empty = decisions(
            "p",
            &groups(&placement(serde_json::Value::Null), &[], Order::BY_NAME).unwrap(),
            Order::BY_NAME,
        );
        assert_eq!(empty.len(), 1);
        assert!(empty[0].clusters.is_empty() && empty[0].group_name.is_empty());
    }

    #[test]
    fn a_count_that_is_no_percentage_is_refused() {
        let p =
            placement(serde_json::json!({"groupStrategy": {"clustersPerDecisionGroup": "half"}}));
        let c = cluster("c", &[]);
        assert!(
            groups(&p, &[&c], Order::BY_NAME)
                .unwrap_err()
                .contains("not a percentage")
        );
    }
}
