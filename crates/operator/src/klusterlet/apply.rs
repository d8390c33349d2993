//! Apply: the desired objects through the shared apply engine, to the managed cluster and to
//! where the agents run (one cluster outside Hosted modes). Returns the Deployments as the server
//! returned them, so status derives only from what was applied.
use k8s_openapi::api::apps::v1::Deployment;

use super::desired::Desired;
use ocm_runtime::apply::{Applier, Report};

/// Where the objects go: the operator's cluster, and in Hosted modes the managed cluster.
pub struct Targets<'a> {
    /// The cluster the operator runs against (where the agents run).
    pub management: &'a Applier,
    /// The managed cluster, when it is another one (Hosted modes).
    pub managed: Option<&'a Applier>,
}

/// Applies `desired`. The error is a message for the Applied condition.
pub async fn apply(targets: &Targets<'_>, desired: &Desired) -> Result<Vec<Deployment>, String> {
    let report = if let Some(managed) = targets.managed {
        let managed_report = managed
            .apply(desired.managed_objects())
            .await
            .map_err(|e| format!("on the managed cluster: {e}"))?;
        let mut report = targets
            .management
            .apply(desired.management_objects())
            .await
            .map_err(|e| format!("on the management cluster: {e}"))?;
        report.applied.extend(managed_report.applied);
        report
    } else {
        let mut objects = desired.managed_objects();
        objects.extend(desired.management_objects());
        targets
            .management
            .apply(objects)
            .await
            .map_err(|e| e.to_string())?
    };
    Ok(deployments(&report))
}

fn deployments(report: &Report) -> Vec<Deployment> {
    report
        .applied
        .iter()
        .filter(|a| a.object.kind == "Deployment")
        .filter_map(|a| serde_json::to_value(&a.result).ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}
