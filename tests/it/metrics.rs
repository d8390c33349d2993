//! `/metrics` as the pods serve it, against the hub's own authenticator and authorizer: no token
//! is refused (401), a ServiceAccount's token without the right is refused (403), one bound to a
//! role allowing `get` on the non-resource URL `/metrics` reads the metrics; the plain-HTTP
//! probe port no longer serves them.
use std::process::Command;

use clusteradm::runtime::{Shutdown, metrics_server, probes};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::common;

/// `curl`'s status code for `url` with `token` (the server's certificate is self-signed, as
/// Prometheus is told to accept).
fn status_of(url: &str, token: Option<&str>) -> String {
    let mut curl = Command::new("curl");
    curl.args([
        "-sk",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "20",
    ]);
    if let Some(token) = token {
        curl.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = curl.arg(url).output().expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// Several threads: curl blocks the one it runs on while the servers answer on the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_only_to_callers_the_api_server_allows() {
    let hub = common::hub().await;
    let ns = common::unique("metrics");
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let reader = common::service_account_token(&hub, &ns, "reader").await;
    let stranger = common::service_account_token(&hub, &ns, "stranger").await;
    let role_name = format!("{ns}-metrics-reader");
    common::allow_metrics(&hub, &role_name, &ns, "reader").await;

    let shutdown = Shutdown::new();
    let addr = metrics_server::serve(
        "127.0.0.1:0".parse().unwrap(),
        hub.clone(),
        shutdown.clone(),
    )
    .await
    .unwrap();
    let url = format!("https://{addr}/metrics");
    assert_eq!(status_of(&url, None), "401", "no token");
    assert_eq!(
        status_of(&url, Some("not-a-token")),
        "401",
        "a forged token"
    );
    assert_eq!(
        status_of(&url, Some(&stranger)),
        "403",
        "a token without the right"
    );
    // RBAC takes a moment to reach the authorizer's cache.
    common::eventually(
        "the reader allowed",
        std::time::Duration::from_secs(30),
        || {
            let url = url.clone();
            let reader = reader.clone();
            async move { (status_of(&url, Some(&reader)) == "200").then_some(()) }
        },
    )
    .await;
    assert_eq!(
        status_of(&format!("https://{addr}/healthz"), Some(&reader)),
        "404"
    );

    // The probe port answers probes and serves no metrics.
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let probe_addr = probe.local_addr().unwrap();
    drop(probe);
    probes::serve(probe_addr, std::sync::Arc::default(), shutdown.clone())
        .await
        .unwrap();
    let plain = |path: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(format!("http://{probe_addr}{path}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(plain("/healthz"), "200");
    assert_eq!(plain("/metrics"), "404");

    shutdown.cancel();
    let _ = Api::<ClusterRoleBinding>::all(hub.clone())
        .delete(&role_name, &DeleteParams::default())
        .await;
    let _ = Api::<ClusterRole>::all(hub.clone())
        .delete(&role_name, &DeleteParams::default())
        .await;
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}
