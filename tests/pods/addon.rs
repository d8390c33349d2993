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
    let env = fixture::env();
    let hub_kc = env.hub.to_str().unwrap();
    // The shipped template, naming our image (what a user does before `addon create`).
    let template = std::fs::read_to_string(format!("{}/{TEMPLATE}", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace("image: clusteradm:latest", &format!("image: {}", env.image));
    assert!(
        template.contains(&env.image),
        "the template names no image to replace"
    );
    let file = std::env::temp_dir().join(format!("{}.yaml", common::unique("helloworld")));
    std::fs::write(&file, template).unwrap();
    clusteradm(&[
        "addon",
        "create",
        "helloworld",
        "-f",
        file.to_str().unwrap(),
        "--kubeconfig",
        hub_kc,
    ]);
    let t = Instant::now();
    helloworld("enable", cluster);
    std::fs::remove_file(&file).unwrap();
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

    let copied = a_configmap_travels(hub, managed, cluster).await;
    remove(hub, managed, cluster, &copied).await;
    enable_to_ready
}

/// A ConfigMap of the cluster's namespace on the hub reaches the managed cluster, written by the
/// add-on's pod alone; the add-on is Available by its pod's Lease. Returns the ConfigMap's name.
async fn a_configmap_travels(hub: &kube::Client, managed: &kube::Client, cluster: &str) -> String {
    let name = common::unique("hello");
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": cluster}, "data": {"greeting": "hello"},
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(hub.clone(), cluster)
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let copies: Api<ConfigMap> = Api::namespaced(managed.clone(), INSTALL);
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
    let addons = Api::<DynamicObject>::namespaced_with(
        hub.clone(),
        cluster,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "addon.open-cluster-management.io",
            "v1alpha1",
            "ManagedClusterAddOn",
        )),
    );
    common::eventually(
        "helloworld Available (its pod renews the Lease)",
        Duration::from_secs(90),
        || {
            let addons = addons.clone();
            async move {
                let a = addons.get("helloworld").await.ok()?;
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
    assert_no_refusals(
        "managed",
        "system:serviceaccount:helloworld-addon:helloworld-agent",
    );

    name
}

/// Disables the add-on and removes what `addon create` made, and the ConfigMap `name`.
async fn remove(hub: &kube::Client, managed: &kube::Client, cluster: &str, name: &str) {
    // Disabled: its work, namespace and pod go; the add-on and its hub ClusterRole removed.
    helloworld("disable", cluster);
    let works = fixture::works(hub, cluster);
    gone(&works, "addon-helloworld-deploy-0").await;
    common::eventually(
        "the add-on's namespace gone from the managed cluster",
        Duration::from_secs(120),
        || {
            let managed = managed.clone();
            async move {
                let ns = Api::<k8s_openapi::api::core::v1::Namespace>::all(managed);
                matches!(ns.get_opt(INSTALL).await, Ok(None)).then_some(())
            }
        },
    )
    .await;
    let cmas = fixture::cluster_scoped(
        hub,
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ClusterManagementAddOn",
    );
    cmas.delete("helloworld", &DeleteParams::default())
        .await
        .unwrap();
    gone(&cmas, "helloworld").await;
    Api::<ClusterRole>::all(hub.clone())
        .delete(
            "open-cluster-management:helloworld:agent",
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    Api::<ConfigMap>::namespaced(hub.clone(), cluster)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

/// `clusteradm addon enable|disable --names helloworld --clusters <cluster>` on the hub.
fn helloworld(verb: &str, cluster: &str) {
    let hub_kc = fixture::env().hub;
    clusteradm(&[
        "addon",
        verb,
        "--names",
        "helloworld",
        "--clusters",
        cluster,
        "--kubeconfig",
        hub_kc.to_str().unwrap(),
    ]);
}
