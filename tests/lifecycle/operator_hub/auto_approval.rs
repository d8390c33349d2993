//! Upstream's `ManagedClusterAutoApproval` gate on the real hub, in-process: a cluster whose
//! bootstrap CSR comes from a user the ClusterManager lists is accepted (and marked so) and its
//! certificate approved without `accept`; another user's cluster is left for `accept`.
use base64::Engine as _;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use super::{HUB_SINGLETON, WAIT, patch_spec, setup, teardown, wait_applied};
use crate::common;
use clusteradm::api::cluster::ManagedCluster;
use clusteradm::hub::registration::decide::AUTO_ACCEPTED_ANNOTATION;

/// A client for `user` that may do what a bootstrap credential does (ClusterRole `id`).
async fn bootstrap_user(client: &Client, id: &str, user: &str) -> Client {
    let rules = serde_json::json!([
        {"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclusters"], "verbs": ["create", "get"]},
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["create", "get"]}]);
    super::user_allowed(client, id, user, rules).await
}

/// Registers `cluster` as its agent's bootstrap would: the ManagedCluster and a CSR for it.
async fn register(as_user: &Client, cluster: &str) {
    let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": cluster}, "spec": {"hubAcceptsClient": false}}))
    .unwrap();
    Api::<ManagedCluster>::all(as_user.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let request =
        clusteradm::agent::registration::csr::request_pem(cluster, "ab12c", &key).unwrap();
    let csr: CertificateSigningRequest = serde_json::from_value(serde_json::json!({
        "metadata": {"name": cluster, "labels": {"open-cluster-management.io/cluster-name": cluster}},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode(request),
                 "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}}))
    .unwrap();
    Api::<CertificateSigningRequest>::all(as_user.clone())
        .create(&PostParams::default(), &csr)
        .await
        .unwrap();
}

fn approved(csr: &CertificateSigningRequest) -> bool {
    csr.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Approved" && c.status == "True")
        })
}

#[tokio::test]
async fn listed_users_clusters_are_accepted_without_accept() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (client, op) = setup().await;
    wait_applied(&client).await;
    let id = common::unique("lc-auto");
    let listed = format!("{id}-listed");
    let gate = serde_json::json!({"registrationConfiguration": {
        "featureGates": [{"feature": "DefaultClusterSet", "mode": "Enable"},
                         {"feature": "ManagedClusterAutoApproval", "mode": "Enable"}],
        "autoApproveUsers": [listed]}});
    patch_spec(&client, gate).await;
    let other_user = bootstrap_user(&client, &format!("{id}-o"), &format!("{id}-other")).await;
    let listed_user = bootstrap_user(&client, &format!("{id}-l"), &listed).await;
    // The other user's cluster first: by the time the listed one is accepted, it was seen too.
    let (other, mine) = (format!("{id}-b"), format!("{id}-a"));
    register(&other_user, &other).await;
    register(&listed_user, &mine).await;

    let clusters: Api<ManagedCluster> = Api::all(client.clone());
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    common::eventually(
        "the listed user's cluster accepted and its CSR approved",
        WAIT,
        || {
            let (clusters, csrs, mine) = (clusters.clone(), csrs.clone(), mine.clone());
            async move {
                let mc = clusters.get(&mine).await.ok()?;
                let marked = mc
                    .metadata
                    .annotations
                    .as_ref()?
                    .contains_key(AUTO_ACCEPTED_ANNOTATION);
                let csr = csrs.get(&mine).await.ok()?;
                (mc.spec.hub_accepts_client && marked && approved(&csr)).then_some(())
            }
        },
    )
    .await;
    // The other cluster was reconciled (the hub put it in the default set) and left for `accept`.
    common::eventually("the other cluster seen by the hub", WAIT, || {
        let (clusters, other) = (clusters.clone(), other.clone());
        async move {
            let mc = clusters.get(&other).await.ok()?;
            mc.metadata
                .labels
                .as_ref()?
                .contains_key("cluster.open-cluster-management.io/clusterset")
                .then_some(())
        }
    })
    .await;
    assert!(!clusters.get(&other).await.unwrap().spec.hub_accepts_client);
    assert!(!approved(&csrs.get(&other).await.unwrap()));

    for name in [&mine, &other] {
        let _ = csrs.delete(name, &DeleteParams::default()).await;
        let _ = clusters.delete(name, &DeleteParams::default()).await;
    }
    for name in [format!("{id}-o"), format!("{id}-l")] {
        let _ = Api::<ClusterRole>::all(client.clone())
            .delete(&name, &DeleteParams::default())
            .await;
        let _ = Api::<ClusterRoleBinding>::all(client.clone())
            .delete(&name, &DeleteParams::default())
            .await;
    }
    teardown(&client, op).await;
}
