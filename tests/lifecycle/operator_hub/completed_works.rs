//! Upstream's `CleanUpCompletedManifestWork` gate on the real hub, in-process, with a work agent:
//! a work whose condition rule says `Complete` and whose `ttlSecondsAfterFinished` has passed is
//! kept while the gate is off, and deleted once the ClusterManager switches it on.
use std::time::Duration;

use clusteradm::api::conditions;
use clusteradm::api::work::ManifestWork;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;

async fn namespace(client: &Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
}

/// `Some` once the test's work is gone (`None` while it is there, or the read fails).
async fn gone(works: Api<ManifestWork>) -> Option<&'static str> {
    works
        .get_opt("job-like")
        .await
        .ok()?
        .is_none()
        .then_some("gone")
}

#[tokio::test]
async fn completed_works_go_after_their_ttl_once_the_gate_is_on() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    let managed = common::managed().await;
    common::install_crds(&managed, &clusteradm::api::managed_crds(), WAIT).await;
    let cluster = common::unique("lc-done");
    let target = format!("{cluster}-m");
    namespace(&client, &cluster).await;
    namespace(&managed, &target).await;
    let (server, _) = common::server_and_ca(&common::env().hub);
    let opts = clusteradm::agent::work::WorkAgentOptions::new(
        client.clone(),
        server,
        managed.clone(),
        &cluster,
        format!("{cluster}-agent"),
    );
    let stop = clusteradm::runtime::Shutdown::new();
    let agent = tokio::spawn(clusteradm::agent::work::run(opts, stop.clone()));

    // Complete as soon as applied (its rule is true), with a TTL of one second.
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "job-like", "namespace": cluster},
        "spec": {
            "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "done", "namespace": target}, "data": {"done": "yes"}}]},
            "manifestConfigs": [{
                "resourceIdentifier": {"group": "", "resource": "configmaps", "name": "done", "namespace": target},
                "conditionRules": [{"condition": "Complete", "type": "CEL",
                                    "celExpressions": ["object.data.done == 'yes'"]}]}],
            "deleteOption": {"propagationPolicy": "Foreground", "ttlSecondsAfterFinished": 1}}}))
    .unwrap();
    let works: Api<ManifestWork> = Api::namespaced(client.clone(), &cluster);
    works.create(&PostParams::default(), &work).await.unwrap();
    common::eventually("the work Complete", WAIT, || {
        let works = works.clone();
        async move {
            let w = works.get("job-like").await.ok()?;
            conditions::is_true(&w.status?.conditions, "Complete").then_some(())
        }
    })
    .await;

    // Off: kept past its deadline.
    common::never("deleted with the gate off", Duration::from_secs(4), || {
        gone(works.clone())
    })
    .await;
    // On: deleted.
    let gate = json!({"workConfiguration": {
        "featureGates": [{"feature": "CleanUpCompletedManifestWork", "mode": "Enable"}]}});
    patch_spec(&client, gate).await;
    common::eventually("the completed work deleted", WAIT, || gone(works.clone())).await;

    stop.cancel();
    let _ = agent.await;
    for (c, name) in [(&client, &cluster), (&managed, &target)] {
        let _ = Api::<Namespace>::all(c.clone())
            .delete(name, &DeleteParams::default())
            .await;
    }
    teardown(&client, op).await;
}
