//! `clusteradm accept` on the real hub: CSR checks (a forged subject is refused), idempotence,
//! and its errors.
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::api::{Api, DeleteParams, PostParams};

use clusteradm::agent::registration::csr;
use clusteradm::api::cluster::ManagedCluster;

use crate::common;
use crate::registration::fixture;

fn accept(args: &[&str]) -> assert_cmd::Command {
    let mut cmd = common::clusteradm();
    cmd.arg("accept")
        .args(args)
        .arg("--kubeconfig")
        .arg(common::env().hub);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A ManagedCluster as the agent creates it, and a CSR sent with the bootstrap token asking for
/// `subject_cluster`'s identity, labelled `cluster`.
async fn registration(token: &str, cluster: &str, subject_cluster: &str) -> String {
    registration_for(token, cluster, subject_cluster, 600).await
}

/// [`registration`], asking for a certificate valid `seconds`.
async fn registration_for(
    token: &str,
    cluster: &str,
    subject_cluster: &str,
    seconds: i32,
) -> String {
    let agent = common::hub_client_with_token(token).await;
    let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": cluster}, "spec": {"hubAcceptsClient": false}
    }))
    .unwrap();
    let clusters: Api<ManagedCluster> = Api::all(agent.clone());
    if clusters.get_opt(cluster).await.unwrap().is_none() {
        clusters.create(&PostParams::default(), &mc).await.unwrap();
    }
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = csr::request_pem(subject_cluster, "abcde", &key).unwrap();
    let api: Api<CertificateSigningRequest> = Api::all(agent);
    let created = api
        .create(
            &PostParams::default(),
            &csr::object(cluster, &pem, Some(seconds)),
        )
        .await
        .unwrap();
    created.metadata.name.unwrap()
}

async fn remove(cluster: &str) {
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    if let Ok(deleted) = api.delete(cluster, &DeleteParams::default()).await {
        let uid = deleted
            .left()
            .and_then(|m| m.metadata.uid)
            .unwrap_or_default();
        fixture::wait_deleted(api, cluster, &uid).await;
    }
    // The hub deletes the cluster's namespace too; a cluster made again under the name is refused
    // while it terminates (as upstream's webhook does), so wait until it is gone.
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(common::hub().await);
    if let Ok(Some(ns)) = namespaces.get_opt(cluster).await
        && ns.metadata.deletion_timestamp.is_some()
    {
        let uid = ns.metadata.uid.unwrap_or_default();
        fixture::wait_deleted(namespaces, cluster, &uid).await;
    }
}

/// The cluster is still not accepted; then it is removed.
async fn assert_not_accepted_and_remove(c: &str) {
    let mc = Api::<ManagedCluster>::all(common::hub().await)
        .get(c)
        .await
        .unwrap();
    assert!(!mc.spec.hub_accepts_client, "cluster {c} was accepted");
    remove(c).await;
}

async fn approved(name: &str) -> Option<(String, String)> {
    let api: Api<CertificateSigningRequest> = Api::all(common::hub().await);
    let csr = api.get(name).await.unwrap();
    let c = csr
        .status?
        .conditions?
        .into_iter()
        .find(|c| c.type_ == "Approved")?;
    Some((c.reason.unwrap_or_default(), c.message.unwrap_or_default()))
}

#[tokio::test]
async fn an_unknown_cluster_is_named_and_nothing_changes() {
    fixture::hub().await; // an OCM hub, so the error is about the cluster, not the hub
    let out = fixture::run(accept(&["--clusters", "it-no-such-cluster"])).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("managed cluster it-no-such-cluster not found"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("hint:"));
}

#[tokio::test]
async fn without_clusters_and_without_a_terminal_it_asks_for_them() {
    let out = fixture::run(accept(&[])).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--clusters"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csr_claiming_another_clusters_identity_is_not_approved() {
    let token = fixture::hub().await;
    let c = common::unique("it-forge");
    let forged = registration(&token, &c, "some-other-cluster").await;
    let out = fixture::run(accept(&["--clusters", &c])).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("not approving CSR {forged}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("not an agent of cluster {c}")),
        "{stderr}"
    );
    assert_eq!(approved(&forged).await, None, "the forged CSR was approved");
    assert_not_accepted_and_remove(&c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_approves_then_says_already_accepted_and_changes_nothing() {
    let token = fixture::hub().await;
    let c = common::unique("it-acc");
    let name = registration(&token, &c, &c).await;

    let out = fixture::run(accept(&["--clusters", &c])).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("approved CSR {name}")), "{stderr}");
    assert_eq!(
        approved(&name).await,
        Some((
            "clusteradm Approve".into(),
            "This CSR was approved by clusteradm certificate approve.".into()
        ))
    );
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    assert!(api.get(&c).await.unwrap().spec.hub_accepts_client);

    for _ in 0..2 {
        let out = fixture::run(accept(&["--clusters", &c, "--wait"])).await;
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("cluster {c} is already accepted")),
            "{stderr}"
        );
        assert!(!stderr.contains("approved CSR"), "{stderr}");
    }
    remove(&c).await;
}

/// Someone with the bootstrap credential sends a second CSR for the same agent identity, with his
/// own key: accept cannot tell which is the agent's, so it approves neither and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_csrs_for_the_same_agent_are_both_refused() {
    let token = fixture::hub().await;
    let c = common::unique("it-twin");
    let first = registration(&token, &c, &c).await;
    let second = registration(&token, &c, &c).await;
    let out = fixture::run(accept(&["--clusters", &c])).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("several pending CSRs for the same agent"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&first) && stderr.contains(&second),
        "{stderr}"
    );
    assert_eq!(approved(&first).await, None);
    assert_eq!(approved(&second).await, None);
    assert_not_accepted_and_remove(&c).await;
}

/// A kubeadm node-join token is a bootstrap token too, but not one `init` made: its CSR for a
/// cluster is never approved by accept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csr_from_another_bootstrap_token_is_not_approved() {
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    fixture::hub().await;
    let hub = common::hub().await;
    let c = common::unique("it-kubeadm");
    let group = format!("system:bootstrappers:kubeadm:{c}");
    // What kubeadm grants its node-join tokens: requesting certificates.
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": c},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-bootstrapper"},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}]
    }))
    .unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(hub.clone());
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let node_token = common::certificate_client(&hub, "system:bootstrap:kdm123", &group).await;
    let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": c}, "spec": {"hubAcceptsClient": false}
    }))
    .unwrap();
    Api::<ManagedCluster>::all(hub.clone())
        .create(&PostParams::default(), &mc)
        .await
        .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = csr::request_pem(&c, "abcde", &key).unwrap();
    let name = Api::<CertificateSigningRequest>::all(node_token)
        .create(&PostParams::default(), &csr::object(&c, &pem, Some(600)))
        .await
        .unwrap()
        .metadata
        .name
        .unwrap();

    let out = fixture::run(accept(&["--clusters", &c])).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not a bootstrap identity"), "{stderr}");
    assert_eq!(
        approved(&name).await,
        None,
        "a kubeadm token's CSR was approved"
    );
    bindings.delete(&c, &DeleteParams::default()).await.unwrap();
    remove(&c).await;
}

/// A CSR asking for a certificate valid longer than a year is not approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csr_asking_for_more_than_a_year_is_not_approved() {
    let token = fixture::hub().await;
    let c = common::unique("it-long");
    let name = registration_for(&token, &c, &c, 2 * 365 * 24 * 3600).await;
    let out = fixture::run(accept(&["--clusters", &c])).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("longer than"), "{stderr}");
    assert_eq!(approved(&name).await, None);
    remove(&c).await;
}

/// Fifty clusters in one call: one list of clusters and of CSRs, approvals in parallel; a
/// cluster that does not exist is named with the others and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clusters_are_accepted_in_one_call() {
    let token = fixture::hub().await;
    let prefix = common::unique("it-acc50");
    let clusters: Vec<String> = (0..50).map(|i| format!("{prefix}-{i}")).collect();
    let csrs = futures::future::join_all(clusters.iter().map(|c| registration(&token, c, c))).await;

    let mut with_unknown = clusters.clone();
    with_unknown.push(format!("{prefix}-missing"));
    let out = fixture::run(accept(&["--clusters", &with_unknown.join(",")])).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(&format!("managed cluster {prefix}-missing not found")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(approved(&csrs[0]).await, None, "nothing changed");

    let start = std::time::Instant::now();
    let out = fixture::run(accept(&["--clusters", &clusters.join(",")])).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    eprintln!("accepted 50 clusters in {:?}", start.elapsed());
    assert_eq!(
        stderr.matches("(hubAcceptsClient: true)").count(),
        50,
        "{stderr}"
    );
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    for (c, csr) in clusters.iter().zip(&csrs) {
        assert!(api.get(c).await.unwrap().spec.hub_accepts_client, "{c}");
        assert!(approved(csr).await.is_some(), "{csr}");
    }
    futures::future::join_all(clusters.iter().map(|c| remove(c))).await;
}

/// A cluster joined again under the same name: the CSR approved for its first agent is still on
/// the hub (the API server keeps it for an hour). `accept --wait` run as the new agent sends its
/// CSR approves that CSR, whichever comes first (before, it could accept on the earlier CSR's word
/// and leave the new agent waiting for good); with no new CSR (an agent that kept its
/// certificate) it accepts on the earlier one after a moment, as upstream's accept does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_joined_again_gets_its_new_csr_approved() {
    let token = fixture::hub().await;
    let c = common::unique("it-acc-again");
    let first = registration(&token, &c, &c).await;
    let out = fixture::run(accept(&["--clusters", &c])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    // The new ManagedCluster, in a later second than that CSR (times have a second's resolution).
    let made_again = || async {
        remove(&c).await;
        let csrs: Api<CertificateSigningRequest> = Api::all(common::hub().await);
        let made = csrs
            .get(&first)
            .await
            .unwrap()
            .metadata
            .creation_timestamp
            .unwrap()
            .0;
        while k8s_openapi::jiff::Timestamp::now().as_second() <= made.as_second() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await; // the clock, not a peer
        }
        let agent = common::hub_client_with_token(&token).await;
        let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": c}, "spec": {"hubAcceptsClient": false}
        }))
        .unwrap();
        Api::<ManagedCluster>::all(agent)
            .create(&PostParams::default(), &mc)
            .await
            .unwrap();
    };
    let clusters: Api<ManagedCluster> = Api::all(common::hub().await);

    made_again().await;
    let accepting = tokio::spawn(fixture::run(accept(&["--clusters", &c, "--wait"])));
    let second = registration(&token, &c, &c).await;
    let out = accepting.await.unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("approved CSR {second}")),
        "{stderr}"
    );
    assert!(clusters.get(&c).await.unwrap().spec.hub_accepts_client);

    made_again().await;
    let out = fixture::run(accept(&["--clusters", &c, "--wait", "--timeout", "3"])).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("approved CSR"), "{stderr}");
    assert!(clusters.get(&c).await.unwrap().spec.hub_accepts_client);
    remove(&c).await;
}
