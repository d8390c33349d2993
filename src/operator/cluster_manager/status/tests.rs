//! Unit tests of the status step.
use std::collections::BTreeMap;

use super::*;
use crate::operator::cluster_manager::test_support::cluster_manager;
use crate::operator::cluster_manager::validate::validate;

fn deployment(available: i32) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "x", "generation": 1},
        "spec": {"replicas": 1, "selector": {}, "template": {}},
        "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": available},
    }))
    .unwrap()
}

fn applied(available: i32) -> Applied {
    let mut deployments = BTreeMap::new();
    for c in Component::ALL {
        deployments.insert(c.deployment().to_string(), deployment(available));
    }
    Applied {
        deployments,
        changed: 0,
    }
}

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(s).unwrap()
}

fn find<'a>(st: &'a OperatorStatus, type_: &str) -> &'a Condition {
    conditions::find(&st.conditions, type_).unwrap()
}

#[test]
fn applied_hub_with_available_pods_is_healthy_and_stamped_with_the_generation() {
    let cm = cluster_manager("spec: {}");
    let v = validate(&cm).unwrap();
    let st = compute(
        &cm,
        &Outcome::Applied(&v, &applied(1), vec![]),
        InProcess::NOTHING,
        t(100),
    );
    assert_eq!(st.observed_generation, Some(3));
    for (type_, status, reason) in [
        (APPLIED, TRUE, "ClusterManagerApplied"),
        (PROGRESSING, FALSE, "ClusterManagerUpToDate"),
        (HUB_REGISTRATION_DEGRADED, FALSE, "RegistrationFunctional"),
        (HUB_PLACEMENT_DEGRADED, FALSE, "PlacementFunctional"),
        (VALID_FEATURE_GATES, TRUE, "FeatureGatesAllValid"),
    ] {
        let c = find(&st, type_);
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.observed_generation),
            (status, reason, Some(3)),
            "{type_}"
        );
    }
}

#[test]
fn no_available_pod_is_degraded_unless_the_component_runs_in_process() {
    let cm = cluster_manager("spec: {}");
    let v = validate(&cm).unwrap();
    let st = compute(
        &cm,
        &Outcome::Applied(&v, &applied(0), vec![]),
        InProcess::NOTHING,
        t(100),
    );
    assert_eq!(
        find(&st, HUB_PLACEMENT_DEGRADED).reason,
        "UnavailablePlacementPod"
    );
    assert_eq!(find(&st, HUB_REGISTRATION_DEGRADED).status, TRUE);
    let st = compute(
        &cm,
        &Outcome::Applied(&v, &applied(0), vec![]),
        InProcess::HUB_CONTROLLERS,
        t(100),
    );
    assert_eq!(find(&st, HUB_REGISTRATION_DEGRADED).status, FALSE);
    assert_eq!(
        find(&st, HUB_REGISTRATION_DEGRADED).reason,
        "RegistrationInProcess"
    );
    assert_eq!(
        find(&st, HUB_PLACEMENT_DEGRADED).reason,
        "PlacementInProcess"
    );
    assert_eq!(find(&st, HUB_PLACEMENT_DEGRADED).status, FALSE);
}

#[test]
fn transition_time_is_kept_while_the_status_holds() {
    let mut cm = cluster_manager("spec: {}");
    let v = validate(&cm).unwrap();
    cm.status = Some(compute(
        &cm,
        &Outcome::Applied(&v, &applied(1), vec![]),
        InProcess::NOTHING,
        t(100),
    ));
    let again = compute(
        &cm,
        &Outcome::Applied(&v, &applied(1), vec![]),
        InProcess::NOTHING,
        t(200),
    );
    assert_eq!(
        Some(&again),
        cm.status.as_ref(),
        "a steady hub writes nothing new"
    );
    let failed = compute(
        &cm,
        &Outcome::ApplyFailed(&v, "boom".into()),
        InProcess::NOTHING,
        t(300),
    );
    let c = find(&failed, APPLIED);
    assert_eq!(
        (
            c.status.as_str(),
            c.message.as_str(),
            c.last_transition_time.0.as_second()
        ),
        (FALSE, "boom", 300)
    );
    assert_eq!(
        find(&failed, PROGRESSING)
            .last_transition_time
            .0
            .as_second(),
        100
    );
}

#[test]
fn unknown_gates_and_invalid_specs_are_reported() {
    let cm = cluster_manager(
        "spec: {placementConfiguration: {featureGates: [{feature: Banana, mode: Enable}]}}",
    );
    let v = validate(&cm).unwrap();
    let st = compute(
        &cm,
        &Outcome::Applied(&v, &applied(1), vec![]),
        InProcess::NOTHING,
        t(1),
    );
    let c = find(&st, VALID_FEATURE_GATES);
    assert_eq!(
        (c.status.as_str(), c.message.as_str()),
        (FALSE, "Unknown feature gates: placement: Banana")
    );

    let cm = cluster_manager("spec: {deployOption: {mode: Hosted}}");
    let e = validate(&cm).unwrap_err();
    let st = compute(&cm, &Outcome::Invalid(&e), InProcess::NOTHING, t(1));
    assert_eq!(find(&st, APPLIED).reason, "UnsupportedDeployMode");
}
