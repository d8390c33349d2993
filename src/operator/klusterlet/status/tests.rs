//! Unit tests of the conditions, from fixtures.
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::operator::klusterlet::validate::{test_support::klusterlet, validate};

fn deployment(name: &str, available: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name}, "spec": {"replicas": 1, "selector": {}, "template": {}},
        "status": {"availableReplicas": available}
    }))
    .unwrap()
}

fn run(
    applied: &Result<Vec<Deployment>, String>,
    bootstrap: &SecretCheck,
    hub: &SecretCheck,
    in_process: InProcess,
) -> Vec<Condition> {
    let v = validate(&klusterlet("clusterName: c1")).unwrap();
    let now = Time(Timestamp::from_second(100).unwrap());
    conditions(
        &Inputs {
            validated: &v,
            applied,
            bootstrap,
            hub_kubeconfig: hub,
            in_process,
        },
        &now,
    )
}

fn get<'a>(list: &'a [Condition], t: &str) -> &'a Condition {
    conditions::find(list, t).unwrap()
}

#[test]
fn fresh_join_is_applied_but_not_yet_connected() {
    let applied = Ok(vec![
        deployment("klusterlet-registration-agent", 0),
        deployment("klusterlet-work-agent", 0),
    ]);
    let c = run(
        &applied,
        &SecretCheck::Functional,
        &SecretCheck::Missing,
        InProcess::default(),
    );
    assert_eq!(get(&c, APPLIED).status, TRUE);
    assert_eq!(get(&c, APPLIED).observed_generation, Some(2));
    let hub = get(&c, HUB_CONNECTION_DEGRADED);
    assert_eq!(
        (hub.status.as_str(), hub.reason.as_str()),
        (TRUE, "BootstrapSecretFunctional,HubKubeConfigSecretMissing")
    );
    assert_eq!(
        get(&c, REGISTRATION_DESIRED_DEGRADED).reason,
        "UnavailablePods"
    );
    assert_eq!(get(&c, AVAILABLE).status, FALSE);
    assert_eq!(get(&c, AVAILABLE).reason, "NoAvailablePods");
}

#[test]
fn everything_up_is_available() {
    let applied = Ok(vec![
        deployment("klusterlet-registration-agent", 1),
        deployment("klusterlet-work-agent", 1),
    ]);
    let c = run(
        &applied,
        &SecretCheck::Unauthorized,
        &SecretCheck::Functional,
        InProcess::default(),
    );
    assert_eq!(
        get(&c, HUB_CONNECTION_DEGRADED).reason,
        "HubConnectionFunctional"
    );
    assert_eq!(get(&c, HUB_CONNECTION_DEGRADED).status, FALSE);
    assert_eq!(
        get(&c, WORK_DESIRED_DEGRADED).reason,
        "DeploymentsFunctional"
    );
    assert_eq!(get(&c, AVAILABLE).status, TRUE);
}

#[test]
fn in_process_agents_are_not_degraded_and_failures_are_reported() {
    let c = run(
        &Ok(vec![]),
        &SecretCheck::Unauthorized,
        &SecretCheck::Missing,
        InProcess {
            registration: true,
            work: true,
        },
    );
    assert_eq!(get(&c, REGISTRATION_DESIRED_DEGRADED).reason, "InProcess");
    assert_eq!(
        get(&c, HUB_CONNECTION_DEGRADED).reason,
        "BootstrapSecretUnauthorized,HubKubeConfigSecretMissing"
    );
    let c = run(
        &Err("boom".into()),
        &SecretCheck::Error("x".into()),
        &SecretCheck::Missing,
        InProcess::default(),
    );
    assert_eq!(get(&c, APPLIED).status, FALSE);
    assert_eq!(get(&c, APPLIED).message, "boom");
    assert_eq!(
        get(&c, HUB_CONNECTION_DEGRADED).reason,
        "BootstrapSecretError,HubKubeConfigSecretMissing"
    );
    assert_eq!(get(&c, AVAILABLE).reason, "KlusterletApplyFailed");
}
