//! The hub's admission rules as ValidatingAdmissionPolicies (what the in-process ClusterManager
//! operator applies in place of upstream's webhooks), enforced by the real API server and its
//! real authorizer: a user who may write ManagedClusters still may not accept one, nor move one
//! into a cluster set, without the permission upstream's webhook asks for.
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

use clusteradm::api::cluster::ManagedCluster;
use clusteradm::operator::cluster_manager::build::admission;

use crate::common;
use crate::registration::fixture;

fn cluster(name: &str, accepts: bool, set: Option<&str>) -> ManagedCluster {
    let labels =
        set.map(|s| serde_json::json!({"cluster.open-cluster-management.io/clusterset": s}));
    serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels}, "spec": {"hubAcceptsClient": accepts}
    }))
    .unwrap()
}

/// A dry-run create as `user`: `Ok` or the API server's message.
async fn try_create(user: &kube::Client, mc: &ManagedCluster) -> Result<(), String> {
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    match Api::<ManagedCluster>::all(user.clone())
        .create(&dry, mc)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) => Err(s.message),
        Err(e) => Err(e.to_string()),
    }
}

async fn grant(hub: &kube::Client, name: &str, group: &str, rules: serde_json::Value) {
    let ssa = PatchParams::apply("it-admission").force();
    let role: ClusterRole =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "rules": rules}))
            .unwrap();
    Api::<ClusterRole>::all(hub.clone())
        .patch(name, &ssa, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}]
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(hub.clone())
        .patch(name, &ssa, &Patch::Apply(&binding))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_and_joining_a_set_need_upstreams_permissions() {
    let hub = common::hub().await;
    let ssa = PatchParams::apply("clusteradm").force();
    for p in admission::policies() {
        let name = p.metadata.name.clone().unwrap();
        Api::<ValidatingAdmissionPolicy>::all(hub.clone())
            .patch(&name, &ssa, &Patch::Apply(&p))
            .await
            .unwrap();
    }
    for b in admission::bindings() {
        let name = b.metadata.name.clone().unwrap();
        Api::<ValidatingAdmissionPolicyBinding>::all(hub.clone())
            .patch(&name, &ssa, &Patch::Apply(&b))
            .await
            .unwrap();
    }

    // The bootstrap credential may create ManagedClusters, but not accepted ones.
    let token = fixture::hub().await;
    let bootstrap = common::hub_client_with_token(&token).await;
    let own = common::unique("it-vap-self");
    let refused = common::eventually(
        "the policy to refuse self-acceptance",
        Duration::from_secs(30),
        || {
            let (user, mc) = (bootstrap.clone(), cluster(&own, true, None));
            async move { try_create(&user, &mc).await.err() }
        },
    )
    .await;
    assert!(refused.contains("managedclusters/accept"), "{refused}");
    try_create(&bootstrap, &cluster(&own, false, None))
        .await
        .unwrap();

    let id = common::unique("it-vap");
    let group = format!("{id}-group");
    let writer = format!("{id}-writer");
    grant(
        &hub,
        &writer,
        &group,
        serde_json::json!([{
        "apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclusters"],
        "verbs": ["create", "get", "update", "patch"]}]),
    )
    .await;
    let user = common::certificate_client(&hub, &format!("{id}-user"), &group).await;
    let c = common::unique("it-vap-c");

    // Not accepting, no set: allowed.
    common::eventually("the writer's RBAC", Duration::from_secs(20), || {
        let (user, mc) = (user.clone(), cluster(&c, false, None));
        async move { try_create(&user, &mc).await.ok() }
    })
    .await;
    // Accepting without managedclusters/accept: refused, saying which permission would allow it
    // (the policy takes effect within moments of being created: wait for it).
    let refused = common::eventually(
        "the policy to refuse accepting",
        Duration::from_secs(30),
        || {
            let (user, mc) = (user.clone(), cluster(&c, true, None));
            async move { try_create(&user, &mc).await.err() }
        },
    )
    .await;
    assert!(refused.contains("managedclusters/accept"), "{refused}");
    // Joining a set without managedclustersets/join: refused.
    let set = format!("{id}-set");
    let refused = try_create(&user, &cluster(&c, false, Some(&set)))
        .await
        .unwrap_err();
    assert!(refused.contains("managedclustersets/join"), "{refused}");

    let accepter = format!("{id}-accepter");
    grant(&hub, &accepter, &group, serde_json::json!([
        {"apiGroups": ["register.open-cluster-management.io"], "resources": ["managedclusters/accept"],
         "resourceNames": [c], "verbs": ["update"]},
        {"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclustersets/join"],
         "resourceNames": [set], "verbs": ["create"]}])).await;
    common::eventually(
        "accepting with managedclusters/accept",
        Duration::from_secs(20),
        || {
            let (user, mc) = (user.clone(), cluster(&c, true, Some(&set)));
            async move { try_create(&user, &mc).await.ok() }
        },
    )
    .await;
    // The permission is per cluster and per set.
    let other = common::unique("it-vap-other");
    assert!(
        try_create(&user, &cluster(&other, true, None))
            .await
            .is_err()
    );
    assert!(
        try_create(&user, &cluster(&c, false, Some("another-set")))
            .await
            .is_err()
    );

    for name in [writer, accepter] {
        let _ = Api::<ClusterRoleBinding>::all(hub.clone())
            .delete(&name, &DeleteParams::default())
            .await;
        let _ = Api::<ClusterRole>::all(hub.clone())
            .delete(&name, &DeleteParams::default())
            .await;
    }
}
