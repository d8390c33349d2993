//! Token-based add-on registration end to end (upstream's `authType: token`): a cluster's agent
//! declares the token driver, the hub's token infrastructure controller makes the add-on's
//! ServiceAccount, Role and RoleBinding and reports their readiness, the agent stores a token of
//! that ServiceAccount, the template's hub permissions are bound to it, and nothing more is
//! granted; switched back to certificates, the infrastructure goes and a certificate replaces the
//! token without the add-on losing its secret.
use std::time::Duration;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;

use clusteradm::agent::addon::token::Auth;
use clusteradm::api::addon::{AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn, token};
use clusteradm::api::operator::AddOnAuthType;
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::Shutdown;
use clusteradm::runtime::controller::Gate;
use clusteradm::runtime::informers::Informers;

use super::template::{condition, supervise};
use super::{is_forbidden, succeeds};
use crate::common;
use crate::registration::fixture;

const GROUP: &str = "addon.open-cluster-management.io";
const INSTALL: &str = "open-cluster-management-agent-addon";

/// The hub's token infrastructure controller, as the ClusterManager operator runs it (here on
/// the test's admin client), until the token is cancelled.
fn token_infrastructure(hub: kube::Client) -> Shutdown {
    let shutdown = Shutdown::new();
    let informers = Informers::new(hub.clone());
    let always = Gate {
        on: std::sync::Arc::new(|| true),
        flips: Box::pin(futures::stream::pending()),
    };
    let controller =
        clusteradm::hub::addon::token::run_with(hub, &informers, always, shutdown.clone());
    let token = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::join!(controller, informers.run(token));
    });
    shutdown
}

/// A template add-on whose agent's hub client may read ConfigMaps in its cluster's namespace.
async fn reader_addon(hub: &kube::Client, addon: &str) {
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": format!("{addon}-reader")},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}))
    .unwrap();
    Api::<ClusterRole>::all(hub.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let template: AddOnTemplate = serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "AddOnTemplate",
        "metadata": {"name": format!("{addon}-t")},
        "spec": {"addonName": addon,
            "agentSpec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": addon, "namespace": "default"}, "data": {"a": "b"}}]}},
            "registration": [{"type": "KubeClient", "kubeClient": {"hubPermissions": [
                {"type": "CurrentCluster",
                 "currentCluster": {"clusterRoleName": format!("{addon}-reader")}}]}}]}}))
    .unwrap();
    Api::<AddOnTemplate>::all(hub.clone())
        .create(&PostParams::default(), &template)
        .await
        .unwrap();
    let cma: ClusterManagementAddOn = serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1alpha1"), "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon},
        "spec": {"supportedConfigs": [{"group": GROUP, "resource": "addontemplates",
            "defaultConfig": {"name": format!("{addon}-t")}}]}}))
    .unwrap();
    Api::<ClusterManagementAddOn>::all(hub.clone())
        .create(&PostParams::default(), &cma)
        .await
        .unwrap();
}

/// A hub client with the token stored in the add-on's secret.
async fn token_client(secret: &Secret) -> kube::Client {
    let token =
        String::from_utf8(secret.data.as_ref().unwrap()[token::SECRET_KEY].0.clone()).unwrap();
    common::hub_client_with_token(&token).await
}

fn data_keys(secret: &Secret) -> Vec<String> {
    secret.data.as_ref().unwrap().keys().cloned().collect()
}

/// The hub's three objects for `addon` on `cluster`, labelled as upstream's.
async fn infrastructure(hub: &kube::Client, cluster: &str, addon: &str) -> ServiceAccount {
    let account = Api::<ServiceAccount>::namespaced(hub.clone(), cluster)
        .get(&format!("{addon}-agent"))
        .await
        .unwrap();
    let role = Api::<Role>::namespaced(hub.clone(), cluster)
        .get(&format!("{addon}-token-role"))
        .await
        .unwrap();
    let binding = Api::<RoleBinding>::namespaced(hub.clone(), cluster)
        .get(&format!("{addon}-token-role"))
        .await
        .unwrap();
    for labels in [account.labels(), role.labels(), binding.labels()] {
        assert_eq!(labels[token::INFRASTRUCTURE_LABEL], "true");
        assert_eq!(labels[token::NAME_LABEL], addon);
    }
    account
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one add-on moved to tokens and back, each step where it lands
async fn an_addon_registers_with_a_service_account_token_and_moves_back_to_a_certificate() {
    fixture::hub().await;
    let (hub, managed) = (common::hub().await, common::managed().await);
    fixture::install_managed_crds(&managed).await;
    let agent = fixture::joined(fixture::options(managed.clone(), "it-tok")).await;
    let c = agent.cluster().to_string();
    let infra = token_infrastructure(hub.clone());
    let by_token = Auth::from_flags("token", Some(3600)).unwrap();
    let supervised = supervise(&agent, by_token);
    let addon = common::unique("it-tok-addon");
    reader_addon(&hub, &addon).await;
    succeeds(&["addon", "enable", "--names", &addon, "--clusters", &c]).await;

    // The agent declared the driver; the hub made the ServiceAccount and says so with its UID.
    let addons = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c);
    let mca = fixture::wait(
        addons.clone(),
        &addon,
        "TokenInfrastructureReady",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, token::INFRASTRUCTURE_READY).is_some_and(|c| c.status == "True")
        },
    )
    .await;
    let status = mca.status.clone().unwrap();
    assert_eq!(status.kube_client_driver, Some(AddOnAuthType::Token));
    let user = format!("system:serviceaccount:{c}:{addon}-agent");
    let subject = status.registrations[0].subject.clone().unwrap();
    assert_eq!(subject.user.as_deref(), Some(user.as_str()));
    assert!(subject.groups.is_empty(), "{subject:?}");
    let account = infrastructure(&hub, &c, &addon).await;
    let ready = condition(Some(&mca), token::INFRASTRUCTURE_READY).unwrap();
    assert_eq!(
        ready.message,
        format!(
            "ServiceAccount {c}/{addon}-agent (UID: {}) is ready",
            account.uid().unwrap()
        )
    );

    // The agent's secret holds a token of that ServiceAccount and a kubeconfig reading it.
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), INSTALL);
    let name = format!("{addon}-hub-kubeconfig");
    let secret = fixture::wait(
        secrets.clone(),
        &name,
        "the add-on's token",
        |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .is_some_and(|d| d.contains_key(token::SECRET_KEY))
        },
    )
    .await;
    assert_eq!(data_keys(&secret), ["cluster-name", "kubeconfig", "token"]);
    let kubeconfig =
        String::from_utf8(secret.data.as_ref().unwrap()["kubeconfig"].0.clone()).unwrap();
    assert!(kubeconfig.contains("tokenFile: token"), "{kubeconfig}");
    let as_addon = token_client(&secret).await;
    assert_eq!(common::whoami(&as_addon).await.unwrap(), user);
    fixture::wait(
        addons.clone(),
        &addon,
        "TokenRefreshed",
        |m: Option<&ManagedClusterAddOn>| {
            condition(m, token::REFRESHED).is_some_and(|c| {
                c.status == "True" && c.message.starts_with("Addon token refreshed, expires at ")
            })
        },
    )
    .await;

    // The template's hub permission is bound to the ServiceAccount: ConfigMaps in its cluster's
    // namespace, and nothing else.
    common::eventually(
        "the add-on's hub permission",
        Duration::from_secs(60),
        || {
            let cms = Api::<ConfigMap>::namespaced(as_addon.clone(), &c);
            async move { cms.list(&ListParams::default()).await.ok() }
        },
    )
    .await;
    let lp = ListParams::default();
    assert!(is_forbidden(
        &Api::<ConfigMap>::namespaced(as_addon.clone(), "default")
            .list(&lp)
            .await
    ));
    assert!(is_forbidden(
        &Api::<Secret>::namespaced(as_addon.clone(), &c)
            .list(&lp)
            .await
    ));
    // The cluster's own credential may ask for this ServiceAccount's tokens only.
    let me = fixture::cert_client(&agent.hub_secret().await).await;
    let other = Api::<ServiceAccount>::namespaced(me.clone(), &c)
        .create_token_request("default", &PostParams::default(), &TokenRequest::default())
        .await;
    assert!(
        is_forbidden(&other),
        "the cluster's agent minted another account's token: {other:?}"
    );

    // Back to certificates: the driver says so, the infrastructure and its condition go, and
    // the same secret holds a certificate of the add-on's default identity instead of a token.
    supervised.cancel();
    let supervised = supervise(&agent, Auth::default());
    fixture::wait(
        addons.clone(),
        &addon,
        "the csr driver, and no TokenInfrastructureReady",
        |m: Option<&ManagedClusterAddOn>| {
            m.and_then(|m| m.status.as_ref())
                .is_some_and(|s| s.kube_client_driver == Some(AddOnAuthType::Csr))
                && condition(m, token::INFRASTRUCTURE_READY).is_none()
        },
    )
    .await;
    fixture::wait_deleted(
        Api::<ServiceAccount>::namespaced(hub.clone(), &c),
        &format!("{addon}-agent"),
        &account.uid().unwrap(),
    )
    .await;
    for gone in [
        Api::<Role>::namespaced(hub.clone(), &c)
            .get_opt(&format!("{addon}-token-role"))
            .await
            .unwrap()
            .is_none(),
        Api::<RoleBinding>::namespaced(hub.clone(), &c)
            .get_opt(&format!("{addon}-token-role"))
            .await
            .unwrap()
            .is_none(),
    ] {
        assert!(gone, "the token Role or RoleBinding stayed");
    }
    let certified = fixture::wait(
        secrets.clone(),
        &name,
        "a certificate instead of the token",
        |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .is_some_and(|d| d.contains_key("tls.crt") && !d.contains_key(token::SECRET_KEY))
        },
    )
    .await;
    assert_eq!(
        certified.uid(),
        secret.uid(),
        "the secret was replaced, not kept"
    );
    assert_eq!(
        common::whoami(&super::client_of(&certified).await)
            .await
            .unwrap(),
        clusteradm::hub::addon::template::agent_user(&c, &addon)
    );

    // Disabled while the agents run, which remove what they applied (the deploy work's
    // finalizer is the work agent's to remove).
    let deploy = Api::<ManifestWork>::namespaced(hub.clone(), &c)
        .get(&format!("addon-{addon}-deploy-0"))
        .await
        .unwrap();
    succeeds(&["addon", "disable", "--names", &addon, "--clusters", &c]).await;
    fixture::wait_deleted(addons, &addon, &mca.uid().unwrap()).await;
    fixture::wait_deleted(
        Api::<ManifestWork>::namespaced(hub.clone(), &c),
        &deploy.name_any(),
        &deploy.uid().unwrap(),
    )
    .await;
    supervised.cancel();
    infra.cancel();
    let dp = DeleteParams::default();
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(&addon, &dp)
        .await;
    let _ = Api::<AddOnTemplate>::all(hub.clone())
        .delete(&format!("{addon}-t"), &dp)
        .await;
    let _ = Api::<ClusterRole>::all(hub)
        .delete(&format!("{addon}-reader"), &dp)
        .await;
    agent.remove().await;
}
