//! The klusterlet's `ClusterProperty` gate at the registration agent, on the real control plane:
//! with it on, the About API's ClusterProperties reach the ManagedCluster's `status.clusterClaims`
//! (over a ClusterClaim of the same name), follow updates and leave with deletion; an agent with
//! the gate off on the same cluster reports the claim alone; one with `ClusterClaim` off reports
//! the property and never the claim.
use clusteradm::api::about::{ClusterProperty, ClusterPropertySpec};
use clusteradm::api::cluster::{ClusterClaim, ClusterClaimSpec, ManagedCluster};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::common;
use crate::registration::fixture;

/// Waits until `cluster` reports `name` with `value` to the hub.
async fn reported(hub: &kube::Client, cluster: &str, name: &str, value: &str) {
    let what = format!("{cluster} reporting {name}={value}");
    let (name, value) = (name.to_string(), value.to_string());
    fixture::wait(
        Api::<ManagedCluster>::all(hub.clone()),
        cluster,
        &what,
        move |mc: Option<&ManagedCluster>| {
            mc.and_then(|mc| mc.status.as_ref()).is_some_and(|s| {
                s.cluster_claims.iter().any(|c| {
                    c.name.as_deref() == Some(name.as_str())
                        && c.value.as_deref() == Some(value.as_str())
                })
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn properties_are_reported_with_the_gate_and_not_without() {
    let managed = common::managed().await;
    fixture::install_managed_crds(&managed).await;
    // What the Klusterlet operator installs with the gate on.
    clusteradm::apply::Applier::new(managed.clone(), std::time::Duration::from_secs(60))
        .apply(vec![clusteradm::apply::to_dynamic(
            &clusteradm::api::cluster_property_crd(),
        )])
        .await
        .unwrap();
    let mut gated = fixture::options(managed.clone(), "it-prop-on");
    gated.gates.cluster_property = true;
    let on = fixture::joined(gated).await;
    let off = fixture::joined(fixture::options(managed.clone(), "it-prop-off")).await;
    let mut properties_only = fixture::options(managed.clone(), "it-prop-noclaim");
    properties_only.gates.cluster_property = true;
    properties_only.gates.cluster_claim = false;
    let no_claims = fixture::joined(properties_only).await;
    let hub = common::hub().await;

    // A fact of this test alone (both kinds are cluster-scoped on the shared managed cluster),
    // stated as a claim and as a property.
    let name = format!("{}.example.com", on.cluster());
    // The property first: an agent acting on the gate never reports the claim while it exists.
    let properties: Api<ClusterProperty> = Api::all(managed.clone());
    let property = ClusterProperty::new(
        &name,
        ClusterPropertySpec {
            value: "value1".into(),
        },
    );
    properties
        .create(&PostParams::default(), &property)
        .await
        .unwrap();
    let claims: Api<ClusterClaim> = Api::all(managed.clone());
    let claim = ClusterClaim::new(
        &name,
        ClusterClaimSpec {
            value: Some("from-claim".into()),
        },
    );
    claims.create(&PostParams::default(), &claim).await.unwrap();
    reported(&hub, on.cluster(), &name, "value1").await;
    reported(&hub, off.cluster(), &name, "from-claim").await;
    reported(&hub, no_claims.cluster(), &name, "value1").await;

    let update = json!({"spec": {"value": "value2"}});
    properties
        .patch(&name, &PatchParams::default(), &Patch::Merge(&update))
        .await
        .unwrap();
    reported(&hub, on.cluster(), &name, "value2").await;
    properties
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    reported(&hub, on.cluster(), &name, "from-claim").await;
    // ClusterClaim off: with the property gone, nothing of that name (the claim is not reported).
    let gone = name.clone();
    fixture::wait(
        Api::<ManagedCluster>::all(hub.clone()),
        no_claims.cluster(),
        "the property gone and the claim not reported",
        move |mc: Option<&ManagedCluster>| {
            mc.and_then(|mc| mc.status.as_ref()).is_some_and(|s| {
                !s.cluster_claims
                    .iter()
                    .any(|c| c.name.as_deref() == Some(gone.as_str()))
            })
        },
    )
    .await;
    // The gate off never reported the property.
    let off_status = Api::<ManagedCluster>::all(hub.clone())
        .get(off.cluster())
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(
        off_status
            .cluster_claims
            .iter()
            .filter(|c| c.name.as_deref() == Some(name.as_str()))
            .all(|c| c.value.as_deref() == Some("from-claim"))
    );

    let _ = claims.delete(&name, &DeleteParams::default()).await;
    on.remove().await;
    off.remove().await;
    no_claims.remove().await;
}
