//! `spec.executor` beyond per-verb reviews: an executor that may write RoleBindings in its
//! namespace cannot bind `cluster-admin` through the agent (the escalation dry run), and a resync
//! of an unchanged work is answered from the review cache instead of sending the reviews again.
use std::time::Duration;

use clusteradm::api::conditions;
use clusteradm::api::work::ManifestWork;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::Client;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use super::{Agent, TestCluster, WAIT, wait_work};
use crate::common;

/// Creates ServiceAccount `runner` in `ns` with a Role (bound to it) allowing every verb the
/// executor check asks for on `resource` in that namespace.
async fn runner(managed: &Client, ns: &str, group: &str, resource: &str) {
    let post = PostParams::default();
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "runner", "namespace": ns}})).unwrap();
    Api::<ServiceAccount>::namespaced(managed.clone(), ns)
        .create(&post, &sa)
        .await
        .unwrap();
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "runner", "namespace": ns},
        "rules": [{"apiGroups": [group], "resources": [resource],
                   "verbs": ["create", "update", "patch", "get", "delete"]}]
    }))
    .unwrap();
    Api::<Role>::namespaced(managed.clone(), ns)
        .create(&post, &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "runner", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "runner"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": ns}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(managed.clone(), ns)
        .create(&post, &binding)
        .await
        .unwrap();
}

/// A work run by `runner` of `ns`.
fn work(cluster: &str, name: &str, ns: &str, manifests: &[serde_json::Value]) -> ManifestWork {
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {
            "executor": {"subject": {"type": "ServiceAccount",
                                     "serviceAccount": {"namespace": ns, "name": "runner"}}},
            "workload": {"manifests": manifests}
        }
    }))
    .unwrap()
}

/// A RoleBinding `name` in `ns` of `role_kind` `role` to `runner`.
fn binding(ns: &str, name: &str, role_kind: &str, role: &str) -> serde_json::Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
           "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": ns}]})
}

/// Every review passes (the executor may write RoleBindings in its namespace), yet binding
/// `cluster-admin` would grant it more than it holds: refused with upstream's message, nothing
/// bound; binding the Role it holds is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_may_not_escalate_through_a_role_binding() {
    let _hub = super::hub_lock().await;
    let c = TestCluster::new("it-work-escalate").await;
    let ns = c.managed_namespace().await;
    runner(&c.managed, &ns, "rbac.authorization.k8s.io", "rolebindings").await;
    let _agent = c.agent(Duration::from_secs(60));

    let name = common::unique("w");
    let manifests = [
        binding(&ns, "it-admin", "ClusterRole", "cluster-admin"),
        binding(&ns, "it-held", "Role", "runner"),
    ];
    c.works()
        .create(
            &PostParams::default(),
            &work(&c.name, &name, &ns, &manifests),
        )
        .await
        .unwrap();
    let w = wait_work(&c.works(), &name, "reported", |w| {
        w.status
            .as_ref()
            .and_then(|s| s.resource_status.as_ref())
            .is_some_and(|r| r.manifests.len() == 2)
    })
    .await;
    let manifests = w.status.unwrap().resource_status.unwrap().manifests;
    let applied = |i: usize| {
        conditions::find(&manifests[i].conditions, "Applied")
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
            .unwrap()
    };
    let (status, reason, message) = applied(0);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AppliedManifestFailed")
    );
    assert_eq!(
        message,
        format!(
            "Failed to apply manifest: not allowed to apply the resource \
             rbac.authorization.k8s.io rolebindings, {ns} it-admin, error: permission escalation"
        )
    );
    assert_eq!(applied(1).0, "True", "{:?}", applied(1));
    let bindings = Api::<RoleBinding>::namespaced(c.managed.clone(), &ns);
    assert!(
        bindings.get_opt("it-admin").await.unwrap().is_none(),
        "cluster-admin was bound to the executor"
    );
    bindings.get("it-held").await.unwrap();
}

/// What the counting managed client saw: SubjectAccessReviews sent so far, and how many had been
/// sent when each server-side apply of the watched object went out (one per pass over the work).
#[derive(Debug, Default, Clone)]
struct Seen {
    reviews: usize,
    reviews_at_apply: Vec<usize>,
}

/// An admin client of the managed cluster that reports what it sends to `seen`.
async fn counting_client(seen: tokio::sync::watch::Sender<Seen>, applied_path: String) -> Client {
    use tower::util::MapRequestLayer;
    let kc = Kubeconfig::read_from(common::env().managed).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    let count = MapRequestLayer::new(move |req: http::Request<kube::client::Body>| {
        let path = req.uri().path();
        if path == "/apis/authorization.k8s.io/v1/subjectaccessreviews" {
            seen.send_modify(|s| s.reviews += 1);
        } else if path == applied_path
            && req.headers().get(http::header::CONTENT_TYPE)
                == Some(&http::HeaderValue::from_static(
                    "application/apply-patch+yaml",
                ))
        {
            seen.send_modify(|s| s.reviews_at_apply.push(s.reviews));
        }
        req
    });
    kube::client::ClientBuilder::try_from(config)
        .unwrap()
        .with_layer(&count)
        .build()
}

/// With `ExecutorValidatingCaches` on, resyncs of an unchanged work with an executor send no new
/// SubjectAccessReviews: the answers are cached until RBAC changes (other tests' RBAC changes may
/// clear it now and then, so only some pass after the first must have sent none; without the
/// cache every pass sends five).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_is_answered_from_the_review_cache() {
    let per_pass = reviews_per_pass("it-work-sarcache", true).await;
    assert!(
        per_pass.contains(&0),
        "every resync sent SubjectAccessReviews again: {per_pass:?} per pass"
    );
}

/// With the gate off (upstream's default), every apply asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_cache_gate_every_resync_asks_again() {
    let per_pass = reviews_per_pass("it-work-nocache", false).await;
    assert!(
        per_pass.iter().all(|n| *n > 0),
        "a resync was answered without SubjectAccessReviews: {per_pass:?} per pass"
    );
}

/// How many SubjectAccessReviews the agent sent between successive applies of one work with an
/// executor, resynced every second, with the review cache on or off.
async fn reviews_per_pass(prefix: &str, caches: bool) -> Vec<usize> {
    const PASSES: usize = 6;
    let _hub = super::hub_lock().await;
    let c = TestCluster::new(prefix).await;
    let ns = c.managed_namespace().await;
    runner(&c.managed, &ns, "", "configmaps").await;
    let (seen, mut watch) = tokio::sync::watch::channel(Seen::default());
    let managed = counting_client(seen, format!("/api/v1/namespaces/{ns}/configmaps/cached")).await;
    let _agent = Agent::start_with(c.hub.clone(), managed, &c.name, |opts| {
        opts.resync = Duration::from_secs(1);
        opts.executor_caches = caches;
    });

    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cached", "namespace": ns}});
    c.works()
        .create(
            &PostParams::default(),
            &work(&c.name, &common::unique("w"), &ns, &[cm]),
        )
        .await
        .unwrap();
    let seen = tokio::time::timeout(WAIT, watch.wait_for(|s| s.reviews_at_apply.len() >= PASSES))
        .await
        .unwrap_or_else(|_| panic!("the work was not applied {PASSES} times within {WAIT:?}"))
        .unwrap()
        .clone();
    println!(
        "reviews before each apply (cache {caches}): {:?}",
        seen.reviews_at_apply
    );
    seen.reviews_at_apply
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect()
}
