//! The add-on API's two versions, converted by the in-process hub's webhook: what one version
//! writes, the other reads, as upstream's agents (`v1beta1`) and `clusteradm` (`v1alpha1`) need.
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use clusteradm::api::addon::{self, v1beta1};
use clusteradm::api::names::CLIENT_SIGNER;

use super::clusters;
use crate::common;
use crate::registration::fixture;

/// Waits until the hub points the add-on CRDs at its conversion webhook.
async fn conversion_served(hub: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    common::eventually(
        "the add-on CRDs converted by the hub",
        Duration::from_secs(60),
        || {
            let crds = crds.clone();
            async move {
                let crd = crds
                    .get("managedclusteraddons.addon.open-cluster-management.io")
                    .await
                    .ok()?;
                let webhook = crd.spec.conversion?.strategy == "Webhook";
                webhook.then_some(())
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_version_reads_what_the_other_wrote() {
    fixture::hub().await;
    let hub = common::hub().await;
    conversion_served(&hub).await;
    let c = clusters("it-conv").await;
    let name = common::unique("it-conv-addon");

    // v1alpha1 writes an install namespace and a registration; v1beta1 reads their new shapes.
    let alpha: Api<addon::ManagedClusterAddOn> = Api::namespaced(hub.clone(), &c[0]);
    let mut mca = addon::ManagedClusterAddOn::new(
        &name,
        addon::ManagedClusterAddOnSpec {
            install_namespace: Some("my-addon-ns".into()),
            configs: Vec::new(),
        },
    );
    mca.metadata.namespace = Some(c[0].clone());
    alpha.create(&PostParams::default(), &mca).await.unwrap();
    let status = json!({"status": {"registrations": [{"signerName": CLIENT_SIGNER, "subject": {"user": "u", "groups": ["g"]}}]}});
    alpha
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
    let beta: Api<v1beta1::ManagedClusterAddOn> = Api::namespaced(hub.clone(), &c[0]);
    // The CRDs may still name the webhook of an earlier test process on this control plane
    // until this one's hub has pointed them at its own: read once it answers.
    let read = common::eventually(
        "the add-on read as v1beta1 through this hub's webhook",
        Duration::from_secs(60),
        || {
            let (beta, name) = (beta.clone(), name.clone());
            async move { beta.get(&name).await.ok() }
        },
    )
    .await;
    assert_eq!(
        read.metadata.annotations.unwrap()[v1beta1::INSTALL_NAMESPACE_ANNOTATION],
        "my-addon-ns"
    );
    let registration = &read.status.unwrap().registrations[0];
    assert_eq!(registration.type_, v1beta1::RegistrationType::KubeClient);
    let subject = registration
        .kube_client
        .as_ref()
        .unwrap()
        .subject
        .as_ref()
        .unwrap();
    assert_eq!(
        (subject.user.as_deref(), subject.groups.as_slice()),
        (Some("u"), &["g".to_string()][..])
    );

    // v1beta1 writes flat default configs; v1alpha1 reads supported configs with defaults.
    let cma_name = common::unique("it-conv-cma");
    let cma: v1beta1::ClusterManagementAddOn = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": cma_name},
        "spec": {"defaultConfigs": [{"group": "addon.open-cluster-management.io", "resource": "addontemplates", "name": "t-1"}]},
    }))
    .unwrap();
    Api::<v1beta1::ClusterManagementAddOn>::all(hub.clone())
        .create(&PostParams::default(), &cma)
        .await
        .unwrap();
    let read = Api::<addon::ClusterManagementAddOn>::all(hub.clone())
        .get(&cma_name)
        .await
        .unwrap();
    let supported = &read.spec.supported_configs[0];
    assert_eq!(supported.resource, "addontemplates");
    assert_eq!(supported.default_config.as_ref().unwrap().name, "t-1");

    let _ = Api::<addon::ClusterManagementAddOn>::all(hub.clone())
        .delete(&cma_name, &DeleteParams::default())
        .await;
    let _ = alpha.delete(&name, &DeleteParams::default()).await;
    super::cleanup(&common::unique("none"), &c).await;
}
