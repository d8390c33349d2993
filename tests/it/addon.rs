//! `addon enable`, `addon disable` and `get addon` on the real hub: ManagedClusterAddOns written
//! as upstream's `clusteradm` writes them, idempotent, and nothing written when any cluster or
//! add-on named is unknown.
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

use clusteradm::api::addon::{
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ManagedClusterAddOn,
};
use clusteradm::api::cluster::{ManagedCluster, ManagedClusterSpec};

use crate::common;
use crate::registration::fixture::{self, on_hub};

/// A ManagedCluster and nothing else: no agent, no namespace (the hub has not accepted it).
async fn new_cluster(prefix: &str) -> String {
    let name = common::unique(prefix);
    Api::<ManagedCluster>::all(common::hub().await)
        .create(
            &PostParams::default(),
            &ManagedCluster::new(&name, ManagedClusterSpec::default()),
        )
        .await
        .unwrap();
    name
}

/// Two clusters with their namespaces (as the hub makes them on accept), no agents.
async fn clusters(prefix: &str) -> Vec<String> {
    let hub = common::hub().await;
    let mut names = Vec::new();
    for _ in 0..2 {
        let name = new_cluster(prefix).await;
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(hub.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
        names.push(name);
    }
    names
}

async fn known_addon(name: &str) {
    let hub = common::hub().await;
    Api::<ClusterManagementAddOn>::all(hub)
        .create(
            &PostParams::default(),
            &ClusterManagementAddOn::new(name, ClusterManagementAddOnSpec::default()),
        )
        .await
        .unwrap();
}

async fn cleanup(addon: &str, clusters: &[String]) {
    let hub = common::hub().await;
    let _ = Api::<ClusterManagementAddOn>::all(hub.clone())
        .delete(addon, &DeleteParams::default())
        .await;
    for c in clusters {
        let _ = Api::<ManagedCluster>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
        let _ = Api::<Namespace>::all(hub.clone())
            .delete(c, &DeleteParams::default())
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_get_and_disable_an_addon_on_two_clusters() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon").await;
    let addon = common::unique("it-hello");
    known_addon(&addon).await;
    let both = c.join(",");

    let args = [
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &both,
        "--namespace",
        "hello-ns",
        "--annotate",
        "owner=platform",
        "--labels",
        "tier=gold",
    ];
    let (code, out, err) = on_hub(&args).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "Deploying {addon} add-on to namespaces hello-ns of managed cluster: {}.",
            c[0]
        )),
        "{out}"
    );
    for cluster in &c {
        let mca = Api::<ManagedClusterAddOn>::namespaced(hub.clone(), cluster)
            .get(&addon)
            .await
            .unwrap();
        assert_eq!(mca.spec.install_namespace.as_deref(), Some("hello-ns"));
        assert_eq!(mca.metadata.annotations.unwrap()["owner"], "platform");
        assert_eq!(mca.metadata.labels.unwrap()["tier"], "gold");
    }
    // Twice: nothing changes, and it says so.
    let (code, out, _) = on_hub(&args).await;
    assert_eq!(code, 0);
    assert_eq!(out.matches("is already enabled").count(), 2, "{out}");

    let (code, out, err) = on_hub(&["get", "addon", &addon]).await;
    assert_eq!(code, 0, "{err}");
    for cluster in &c {
        assert!(
            out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    addon.as_str(),
                    cluster.as_str(),
                    "hello-ns",
                    "Unknown",
                    "Unknown",
                    "Unknown"
                ]),
            "{out}"
        );
    }
    let (code, out, _) = on_hub(&["get", "addon", &addon, "--clusters", &c[1], "-o", "json"]).await;
    assert_eq!(code, 0);
    // One object alone, as kubectl prints one.
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["kind"], "ManagedClusterAddOn", "{out}");
    assert_eq!(listed["metadata"]["namespace"], c[1].as_str());

    let (code, out, err) =
        on_hub(&["addon", "disable", "--names", &addon, "--clusters", &c[0]]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "Undeploying {addon} add-on in managed cluster: {}.",
            c[0]
        )),
        "{out}"
    );
    // No finalizer holds a ManagedClusterAddOn until the add-on manager adds its own.
    assert!(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[0])
            .get_opt(&addon)
            .await
            .unwrap()
            .is_none()
    );
    let (code, out, _) =
        on_hub(&["addon", "disable", "--names", &addon, "--clusters", &c[0]]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("{addon} add-on not found in cluster: {}.", c[0])),
        "{out}"
    );
    let (code, _, err) = on_hub(&["addon", "disable", "--names", &addon, "--all-clusters"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        Api::<ManagedClusterAddOn>::namespaced(hub.clone(), &c[1])
            .get_opt(&addon)
            .await
            .unwrap()
            .is_none()
    );
    cleanup(&addon, &c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabling_on_an_unknown_cluster_or_an_unknown_addon_writes_nothing() {
    fixture::hub().await;
    let hub = common::hub().await;
    let c = clusters("it-addon-bad").await;
    let addon = common::unique("it-hello");
    known_addon(&addon).await;
    let nothing_on = |cluster: String| {
        let hub = hub.clone();
        let addon = addon.clone();
        async move {
            Api::<ManagedClusterAddOn>::namespaced(hub, &cluster)
                .get_opt(&addon)
                .await
                .unwrap()
                .is_none()
        }
    };

    let unknown = common::unique("it-nowhere");
    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &format!("{},{unknown}", c[0]),
    ])
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("managed cluster {unknown} not found on the hub")),
        "{err}"
    );
    assert!(nothing_on(c[0].clone()).await, "a cluster was half-enabled");

    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &format!("{addon},no-such-addon"),
        "--clusters",
        &c[0],
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("unknown addon no-such-addon"), "{err}");
    assert!(nothing_on(c[0].clone()).await, "an add-on was half-enabled");

    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &c[0],
        "--annotate",
        "novalue",
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("expected key=value"), "{err}");

    // A cluster the hub has not accepted has no namespace for the add-on.
    let unaccepted = new_cluster("it-addon-new").await;
    let (code, _, err) = on_hub(&[
        "addon",
        "enable",
        "--names",
        &addon,
        "--clusters",
        &unaccepted,
    ])
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains("not accepted") && err.contains("clusteradm accept"),
        "{err}"
    );

    let (code, _, err) = on_hub(&[
        "addon",
        "disable",
        "--names",
        &addon,
        "--clusters",
        &unknown,
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("not found on the hub"), "{err}");
    let mut all = c.clone();
    all.push(unaccepted);
    cleanup(&addon, &all).await;
}
