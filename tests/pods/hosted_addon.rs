//! A Hosted add-on on our image: `helloworldhosted`, enabled on the hosted cluster with the
//! management cluster (joined to the same hub) as its hosting cluster, runs as a pod on the
//! management cluster's node — its Deployment sent there in the hosting work, its hub credential
//! written there by the hosted cluster's agent — and copies a hub ConfigMap onto the hosted
//! cluster, which has no node, through the kubeconfig a user gives it.
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::json;

use crate::addon::{a_configmap_travels, addons, create_with_our_image, on_hub, remove};
use crate::common;
use crate::fixture::{self, condition_true, ready_pod};
use crate::fleet::{assert_no_refusals, gone};

const ADDON: &str = "helloworldhosted";
const TEMPLATE: &str = "templates/addons/helloworld-hosted.yaml";
const INSTALL: &str = "helloworldhosted-addon";

/// Runs the add-on for `cluster` (Hosted, its agent on `management`, which the hub knows as
/// `hosting`), then disables and removes it; returns enable → its pod Ready.
pub async fn runs_on_the_hosting_node(
    hub: &kube::Client,
    management: &kube::Client,
    hosted: &kube::Client,
    cluster: &str,
    hosting: &str,
) -> Duration {
    create_with_our_image(ADDON, TEMPLATE);
    let t = Instant::now();
    let annotate = format!("addon.open-cluster-management.io/hosting-cluster-name={hosting}");
    on_hub(&[
        "addon",
        "enable",
        "--names",
        ADDON,
        "--clusters",
        cluster,
        "--annotate",
        &annotate,
    ]);
    give_the_managed_kubeconfig(management).await;
    let pod = ready_pod(
        management,
        INSTALL,
        "helloworldhosted-agent",
        Duration::from_secs(120),
    )
    .await;
    let enable_to_ready = t.elapsed();
    assert_eq!(
        pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("management-node"),
        "the add-on's agent runs on the hosting cluster's node"
    );
    // Its hub credential where it runs, kept by the hosted cluster's agent; none on the hosted
    // cluster.
    let secret = format!("{ADDON}-hub-kubeconfig");
    Api::<Secret>::namespaced(management.clone(), INSTALL)
        .get(&secret)
        .await
        .expect("the add-on's hub kubeconfig on the hosting cluster");
    assert!(
        Api::<Secret>::namespaced(hosted.clone(), INSTALL)
            .get_opt(&secret)
            .await
            .unwrap()
            .is_none()
    );
    let hosting_work = format!("addon-{ADDON}-deploy-hosting-{cluster}-0");
    let addon = hosted_status(hub, cluster).await;
    assert!(
        condition_true(&addon, "HostingClusterValidity")
            && condition_true(&addon, "HostingManifestApplied"),
        "{:?}",
        addon.data["status"]
    );

    let copied = a_configmap_travels(hub, hosted, cluster, ADDON, INSTALL).await;
    assert_no_refusals(
        "management",
        &format!("system:serviceaccount:{INSTALL}:helloworldhosted-agent"),
    );
    // Disabled: the hosting work goes first, then the add-on; nothing of it stays on either
    // cluster.
    remove(
        hub,
        cluster,
        ADDON,
        &copied,
        &[(management, INSTALL), (hosted, INSTALL)],
    )
    .await;
    gone(&fixture::works(hub, hosting), &hosting_work).await;
    enable_to_ready
}

/// What a user does for a Hosted add-on (as upstream's README says): the managed cluster's
/// kubeconfig, as its agent reaches it, in `<addon>-managed-kubeconfig` where the agent runs.
async fn give_the_managed_kubeconfig(management: &kube::Client) {
    let kubeconfig = std::fs::read(fixture::hosted_env().hosted).unwrap();
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": INSTALL}})).unwrap();
    // The hosting work makes the namespace too; whichever comes first.
    match Api::<Namespace>::all(management.clone())
        .create(&PostParams::default(), &ns)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("creating {INSTALL}: {e}"),
    }
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{ADDON}-managed-kubeconfig")),
            namespace: Some(INSTALL.into()),
            ..Default::default()
        },
        data: Some([("kubeconfig".to_string(), ByteString(kubeconfig))].into()),
        ..Default::default()
    };
    Api::<Secret>::namespaced(management.clone(), INSTALL)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// The add-on once both its works are applied.
async fn hosted_status(hub: &kube::Client, cluster: &str) -> DynamicObject {
    let addons = addons(hub, cluster);
    common::eventually(
        "the add-on's manifests applied on both clusters",
        Duration::from_secs(60),
        || {
            let addons = addons.clone();
            async move {
                let a = addons.get(ADDON).await.ok()?;
                (condition_true(&a, "ManifestApplied")
                    && condition_true(&a, "HostingManifestApplied"))
                .then_some(a)
            }
        },
    )
    .await
}
