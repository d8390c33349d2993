//! Decisions of the hub index, from minimal objects; no cluster.
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use serde_json::json;
use tokio::time::Instant;

use super::{Action, Index};
use crate::api::cluster::ManagedCluster;
use crate::identity::{MANAGED_CLUSTERS_GROUP, common_name};

fn mc(value: serde_json::Value) -> ManagedCluster {
    let mut v = json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster", "spec": {}});
    merge(&mut v, value);
    serde_json::from_value(v).unwrap()
}

fn merge(a: &mut serde_json::Value, b: serde_json::Value) {
    match (a, b) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn pending(name: &str) -> ManagedCluster {
    mc(json!({"metadata": {"name": name}}))
}

fn accepted(name: &str) -> ManagedCluster {
    mc(
        json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 5}}),
    )
}

/// Accepted, with RBAC, finalizer and condition in place (as after the writer's Accept).
fn settled(index: &mut Index, name: &str, now: Instant) {
    let actions = index.apply_cluster(&accepted(name), now);
    assert_eq!(actions, [Action::Accept(name.into())]);
    index.done(&actions[0], true);
}

fn csr(
    name: &str,
    cluster: &str,
    user: &str,
    groups: &[&str],
    subject_cluster: &str,
) -> CertificateSigningRequest {
    let key = rcgen::KeyPair::generate().unwrap();
    let request =
        crate::agent::registration::csr::request_pem(subject_cluster, "ab12c", &key).unwrap();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"open-cluster-management.io/cluster-name": cluster}},
        "spec": {"request": base64(&request), "signerName": "kubernetes.io/kube-apiserver-client",
                 "usages": ["client auth"], "username": user, "groups": groups},
    }))
    .unwrap()
}

fn base64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn renewal(name: &str, cluster: &str) -> CertificateSigningRequest {
    let user = common_name(cluster, "ab12c");
    csr(
        name,
        cluster,
        &user,
        &[
            &format!("system:open-cluster-management:{cluster}"),
            MANAGED_CLUSTERS_GROUP,
        ],
        cluster,
    )
}

#[test]
fn a_pending_cluster_needs_nothing() {
    let mut index = Index::new();
    assert!(
        index
            .apply_cluster(&pending("c1"), Instant::now())
            .is_empty()
    );
    assert_eq!(index.deadline("c1"), None);
}

#[test]
fn accepting_grants_once_even_with_more_events() {
    let mut index = Index::new();
    let now = Instant::now();
    assert_eq!(
        index.apply_cluster(&accepted("c1"), now),
        [Action::Accept("c1".into())]
    );
    // In flight: a second event does not duplicate it.
    assert!(index.apply_cluster(&accepted("c1"), now).is_empty());
    index.done(&Action::Accept("c1".into()), true);
    let with_condition = mc(
        json!({"metadata": {"name": "c1", "finalizers": ["cluster.open-cluster-management.io/api-resource-cleanup"]},
        "spec": {"hubAcceptsClient": true},
        "status": {"conditions": [{"type": "HubAcceptedManagedCluster", "status": "True", "reason": "HubClusterAdminAccepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
    );
    assert!(index.apply_cluster(&with_condition, now).is_empty());
}

#[test]
fn a_failed_accept_is_decided_again() {
    let mut index = Index::new();
    let now = Instant::now();
    let actions = index.apply_cluster(&accepted("c1"), now);
    index.done(&actions[0], false);
    assert_eq!(index.retry("c1", now), [Action::Accept("c1".into())]);
}

#[test]
fn unaccepting_denies_and_deleting_cleans_up() {
    let mut index = Index::new();
    let now = Instant::now();
    settled(&mut index, "c1", now);
    assert_eq!(
        index.apply_cluster(&pending("c1"), now),
        [Action::Deny("c1".into())]
    );
    index.done(&Action::Deny("c1".into()), true);
    assert!(index.apply_cluster(&pending("c1"), now).is_empty());
    let deleting = mc(
        json!({"metadata": {"name": "c1", "deletionTimestamp": "2026-01-01T00:00:00Z",
        "finalizers": ["cluster.open-cluster-management.io/api-resource-cleanup"]}}),
    );
    assert_eq!(
        index.apply_cluster(&deleting, now),
        [Action::Cleanup("c1".into())]
    );
    index.done(&Action::Cleanup("c1".into()), true);
    assert!(index.retry("c1", now).is_empty());
}

#[test]
fn renewals_of_accepted_clusters_are_approved_and_others_are_not() {
    let mut index = Index::new();
    let now = Instant::now();
    // Before acceptance: kept, not approved.
    assert!(index.apply_csr(&renewal("c1-r1", "c1")).is_empty());
    let actions = index.apply_cluster(&accepted("c1"), now);
    assert_eq!(
        actions,
        [
            Action::Accept("c1".into()),
            Action::Approve("c1-r1".into(), "c1".into())
        ]
    );
    // A bootstrap CSR, and a CSR labelled c1 asking for c2's identity: never auto-approved.
    assert!(
        index
            .apply_csr(&csr("c1-b", "c1", "system:bootstrap:abcdef", &[], "c1"))
            .is_empty()
    );
    let forged = csr(
        "c1-f",
        "c1",
        &common_name("c2", "ab12c"),
        &["system:open-cluster-management:c2"],
        "c2",
    );
    assert!(index.apply_csr(&forged).is_empty());
    index.done(&Action::Approve("c1-r1".into(), "c1".into()), true);
    assert!(index.csr_names().iter().all(|n| n != "c1-r1"));
}

#[test]
fn a_stale_lease_marks_the_cluster_unknown_once() {
    let mut index = Index::new();
    let t0 = Instant::now();
    settled(&mut index, "c1", t0);
    let lease: Lease = serde_json::from_value(
        json!({"metadata": {"name": "managed-cluster-lease", "namespace": "c1"},
        "spec": {"renewTime": "2026-01-01T00:00:00.000000Z"}}),
    )
    .unwrap();
    index.apply_lease("c1", &lease, t0);
    assert_eq!(index.deadline("c1"), Some(t0 + Duration::from_secs(25)));
    assert!(
        index
            .lease_expired("c1", t0 + Duration::from_secs(24))
            .is_empty()
    );
    // The same renewTime seen again (a relist) does not restart the clock.
    index.apply_lease("c1", &lease, t0 + Duration::from_secs(20));
    let late = t0 + Duration::from_secs(25);
    assert_eq!(
        index.lease_expired("c1", late),
        [Action::MarkLeaseStale("c1".into())]
    );
    index.done(&Action::MarkLeaseStale("c1".into()), true);
    assert!(index.lease_expired("c1", late).is_empty());
    // A renewal restarts the clock.
    let renewed: Lease = serde_json::from_value(
        json!({"metadata": {"name": "managed-cluster-lease", "namespace": "c1"},
        "spec": {"renewTime": "2026-01-01T00:00:30.000000Z"}}),
    )
    .unwrap();
    index.apply_lease("c1", &renewed, late);
    assert_eq!(index.deadline("c1"), Some(late + Duration::from_secs(25)));
}

#[test]
fn an_accepted_cluster_without_a_lease_goes_stale_from_acceptance() {
    let mut index = Index::new();
    let t0 = Instant::now();
    settled(&mut index, "c1", t0);
    assert_eq!(index.deadline("c1"), Some(t0 + Duration::from_secs(25)));
    assert_eq!(index.deadline("unknown"), None);
}
