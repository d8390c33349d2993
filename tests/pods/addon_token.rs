//! The helloworld add-on's pod moved to token-based registration and back, on the nodes: the
//! Klusterlet asks for the token driver, the klusterlet operator pod rolls the agent pod out with
//! it, the ClusterManager operator pod makes the add-on's ServiceAccount on the hub, the agent pod
//! stores a token of it, and the add-on's pod, started again, copies a ConfigMap with it. Back to
//! csr, the ServiceAccount goes and a certificate replaces the token.
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::addon::a_configmap_travels;
use crate::common;
use crate::fixture;

const INSTALL: &str = "helloworld-addon";
const SECRET: &str = "helloworld-hub-kubeconfig";
const WAIT: Duration = Duration::from_secs(180);

/// Sets the Klusterlet's add-on driver (`None`: the default, csr).
async fn driver(managed: &kube::Client, driver: Option<serde_json::Value>) {
    let klusterlets = fixture::cluster_scoped(
        managed,
        "operator.open-cluster-management.io",
        "v1",
        "Klusterlet",
    );
    let patch = json!({"spec": {"registrationConfiguration": {
        "addOnKubeClientRegistrationDriver": driver}}});
    klusterlets
        .patch("klusterlet", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// The add-on's secret, once `holds` says so of its keys.
async fn secret_when(managed: &kube::Client, what: &str, holds: fn(&Secret) -> bool) -> Secret {
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), INSTALL);
    common::eventually(what, WAIT, || {
        let secrets = secrets.clone();
        async move { secrets.get_opt(SECRET).await.ok()?.filter(holds) }
    })
    .await
}

fn has(secret: &Secret, key: &str) -> bool {
    secret.data.as_ref().is_some_and(|d| d.contains_key(key))
}

/// Runs the add-on by token, then back by certificate; returns the ConfigMaps it copied.
pub async fn helloworld_moves_to_a_token(
    hub: &kube::Client,
    managed: &kube::Client,
    cluster: &str,
) -> Vec<String> {
    driver(
        managed,
        Some(json!({"authType": "token", "token": {"expirationSeconds": 3600}})),
    )
    .await;
    let secret = secret_when(managed, "the add-on's token from the agent pod", |s| {
        has(s, "token") && !has(s, "tls.crt")
    })
    .await;
    let accounts: Api<ServiceAccount> = Api::namespaced(hub.clone(), cluster);
    let account = accounts.get("helloworld-agent").await.unwrap();
    assert_eq!(
        account.metadata.labels.unwrap()["addon.open-cluster-management.io/token-infrastructure"],
        "true"
    );
    let token = String::from_utf8(secret.data.unwrap()["token"].0.clone()).unwrap();
    let as_addon = common::hub_client_with_token(&token).await;
    assert_eq!(
        common::whoami(&as_addon).await.unwrap(),
        format!("system:serviceaccount:{cluster}:helloworld-agent")
    );
    // The add-on's pod reads its kubeconfig when it starts: started again, it uses the token.
    let pods: Api<Pod> = Api::namespaced(managed.clone(), INSTALL);
    let agent = ListParams::default().labels("app=helloworld-agent");
    let old: Vec<String> = pods
        .list(&agent)
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    pods.delete_collection(&DeleteParams::default(), &agent)
        .await
        .unwrap();
    common::eventually("a new ready pod of the add-on", WAIT, || {
        let (pods, agent, old) = (pods.clone(), agent.clone(), old.clone());
        async move {
            let list = pods.list(&agent).await.ok()?;
            list.items
                .into_iter()
                .find(|p| fixture::pod_ready(p) && !old.contains(p.metadata.name.as_ref().unwrap()))
        }
    })
    .await;
    let by_token = a_configmap_travels(hub, managed, cluster, "helloworld", INSTALL).await;

    driver(managed, None).await;
    secret_when(managed, "a certificate instead of the token", |s| {
        has(s, "tls.crt") && !has(s, "token")
    })
    .await;
    common::eventually("the add-on's ServiceAccount removed", WAIT, || {
        let accounts = accounts.clone();
        async move {
            accounts
                .get_opt("helloworld-agent")
                .await
                .ok()?
                .is_none()
                .then_some(())
        }
    })
    .await;
    vec![by_token]
}
