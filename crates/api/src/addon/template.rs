//! The AddOnTemplate kind: an add-on defined by data alone — the manifests its agent needs on each
//! managed cluster and the hub identities it registers — which the hub's add-on manager turns into
//! one ManifestWork per cluster and the ManagedClusterAddOn's registrations.
use kube::{CustomResource, ResourceExt as _};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Subject;
use crate::work::{FeedbackRule, ManifestWorkSpec, ResourceIdentifier};

/// Resource name of AddOnTemplates, as ClusterManagementAddOns name them in `supportedConfigs`.
pub const ADDON_TEMPLATES: &str = "addontemplates";

/// AddOnTemplate annotation choosing how the hub judges the add-on's health (this project's
/// extension: upstream's templates always use [`HealthProber::WorkloadAvailability`], while its
/// code add-ons choose among the same probers).
pub const HEALTH_PROBER_ANNOTATION: &str = "clusteradm-rs.io/health-prober";

/// AddOnTemplate annotation with the [`HealthProber::WorkField`] prober's fields: a YAML list of
/// [`ProbeField`]s (this project's extension, as [`HEALTH_PROBER_ANNOTATION`]). Placeholders are
/// filled in as in the manifests.
pub const HEALTH_PROBE_FIELDS_ANNOTATION: &str = "clusteradm-rs.io/health-probe-fields";

/// One field of the `WorkField` prober: upstream's `agent.ProbeField` (which status of which
/// object the work agent feeds back) and, in place of its Go health-check function, a CEL
/// expression over the fed-back values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProbeField {
    /// The object, as the deploy work's manifest names it.
    pub resource_identifier: ResourceIdentifier,
    /// What to feed back from it.
    pub probe_rules: Vec<FeedbackRule>,
    /// CEL over the fed-back values, each a variable named as its rule names it: the add-on is
    /// healthy while this is true (`replicas >= 1`, `available == "True"`).
    pub healthy_when: String,
}

/// How an add-on's `Available` condition is decided: upstream's health prober types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HealthProber {
    /// Its Deployments have a ready replica and its DaemonSets all of theirs (fed back by the
    /// work agent). Upstream's choice for templates; the default.
    #[default]
    WorkloadAvailability,
    /// Its Deployments have a ready replica.
    DeploymentAvailability,
    /// Its agent renews the Lease named after the add-on in its install namespace, which the
    /// registration agent reports.
    Lease,
    /// Its deploy work is applied.
    Work,
    /// Fields the work agent feeds back pass their checks ([`ProbeField`]): upstream's `Work`
    /// prober with probe fields.
    WorkField,
    /// Nobody judges it: `Available` is left to whoever sets it.
    None,
}

impl HealthProber {
    /// The annotation's values.
    pub const NAMES: [&str; 6] = [
        "WorkloadAvailability",
        "DeploymentAvailability",
        "Lease",
        "Work",
        "WorkField",
        "None",
    ];

    /// The prober a template's annotation names (absent: the default).
    pub fn of(template: &AddOnTemplate) -> Result<Self, String> {
        let Some(value) = template
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(HEALTH_PROBER_ANNOTATION))
        else {
            return Ok(Self::default());
        };
        match value.as_str() {
            "WorkloadAvailability" => Ok(Self::WorkloadAvailability),
            "DeploymentAvailability" => Ok(Self::DeploymentAvailability),
            "Lease" => Ok(Self::Lease),
            "Work" => Ok(Self::Work),
            "WorkField"
                if template
                    .annotations()
                    .contains_key(HEALTH_PROBE_FIELDS_ANNOTATION) =>
            {
                Ok(Self::WorkField)
            }
            "WorkField" => Err(format!(
                "health prober WorkField needs its fields in annotation {HEALTH_PROBE_FIELDS_ANNOTATION}"
            )),
            "None" => Ok(Self::None),
            other => Err(format!(
                "unknown health prober {other:?} in annotation {HEALTH_PROBER_ANNOTATION} (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// An add-on's agent manifests and registrations.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnTemplate"
)]
#[kube(doc = "An add-on defined by its agent's manifests and the hub identities it registers.")]
#[kube(derive = "Default", derive = "PartialEq")]
#[kube(printcolumn = r#"{"name": "ADDON NAME", "type": "string", "jsonPath": ".spec.addonName"}"#)]
#[serde(rename_all = "camelCase")]
pub struct AddOnTemplateSpec {
    /// The add-on (ClusterManagementAddOn) this template belongs to.
    pub addon_name: String,
    /// What the agent needs on the managed cluster, as a ManifestWork spec. Manifests may use
    /// `{{CLUSTER_NAME}}`, `{{HUB_KUBECONFIG}}` and `{{INSTALL_NAMESPACE}}`.
    pub agent_spec: ManifestWorkSpec,
    /// Hub identities the agent registers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registration: Vec<RegistrationSpec>,
}

/// One identity the agent needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationSpec {
    /// A client of the hub's API server, or a certificate from a custom signer.
    #[serde(rename = "type")]
    pub type_: RegistrationType,
    /// Settings of a `KubeClient` registration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_client: Option<KubeClientRegistration>,
    /// Settings of a `CustomSigner` registration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_signer: Option<CustomSignerRegistration>,
}

/// Kind of registration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RegistrationType {
    /// A client certificate for the hub's API server.
    #[default]
    KubeClient,
    /// A certificate signed by the add-on's own CA.
    CustomSigner,
}

/// What a `KubeClient` identity may do on the hub.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientRegistration {
    /// Role bindings the hub makes for the identity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hub_permissions: Vec<HubPermission>,
}

/// One role binding for the identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HubPermission {
    /// In the cluster's own namespace, or in one named namespace.
    #[serde(rename = "type")]
    pub type_: HubPermissionType,
    /// The ClusterRole bound in the cluster's namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_cluster: Option<CurrentClusterBinding>,
    /// The role bound in one namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_namespace: Option<SingleNamespaceBinding>,
}

/// Where a hub permission applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HubPermissionType {
    /// The managed cluster's namespace on the hub.
    #[default]
    CurrentCluster,
    /// One fixed namespace.
    SingleNamespace,
}

/// A ClusterRole bound in the cluster's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentClusterBinding {
    /// Name of the ClusterRole.
    pub cluster_role_name: String,
}

/// A role bound in one namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SingleNamespaceBinding {
    /// The namespace.
    pub namespace: String,
    /// The Role or ClusterRole.
    #[schemars(extend("x-kubernetes-map-type" = "atomic"))]
    pub role_ref: RoleRef,
}

/// A Role or ClusterRole, as an RBAC binding names it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleRef {
    /// `rbac.authorization.k8s.io`.
    pub api_group: String,
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// The role's name.
    pub name: String,
}

/// A certificate from the add-on's own CA.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomSignerRegistration {
    /// The signer's name.
    #[schemars(
        length(min = 5, max = 571),
        pattern(r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,
    /// The secret (`tls.crt`, `tls.key`) holding the CA.
    #[serde(rename = "signingCA")]
    pub signing_ca: SigningCaReference,
    /// The certificate's subject; upstream's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
}

/// Where the CA of a custom signer is kept on the hub.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningCaReference {
    /// Secret name.
    pub name: String,
    /// Secret namespace (the add-on manager's when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}
