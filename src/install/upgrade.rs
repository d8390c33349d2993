//! What `upgrade clustermanager|klusterlet` changes, as pure plans: the operator (its CRD, identity,
//! RBAC and Deployment, rendered as `init`/`join` render them, with the new image) and the images
//! in the ClusterManager's or Klusterlets' spec, as a merge patch that leaves every other setting
//! (gates, modes, registration and work configuration) as it is, as upstream's `upgrade` does.
use kube::api::DynamicObject;
use serde_json::{Value, json};

use crate::api::names::image_ref;
use crate::api::operator::ResourceRequirement;
use crate::render;

/// The images an upgrade moves to: upstream's (`registry`/`component`:`tag`), or ours for every
/// component (`single`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Images {
    /// e.g. `quay.io/open-cluster-management`.
    pub registry: String,
    /// e.g. `v1.3.1`.
    pub tag: String,
    /// Our image, for the operator and every component.
    pub single: Option<String>,
}

impl Images {
    /// The image of `component` (`registration`, `work`, ..., `registration-operator`).
    #[must_use]
    pub fn of(&self, component: &str) -> String {
        self.single
            .clone()
            .unwrap_or_else(|| image_ref(&self.registry, component, &self.tag))
    }
}

/// The hub operator's objects with `images`: the ClusterManager CRD, then the operator's service
/// account, ClusterRole, binding and Deployment (no Namespace, pull secret or bootstrap
/// credential: an upgrade keeps those). `sync_labels`: the running operator's
/// `--enable-sync-labels`, which an upgrade keeps.
///
/// # Errors
/// A template failed to render.
pub fn hub_operator(
    images: &Images,
    resources: Option<&ResourceRequirement>,
    sync_labels: bool,
) -> Result<Vec<DynamicObject>, render::Error> {
    use crate::install::hub::{InitOptions, plan};
    let opts = InitOptions {
        registry: images.registry.clone(),
        tag: images.tag.clone(),
        single_image: images.single.clone(),
        sync_labels,
        resource_requirement: resources.cloned(),
        ..InitOptions::default()
    };
    let mut objects = plan(&opts)?;
    objects.retain(|o| {
        let kind = o.types.as_ref().map_or("", |t| t.kind.as_str());
        let name = o.metadata.name.as_deref().unwrap_or_default();
        match kind {
            "CustomResourceDefinition" => name.starts_with("clustermanagers."),
            "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding" | "Deployment" => {
                name == "cluster-manager"
            }
            _ => false,
        }
    });
    Ok(objects)
}

/// The klusterlet operator's objects with `images` (the Klusterlet CRD, then the operator's
/// namespace, identity, RBAC and Deployment; not the pull secret, which an upgrade keeps).
/// `sync_labels`: the running operator's `--enable-sync-labels`, which an upgrade keeps.
///
/// # Errors
/// A template failed to render.
pub fn klusterlet_operator(
    images: &Images,
    resources: Option<&ResourceRequirement>,
    sync_labels: bool,
) -> Result<Vec<DynamicObject>, render::Error> {
    let mut objects = crate::install::klusterlet::operator_objects(
        &images.of("registration-operator"),
        images.single.is_some(),
        &crate::install::klusterlet::OperatorSettings {
            resources: resources.cloned(),
            pull_secret: None,
            sync_labels,
            pod: crate::install::operator_pod::OperatorPod::default(),
        },
    )?;
    objects.retain(|o| o.types.as_ref().is_none_or(|t| t.kind != "Secret"));
    Ok(objects)
}

/// The merge patch that points a ClusterManager's components at `images`.
#[must_use]
pub fn cluster_manager_patch(images: &Images) -> Value {
    json!({"spec": {
        "registrationImagePullSpec": images.of("registration"),
        "workImagePullSpec": images.of("work"),
        "placementImagePullSpec": images.of("placement"),
        "addOnManagerImagePullSpec": images.of("addon-manager"),
    }})
}

/// The merge patch that points a Klusterlet's agents (and its operator image) at `images`.
#[must_use]
pub fn klusterlet_patch(images: &Images) -> Value {
    json!({"spec": {
        "registrationImagePullSpec": images.of("registration"),
        "workImagePullSpec": images.of("work"),
        "imagePullSpec": images.of("registration-operator"),
    }})
}

/// Whether `spec` (a ClusterManager's or Klusterlet's, as JSON) already says what `patch` does.
#[must_use]
pub fn already(spec: &Value, patch: &Value) -> bool {
    patch["spec"]
        .as_object()
        .is_some_and(|fields| fields.iter().all(|(k, v)| spec.get(k) == Some(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(tag: &str) -> Images {
        Images {
            registry: "quay.io/open-cluster-management".into(),
            tag: tag.into(),
            single: None,
        }
    }

    #[test]
    fn the_hub_operator_is_the_crd_identity_and_deployment_only() {
        let objects = hub_operator(&upstream("v1.2.0"), None, false).unwrap();
        let names: Vec<String> = crate::install::names(&objects);
        assert_eq!(
            names,
            [
                "CustomResourceDefinition/clustermanagers.operator.open-cluster-management.io",
                "ServiceAccount/cluster-manager",
                "ClusterRole/cluster-manager",
                "ClusterRoleBinding/cluster-manager",
                "Deployment/cluster-manager",
            ]
        );
        let deployment = &objects[4].data;
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "quay.io/open-cluster-management/registration-operator:v1.2.0"
        );
    }

    #[test]
    fn patches_name_every_image_and_know_when_nothing_changes() {
        let ours = Images {
            single: Some("r.example/clusteradm:v2".into()),
            ..upstream("v1.3.1")
        };
        let patch = cluster_manager_patch(&ours);
        assert_eq!(
            patch["spec"]["placementImagePullSpec"],
            "r.example/clusteradm:v2"
        );
        assert!(already(&patch["spec"], &patch));
        let older = cluster_manager_patch(&upstream("v1.3.1"));
        assert!(!already(&older["spec"], &patch));
        let k = klusterlet_patch(&upstream("v1.2.0"));
        assert_eq!(
            k["spec"]["imagePullSpec"],
            "quay.io/open-cluster-management/registration-operator:v1.2.0"
        );
    }
}
