//! The agents' ServiceAccounts, and which agent workloads are deployed at all.
use k8s_openapi::api::core::v1::ServiceAccount;

use super::meta;
use crate::klusterlet::InProcess;
use crate::klusterlet::aws_irsa::ROLE_ANNOTATION;
use crate::klusterlet::validate::Validated;

/// An agent workload: a Deployment with its own ServiceAccount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `<k>-registration-agent`.
    Registration,
    /// `<k>-work-agent`.
    Work,
    /// `<k>-agent`: both agents in one (Singleton modes).
    Singleton,
}

/// The workloads to deploy: those whose agents do not run in this process.
#[must_use]
pub fn deployed_agents(v: &Validated, in_process: InProcess) -> Vec<Workload> {
    if v.singleton {
        return if in_process.registration || in_process.work {
            vec![]
        } else {
            vec![Workload::Singleton]
        };
    }
    let mut out = Vec::new();
    if !in_process.registration {
        out.push(Workload::Registration);
    }
    if !in_process.work {
        out.push(Workload::Work);
    }
    out
}

/// The ServiceAccount name of a workload (upstream's).
#[must_use]
pub fn name(v: &Validated, w: Workload) -> String {
    match w {
        Workload::Registration => format!("{}-registration-sa", v.name),
        Workload::Work => format!("{}-work-sa", v.name),
        Workload::Singleton => format!("{}-agent-sa", v.name),
    }
}

/// The ServiceAccounts of the deployed workloads, in `namespace`. On the managed cluster, with
/// AWS IRSA, each names the IAM role EKS gives its pods, as upstream's operator annotates them.
pub(super) fn agents(
    v: &Validated,
    namespace: &str,
    deployed: &[Workload],
    managed_side: bool,
) -> Vec<ServiceAccount> {
    let role = v.aws_irsa.as_ref().filter(|_| managed_side).map(|irsa| {
        std::collections::BTreeMap::from([(ROLE_ANNOTATION.to_owned(), irsa.role_arn())])
    });
    deployed
        .iter()
        .map(|w| {
            let mut metadata = meta(v, &name(v, *w), Some(namespace));
            metadata.annotations.clone_from(&role);
            ServiceAccount {
                metadata,
                ..Default::default()
            }
        })
        .collect()
}
