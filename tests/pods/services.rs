//! The nodes as a real cluster's for Services: a pod on each node (hub and managed, whose
//! node-proxies share this machine's network namespace) resolves another pod's Service by its
//! cluster DNS name and reaches it through the Service's ClusterIP, by an ExternalName Service
//! naming it too, and reaches the API server as `kubernetes.default.svc` (what cluster-proxy's
//! agent and in-cluster clients dial); and a pod on one node reaches a NodePort Service of
//! another cluster's node at that node's address (how an add-on agent reaches its manager's
//! endpoint on the hub).
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture;

const BUSYBOX: &str = "localhost/clusteradm-rs/busybox:1";
/// Resolves names with glibc (the static busybox cannot: it has no NSS modules).
const CURL: &str = "localhost/clusteradm-rs/curl:1";

#[tokio::test]
async fn a_pod_reaches_a_service_by_its_dns_name_on_every_node() {
    let _one = fixture::serial().await;
    let (hub, managed) = fixture::clients().await;
    for (cluster, client) in [("hub", hub), ("managed", managed)] {
        let took = reach_a_service(&client).await;
        println!("[services] {cluster}: the client pod's answer after {took:?}");
    }
}

/// Serves a page from one pod behind a Service, fetches it from another pod by the Service's
/// name, and returns how long from the client pod's creation to its answer.
async fn reach_a_service(client: &Client) -> Duration {
    let ns = common::unique("it-svc");
    let namespaces = namespace(client, &ns).await;
    serve_web(
        client,
        &ns,
        json!({"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}),
    )
    .await;
    let alias = json!({"metadata": {"name": "web-alias"},
        "spec": {"type": "ExternalName", "externalName": format!("web.{ns}.svc")}});
    Api::<Service>::namespaced(client.clone(), &ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(alias).unwrap(),
        )
        .await
        .unwrap();

    let url = format!("http://web.{ns}.svc.cluster.local/");
    let alias_url = format!("http://web-alias.{ns}.svc.cluster.local/");
    let started = Instant::now();
    let logs = fetch(
        client,
        &ns,
        &[&url, &alias_url, "https://kubernetes.default.svc/readyz"],
    )
    .await;
    let took = started.elapsed();
    assert_eq!(
        logs.split_whitespace().collect::<Vec<_>>(),
        ["served-by-web", "served-by-web", "ok"],
        "by its name, by an ExternalName, and the API server by its Service's name"
    );
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
    took
}

/// A namespace `ns` on `client`'s cluster.
async fn namespace(client: &Client, ns: &str) -> Api<Namespace> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let body = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
    namespaces
        .create(&PostParams::default(), &body)
        .await
        .unwrap();
    namespaces
}

/// Pod `web` in `ns` serving `served-by-web` on 8080, behind Service `web` with `spec` (its
/// selector added); returns the Service once the pod is ready.
async fn serve_web(client: &Client, ns: &str, mut spec: serde_json::Value) -> Service {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let server = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": BUSYBOX,
            "command": ["/bin/busybox", "sh", "-c",
                "mkdir -p /tmp/www && echo served-by-web > /tmp/www/index.html && exec /bin/busybox httpd -f -p 8080 -h /tmp/www"],
            "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}});
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(server).unwrap(),
    )
    .await
    .unwrap();
    spec["selector"] = json!({"app": "web"});
    let service = json!({"metadata": {"name": "web"}, "spec": spec});
    let service = Api::<Service>::namespaced(client.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(service).unwrap(),
        )
        .await
        .unwrap();
    fixture::ready_pod(client, ns, "web", Duration::from_secs(120)).await;
    service
}

/// Runs a pod `client` in `ns` that fetches `urls` (retried inside the pod: a node's proxy learns
/// of an endpoint a moment after it is ready), and returns what it printed; fails unless it
/// succeeded.
async fn fetch(client: &Client, ns: &str, urls: &[&str]) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut command = vec![
        "curl",
        "-sS",
        "--retry",
        "30",
        "--retry-all-errors",
        "--retry-delay",
        "1",
        "--connect-timeout",
        "2",
        "--max-time",
        "10",
        "--cacert",
        "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
    ];
    command.extend_from_slice(urls);
    let client_pod = json!({"metadata": {"name": "client"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "client", "image": CURL,
            "command": command}]}});
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(client_pod).unwrap(),
    )
    .await
    .unwrap();
    let phase = common::eventually("the client pod finished", Duration::from_secs(120), || {
        let pods = pods.clone();
        async move {
            let phase = pods.get("client").await.ok()?.status?.phase?;
            matches!(phase.as_str(), "Succeeded" | "Failed").then_some(phase)
        }
    })
    .await;
    let logs = pods
        .logs("client", &kube::api::LogParams::default())
        .await
        .unwrap();
    assert_eq!(phase, "Succeeded", "the client pod printed: {logs}");
    logs
}

#[tokio::test]
async fn a_pod_reaches_a_node_port_of_another_clusters_node() {
    let _one = fixture::serial().await;
    let (hub, managed) = fixture::clients().await;
    let ns = common::unique("it-nodeport");
    let hub_namespaces = namespace(&hub, &ns).await;
    let service = serve_web(
        &hub,
        &ns,
        json!({"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080}]}),
    )
    .await;
    let node_port = service.spec.unwrap().ports.unwrap()[0].node_port.unwrap();
    let address = fixture::node_address(&hub, "hub-node").await;
    let managed_namespaces = namespace(&managed, &ns).await;
    let logs = fetch(&managed, &ns, &[&format!("http://{address}:{node_port}/")]).await;
    assert_eq!(
        logs.trim(),
        "served-by-web",
        "through the hub node's port {node_port}"
    );
    for namespaces in [hub_namespaces, managed_namespaces] {
        namespaces
            .delete(&ns, &DeleteParams::default())
            .await
            .unwrap();
    }
}
