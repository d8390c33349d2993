//! Scheduling from minimal objects; no cluster.
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::{Inputs, Scheduled, Shortfall, schedule};
use crate::api::cluster::{AddOnPlacementScore, ManagedCluster, ManagedClusterSet, Placement};
use crate::hub::clustersets::decide::builtin_sets;

/// A placement `ns/p` with `spec` (the other placement tests use it too).
#[allow(clippy::needless_pass_by_value)] // called with json! literals
pub(in crate::hub::placement) fn placement(spec: serde_json::Value) -> Placement {
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
