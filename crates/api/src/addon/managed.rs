//! The ManagedClusterAddOn kind: one add-on on one managed cluster, in the cluster's namespace.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AddOnConfig, AddOnMeta, ConfigCoordinates, ConfigSpecHash};
use crate::conditions::Condition;
use crate::operator::AddOnAuthType;

/// An add-on enabled on one managed cluster.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ManagedClusterAddOn"
)]
#[kube(doc = "An add-on enabled on the managed cluster named by this object's namespace.")]
#[kube(
    namespaced,
    status = "ManagedClusterAddOnStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[kube(shortname = "mca", shortname = "mcas")]
#[kube(
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Available\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Degraded", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Degraded\")].status"}"#
)]
#[kube(
    printcolumn = r#"{"name": "Progressing", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Progressing\")].status"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnSpec {
    /// Namespace on the managed cluster the agent is installed into.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "open-cluster-management-agent-addon"), length(max = 63), pattern(crate::schema::DNS_LABEL))]
    pub install_namespace: Option<String>,
    /// Configs for this cluster, overriding the defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<AddOnConfig>,
}

impl ManagedClusterAddOn {
    /// Where the add-on's agent runs on the managed cluster: the hub's word in the status, else
    /// the spec, else upstream's default.
    #[must_use]
    pub fn install_namespace(&self) -> String {
        self.status
            .as_ref()
            .and_then(|s| s.namespace.clone())
            .or_else(|| self.spec.install_namespace.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| super::DEFAULT_INSTALL_NAMESPACE.to_string())
    }

    /// Whether the add-on holds `finalizer`.
    #[must_use]
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.metadata
            .finalizers
            .as_ref()
            .is_some_and(|all| all.iter().any(|f| f == finalizer))
    }

    /// The add-on's finalizers with `finalizer` (last) or without it.
    #[must_use]
    pub fn finalizers_with(&self, finalizer: &str, present: bool) -> Vec<String> {
        let mut finalizers: Vec<String> = self
            .metadata
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != finalizer)
            .cloned()
            .collect();
        if present {
            finalizers.push(finalizer.into());
        }
        finalizers
    }

    /// The cluster whose node runs the agent when the add-on is Hosted
    /// ([`super::HOSTING_CLUSTER_ANNOTATION`], not empty); `None` in Default mode.
    #[must_use]
    pub fn hosting_cluster(&self) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()?
            .get(super::HOSTING_CLUSTER_ANNOTATION)
            .map(String::as_str)
            .filter(|c| !c.is_empty())
    }
}

/// Observed state of an add-on on a cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnStatus {
    /// Current conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::conditions::schema")]
    pub conditions: Vec<Condition>,
    /// Objects that make up the add-on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_objects: Vec<ObjectReference>,
    /// Display name and description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,
    /// Legacy single config (deprecated upstream).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_configuration: Option<ConfigCoordinates>,
    /// Config kinds the add-on accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["group", "resource"]))]
    pub supported_configs: Vec<ConfigGroupResource>,
    /// Configs in effect and their rollout state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_references: Vec<ConfigReference>,
    /// Namespace the agent runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Hub credentials the agent needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registrations: Vec<RegistrationConfig>,
    /// How add-on health is judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<HealthCheck>,
    /// How the agent's kube client credential is obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_client_driver: Option<AddOnAuthType>,
}

/// An object by group, resource, namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API group.
    pub group: String,
    /// Resource (plural).
    pub resource: String,
    /// Namespace, if namespaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// A config kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigGroupResource {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
}

/// A config in effect on the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReference {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Resource (plural).
    #[schemars(length(min = 1))]
    pub resource: String,
    /// Namespace (empty when cluster-scoped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Generation of the object last seen (legacy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_observed_generation: Option<i64>,
    /// Wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
    /// Last applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,
}

/// A credential the add-on agent needs from the hub.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationConfig {
    /// Signer of the client certificate.
    #[schemars(
        length(min = 5, max = 571),
        pattern(r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,
    /// Identity in the certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
}

/// Certificate subject.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// User name (CN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Groups (O).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Organizational units (OU).
    #[serde(
        rename = "organizationUnit",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub organization_units: Vec<String>,
}

/// How add-on health is judged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// Health source.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Lease"))]
    pub mode: Option<HealthCheckMode>,
}

/// Source of add-on health.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HealthCheckMode {
    /// The agent renews a lease.
    #[default]
    Lease,
    /// The add-on manager decides.
    Customized,
}
