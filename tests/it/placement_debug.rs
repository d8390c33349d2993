//! Upstream's placement debug endpoint as our hub pods serve it (`PlacementDebugServer`), against
//! the hub's own authenticator and authorizer, with upstream's e2e spec's setup: a set, its
//! binding, a cluster and a placement in a fresh namespace, and a ServiceAccount allowed the
//! debug URLs and `create` on placements there. GET and POST answer upstream's `DebugResult`;
//! no token is refused (401), a token without the URL right too (403), one without `create` on
//! placements gets upstream's error, as does a placement that does not exist.
use std::process::Command;
use std::time::Duration;

use clusteradm::api::cluster::{
    ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding, Placement,
};
use clusteradm::runtime::Shutdown;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::common;

/// `curl`'s status code and body for `url` with `token`, POSTing `body` if given.
fn call(url: &str, token: Option<&str>, body: Option<&Value>) -> (String, String) {
    let mut curl = Command::new("curl");
    curl.args(["-sk", "-w", "\n%{http_code}", "--max-time", "20"]);
    if let Some(token) = token {
        curl.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    if let Some(body) = body {
        curl.args(["-X", "POST", "-H", "Content-Type: application/json", "-d"])
            .arg(body.to_string());
    }
    let out = curl.arg(url).output().expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.to_owned(), body.to_owned())
}

async fn apply<K>(api: &Api<K>, object: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let name = object["metadata"]["name"].as_str().unwrap().to_owned();
    api.patch(
        &name,
        &PatchParams::apply("it-placement-debug").force(),
        &Patch::Apply(&object),
    )
    .await
    .unwrap();
}

/// The namespace `ns` with upstream's e2e setup: set, binding, cluster, placement `p`, and
/// ServiceAccount `reader` allowed placements there (`stranger` gets nothing).
async fn setup(hub: &kube::Client, ns: &str) -> (String, String) {
    common::install_crds(hub, &clusteradm::api::hub_crds(), Duration::from_secs(60)).await;
    let set = format!("{ns}-set");
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    apply(
        &Api::<ManagedClusterSet>::all(hub.clone()),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": set},
        }),
    )
    .await;
    apply(&Api::<ManagedClusterSetBinding>::namespaced(hub.clone(), ns), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": set, "namespace": ns}, "spec": {"clusterSet": set},
    }))
    .await;
    let cluster = format!("{ns}-cluster");
    apply(&Api::<ManagedCluster>::all(hub.clone()), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": cluster, "labels": {"cluster.open-cluster-management.io/clusterset": set, "env": "test"}},
        "spec": {"hubAcceptsClient": true},
    }))
    .await;
    apply(
        &Api::<Placement>::namespaced(hub.clone(), ns),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": ns},
            "spec": {"clusterSets": [set], "tolerations": [
                {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
                {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
            ]},
        }),
    )
    .await;
    apply(&Api::<Role>::namespaced(hub.clone(), ns), json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "placement-reader", "namespace": ns},
        "rules": [{"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["placements"], "verbs": ["create", "get"]}],
    }))
    .await;
    apply(&Api::<RoleBinding>::namespaced(hub.clone(), ns), json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "placement-reader", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "placement-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
    }))
    .await;
    (set, cluster)
}

// Several threads: curl blocks the one it runs on while the server answers on the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_placement_debug_endpoint_answers_as_upstreams() {
    let hub = common::hub().await;
    let ns = common::unique("debugger");
    let (set, cluster) = setup(&hub, &ns).await;
    let reader = common::service_account_token(&hub, &ns, "reader").await;
    let stranger = common::service_account_token(&hub, &ns, "stranger").await;
    // The URL right without `create` on placements.
    let outsider = common::service_account_token(&hub, &ns, "outsider").await;
    let role = format!("debug-access-{ns}");
    let urls = ["/debug/placements/*"];
    common::allow_urls(&hub, &role, &ns, "reader", &urls, &["get", "post"]).await;
    let outsider_role = format!("{role}-outsider");
    common::allow_urls(&hub, &outsider_role, &ns, "outsider", &urls, &["get"]).await;

    let shutdown = Shutdown::new();
    let addr = clusteradm::hub::placement::debug::serve(
        "127.0.0.1:0".parse().unwrap(),
        hub.clone(),
        shutdown.clone(),
    )
    .await
    .unwrap();
    let url = format!("https://{addr}/debug/placements/{ns}/p");
    assert_eq!(call(&url, None, None).0, "401", "no token");
    assert_eq!(
        call(&url, Some(&stranger), None).0,
        "403",
        "no right to the URL"
    );
    // RBAC takes a moment to reach the authorizer's cache.
    let body = common::eventually("the reader answered", Duration::from_secs(30), || {
        let (url, reader) = (url.clone(), reader.clone());
        async move {
            let (code, body) = call(&url, Some(&reader), None);
            let result: Value = serde_json::from_str(&body).ok()?;
            (code == "200" && result.get("error").is_none()).then_some(result)
        }
    })
    .await;
    assert_eq!(
        body["placement"]["metadata"],
        json!({"name": "p", "namespace": ns})
    );
    assert_eq!(body["placement"]["spec"]["clusterSets"], json!([set]));
    assert_eq!(
        body["filteredPipelineResults"],
        json!([
            {"name": "Predicate", "filteredClusters": [cluster]},
            {"name": "Predicate,TaintToleration", "filteredClusters": [cluster]},
        ])
    );
    assert_eq!(body["aggregatedScores"][0]["clusterName"], cluster.as_str());

    // POST: a placement given whole, not stored.
    let posted = json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "test-post-placement", "namespace": ns},
        "spec": {"clusterSets": [set], "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}]},
    });
    let base = format!("https://{addr}/debug/placements/");
    let (code, body) = call(&base, Some(&reader), Some(&posted));
    let result: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(code, "200", "{body}");
    assert_eq!(
        result["placement"]["metadata"]["name"],
        "test-post-placement"
    );
    assert_eq!(
        result["filteredPipelineResults"][0]["filteredClusters"],
        json!([]),
        "no cluster is env=prod"
    );

    // Upstream's errors, in the result.
    let (code, body) = call(&url, Some(&outsider), None);
    assert_eq!(code, "200");
    assert!(
        body.contains(&format!(
            "user does not have permission to create placements in namespace {ns}"
        )),
        "{body}"
    );
    let (_, body) = call(
        &format!("https://{addr}/debug/placements/{ns}/missing"),
        Some(&reader),
        None,
    );
    assert!(
        body.contains("\"missing\\\" not found")
            || body.contains("missing\" not found")
            || body.contains("not found"),
        "{body}"
    );

    shutdown.cancel();
    for r in [&role, &outsider_role] {
        let _ = Api::<ClusterRoleBinding>::all(hub.clone())
            .delete(r, &DeleteParams::default())
            .await;
        let _ = Api::<ClusterRole>::all(hub.clone())
            .delete(r, &DeleteParams::default())
            .await;
    }
    let _ = Api::<Namespace>::all(hub.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
    let _ = Api::<ManagedCluster>::all(hub.clone())
        .delete(&cluster, &DeleteParams::default())
        .await;
    let _ = Api::<ManagedClusterSet>::all(hub.clone())
        .delete(&set, &DeleteParams::default())
        .await;
}
