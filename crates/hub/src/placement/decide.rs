//! A placement's pure entry: from its schedule ([`super::schedule`]), the clusters it selected
//! and the decisions it has, the decisions it should have and its status. The reconcile reads
//! the stores, this decides, and the `writer` writes.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt as _;

use super::groups::{self, Decision, Order};
use super::rescore;
use super::schedule::Scheduled;
use super::status;
use ocm_api::cluster::{
    DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL, ManagedCluster, Placement,
    PlacementDecision, PlacementStatus, SortBy,
};

/// What one reconcile makes of a placement.
#[derive(Debug)]
pub struct Plan {
    /// The decisions to write; `None` keeps those it has: a misconfigured placement must not
    /// empty a fleet.
    pub decisions: Option<Vec<Decision>>,
    /// Its status, counting the decisions it will have.
    pub status: PlacementStatus,
    /// The decisions written carry new scores (the time starts `scoreRateLimit` again).
    pub writes_scores: bool,
    /// New scores alone are held back by `scoreRateLimit`: look again then.
    pub scores_held_for: Option<Duration>,
}

/// The plan for `p`, scheduled as `scheduled` (which `selected` are the clusters of), holding
/// `current` decisions, at `now`; its scores were last written at `last_scored`.
#[must_use]
pub fn decide(
    p: &Placement,
    scheduled: &Scheduled,
    selected: &[&ManagedCluster],
    current: &[Arc<PlacementDecision>],
    last_scored: Option<Timestamp>,
    now: Timestamp,
) -> Plan {
    let order = Order::of(p, &scheduled.scores);
    let (groups, misconfiguration) =
        match (&scheduled.misconfigured, groups::groups(p, selected, order)) {
            (Some(m), _) => (None, Some(m.clone())),
            (None, Err(m)) => (None, Some(m)),
            (None, Ok(g)) => (Some(g), None),
        };
    let mut decisions = groups.map(|g| groups::decisions(&p.name_any(), &g, order));
    let (mut writes_scores, mut scores_held_for) = (false, None);
    if let Some(want) = &decisions
        && p.spec.sort_by == Some(SortBy::Score)
    {
        let have = as_decisions(current);
        let mut sorted = want.clone();
        sorted.sort_by_key(|d| (d.group_index, d.name.clone()));
        if sorted != have {
            scores_held_for = rescore::only_scores_differ(&sorted, &have)
                .then(|| rescore::wait(last_scored, rescore::limit(p), now))
                .flatten();
            writes_scores = scores_held_for.is_none();
        }
    }
    if scores_held_for.is_some() {
        decisions = None;
    }
    let kept;
    let counted = if let Some(d) = &decisions {
        d.as_slice()
    } else {
        kept = as_decisions(current);
        kept.as_slice()
    };
    let status = status::status(
        p.status.as_ref(),
        scheduled,
        misconfiguration.as_deref(),
        counted,
        now,
    );
    Plan {
        decisions,
        status,
        writes_scores,
        scores_held_for,
    }
}

/// The decisions `existing` hold, as [`Decision`]s (for a placement whose decisions are kept).
#[must_use]
pub fn as_decisions(existing: &[Arc<PlacementDecision>]) -> Vec<Decision> {
    let mut out: Vec<Decision> = existing
        .iter()
        .map(|d| Decision {
            name: d.name_any(),
            group_index: d
                .labels()
                .get(DECISION_GROUP_INDEX_LABEL)
                .and_then(|i| i.parse().ok())
                .unwrap_or(0),
            group_name: d
                .labels()
                .get(DECISION_GROUP_NAME_LABEL)
                .cloned()
                .unwrap_or_default(),
            clusters: d
                .status
                .iter()
                .flat_map(|s| &s.decisions)
                .map(|c| c.cluster_name.clone())
                .collect(),
            scores: d
                .status
                .iter()
                .flat_map(|s| &s.decisions)
                .map_while(|c| c.score)
                .collect(),
        })
        .collect();
    out.sort_by_key(|d| (d.group_index, d.name.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::schedule::tests::placement;
    use serde_json::json;

    fn decision(name: &str, clusters: &[&str]) -> Arc<PlacementDecision> {
        let decisions: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c, "reason": ""}))
            .collect();
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "cluster.open-cluster-management.io/v1beta1",
                "kind": "PlacementDecision",
                "metadata": {"name": name, "namespace": "ns", "labels": {
                    DECISION_GROUP_INDEX_LABEL: "0", DECISION_GROUP_NAME_LABEL: ""}},
                "status": {"decisions": decisions}
            }))
            .unwrap(),
        )
    }

    fn cluster(name: &str) -> ManagedCluster {
        ManagedCluster::new(name, ocm_api::cluster::ManagedClusterSpec::default())
    }

    #[test]
    fn selected_clusters_become_decisions_and_the_status_counts_them() {
        let (a, b) = (cluster("a"), cluster("b"));
        let scheduled = Scheduled {
            clusters: vec!["a".into(), "b".into()],
            ..Scheduled::default()
        };
        let plan = decide(
            &placement(json!({})),
            &scheduled,
            &[&a, &b],
            &[],
            None,
            Timestamp::now(),
        );
        let decisions = plan.decisions.expect("decisions to write");
        assert_eq!(decisions[0].name, "p-decision-1");
        assert_eq!(decisions[0].clusters, ["a", "b"]);
        assert_eq!(plan.status.number_of_selected_clusters, Some(2));
    }

    #[test]
    fn a_misconfigured_placement_keeps_the_decisions_it_has() {
        let scheduled = Scheduled {
            misconfigured: Some("Predicate:bad selector".into()),
            ..Scheduled::default()
        };
        let current = [decision("p-decision-1", &["a", "b", "c"])];
        let plan = decide(
            &placement(json!({})),
            &scheduled,
            &[],
            &current,
            None,
            Timestamp::now(),
        );
        assert!(plan.decisions.is_none(), "nothing is rewritten");
        assert_eq!(plan.status.number_of_selected_clusters, Some(3));
        let misconfigured = plan
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "PlacementMisconfigured")
            .unwrap();
        assert_eq!(misconfigured.status, "True");
    }
}
