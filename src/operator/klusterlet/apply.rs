//! Apply: the desired objects through the shared apply engine, to the managed cluster and to
//! where the agents run (one cluster outside Hosted modes). Returns the Deployments as the server
//! returned them, so status derives only from what was applied.
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::Client;

use super::build::Desired;
use crate::apply::{Applier, Report};

/// How long a CRD may take to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);

/// Applies `desired`; `management` is the operator's cluster, `managed` the managed cluster (the
/// same one outside Hosted modes). The error is a message for the Applied condition.
pub async fn apply(
    management: &Client,
    managed: &Client,
    hosted: bool,
    desired: &Desired,
) -> Result<Vec<Deployment>, String> {
    let report = if hosted {
        let managed_report = Applier::new(managed.clone(), CRD_TIMEOUT)
            .apply(desired.managed.to_dynamic())
            .await
            .map_err(|e| format!("on the managed cluster: {e}"))?;
        let mut report = Applier::new(management.clone(), CRD_TIMEOUT)
            .apply(desired.management.to_dynamic())
            .await
            .map_err(|e| format!("on the management cluster: {e}"))?;
        report.applied.extend(managed_report.applied);
        report
    } else {
        let mut objects = desired.managed.to_dynamic();
        objects.extend(desired.management.to_dynamic());
        Applier::new(management.clone(), CRD_TIMEOUT)
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
