//! The apply step: hands [`Desired`] to the shared apply engine (server-side apply, CRDs waited
//! on until Established, every failure collected) and keeps, typed, what the status step reads
//! from the result: the Deployments as the server returned them. Status is derived only from
//! what was applied, never from what was merely wanted.
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;

use super::desired::Desired;
use ocm_runtime::apply::{Applier, Change, Report};

/// Why applying failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The apply engine reported failures.
    #[error(transparent)]
    Apply(#[from] ocm_runtime::apply::Error),
    /// The server's answer for a Deployment did not parse.
    #[error("the server returned an unreadable Deployment {name}")]
    Decode {
        /// Deployment name.
        name: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
}

/// The outcome of a successful apply.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Deployments by name, as returned by the server (with their status).
    pub deployments: BTreeMap<String, Deployment>,
    /// How many objects were created or changed.
    pub changed: usize,
}

/// How long removing what the other admission mode left may take.
const REMOVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Applies every object of `desired`, and removes what it says the other admission mode left.
pub async fn apply(applier: &Applier, desired: &Desired) -> Result<Applied, Error> {
    let report: Report = applier.apply(desired.objects()).await?;
    let removed = ocm_runtime::apply::delete::delete_all(
        applier.resolver(),
        &desired.removed,
        REMOVE_TIMEOUT,
    )
    .await
    .map_err(|failures| ocm_runtime::apply::Error::Objects {
        failures,
        applied: report.applied.clone(),
    })?;
    let mut deployments = BTreeMap::new();
    for a in report
        .applied
        .iter()
        .filter(|a| a.object.kind == "Deployment")
    {
        let name = a.object.name.clone();
        let value = serde_json::to_value(&a.result).map_err(|source| Error::Decode {
            name: name.clone(),
            source,
        })?;
        let deployment = serde_json::from_value(value).map_err(|source| Error::Decode {
            name: name.clone(),
            source,
        })?;
        deployments.insert(name, deployment);
    }
    let changed = report
        .applied
        .iter()
        .filter(|a| a.change != Change::Unchanged)
        .count()
        + removed
            .iter()
            .filter(|(_, d)| *d == ocm_runtime::apply::delete::Deleted::Removed)
            .count();
    Ok(Applied {
        deployments,
        changed,
    })
}
