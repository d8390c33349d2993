//! The status step: conditions computed purely from the outcome of a reconcile ([`compute`]),
//! then written with server-side apply on the status subresource ([`write()`](fn@write)).
//!
//! Conditions (each with `observedGeneration`): `Applied`, `Progressing`,
//! `HubRegistrationDegraded`, `HubPlacementDegraded`, `ValidFeatureGates`. A component running in
//! this process is healthy while the process runs; a deployed one is healthy when its Deployment
//! has an available replica.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};

use super::InProcess;
use super::apply::Applied;
use super::desired::Component;
use super::validate::{self, Validated};
use ocm_api::conditions::{self, APPLIED, Condition, FALSE, PROGRESSING, TRUE};
use ocm_api::names::HUB_NAMESPACE;
use ocm_api::operator::{
    ClusterManager, HUB_PLACEMENT_DEGRADED, HUB_REGISTRATION_DEGRADED, OperatorStatus,
    RelatedResourceMeta, VALID_FEATURE_GATES,
};

/// Why the status could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing the status of ClusterManager {name} failed")]
pub struct Error {
    /// The ClusterManager.
    pub name: String,
    /// Cause.
    #[source]
    pub source: kube::Error,
}

/// How a reconcile ended.
#[derive(Debug)]
pub enum Outcome<'a> {
    /// The spec is unusable.
    Invalid(&'a validate::Error),
    /// The spec was fine but applying failed.
    ApplyFailed(&'a Validated, String),
    /// Everything was applied.
    Applied(&'a Validated, &'a Applied, Vec<RelatedResourceMeta>),
}

/// The status after `outcome`, starting from the current one (transition times are kept for
/// conditions whose status did not change).
#[must_use]
pub fn compute(
    cm: &ClusterManager,
    outcome: &Outcome<'_>,
    in_process: InProcess,
    now: Timestamp,
) -> OperatorStatus {
    let mut status = cm.status.clone().unwrap_or_default();
    let generation = cm.metadata.generation;
    status.observed_generation = generation;
    let mut set = |type_: &str, ok: bool, reason: &str, message: String| {
        conditions::set(
            &mut status.conditions,
            Condition {
                type_: type_.into(),
                status: if ok { TRUE } else { FALSE }.into(),
                reason: reason.into(),
                message,
                last_transition_time: Time(now),
                observed_generation: generation,
            },
        );
    };
    let validated = match outcome {
        Outcome::Invalid(e) => {
            set(APPLIED, false, e.reason(), e.to_string());
            None
        }
        Outcome::ApplyFailed(v, message) => {
            set(APPLIED, false, "ClusterManagerApplyFailed", message.clone());
            Some(*v)
        }
        Outcome::Applied(v, applied, _) => {
            set(
                APPLIED,
                true,
                "ClusterManagerApplied",
                "Components of cluster manager are applied".into(),
            );
            let rolling: Vec<&str> = applied
                .deployments
                .iter()
                .filter(|(_, d)| rolling(d))
                .map(|(n, _)| n.as_str())
                .collect();
            if rolling.is_empty() {
                set(
                    PROGRESSING,
                    false,
                    "ClusterManagerUpToDate",
                    "Components of cluster manager are up to date".into(),
                );
            } else {
                set(
                    PROGRESSING,
                    true,
                    "ClusterManagerDeploymentRolling",
                    format!("Deployments rolling out: {}", rolling.join(", ")),
                );
            }
            for (type_, component, name) in [
                (
                    HUB_REGISTRATION_DEGRADED,
                    Component::RegistrationController,
                    "Registration",
                ),
                (
                    HUB_PLACEMENT_DEGRADED,
                    Component::PlacementController,
                    "Placement",
                ),
            ] {
                let (degraded, reason, message) = health(component, name, applied, in_process);
                set(type_, degraded, &reason, message);
            }
            Some(*v)
        }
    };
    if let Some(v) = validated {
        if v.invalid_gates.is_empty() {
            // Known to upstream, so valid; but said when our components run them and would not
            // honour one (upstream's e2e suite switches ClusterImporter on and needs this True).
            let ours = in_process.registration || in_process.hub_deployment;
            let unhonoured = v.unhonoured_gates(ours, in_process.hub_deployment);
            let message = if unhonoured.is_empty() {
                "Feature gates are all valid".to_string()
            } else {
                format!("Feature gates are all valid; {}", unhonoured.join("; "))
            };
            set(VALID_FEATURE_GATES, true, "FeatureGatesAllValid", message);
        } else {
            set(
                VALID_FEATURE_GATES,
                false,
                "InvalidFeatureGatesExisting",
                format!("Unknown feature gates: {}", v.invalid_gates.join(", ")),
            );
        }
    }
    if let Outcome::Applied(_, _, related) = outcome {
        status.related_resources.clone_from(related);
    }
    status
}

/// Whether a Deployment has not finished rolling out its current spec.
fn rolling(d: &Deployment) -> bool {
    let Some(s) = &d.status else { return true };
    let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    s.observed_generation < d.metadata.generation || s.updated_replicas.unwrap_or(0) < wanted
}

/// `(degraded, reason, message)` of a component.
fn health(
    c: Component,
    name: &str,
    applied: &Applied,
    in_process: InProcess,
) -> (bool, String, String) {
    if c.is_webhook() && !c.deployed(in_process) {
        return (
            false,
            format!("{name}ReplacedByAdmissionPolicy"),
            "The API server enforces the hub's admission rules itself (ValidatingAdmissionPolicies); no webhook is deployed".into(),
        );
    }
    if in_process.hub_deployment && !c.is_webhook() {
        return deployment_health(name, super::desired::hub::NAME, applied);
    }
    if !c.deployed(in_process) {
        return (
            false,
            format!("{name}InProcess"),
            format!(
                "The {} runs in the operator process",
                c.deployment().trim_start_matches("cluster-manager-")
            ),
        );
    }
    deployment_health(name, c.deployment(), applied)
}

/// `(degraded, reason, message)` of a component run by Deployment `deployment`.
fn deployment_health(name: &str, deployment: &str, applied: &Applied) -> (bool, String, String) {
    let Some(d) = applied.deployments.get(deployment) else {
        return (
            true,
            format!("Get{name}DeploymentFailed"),
            format!("Deployment {HUB_NAMESPACE}/{deployment} is missing"),
        );
    };
    let available = d
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    // The hub namespace, or a hosted hub's on the management cluster.
    let namespace = d.metadata.namespace.as_deref().unwrap_or(HUB_NAMESPACE);
    if available > 0 {
        (
            false,
            format!("{name}Functional"),
            format!(
                "{available} of {wanted} pods of Deployment {namespace}/{deployment} are available"
            ),
        )
    } else {
        (
            true,
            format!("Unavailable{name}Pod"),
            format!("0 of {wanted} pods of Deployment {namespace}/{deployment} are available"),
        )
    }
}

/// Writes `status` to the ClusterManager `name` (server-side apply on the status subresource).
pub async fn write(client: &Client, name: &str, status: &OperatorStatus) -> Result<(), Error> {
    let api: Api<ClusterManager> = Api::all(client.clone());
    let body = serde_json::json!({
        "apiVersion": "operator.open-cluster-management.io/v1",
        "kind": "ClusterManager",
        "status": status,
    });
    api.patch_status(
        name,
        &PatchParams::apply(ocm_runtime::FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map(|_| ())
    .map_err(|source| Error {
        name: name.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    //! Unit tests of the status step.
    use std::collections::BTreeMap;

    use super::*;
    use crate::cluster_manager::test_support::cluster_manager;
    use crate::cluster_manager::validate::validate;

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

        // Valid, but said when our components would not honour it.
        let cm = cluster_manager(
            "spec: {registrationConfiguration: {featureGates: [{feature: ClusterImporter, mode: Enable}]}}",
        );
        let v = validate(&cm).unwrap();
        let outcome = Outcome::Applied(&v, &applied(1), vec![]);
        let ours = compute(&cm, &outcome, InProcess::HUB_CONTROLLERS, t(1));
        let c = find(&ours, VALID_FEATURE_GATES);
        assert_eq!(c.status, TRUE);
        assert!(
            c.message.contains(
                "ClusterImporter=true is not honoured by this project's hub registration"
            ),
            "{}",
            c.message
        );
        let upstream = compute(&cm, &outcome, InProcess::NOTHING, t(1));
        assert_eq!(
            find(&upstream, VALID_FEATURE_GATES).message,
            "Feature gates are all valid"
        );

        // Upstream's chart switches the placement debug server on: served by our hub pods, named
        // in process and with upstream's component images (this operator adds no sidecar).
        let cm = cluster_manager(
            "spec: {placementConfiguration: {featureGates: [{feature: PlacementDebugServer, mode: Enable}]}}",
        );
        let v = validate(&cm).unwrap();
        let outcome = Outcome::Applied(&v, &applied(1), vec![]);
        for in_process in [InProcess::HUB_CONTROLLERS, InProcess::NOTHING] {
            let c = find(
                &compute(&cm, &outcome, in_process, t(1)),
                VALID_FEATURE_GATES,
            )
            .clone();
            assert_eq!(c.status, TRUE);
            assert!(
                c.message
                    .contains("PlacementDebugServer=true is not honoured"),
                "{}",
                c.message
            );
        }
        let pods = compute(&cm, &outcome, InProcess::HUB_DEPLOYMENT, t(1));
        assert_eq!(
            find(&pods, VALID_FEATURE_GATES).message,
            "Feature gates are all valid"
        );

        let cm = cluster_manager("spec: {deployOption: {mode: Hosted}}");
        let e = validate(&cm).unwrap_err();
        let st = compute(&cm, &Outcome::Invalid(&e), InProcess::NOTHING, t(1));
        assert_eq!(find(&st, APPLIED).reason, "UnsupportedDeployMode");
    }
}
