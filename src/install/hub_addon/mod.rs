//! What `install hub-addon` installs: upstream clusteradm's built-in hub add-ons, each in its own
//! module. `governance-policy-framework` ([`policy`]) is a set of manifests upstream's v1.3.1
//! carries; `application-manager` ([`application`]) is the one its v0.11 carried, before v1.0
//! dropped it for Argo CD; `argocd` and `argocd-agent` are Helm charts upstream's v1.3.1 downloads
//! at install time, which this tool does not do (they are refused, saying how to install them with
//! Helm).
//!
//! Each add-on's CRDs and the roles its components define are the components' own, vendored in
//! `templates/hub-addons/<add-on>/` (origin in each README); the rest is built here, under
//! upstream clusteradm's names, so that either tool uninstalls what the other installed.
pub mod application;
pub mod policy;

use kube::api::DynamicObject;
use serde_json::{Value, json};

pub use policy::{POLICY_ADDONS, POLICY_FRAMEWORK};

/// Where upstream's images are.
const REGISTRY: &str = "quay.io/open-cluster-management";

/// A hub add-on `install hub-addon` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HubAddon {
    /// `governance-policy-framework`.
    PolicyFramework,
    /// `application-manager`.
    ApplicationManager,
}

impl HubAddon {
    /// Its name, as `--names` takes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PolicyFramework => POLICY_FRAMEWORK,
            Self::ApplicationManager => application::APPLICATION_MANAGER,
        }
    }

    /// The add-ons (ClusterManagementAddOns) it serves, as `addon enable --names` takes them.
    #[must_use]
    pub fn cluster_addons(self) -> &'static [&'static str] {
        match self {
            Self::PolicyFramework => &POLICY_ADDONS,
            Self::ApplicationManager => &[application::APPLICATION_MANAGER],
        }
    }

    /// The field of upstream's version-bundle overrides file that names its images' tag.
    #[must_use]
    pub fn override_field(self) -> &'static str {
        match self {
            Self::PolicyFramework => "policy_addon",
            Self::ApplicationManager => "app_addon",
        }
    }

    /// The add-on `name` names, or why it cannot be installed here.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            POLICY_FRAMEWORK => Ok(Self::PolicyFramework),
            application::APPLICATION_MANAGER => Ok(Self::ApplicationManager),
            helm @ ("argocd" | "argocd-agent") => Err(format!(
                "{helm} is a Helm chart upstream's clusteradm downloads from https://open-cluster-management.io/helm-charts at install time; this tool installs no chart from the network: `helm repo add ocm https://open-cluster-management.io/helm-charts` and install `ocm/{}`",
                if helm == "argocd" {
                    "argocd-pull-integration"
                } else {
                    "argocd-agent-addon"
                }
            )),
            other => Err(format!(
                "invalid add-on name {other:?}: the built-in hub add-ons are governance-policy-framework and application-manager (and, through Helm, argocd and argocd-agent)"
            )),
        }
    }

    /// Its images' tag for a `--bundle-version` (upstream's version bundles), unless an
    /// overrides file names one.
    pub fn tag(self, bundle_version: &str, overridden: Option<&str>) -> Result<String, String> {
        if let Some(tag) = overridden {
            return Ok(tag.to_string());
        }
        let known = match self {
            Self::PolicyFramework => policy::tag(bundle_version),
            Self::ApplicationManager => application::tag(bundle_version),
        };
        known.map(str::to_string).ok_or_else(|| {
            format!(
                "no {} version is known for --bundle-version {bundle_version}: name one with --bundle-version-overrides ({{\"{}\": \"{}\"}})",
                self.name(),
                self.override_field(),
                self.tag("default", None).unwrap_or_default()
            )
        })
    }
}

/// Everything `addon` needs on the hub, in `namespace`, with images of `tag`.
pub fn plan(addon: HubAddon, namespace: &str, tag: &str) -> Result<Vec<DynamicObject>, String> {
    match addon {
        HubAddon::PolicyFramework => policy::plan(namespace, tag),
        HubAddon::ApplicationManager => application::plan(namespace, tag),
    }
}

/// What `uninstall hub-addon` removes: the same objects but the CRDs (policies and
/// subscriptions outlive the controllers, as upstream's uninstall leaves them).
pub fn removable(addon: HubAddon, namespace: &str) -> Result<Vec<DynamicObject>, String> {
    let mut objects = plan(addon, namespace, "unused")?;
    objects.retain(|o| kind(o) != "CustomResourceDefinition");
    Ok(objects)
}

fn kind(object: &DynamicObject) -> &str {
    object.types.as_ref().map_or("", |t| t.kind.as_str())
}

/// A vendored document, renamed when `name` is given.
fn vendored(text: &str, name: Option<&str>) -> Result<DynamicObject, String> {
    let mut object: DynamicObject = serde_yaml::from_str(text.trim_start_matches("---\n"))
        .map_err(|e| format!("a vendored hub add-on manifest: {e}"))?;
    if let Some(name) = name {
        object.metadata.name = Some(name.to_string());
    }
    Ok(object)
}

fn object(value: Value) -> DynamicObject {
    serde_json::from_value(value).expect("a well-formed object")
}

fn account(name: &str, namespace: &str) -> DynamicObject {
    object(json!({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
    }))
}

fn cluster_binding(name: &str, role: &str, account: &str, namespace: &str) -> DynamicObject {
    object(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }))
}

/// A Role in `namespace` with `rules`, and a RoleBinding of it to `account` (a ServiceAccount in
/// `account_namespace`), named `(role, binding)`.
fn bound_role(
    (name, binding): (&str, &str),
    namespace: &str,
    rules: &Value,
    account: &str,
    account_namespace: &str,
) -> [DynamicObject; 2] {
    [
        object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
            "rules": rules,
        })),
        object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": binding, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": account_namespace}],
        })),
    ]
}

/// Pod Security `restricted`: the images run as a non-root user.
fn restricted_container() -> Value {
    json!({
        "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": true,
        "seccompProfile": {"type": "RuntimeDefault"},
    })
}

fn image(component: &str, tag: &str) -> String {
    format!("{REGISTRY}/{component}:{tag}")
}

fn cluster_management_addon(name: &str, display: &str, description: &str) -> Value {
    json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": name,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
        },
        "spec": {
            "addOnMeta": {"displayName": display, "description": description},
            "supportedConfigs": [{"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"}],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_charts_and_unknown_names_are_refused_saying_why() {
        assert!(
            HubAddon::parse("argocd")
                .unwrap_err()
                .contains("helm repo add")
        );
        let unknown = HubAddon::parse("policy").unwrap_err();
        assert!(
            unknown.contains("governance-policy-framework")
                && unknown.contains("application-manager")
        );
        assert_eq!(
            HubAddon::parse(" application-manager"),
            Ok(HubAddon::ApplicationManager)
        );
    }

    #[test]
    fn each_addon_has_its_bundle_versions_and_its_override_field() {
        let policy = HubAddon::PolicyFramework;
        let app = HubAddon::ApplicationManager;
        assert_eq!(policy.tag("v1.3.1", None).unwrap(), "v0.18.0");
        assert_eq!(policy.tag("1.1.0", None).unwrap(), "v0.16.0");
        assert_eq!(app.tag("default", None).unwrap(), "v0.16.0");
        assert_eq!(app.tag("0.15.2", None).unwrap(), "v0.15.0");
        assert_eq!(app.tag("9.9.9", Some("v0.13.0")).unwrap(), "v0.13.0");
        let unknown = policy.tag("9.9.9", None).unwrap_err();
        assert!(
            unknown.contains(r#"{"policy_addon": "v0.18.0"}"#),
            "{unknown}"
        );
        let unknown = app.tag("9.9.9", None).unwrap_err();
        assert!(unknown.contains(r#"{"app_addon": "v0.16.0"}"#), "{unknown}");
    }
}
