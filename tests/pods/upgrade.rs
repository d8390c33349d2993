//! `upgrade clustermanager` and `upgrade klusterlet --wait` from our image to another tag of it,
//! on real nodes: every operator, hub and agent pod rolls to the new image while the cluster stays
//! Available and its work Applied, checked every 250 ms throughout.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};

use crate::fixture::{clusteradm, condition_true, pod_ready, works};

/// What the watch saw go wrong while the fleet upgraded.
type Lapses = Arc<std::sync::Mutex<Vec<String>>>;

/// Upgrades the hub (kubeconfig `hub_kc`) and the klusterlet (`managed_kc`) to `next`; returns how
/// long both took, `--wait` included.
pub async fn fleet_moves_to(
    hub: &Client,
    managed: &Client,
    clusters: &Api<DynamicObject>,
    cluster: &str,
    kubeconfigs: (&str, &str),
    next: &str,
) -> Duration {
    let lapses: Lapses = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let watch = tokio::spawn(watch_health(
        clusters.clone(),
        works(hub, cluster),
        cluster.to_owned(),
        lapses.clone(),
        done.clone(),
    ));
    let t = Instant::now();
    for (what, kubeconfig) in [
        ("clustermanager", kubeconfigs.0),
        ("klusterlet", kubeconfigs.1),
    ] {
        let args = [
            "upgrade",
            what,
            "--image",
            next,
            "--wait",
            "--kubeconfig",
            kubeconfig,
        ]
        .map(str::to_owned);
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            clusteradm(&args)
        })
        .await
        .unwrap();
    }
    let took = t.elapsed();
    done.store(true, Ordering::Relaxed);
    watch.await.unwrap();
    let lapses = lapses.lock().unwrap().clone();
    assert!(lapses.is_empty(), "during the upgrade: {lapses:?}");
    // The operators roll their components after `--wait` saw the CRs applied: each component's
    // pods reach the new image within a rollout's time.
    for (client, namespace, app) in [
        (hub, "open-cluster-management", "cluster-manager"),
        (hub, "open-cluster-management-hub", "cluster-manager-hub"),
        (managed, "open-cluster-management", "klusterlet"),
        // Default mode: upstream's two Deployments (the former version's one agent removed).
        (
            managed,
            "open-cluster-management-agent",
            "klusterlet-registration-agent",
        ),
        (
            managed,
            "open-cluster-management-agent",
            "klusterlet-manifestwork-agent",
        ),
    ] {
        crate::common::eventually(
            &format!("every pod of {namespace}/{app} Ready on {next}"),
            Duration::from_secs(180),
            || all_on(client, namespace, app, next),
        )
        .await;
    }
    took
}

/// Records every moment the cluster is not Available or its work `sleeper` not Applied, until
/// `done`.
async fn watch_health(
    clusters: Api<DynamicObject>,
    works: Api<DynamicObject>,
    cluster: String,
    lapses: Lapses,
    done: Arc<AtomicBool>,
) {
    while !done.load(Ordering::Relaxed) {
        let available = clusters
            .get(&cluster)
            .await
            .is_ok_and(|c| condition_true(&c, "ManagedClusterConditionAvailable"));
        let applied = works
            .get("sleeper")
            .await
            .is_ok_and(|w| condition_true(&w, "Applied"));
        if !available || !applied {
            lapses
                .lock()
                .unwrap()
                .push(format!("available={available} applied={applied}"));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `Some` when every pod of `app` in `namespace` runs `image` and is Ready.
async fn all_on(client: &Client, namespace: &str, app: &str, image: &str) -> Option<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = pods
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .ok()?;
    let on_image = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.containers[0].image.as_deref())
            == Some(image)
    };
    (!list.items.is_empty() && list.items.iter().all(|p| on_image(p) && pod_ready(p))).then_some(())
}
