//! `init --wait`: waits (a watch, bounded by the timeout) until the ClusterManager reports the hub
//! ready — Applied for its current generation, registration and placement not degraded — and
//! otherwise names the condition that was not met, with its reason and message.
use std::time::Duration;

use kube::runtime::wait::await_condition;
use kube::{Api, Client};

use ocm_api::conditions::{self, APPLIED, FALSE, TRUE};
use ocm_api::operator::{
    CLUSTER_MANAGER_NAME, ClusterManager, HUB_PLACEMENT_DEGRADED, HUB_REGISTRATION_DEGRADED,
};
use ocm_runtime::error::UserError;

/// The first readiness requirement `cm` does not meet, in words; `None` when it is ready.
#[must_use]
pub fn unmet(cm: &ClusterManager) -> Option<String> {
    let generation = cm.metadata.generation;
    let list = cm
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    // Upstream's operator writes no observedGeneration on these conditions, only on the status.
    let status_generation = cm.status.as_ref().and_then(|s| s.observed_generation);
    for (type_, wanted) in [
        (APPLIED, TRUE),
        (HUB_REGISTRATION_DEGRADED, FALSE),
        (HUB_PLACEMENT_DEGRADED, FALSE),
    ] {
        let Some(c) = conditions::find(list, type_) else {
            return Some(format!(
                "condition {type_} is not reported yet (is the operator running?)"
            ));
        };
        let observed = c.observed_generation.or(status_generation);
        if observed.is_some() && observed != generation {
            return Some(format!(
                "condition {type_} describes generation {}, not the current {}",
                observed.unwrap_or_default(),
                generation.unwrap_or_default()
            ));
        }
        if c.status != wanted {
            return Some(format!(
                "condition {type_} is {} ({}: {})",
                c.status, c.reason, c.message
            ));
        }
    }
    None
}

/// Waits until the ClusterManager is Applied and its components are available.
pub async fn wait_ready(client: Client, timeout: Duration) -> anyhow::Result<()> {
    let api: Api<ClusterManager> = Api::all(client);
    let ready = |cm: Option<&ClusterManager>| cm.is_some_and(|cm| unmet(cm).is_none());
    match tokio::time::timeout(
        timeout,
        await_condition(api.clone(), CLUSTER_MANAGER_NAME, ready),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(anyhow::Error::new(e).context("watching the ClusterManager")),
        Err(_) => {
            let why = match api.get_opt(CLUSTER_MANAGER_NAME).await {
                Ok(Some(cm)) => unmet(&cm).unwrap_or_else(|| "it became ready just now".into()),
                Ok(None) => format!("ClusterManager {CLUSTER_MANAGER_NAME} does not exist"),
                Err(e) => format!("reading ClusterManager {CLUSTER_MANAGER_NAME} failed: {e}"),
            };
            Err(UserError::new(
                format!("the hub was not ready within {timeout:?}: {why}"),
                "see `kubectl get clustermanager cluster-manager -o yaml` and the pods in open-cluster-management-hub \
                 (in cluster-manager on the management cluster when hosted); \
                 a cluster where no pod can run needs `clusteradm init --in-process`",
            )
            .into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_manager::test_support::cluster_manager;

    fn with_conditions(list: &str) -> ClusterManager {
        let mut cm = cluster_manager("spec: {}");
        cm.status = Some(ocm_api::yaml::from_str(&format!("conditions: {list}")).unwrap());
        cm
    }

    const T: &str = "lastTransitionTime: '2026-01-01T00:00:00Z'";

    #[test]
    fn ready_needs_applied_for_this_generation_and_nothing_degraded() {
        let ok = format!(
            "[{{type: Applied, status: 'True', reason: A, message: m, observedGeneration: 3, {T}}},
              {{type: HubRegistrationDegraded, status: 'False', reason: R, message: m, observedGeneration: 3, {T}}},
              {{type: HubPlacementDegraded, status: 'False', reason: P, message: m, observedGeneration: 3, {T}}}]"
        );
        assert_eq!(unmet(&with_conditions(&ok)), None);
        let degraded = ok.replace(
            "status: 'False', reason: P",
            "status: 'True', reason: UnavailablePlacementPod",
        );
        assert_eq!(
            unmet(&with_conditions(&degraded)).unwrap(),
            "condition HubPlacementDegraded is True (UnavailablePlacementPod: m)"
        );
        let stale = ok.replacen("observedGeneration: 3", "observedGeneration: 2", 1);
        assert!(
            unmet(&with_conditions(&stale))
                .unwrap()
                .contains("generation 2, not the current 3")
        );
        assert!(
            unmet(&cluster_manager("spec: {}"))
                .unwrap()
                .contains("Applied is not reported yet")
        );
    }

    #[test]
    fn upstreams_conditions_without_a_generation_follow_the_status_one() {
        let upstream = ok_without_generations();
        let mut cm = with_conditions(&upstream);
        assert_eq!(unmet(&cm), None, "no generation anywhere: ready");
        cm.status.as_mut().unwrap().observed_generation = Some(2);
        assert!(
            unmet(&cm)
                .unwrap()
                .contains("generation 2, not the current 3")
        );
        cm.status.as_mut().unwrap().observed_generation = Some(3);
        assert_eq!(unmet(&cm), None);
    }

    fn ok_without_generations() -> String {
        format!(
            "[{{type: Applied, status: 'True', reason: A, message: m, {T}}},
              {{type: HubRegistrationDegraded, status: 'False', reason: R, message: m, {T}}},
              {{type: HubPlacementDegraded, status: 'False', reason: P, message: m, {T}}}]"
        )
    }
}
