//! Build (pure): from a validated Klusterlet to the typed objects that make its agents, split by
//! the cluster they belong on. One file per kind of object; no I/O, so every mode is unit-tested.
//!
//! - managed cluster: the managed CRDs, the agents' ClusterRoles and bindings (and, Hosted, the
//!   agents' namespace and identities there);
//! - management cluster (the managed cluster itself outside Hosted modes): the agent namespace,
//!   the agents' ServiceAccounts, Roles and Deployments.
mod crd;
mod deployment;
mod namespace;
mod rbac;
mod service_account;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::DynamicObject;

use super::InProcess;
use super::validate::Validated;
use crate::apply::to_dynamic;

pub use rbac::{registration_cluster_role, work_cluster_role, work_execution_cluster_role};

/// Label on every object built for a Klusterlet, naming it (for watches and cleanup).
pub const KLUSTERLET_LABEL: &str = "operator.open-cluster-management.io/klusterlet";

/// Objects for one cluster, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Objects {
    /// Namespaces.
    pub namespaces: Vec<Namespace>,
    /// CustomResourceDefinitions.
    pub crds: Vec<CustomResourceDefinition>,
    /// ServiceAccounts.
    pub service_accounts: Vec<ServiceAccount>,
    /// ClusterRoles.
    pub cluster_roles: Vec<ClusterRole>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// Roles.
    pub roles: Vec<Role>,
    /// RoleBindings.
    pub role_bindings: Vec<RoleBinding>,
    /// Deployments.
    pub deployments: Vec<Deployment>,
}

impl Objects {
    /// Every object, as the apply engine takes them (it orders them by kind).
    #[must_use]
    pub fn to_dynamic(&self) -> Vec<DynamicObject> {
        let mut out: Vec<DynamicObject> = Vec::new();
        out.extend(self.namespaces.iter().map(to_dynamic));
        out.extend(self.crds.iter().map(to_dynamic));
        out.extend(self.service_accounts.iter().map(to_dynamic));
        out.extend(self.cluster_roles.iter().map(to_dynamic));
        out.extend(self.cluster_role_bindings.iter().map(to_dynamic));
        out.extend(self.roles.iter().map(to_dynamic));
        out.extend(self.role_bindings.iter().map(to_dynamic));
        out.extend(self.deployments.iter().map(to_dynamic));
        out
    }
}

/// What a Klusterlet should produce.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    /// Objects on the managed cluster.
    pub managed: Objects,
    /// Objects where the agents run: the management cluster (Hosted) or the managed cluster.
    pub management: Objects,
}

/// Metadata of a built object: its name, namespace and [`KLUSTERLET_LABEL`].
fn meta(v: &Validated, name: &str, namespace: Option<&str>) -> kube::api::ObjectMeta {
    kube::api::ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(std::collections::BTreeMap::from([(
            KLUSTERLET_LABEL.to_string(),
            v.name.clone(),
        )])),
        ..Default::default()
    }
}

/// The name of a Deployment of an agent, for status.
#[must_use]
pub fn deployment_name(v: &Validated, agent: Agent) -> String {
    match (v.singleton, agent) {
        (true, _) => format!("{}-agent", v.name),
        (false, Agent::Registration) => format!("{}-registration-agent", v.name),
        (false, Agent::Work) => format!("{}-work-agent", v.name),
    }
}

/// One of the two agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Registers the cluster and keeps its hub credential.
    Registration,
    /// Applies ManifestWorks.
    Work,
}

/// Builds everything a Klusterlet should produce. Agents that run in this process get no
/// ServiceAccount and no Deployment; in Singleton modes the combined agent is deployed only when
/// neither agent runs in this process.
#[must_use]
pub fn build(v: &Validated, in_process: InProcess) -> Desired {
    let mut managed = Objects {
        crds: crd::managed(),
        ..Objects::default()
    };
    let mut management = Objects::default();
    management
        .namespaces
        .push(namespace::namespace(v, &v.agent_namespace));
    let deployed = service_account::deployed_agents(v, in_process);
    management.service_accounts = service_account::agents(v, &v.agent_namespace, &deployed);
    if v.hosted {
        // The agents' identities on the managed cluster, which the managed-side bindings name.
        managed
            .namespaces
            .push(namespace::namespace(v, &v.managed_namespace));
        managed.service_accounts = service_account::agents(v, &v.managed_namespace, &deployed);
    }
    let subjects_namespace = if v.hosted {
        &v.managed_namespace
    } else {
        &v.agent_namespace
    };
    (managed.cluster_roles, managed.cluster_role_bindings) = rbac::managed(v, subjects_namespace);
    (management.roles, management.role_bindings) = rbac::management(v);
    let (role, binding) = rbac::addon_management(v);
    management.cluster_roles.push(role);
    management.cluster_role_bindings.push(binding);
    management.deployments = deployment::agents(v, &deployed);
    Desired {
        managed,
        management,
    }
}

#[cfg(test)]
mod tests;
