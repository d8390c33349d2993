//! The helloworld add-on as a real Deployment: created from the shipped template with our image,
//! enabled on the joined cluster, its agent pod starts on the managed node with its own hub
//! identity (a CSR the cluster's agent pod registers) and copies a ConfigMap from the hub. The
//! cluster's own agent pod does not run it too.
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use serde_json::json;

use crate::common;
use crate::fixture::{self, clusteradm, condition_true, ready_pod};
use crate::fleet::{assert_no_refusals, gone};

const INSTALL: &str = "helloworld-addon";
const TEMPLATE: &str = "templates/addons/helloworld.yaml";

/// Runs the add-on on `cluster`, then disables and removes it; returns enable → agent pod Ready.
pub async fn helloworld_runs_as_a_pod(
    hub: &kube::Client,
    managed: &kube::Client,
    cluster: &str,
) -> Duration {
    create_with_our_image("helloworld", TEMPLATE);
    let t = Instant::now();
    on_hub(&[
        "addon",
        "enable",
        "--names",
        "helloworld",
        "--clusters",
        cluster,
    ]);
    let pod = ready_pod(
        managed,
        INSTALL,
        "helloworld-agent",
        Duration::from_secs(120),
    )
    .await;
    let enable_to_ready = t.elapsed();
    assert_eq!(
        pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("managed-node")
    );
    // Its own hub identity, kept by the cluster's agent pod.
    Api::<Secret>::namespaced(managed.clone(), INSTALL)
        .get("helloworld-hub-kubeconfig")
        .await
        .expect("the add-on's hub kubeconfig secret");

    let copied = a_configmap_travels(hub, managed, cluster, "helloworld", INSTALL).await;
    assert_no_refusals(
        "managed",
        "system:serviceaccount:helloworld-addon:helloworld-agent",
    );
    // The same add-on by a ServiceAccount token, and back.
    for by_token in crate::addon_token::helloworld_moves_to_a_token(hub, managed, cluster).await {
        Api::<ConfigMap>::namespaced(hub.clone(), cluster)
            .delete(&by_token, &DeleteParams::default())
            .await
            .unwrap();
    }
    remove(hub, cluster, "helloworld", &copied, &[(managed, INSTALL)]).await;
    enable_to_ready
}

/// `addon create <addon> -f <template>` on the hub, from the shipped template naming our image
/// (what a user does before `addon create`).
pub fn create_with_our_image(addon: &str, template: &str) {
    create_with_our_image_on(&hub_kubeconfig(), addon, template);
}

/// [`create_with_our_image`] on the hub `hub_kc` names.
pub fn create_with_our_image_on(hub_kc: &str, addon: &str, template: &str) {
    let env = fixture::env();
    let text = std::fs::read_to_string(format!("{}/{template}", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace("image: clusteradm:latest", &format!("image: {}", env.image));
    assert!(
        text.contains(&env.image),
        "the template names no image to replace"
    );
    let file = std::env::temp_dir().join(format!("{}.yaml", common::unique(addon)));
    std::fs::write(&file, text).unwrap();
    on(
        hub_kc,
        &["addon", "create", addon, "-f", file.to_str().unwrap()],
    );
    std::fs::remove_file(&file).unwrap();
}

/// A ConfigMap of the cluster's namespace on the hub reaches `install` on the managed cluster,
/// written by the add-on's pod alone; the add-on is Available by its pod's Lease. Returns the
/// ConfigMap's name.
pub async fn a_configmap_travels(
    hub: &kube::Client,
    managed: &kube::Client,
    cluster: &str,
    addon: &str,
    install: &str,
) -> String {
    let name = common::unique("hello");
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": cluster}, "data": {"greeting": "hello"},
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let copies: Api<ConfigMap> = Api::namespaced(managed.clone(), install);
    let copy = common::eventually(
        "the ConfigMap copied by the add-on's pod",
        Duration::from_secs(60),
        || {
            let copies = copies.clone();
            let name = name.clone();
            async move { copies.get_opt(&name).await.ok()? }
        },
    )
    .await;
    assert_eq!(
        copy.data.unwrap().get("greeting").map(String::as_str),
        Some("hello")
    );
    let addons = addons(hub, cluster);
    common::eventually(
        &format!("{addon} Available (its pod renews the Lease)"),
        Duration::from_secs(90),
        || {
            let addons = addons.clone();
            async move {
                let a = addons.get(addon).await.ok()?;
                condition_true(&a, "Available").then_some(())
            }
        },
    )
    .await;
    // Only the pod wrote the copy: the cluster's agent pod runs no add-on agent of its own.
    assert_eq!(
        copies
            .get(&name)
            .await
            .unwrap()
            .metadata
            .managed_fields
            .unwrap_or_default()
            .iter()
            .filter_map(|f| f.manager.clone())
            .collect::<Vec<_>>(),
        ["helloworld-agent"]
    );
    name
}

/// Disables `addon` on `cluster` and removes what `addon create` made, and the ConfigMap `copied`:
/// its deploy work goes, and with it the namespaces its manifests made (`made`, by cluster).
pub async fn remove(
    hub: &kube::Client,
    cluster: &str,
    addon: &str,
    copied: &str,
    made: &[(&kube::Client, &str)],
) {
    remove_on((&hub_kubeconfig(), hub), cluster, addon, copied, made).await;
}

/// [`remove`] on the hub `hub_kc` names.
pub async fn remove_on(
    (hub_kc, hub): (&str, &kube::Client),
    cluster: &str,
    addon: &str,
    copied: &str,
    made: &[(&kube::Client, &str)],
) {
    on(
        hub_kc,
        &["addon", "disable", "--names", addon, "--clusters", cluster],
    );
    let works = fixture::works(hub, cluster);
    gone(&works, &format!("addon-{addon}-deploy-0")).await;
    for (client, namespace) in made {
        common::eventually(
            &format!("the add-on's namespace {namespace} gone"),
            Duration::from_secs(120),
            || {
                let ns = Api::<k8s_openapi::api::core::v1::Namespace>::all((*client).clone());
                async move { matches!(ns.get_opt(namespace).await, Ok(None)).then_some(()) }
            },
        )
        .await;
    }
    let cmas = fixture::cluster_scoped(
        hub,
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ClusterManagementAddOn",
    );
    cmas.delete(addon, &DeleteParams::default()).await.unwrap();
    gone(&cmas, addon).await;
    Api::<ClusterRole>::all(hub.clone())
        .delete(
            &format!("open-cluster-management:{addon}:agent"),
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    Api::<ConfigMap>::namespaced(hub.clone(), cluster)
        .delete(copied, &DeleteParams::default())
        .await
        .unwrap();
}

/// The ManagedClusterAddOns of `cluster`.
pub fn addons(hub: &kube::Client, cluster: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        hub.clone(),
        cluster,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "addon.open-cluster-management.io",
            "v1alpha1",
            "ManagedClusterAddOn",
        )),
    )
}

/// `clusteradm <args> --kubeconfig <hub>`.
pub fn on_hub(args: &[&str]) -> String {
    on(&hub_kubeconfig(), args)
}

/// `clusteradm <args> --kubeconfig <hub_kc>`.
pub fn on(hub_kc: &str, args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.extend(["--kubeconfig", hub_kc]);
    clusteradm(&args)
}

/// The pod tests' hub's kubeconfig.
fn hub_kubeconfig() -> String {
    fixture::env().hub.to_str().unwrap().to_owned()
}
