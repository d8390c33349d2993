//! Upstream's `AddonManagement` gate of the add-on manager, on the real hub, in-process: with it
//! off the add-on manager leaves a ManagedClusterAddOn alone (not owned by its
//! ClusterManagementAddOn); switched on (upstream's default), it owns it.
use std::time::Duration;

use clusteradm::api::addon::{ClusterManagementAddOn, ManagedClusterAddOn};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

fn gate(mode: &str) -> serde_json::Value {
    json!({"addOnManagerConfiguration": {"featureGates": [{"feature": "AddonManagement", "mode": mode}]}})
}

/// `Some` once the add-on is owned by its ClusterManagementAddOn.
async fn owned(addons: Api<ManagedClusterAddOn>, name: String) -> Option<()> {
    let mca = addons.get_opt(&name).await.ok()??;
    mca.owner_references()
        .iter()
        .any(|o| o.kind == "ClusterManagementAddOn" && o.name == name)
        .then_some(())
}

#[tokio::test]
async fn the_addon_manager_acts_only_with_its_gate_on() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    patch_spec(&client, gate("Disable")).await;
    wait_applied(&client).await;
    let name = common::unique("lc-addon-gate");
    create_addon(&client, &name).await;
    let addons = Api::<ManagedClusterAddOn>::namespaced(client.clone(), &name);

    common::never(
        "the add-on owned with the gate off",
        Duration::from_secs(4),
        || owned(addons.clone(), name.clone()),
    )
    .await;
    patch_spec(&client, gate("Enable")).await;
    common::eventually("the add-on owned with the gate on", WAIT, || {
        owned(addons.clone(), name.clone())
    })
    .await;

    remove_addon(&client, &name).await;
    teardown(&client, op).await;
}

/// The operator, not the hub controllers, makes an add-on's token infrastructure once the
/// cluster's agent declares the token driver, and removes it when the agent goes back to csr.
#[tokio::test]
async fn the_operator_makes_a_token_addons_service_account_and_removes_it() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    token_infrastructure_follows_the_driver(&client, "lc-addon-token").await;
    teardown(&client, op).await;
}

/// On `hub`, whose operator runs: a token add-on's ServiceAccount made once the cluster's agent
/// declares the token driver, `TokenInfrastructureReady` naming it, and both gone when the agent
/// goes back to csr.
pub(super) async fn token_infrastructure_follows_the_driver(hub: &Client, prefix: &str) {
    use clusteradm::api::addon::token;
    use k8s_openapi::api::core::v1::ServiceAccount;
    let name = common::unique(prefix);
    create_addon(hub, &name).await;
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &name);
    // What a cluster's agent under the token driver writes.
    let declare = |driver: &str| {
        json!({"status": {"kubeClientDriver": driver,
            "registrations": [{"signerName": clusteradm::api::names::CLIENT_SIGNER}]}})
    };
    let params = kube::api::PatchParams::default();
    addons
        .patch_status(&name, &params, &kube::api::Patch::Merge(declare("token")))
        .await
        .unwrap();
    let accounts = Api::<ServiceAccount>::namespaced(hub.clone(), &name);
    let account = common::eventually("the add-on's ServiceAccount", WAIT, || {
        let accounts = accounts.clone();
        let sa = token::service_account(&name);
        async move { accounts.get_opt(&sa).await.ok()? }
    })
    .await;
    let ready = common::eventually("TokenInfrastructureReady", WAIT, || {
        let addons = addons.clone();
        let name = name.clone();
        async move {
            let mca = addons.get(&name).await.ok()?;
            let conditions = mca.status?.conditions;
            clusteradm::api::conditions::find(&conditions, token::INFRASTRUCTURE_READY).cloned()
        }
    })
    .await;
    assert_eq!(ready.status, "True");
    assert_eq!(
        token::uid_in(&ready.message),
        account.metadata.uid.as_deref()
    );

    addons
        .patch_status(&name, &params, &kube::api::Patch::Merge(declare("csr")))
        .await
        .unwrap();
    common::eventually("the ServiceAccount removed", WAIT, || {
        let accounts = accounts.clone();
        let sa = token::service_account(&name);
        async move { accounts.get_opt(&sa).await.ok()?.is_none().then_some(()) }
    })
    .await;

    remove_addon(hub, &name).await;
}

/// Deletes what [`create_addon`] made.
pub(super) async fn remove_addon(client: &Client, name: &str) {
    let _ = Api::<ClusterManagementAddOn>::all(client.clone())
        .delete(name, &DeleteParams::default())
        .await;
    let _ = Api::<Namespace>::all(client.clone())
        .delete(name, &DeleteParams::default())
        .await;
}

/// A ClusterManagementAddOn `name` and its ManagedClusterAddOn in namespace `name`.
pub(super) async fn create_addon(client: &Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let cma: ClusterManagementAddOn = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": name}, "spec": {}}))
    .unwrap();
    Api::<ClusterManagementAddOn>::all(client.clone())
        .create(&PostParams::default(), &cma)
        .await
        .unwrap();
    let mca: ManagedClusterAddOn = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
        "metadata": {"name": name, "namespace": name}, "spec": {}}))
    .unwrap();
    Api::<ManagedClusterAddOn>::namespaced(client.clone(), name)
        .create(&PostParams::default(), &mca)
        .await
        .unwrap();
}
