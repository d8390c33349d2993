//! What `install hub-addon` installs: upstream clusteradm's built-in hub add-ons. Of its names,
//! `governance-policy-framework` is a set of manifests upstream's v1.3.1 carries; `argocd` and
//! `argocd-agent` are Helm charts it downloads from its chart repository at install time, which
//! this tool does not do (they are refused, saying how to install them with Helm).
//!
//! The policy framework's hub side: the policy propagator (policies to clusters' namespaces, and
//! their status back) and the policy add-on controller (the `governance-policy-framework` and
//! `config-policy-controller` add-ons' agents, deployed to managed clusters by ManifestWorks).
//! Its CRDs and the two controllers' ClusterRoles are the components' own, vendored in
//! `templates/hub-addons/governance-policy-framework/` (origin in its README); the rest is built
//! here, under upstream clusteradm's names, so that either tool uninstalls what the other
//! installed.
use kube::api::DynamicObject;
use serde_json::{Value, json};

/// The add-on's name, as `--names` takes it.
pub const POLICY_FRAMEWORK: &str = "governance-policy-framework";
/// The add-ons the policy add-on controller serves (its ClusterManagementAddOns).
pub const POLICY_ADDONS: [&str; 2] = ["config-policy-controller", POLICY_FRAMEWORK];
/// Where upstream's images are.
const REGISTRY: &str = "quay.io/open-cluster-management";
/// The propagator's names (its Deployment, ServiceAccount and ClusterRole).
pub const PROPAGATOR: &str = "governance-policy-propagator";
/// The add-on controller's Deployment.
pub const ADDON_CONTROLLER: &str = "governance-policy-addon-controller";
/// The add-on controller's ServiceAccount.
const ADDON_CONTROLLER_ACCOUNT: &str = "policy-addon-ctrl-controller-manager";

/// The vendored files, in apply order within their kinds.
const CRDS: [&str; 5] = [
    include_str!(
        "../../templates/hub-addons/governance-policy-framework/crd-placementbindings.yaml"
    ),
    include_str!("../../templates/hub-addons/governance-policy-framework/crd-policies.yaml"),
    include_str!(
        "../../templates/hub-addons/governance-policy-framework/crd-policyautomations.yaml"
    ),
    include_str!("../../templates/hub-addons/governance-policy-framework/crd-policysets.yaml"),
    include_str!("../../templates/hub-addons/governance-policy-framework/crd-placementrules.yaml"),
];
const PROPAGATOR_ROLE: &str = include_str!(
    "../../templates/hub-addons/governance-policy-framework/clusterrole-propagator.yaml"
);
const ADDON_CONTROLLER_ROLE: &str = include_str!(
    "../../templates/hub-addons/governance-policy-framework/clusterrole-addon-controller.yaml"
);

/// A hub add-on `install hub-addon` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HubAddon {
    /// `governance-policy-framework`.
    PolicyFramework,
}

impl HubAddon {
    /// Its name, as `--names` takes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PolicyFramework => POLICY_FRAMEWORK,
        }
    }

    /// The add-on `name` names, or why it cannot be installed here.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            POLICY_FRAMEWORK => Ok(Self::PolicyFramework),
            helm @ ("argocd" | "argocd-agent") => Err(format!(
                "{helm} is a Helm chart upstream's clusteradm downloads from https://open-cluster-management.io/helm-charts at install time; this tool installs no chart from the network: `helm repo add ocm https://open-cluster-management.io/helm-charts` and install `ocm/{}`",
                if helm == "argocd" {
                    "argocd-pull-integration"
                } else {
                    "argocd-agent-addon"
                }
            )),
            other => Err(format!(
                "invalid add-on name {other:?}: the built-in hub add-ons are governance-policy-framework (and, through Helm, argocd and argocd-agent)"
            )),
        }
    }
}

/// The images' tag for a `--bundle-version` (upstream's version bundles: the policy add-on's
/// version for each OCM version), unless an overrides file's `policy_addon` names one.
pub fn policy_tag(bundle_version: &str, overridden: Option<&str>) -> Result<String, String> {
    if let Some(tag) = overridden {
        return Ok(tag.to_string());
    }
    let bare = bundle_version.trim_start_matches('v');
    Ok(match bare {
        // The default bundle is OCM v1.3.1's.
        "default" | "" | "1.2.0" | "1.2.1" | "1.3.0" | "1.3.1" => "v0.18.0",
        "latest" => "latest",
        "1.1.1" | "1.1.3" => "v0.17.0",
        "1.1.0" => "v0.16.0",
        other => {
            return Err(format!(
                "no policy add-on version is known for --bundle-version {other}: name one with --bundle-version-overrides ({{\"policy_addon\": \"v0.18.0\"}})"
            ));
        }
    }
    .to_string())
}

/// Everything `addon` needs on the hub, in `namespace`, with images of `tag`.
pub fn plan(addon: HubAddon, namespace: &str, tag: &str) -> Result<Vec<DynamicObject>, String> {
    match addon {
        HubAddon::PolicyFramework => policy_framework(namespace, tag),
    }
}

/// What `uninstall hub-addon` removes: the same objects but the CRDs (policies outlive the
/// controllers, as upstream's uninstall leaves them).
pub fn removable(addon: HubAddon, namespace: &str) -> Result<Vec<DynamicObject>, String> {
    let mut objects = plan(addon, namespace, "unused")?;
    objects.retain(|o| kind(o) != "CustomResourceDefinition");
    Ok(objects)
}

fn kind(object: &DynamicObject) -> &str {
    object.types.as_ref().map_or("", |t| t.kind.as_str())
}

fn policy_framework(namespace: &str, tag: &str) -> Result<Vec<DynamicObject>, String> {
    let mut objects = Vec::new();
    for crd in CRDS {
        objects.push(vendored(crd, None)?);
    }
    // The propagator.
    objects.push(account(PROPAGATOR, namespace));
    objects.push(vendored(PROPAGATOR_ROLE, Some(PROPAGATOR))?);
    objects.push(cluster_binding(
        &format!("{PROPAGATOR}-global"),
        PROPAGATOR,
        PROPAGATOR,
        namespace,
    ));
    objects.extend(leader_election(
        &format!("{PROPAGATOR}-leader-election-role"),
        &format!("{PROPAGATOR}-leader-election-rolebinding"),
        PROPAGATOR,
        namespace,
    ));
    objects.push(object(propagator_deployment(namespace, tag)));
    // The add-on controller.
    objects.push(account(ADDON_CONTROLLER_ACCOUNT, namespace));
    objects.push(vendored(
        ADDON_CONTROLLER_ROLE,
        Some("policy-addon-ctrl-manager-role"),
    )?);
    objects.push(cluster_binding(
        "policy-addon-ctrl-manager-rolebinding",
        "policy-addon-ctrl-manager-role",
        ADDON_CONTROLLER_ACCOUNT,
        namespace,
    ));
    objects.extend(leader_election(
        "policy-addon-ctrl-leader-election-role",
        "policy-addon-ctrl-leader-election-rolebinding",
        ADDON_CONTROLLER_ACCOUNT,
        namespace,
    ));
    objects.push(object(addon_controller_deployment(namespace, tag)));
    objects.push(object(cluster_management_addon(
        "config-policy-controller",
        "Configuration Policy Addon",
        "Audits Kubernetes resources and remediates violations based on configuration policies.",
    )));
    objects.push(object(cluster_management_addon(
        POLICY_FRAMEWORK,
        "Governance Policy Framework Addon",
        "Distributes policies and collects policy evaluation results.",
    )));
    Ok(objects)
}

/// A vendored document, renamed when `name` is given.
fn vendored(text: &str, name: Option<&str>) -> Result<DynamicObject, String> {
    let mut object: DynamicObject = serde_yaml::from_str(text.trim_start_matches("---\n"))
        .map_err(|e| format!("a vendored policy framework manifest: {e}"))?;
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

/// The Lease and Events a controller's leader election needs, in its namespace only.
fn leader_election(
    role: &str,
    binding: &str,
    account: &str,
    namespace: &str,
) -> [DynamicObject; 2] {
    [
        object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": role, "namespace": namespace},
            "rules": [
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                 "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
            ],
        })),
        object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": binding, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
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

fn propagator_deployment(namespace: &str, tag: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": PROPAGATOR, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"name": PROPAGATOR}},
            "template": {
                "metadata": {
                    "labels": {"name": PROPAGATOR},
                    "annotations": {"kubectl.kubernetes.io/default-container": PROPAGATOR},
                },
                "spec": {
                    "serviceAccountName": PROPAGATOR,
                    "containers": [{
                        "name": PROPAGATOR,
                        "image": image(PROPAGATOR, tag),
                        "imagePullPolicy": "IfNotPresent",
                        "command": [PROPAGATOR],
                        "args": [
                            "--health-probe-bind-address=:8081",
                            "--metrics-bind-address=:8383",
                            "--leader-elect",
                            "--enable-webhooks=false",
                        ],
                        "env": [
                            {"name": "WATCH_NAMESPACE", "value": ""},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "OPERATOR_NAME", "value": PROPAGATOR},
                        ],
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8081}, "initialDelaySeconds": 15},
                        "securityContext": restricted_container(),
                    }],
                },
            },
        },
    })
}

fn addon_controller_deployment(namespace: &str, tag: &str) -> Value {
    let labels = json!({"app": ADDON_CONTROLLER, "control-plane": "controller-manager"});
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": ADDON_CONTROLLER, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                },
                "spec": {
                    "serviceAccountName": ADDON_CONTROLLER_ACCOUNT,
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{
                        "name": "manager",
                        "image": image(ADDON_CONTROLLER, tag),
                        "imagePullPolicy": "IfNotPresent",
                        "command": [ADDON_CONTROLLER],
                        "args": ["controller"],
                        "env": [
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "CONFIG_POLICY_CONTROLLER_IMAGE", "value": image("config-policy-controller", tag)},
                            {"name": "GOVERNANCE_POLICY_FRAMEWORK_ADDON_IMAGE", "value": image("governance-policy-framework-addon", tag)},
                        ],
                        "resources": {
                            "requests": {"cpu": "10m", "memory": "64Mi"},
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                        },
                        "securityContext": restricted_container(),
                    }],
                },
            },
        },
    })
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
    fn the_policy_framework_is_upstreams_objects_under_upstreams_names() {
        let objects = plan(HubAddon::PolicyFramework, "ocm", "v0.18.0").unwrap();
        let names = super::super::names(&objects);
        for expected in [
            "CustomResourceDefinition/policies.policy.open-cluster-management.io",
            "CustomResourceDefinition/placementrules.apps.open-cluster-management.io",
            "ClusterRole/governance-policy-propagator",
            "ClusterRole/policy-addon-ctrl-manager-role",
            "ClusterRoleBinding/governance-policy-propagator-global",
            "RoleBinding/policy-addon-ctrl-leader-election-rolebinding",
            "Deployment/governance-policy-propagator",
            "Deployment/governance-policy-addon-controller",
            "ClusterManagementAddOn/config-policy-controller",
            "ClusterManagementAddOn/governance-policy-framework",
        ] {
            assert!(
                names.contains(&expected.to_string()),
                "{expected} in {names:?}"
            );
        }
        let text = serde_json::to_string(&objects).unwrap();
        assert!(
            text.contains(
                "quay.io/open-cluster-management/governance-policy-framework-addon:v0.18.0"
            )
        );
        let removable = removable(HubAddon::PolicyFramework, "ocm").unwrap();
        assert!(
            removable
                .iter()
                .all(|o| kind(o) != "CustomResourceDefinition")
        );
        assert_eq!(removable.len(), objects.len() - CRDS.len());
    }

    #[test]
    fn helm_charts_and_unknown_names_are_refused_saying_why() {
        assert!(
            HubAddon::parse("argocd")
                .unwrap_err()
                .contains("helm repo add")
        );
        assert!(
            HubAddon::parse("policy")
                .unwrap_err()
                .contains("governance-policy-framework")
        );
        assert_eq!(policy_tag("v1.3.1", None).unwrap(), "v0.18.0");
        assert_eq!(policy_tag("1.1.0", None).unwrap(), "v0.16.0");
        assert_eq!(policy_tag("9.9.9", Some("v0.19.0")).unwrap(), "v0.19.0");
        assert!(
            policy_tag("9.9.9", None)
                .unwrap_err()
                .contains("policy_addon")
        );
    }
}
