//! A hosted hub (`deployOption.mode: Hosted`, our image) with the operator loop on the real API
//! servers: the test's hub cluster plays the management cluster (the ClusterManager, the operator,
//! where the hub pods would run) and its managed cluster plays the hosted hub (no pod of OCM's runs
//! there). Until the external hub kubeconfig exists, or while the hub refuses it, the
//! ClusterManager says what is wrong; then
//! the hub's side lands on the hub, the pods' side on the management cluster, and the pods'
//! kubeconfig holds a token of their own ServiceAccount on the hub, with the hub role's rights and
//! no more; the operator makes the hub's token add-ons' infrastructure there; deleting the ClusterManager removes both sides.
use std::time::Duration;

use clusteradm::api::conditions::{self, APPLIED, FALSE};
use clusteradm::api::names::{
    EXTERNAL_HUB_SECRET, HOSTED_HUB_NAMESPACE, HUB_NAMESPACE, HUB_SERVICE,
};
use clusteradm::api::operator::{CLUSTER_MANAGER_NAME, ClusterManager};
use clusteradm::install::hub::{Hosted, InitOptions};
use clusteradm::operator::cluster_manager::desired::hosted as layout;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Secret, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use kube::{Client, Resource as _};

use super::{HUB_SINGLETON, Operator, WAIT, cms, gone, wait_applied};
use crate::common;

const IMAGE: &str = "registry.invalid/clusteradm:hosted-test";
const ADDRESS: (&str, u16) = ("10.1.2.3", 30443);

/// What `init --mode hosted --image … --hosted-webhook-address …` puts on the management cluster,
/// but the external hub kubeconfig: the ClusterManager CRD, the operator namespace (its Lease)
/// and the ClusterManager.
async fn install(management: &Client) {
    let opts = InitOptions {
        single_image: Some(IMAGE.into()),
        deploy_operator: false,
        hosted: Some(Hosted {
            hub_kubeconfig: Vec::new(),
            webhook: Some((ADDRESS.0.into(), ADDRESS.1)),
        }),
        ..Default::default()
    };
    let objects = clusteradm::install::hub::plan(&opts)
        .unwrap()
        .into_iter()
        .filter(|o| {
            let kind = &o.types.as_ref().unwrap().kind;
            ["CustomResourceDefinition", "Namespace", "ClusterManager"].contains(&kind.as_str())
        })
        .collect();
    clusteradm::apply::Applier::new(management.clone(), WAIT)
        .apply(objects)
        .await
        .unwrap();
}

/// The user's Secret, in upstream's namespace and name: the hosted hub's kubeconfig `text`,
/// replacing any earlier one.
async fn give_the_hub_kubeconfig(management: &Client, text: Vec<u8>) {
    let namespaces: Api<Namespace> = Api::all(management.clone());
    let namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": HOSTED_HUB_NAMESPACE}}))
            .unwrap();
    let _ = namespaces.create(&PostParams::default(), &namespace).await;
    let secret = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": EXTERNAL_HUB_SECRET, "namespace": HOSTED_HUB_NAMESPACE},
        "data": {"kubeconfig": k8s_openapi::ByteString(text)},
    });
    Api::<Secret>::namespaced(management.clone(), HOSTED_HUB_NAMESPACE)
        .patch(
            EXTERNAL_HUB_SECRET,
            &PatchParams::apply("lc-hosted-hub").force(),
            &Patch::Apply(&secret),
        )
        .await
        .unwrap();
}

/// The hosted hub's admin kubeconfig.
fn hub_admin_kubeconfig() -> Vec<u8> {
    std::fs::read(common::env().managed).unwrap()
}

/// The hosted hub's kubeconfig with a token the hub does not know instead of the admin's
/// certificate: a user's mistake the operator must recover from once the Secret is fixed.
fn unauthorised_kubeconfig() -> Vec<u8> {
    let mut config: serde_yaml::Value = serde_yaml::from_slice(&hub_admin_kubeconfig()).unwrap();
    for user in config["users"].as_sequence_mut().unwrap() {
        user["user"] = serde_yaml::from_str("{token: not-a-token}").unwrap();
    }
    serde_yaml::to_string(&config).unwrap().into_bytes()
}

/// Waits until the ClusterManager's Applied condition says `reason`.
async fn applied_false_saying(management: &Client, text: &str) -> conditions::Condition {
    let says = |cm: Option<&ClusterManager>| {
        cm.and_then(|cm| cm.status.as_ref())
            .and_then(|s| conditions::find(&s.conditions, APPLIED))
            .is_some_and(|c| c.status == FALSE && c.message.contains(text))
    };
    let wait = await_condition(cms(management), CLUSTER_MANAGER_NAME, says);
    let cm = tokio::time::timeout(WAIT, wait)
        .await
        .unwrap_or_else(|_| panic!("no Applied=False saying {text:?} within {WAIT:?}"))
        .unwrap()
        .unwrap();
    conditions::find(&cm.status.unwrap().conditions, APPLIED)
        .unwrap()
        .clone()
}

#[tokio::test]
async fn a_hosted_hub_is_split_between_the_hub_and_the_management_cluster() {
    let _one_at_a_time = crate::serial().await;
    let _hub = HUB_SINGLETON.lock().await;
    let (management, hub) = (common::hub().await, common::managed().await);
    install(&management).await;
    // A hosted hub's controllers are pods: the operator alone.
    let op = Operator::start_alone(&management);

    // Without the hub's kubeconfig, the condition says where to put it.
    let missing = applied_false_saying(&management, EXTERNAL_HUB_SECRET).await;
    assert!(
        missing.message.contains("--hub-kubeconfig"),
        "{}",
        missing.message
    );
    // A kubeconfig the hub refuses: said on the ClusterManager; the operator connects again
    // (here and in its add-on token infrastructure, checked below) once the Secret is fixed.
    give_the_hub_kubeconfig(&management, unauthorised_kubeconfig()).await;
    applied_false_saying(&management, "Unauthorized").await;
    give_the_hub_kubeconfig(&management, hub_admin_kubeconfig()).await;
    let cm = wait_applied(&management).await;

    // The pods' side on the management cluster, acting on the hub with the mounted kubeconfig.
    let deployments: Api<Deployment> = Api::namespaced(management.clone(), HOSTED_HUB_NAMESPACE);
    let deployment = deployments.get(HUB_SERVICE).await.unwrap();
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    let args = pod.containers[0].args.clone().unwrap();
    assert!(
        args.contains(&"--kubeconfig=/var/run/secrets/hub/kubeconfig".to_owned())
            && args.contains(&"--cluster-manager-in-cluster".to_owned()),
        "{args:?}"
    );
    assert_eq!(pod.containers[0].image.as_deref(), Some(IMAGE));
    assert!(
        Api::<Deployment>::namespaced(management.clone(), HUB_NAMESPACE)
            .get_opt(HUB_SERVICE)
            .await
            .unwrap()
            .is_none(),
        "no hub pod in the Default namespace"
    );

    // The hub's side on the hub: its CRDs, and the webhooks reached at the user's address.
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    assert!(
        crds.get_opt("managedclusters.cluster.open-cluster-management.io")
            .await
            .unwrap()
            .is_some()
    );
    let service = Api::<Service>::namespaced(hub.clone(), HUB_NAMESPACE)
        .get(HUB_SERVICE)
        .await
        .unwrap();
    assert_eq!(service.spec.as_ref().unwrap().selector, None);
    let endpoints = Api::<Endpoints>::namespaced(hub.clone(), HUB_NAMESPACE)
        .get(HUB_SERVICE)
        .await
        .unwrap();
    let subset = &endpoints.subsets.unwrap()[0];
    assert_eq!(subset.addresses.as_ref().unwrap()[0].ip, ADDRESS.0);
    assert_eq!(subset.ports.as_ref().unwrap()[0].port, i32::from(ADDRESS.1));
    let webhooks: Api<ValidatingWebhookConfiguration> = Api::all(hub.clone());
    let config = webhooks
        .get(clusteradm::operator::cluster_manager::desired::MANAGED_CLUSTER_VALIDATOR)
        .await
        .unwrap();
    let reached = config.webhooks.unwrap()[0]
        .client_config
        .service
        .clone()
        .unwrap();
    assert_eq!(
        (reached.name.as_str(), reached.port),
        (HUB_SERVICE, Some(i32::from(ADDRESS.1)))
    );

    pods_act_as_their_own_service_account(&management).await;
    // The operator, reaching the hub with the user's kubeconfig, serves its token add-ons.
    super::addon_gate::token_infrastructure_follows_the_driver(&hub, "lc-hosted-token").await;

    // Deleting the ClusterManager removes both sides.
    cms(&management)
        .delete(CLUSTER_MANAGER_NAME, &DeleteParams::default())
        .await
        .unwrap();
    gone(&management, &cm).await;
    op.stop().await;
    assert!(
        crds.get_opt("managedclusters.cluster.open-cluster-management.io")
            .await
            .unwrap()
            .is_none(),
        "the hub's CRDs are removed"
    );
    let terminated = |client: &Client, name: &'static str| {
        let api: Api<Namespace> = Api::all(client.clone());
        async move {
            api.get_opt(name)
                .await
                .unwrap()
                .is_none_or(|n| n.meta().deletion_timestamp.is_some())
                .then_some(())
        }
    };
    let timeout = Duration::from_secs(60);
    common::eventually("the hub namespace to go", timeout, || {
        terminated(&hub, HUB_NAMESPACE)
    })
    .await;
    common::eventually("the management namespace to go", timeout, || {
        terminated(&management, HOSTED_HUB_NAMESPACE)
    })
    .await;
}

/// The pods' kubeconfig holds a token of `cluster-manager-hub-sa` on the hub: the hub role's
/// rights there (clusters read), not a Secret of kube-system, not the user's admin.
async fn pods_act_as_their_own_service_account(management: &Client) {
    let secret = Api::<Secret>::namespaced(management.clone(), HOSTED_HUB_NAMESPACE)
        .get(layout::KUBECONFIG_SECRET)
        .await
        .unwrap();
    let data = secret.data.unwrap();
    let token = String::from_utf8(data["token"].0.clone()).unwrap();
    let kubeconfig = String::from_utf8(data["kubeconfig"].0.clone()).unwrap();
    assert!(
        kubeconfig.contains("/var/run/secrets/hub/token") && !kubeconfig.contains(&token),
        "the kubeconfig reads the token beside it: {kubeconfig}"
    );
    let as_pods = common::client_from_yaml(&common::kubeconfig_with_token(
        &common::env().managed,
        &token,
    ))
    .await;
    assert_eq!(
        common::whoami(&as_pods).await.unwrap(),
        format!("system:serviceaccount:{HUB_NAMESPACE}:cluster-manager-hub-sa")
    );
    let clusters: Api<kube::api::DynamicObject> = Api::all_with(
        as_pods.clone(),
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk(
                "cluster.open-cluster-management.io",
                "v1",
                "ManagedCluster",
            ),
            "managedclusters",
        ),
    );
    clusters
        .list(&kube::api::ListParams::default())
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(as_pods, "kube-system");
    let refused = secrets
        .list(&kube::api::ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 403),
        "{refused}"
    );
}
