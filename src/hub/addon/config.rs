//! An add-on's AddOnDeploymentConfig applied to its template, as upstream's template agent applies
//! it: customized variables as `{{NAME}}` values, `agentInstallNamespace` as the install namespace
//! (`{{INSTALL_NAMESPACE}}`, the namespace of every namespaced manifest and of binding subjects),
//! node placement on the pods of Deployments and DaemonSets, and registry mirrors on their images.
//! Proxy settings and resource requirements are not applied yet.
use serde_json::{Value, json};

use crate::api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, AddOnDeploymentConfigSpec, ClusterManagementAddOn,
    ManagedClusterAddOn,
};

/// The AddOnDeploymentConfig `mca` uses, as (namespace, name): its own config, else the add-on's
/// default.
#[must_use]
pub fn reference(
    mca: &ManagedClusterAddOn,
    cma: &ClusterManagementAddOn,
) -> Option<(String, String)> {
    super::template::configured(mca, cma, ADDON_DEPLOYMENT_CONFIGS)
}

/// The template values the config adds: its variables.
#[must_use]
pub fn variables(config: &AddOnDeploymentConfigSpec) -> Vec<(String, String)> {
    config
        .customized_variables
        .iter()
        .map(|v| (v.name.clone(), v.value.clone().unwrap_or_default()))
        .collect()
}

/// The install namespace the config sets, if any.
#[must_use]
pub fn install_namespace(config: &AddOnDeploymentConfigSpec) -> Option<&str> {
    config
        .agent_install_namespace
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// Applies the config to one rendered manifest.
pub fn decorate(object: &mut Value, config: &AddOnDeploymentConfigSpec) {
    if let Some(ns) = install_namespace(config) {
        if object["metadata"]["namespace"].is_string() {
            object["metadata"]["namespace"] = json!(ns);
        }
        if matches!(
            object["kind"].as_str(),
            Some("RoleBinding" | "ClusterRoleBinding")
        ) && let Some(subjects) = object["subjects"].as_array_mut()
        {
            for s in subjects.iter_mut().filter(|s| s["namespace"].is_string()) {
                s["namespace"] = json!(ns);
            }
        }
    }
    if !matches!(object["kind"].as_str(), Some("Deployment" | "DaemonSet")) {
        return;
    }
    let pod = &mut object["spec"]["template"]["spec"];
    if let Some(placement) = &config.node_placement {
        if !placement.node_selector.is_empty() {
            pod["nodeSelector"] = json!(placement.node_selector);
        }
        if !placement.tolerations.is_empty() {
            pod["tolerations"] = json!(placement.tolerations);
        }
    }
    for list in ["containers", "initContainers"] {
        for container in pod[list].as_array_mut().into_iter().flatten() {
            if let Some(image) = container["image"].as_str() {
                container["image"] = json!(mirrored(image, config));
            }
        }
    }
}

/// `image` pulled from the first mirror whose source it starts with.
fn mirrored(image: &str, config: &AddOnDeploymentConfigSpec) -> String {
    config
        .registries
        .iter()
        .find_map(|r| {
            let source = r.source.as_deref().filter(|s| !s.is_empty())?;
            image
                .strip_prefix(source)
                .map(|rest| format!("{}{rest}", r.mirror))
        })
        .unwrap_or_else(|| image.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::addon::{ImageMirror, NodePlacement};

    #[test]
    fn namespace_placement_and_mirrors_are_applied() {
        let config = AddOnDeploymentConfigSpec {
            agent_install_namespace: Some("elsewhere".into()),
            node_placement: Some(NodePlacement {
                node_selector: [("role".to_string(), "infra".to_string())].into(),
                tolerations: Vec::new(),
            }),
            registries: vec![ImageMirror {
                mirror: "mirror.local/ocm".into(),
                source: Some("quay.io/ocm".into()),
            }],
            ..AddOnDeploymentConfigSpec::default()
        };
        let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "x"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "quay.io/ocm/agent:1"}, {"name": "d", "image": "other/x"}]}}}});
        decorate(&mut deployment, &config);
        assert_eq!(deployment["metadata"]["namespace"], "elsewhere");
        assert_eq!(
            deployment["spec"]["template"]["spec"]["nodeSelector"]["role"],
            "infra"
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "mirror.local/ocm/agent:1"
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][1]["image"],
            "other/x"
        );
        let mut cluster_role = json!({"kind": "ClusterRole", "metadata": {"name": "r"}});
        decorate(&mut cluster_role, &config);
        assert!(cluster_role["metadata"].get("namespace").is_none());
    }
}
