//! Status: the Klusterlet's conditions, computed purely from what was validated, observed and
//! applied (reasons as upstream's), then written when they changed. Every condition carries the
//! generation it describes.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use super::InProcess;
use super::desired::{Agent, deployment_name};
use super::observe::SecretCheck;
use super::validate::Validated;
use ocm_api::conditions::{self, APPLIED, AVAILABLE, Condition, FALSE, TRUE};
use ocm_api::operator::{
    HUB_CONNECTION_DEGRADED, Klusterlet, REGISTRATION_DESIRED_DEGRADED, WORK_DESIRED_DEGRADED,
};

/// Everything the conditions are computed from.
pub struct Inputs<'a> {
    /// The validated Klusterlet.
    pub validated: &'a Validated,
    /// The Deployments as applied, or why applying failed.
    pub applied: &'a Result<Vec<Deployment>, String>,
    /// The bootstrap secret's check.
    pub bootstrap: &'a SecretCheck,
    /// The hub kubeconfig secret's check.
    pub hub_kubeconfig: &'a SecretCheck,
    /// Agents running in this process.
    pub in_process: InProcess,
}

fn cond(
    type_: &str,
    ok: bool,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: &Time,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: if ok { TRUE } else { FALSE }.into(),
        reason: reason.into(),
        message,
        last_transition_time: now.clone(),
        observed_generation: generation,
    }
}

fn secret_reason(prefix: &str, check: &SecretCheck) -> (String, Option<String>) {
    let (suffix, detail) = match check {
        SecretCheck::Missing => ("Missing", None),
        SecretCheck::Error(e) => ("Error", Some(e.clone())),
        SecretCheck::Unauthorized => ("Unauthorized", None),
        SecretCheck::Functional => ("Functional", None),
    };
    (format!("{prefix}{suffix}"), detail)
}

/// upstream's HubConnectionDegraded: False (HubConnectionFunctional) once the hub kubeconfig
/// works; otherwise True with both secrets' states, e.g.
/// `BootstrapSecretFunctional,HubKubeConfigSecretMissing`.
fn hub_connection(bootstrap: &SecretCheck, hub: &SecretCheck) -> (bool, String, String) {
    if *hub == SecretCheck::Functional {
        return (
            false,
            "HubConnectionFunctional".into(),
            "the hub kubeconfig authenticates to the hub".into(),
        );
    }
    let (b, b_detail) = secret_reason("BootstrapSecret", bootstrap);
    let (h, h_detail) = secret_reason("HubKubeConfigSecret", hub);
    let details: Vec<String> = [b_detail, h_detail].into_iter().flatten().collect();
    let message = if details.is_empty() {
        format!("bootstrap secret: {b}; hub kubeconfig secret: {h}")
    } else {
        details.join("; ")
    };
    (true, format!("{b},{h}"), message)
}

/// `(degraded, reason, message)` of one agent.
fn agent_state(
    v: &Validated,
    agent: Agent,
    in_process: bool,
    applied: &Result<Vec<Deployment>, String>,
) -> (bool, &'static str, String) {
    if in_process {
        return (
            false,
            "InProcess",
            "the agent runs in the operator's process".into(),
        );
    }
    let name = deployment_name(v, agent);
    let Ok(deployments) = applied else {
        return (
            true,
            "GetDeploymentFailed",
            format!("deployment {name} was not applied"),
        );
    };
    let Some(d) = deployments
        .iter()
        .find(|d| d.metadata.name.as_deref() == Some(name.as_str()))
    else {
        return (
            true,
            "GetDeploymentFailed",
            format!("deployment {name} is missing"),
        );
    };
    let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let available = d
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if available >= want {
        (
            false,
            "DeploymentsFunctional",
            format!("deployment {name} is available"),
        )
    } else {
        (
            true,
            "UnavailablePods",
            format!("deployment {name}: {available} of {want} pods available"),
        )
    }
}

/// The conditions for these inputs, stamped `now`.
#[must_use]
pub fn conditions(i: &Inputs<'_>, now: &Time) -> Vec<Condition> {
    let g = i.validated.generation;
    let (applied_ok, applied_reason, applied_msg) = match i.applied {
        Ok(_) => (
            true,
            "KlusterletApplied",
            "the agents' resources are applied".to_string(),
        ),
        Err(e) => (false, "KlusterletApplyFailed", e.clone()),
    };
    let (hub_degraded, hub_reason, hub_msg) = hub_connection(i.bootstrap, i.hub_kubeconfig);
    let reg = agent_state(
        i.validated,
        Agent::Registration,
        i.in_process.registration,
        i.applied,
    );
    let work = agent_state(i.validated, Agent::Work, i.in_process.work, i.applied);
    let available = applied_ok && !reg.0 && !work.0;
    let (avail_reason, avail_msg) = if available {
        (
            "KlusterletAvailable",
            "the agents are available".to_string(),
        )
    } else if applied_ok {
        (
            "NoAvailablePods",
            [&reg, &work]
                .iter()
                .filter(|s| s.0)
                .map(|s| s.2.clone())
                .collect::<Vec<_>>()
                .join("; "),
        )
    } else {
        (applied_reason, applied_msg.clone())
    };
    vec![
        cond(APPLIED, applied_ok, applied_reason, applied_msg, g, now),
        cond(
            HUB_CONNECTION_DEGRADED,
            hub_degraded,
            &hub_reason,
            hub_msg,
            g,
            now,
        ),
        cond(REGISTRATION_DESIRED_DEGRADED, reg.0, reg.1, reg.2, g, now),
        cond(WORK_DESIRED_DEGRADED, work.0, work.1, work.2, g, now),
        cond(AVAILABLE, available, avail_reason, avail_msg, g, now),
    ]
}

/// Conditions of a Klusterlet that cannot be acted on (invalid spec, Hosted without the managed
/// cluster's kubeconfig).
#[must_use]
pub fn blocked(
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: &Time,
) -> Vec<Condition> {
    vec![
        cond(APPLIED, false, reason, message.clone(), generation, now),
        cond(AVAILABLE, false, reason, message, generation, now),
    ]
}

/// Upstream's Hosted-mode condition `ReadyToApply`: whether the operator can build clients of
/// the managed cluster from the external managed kubeconfig (`failure`, if not).
#[must_use]
pub fn ready_to_apply(failure: Option<&str>, generation: Option<i64>, now: &Time) -> Condition {
    match failure {
        Some(why) => cond(
            READY_TO_APPLY,
            false,
            "KlusterletPrepareFailed",
            format!("Failed to build managed cluster clients: {why}"),
            generation,
            now,
        ),
        None => cond(
            READY_TO_APPLY,
            true,
            "KlusterletPrepared",
            "Klusterlet is ready to apply".into(),
            generation,
            now,
        ),
    }
}

/// Upstream's condition type of [`ready_to_apply`].
pub const READY_TO_APPLY: &str = "ReadyToApply";

/// Merges `new` into the Klusterlet's conditions and writes the status when anything changed.
pub async fn update(
    api: &Api<Klusterlet>,
    k: &Klusterlet,
    new: Vec<Condition>,
) -> kube::Result<()> {
    let status = k.status.clone().unwrap_or_default();
    let mut list = status.conditions.clone();
    let mut changed = false;
    for c in new {
        changed |= conditions::set(&mut list, c);
    }
    let generation = k.metadata.generation;
    if !changed && status.observed_generation == generation {
        return Ok(());
    }
    let name = k.metadata.name.clone().unwrap_or_default();
    let patch = json!({"status": {"observedGeneration": generation, "conditions": list}});
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Unit tests of the conditions, from fixtures.
    use k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::klusterlet::validate::{test_support::klusterlet, validate};

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
}
