//! Add-on manager benchmark (not a test): `scripts/bench/controller addon [N ...]` (default 1, 100, 1000).
//!
//! For each N: N ManagedClusters with their namespaces (no agents), the example add-on created
//! from its template (`templates/addons/helloworld.yaml`), the hub's add-on controllers started
//! in this process on a counted client, then `addon enable` on all N clusters (one
//! ManagedClusterAddOn each, written by the admin client). Timed until every cluster has its deploy
//! ManifestWork and every ManagedClusterAddOn its registrations (`RegistrationApplied`); prints the
//! controllers' API requests by verb and resource, and the process's RSS.
#![allow(clippy::cast_precision_loss)] // request counts and sizes shown as decimals

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clusteradm::api::addon::{
    AddOnTemplate, ClusterManagementAddOn, ManagedClusterAddOn, ManagedClusterAddOnSpec,
};
use clusteradm::api::cluster::{ManagedCluster, ManagedClusterSpec};
use clusteradm::api::conditions;
use clusteradm::api::work::ManifestWork;
use clusteradm::runtime::informers::Informers;
use common::{Kinds, counted, rss_mib};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(600);
const CONCURRENCY: usize = 32;

/// The example add-on's template and its add-on, named `addon`.
fn example(addon: &str) -> anyhow::Result<(ClusterManagementAddOn, AddOnTemplate)> {
    let text = std::fs::read_to_string("templates/addons/helloworld.yaml")?;
    let doc = text
        .split("\n---\n")
        .find(|d| d.contains("kind: AddOnTemplate"))
        .context("no AddOnTemplate in the example")?;
    let mut template: AddOnTemplate = clusteradm::yaml::from_str(doc)?;
    template.metadata.name = Some(format!("{addon}-0.0.1"));
    template.spec.addon_name = addon.to_string();
    let cma: ClusterManagementAddOn = serde_json::from_value(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon},
        "spec": {"supportedConfigs": [{"group": "addon.open-cluster-management.io", "resource": "addontemplates",
                  "defaultConfig": {"name": format!("{addon}-0.0.1")}}]},
    }))?;
    Ok((cma, template))
}

async fn for_each<F, Fut>(names: &[String], f: F) -> anyhow::Result<()>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    futures::stream::iter(names.iter().cloned().map(f))
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Polls until all `n` clusters have the deploy work of `tag` and its registrations: the time to
/// each, from `enabled`.
/// Waits until `requests` has not moved for a second (at most 30 s).
async fn settle(requests: &AtomicU64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = (requests.load(Ordering::Relaxed), Instant::now());
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = requests.load(Ordering::Relaxed);
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() >= Duration::from_secs(1) {
            return;
        }
    }
}

async fn wait_deployed(
    admin: &Client,
    tag: &str,
    n: usize,
    enabled: Instant,
) -> anyhow::Result<(Duration, Duration)> {
    let label = format!("open-cluster-management.io/addon-name={tag}");
    let (mut works_at, mut registered_at) = (None, None);
    while works_at.is_none() || registered_at.is_none() {
        anyhow::ensure!(
            enabled.elapsed() < TIMEOUT,
            "not all deployed after {TIMEOUT:?}"
        );
        if works_at.is_none() {
            let works = Api::<ManifestWork>::all(admin.clone())
                .list_metadata(&ListParams::default().labels(&label))
                .await?;
            if works.items.len() == n {
                works_at = Some(enabled.elapsed());
            }
        }
        if registered_at.is_none() {
            let addons = Api::<ManagedClusterAddOn>::all(admin.clone())
                .list(&ListParams::default())
                .await?;
            let done = addons
                .items
                .iter()
                .filter(|a| a.name_any() == tag)
                .filter(|a| {
                    a.status
                        .as_ref()
                        .is_some_and(|s| conditions::is_true(&s.conditions, "RegistrationApplied"))
                })
                .count();
            if done == n {
                registered_at = Some(enabled.elapsed());
            }
        }
        // Polling the benchmark's own read of progress, not synchronising a test.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok((
        works_at.unwrap_or_default(),
        registered_at.unwrap_or_default(),
    ))
}

async fn run(config: &kube::Config, admin: &Client, n: usize) -> anyhow::Result<()> {
    let tag = format!("bench-addon-{}-{n}", std::process::id());
    let names: Vec<String> = (0..n).map(|i| format!("{tag}-{i}")).collect();
    for_each(&names, |name| async move {
        let ns = serde_json::from_value::<Namespace>(json!({"metadata": {"name": name}}))?;
        Api::<Namespace>::all(admin.clone())
            .create(&PostParams::default(), &ns)
            .await?;
        let mc = ManagedCluster::new(
            &name,
            ManagedClusterSpec {
                hub_accepts_client: true,
                ..ManagedClusterSpec::default()
            },
        );
        Api::<ManagedCluster>::all(admin.clone())
            .create(&PostParams::default(), &mc)
            .await?;
        Ok(())
    })
    .await?;
    let (cma, template) = example(&tag)?;
    Api::<AddOnTemplate>::all(admin.clone())
        .create(&PostParams::default(), &template)
        .await?;
    Api::<ClusterManagementAddOn>::all(admin.clone())
        .create(&PostParams::default(), &cma)
        .await?;

    let requests = Arc::new(AtomicU64::new(0));
    let kinds = Kinds::default();
    let client = counted(config, requests.clone(), kinds.clone())?;
    let shutdown = clusteradm::runtime::Shutdown::new();
    let rss_before = rss_mib();
    {
        let (shutdown, url) = (shutdown.clone(), config.cluster_url.clone());
        tokio::spawn(async move {
            let informers = Informers::new(client.clone());
            let settings = clusteradm::hub::settings::from_informers(&informers, shutdown.clone());
            let run = clusteradm::hub::addon::run_with(
                client.clone(),
                &informers,
                &settings,
                shutdown.clone(),
            );
            let webhooks = clusteradm::hub::webhook::run(
                client,
                clusteradm::hub::webhook::Webhook::Leader(url),
                settings,
                shutdown.clone(),
            );
            let watch = informers.run(shutdown);
            let _ = tokio::join!(Box::pin(run), Box::pin(webhooks), Box::pin(watch));
        });
    }
    // The controllers' start (lists, the conversion webhook, the relists its CRD update causes) is
    // not part of the measure: wait until they have sent nothing for a second.
    settle(&requests).await;
    let start_requests = requests.load(Ordering::Relaxed);
    kinds.lock().unwrap().clear();
    let enabled = Instant::now();
    let tag_ref = &tag;
    for_each(&names, |name| async move {
        let mut mca = ManagedClusterAddOn::new(tag_ref, ManagedClusterAddOnSpec::default());
        mca.metadata.namespace = Some(name.clone());
        Api::<ManagedClusterAddOn>::namespaced(admin.clone(), &name)
            .create(&PostParams::default(), &mca)
            .await?;
        Ok(())
    })
    .await?;
    let created = enabled.elapsed();
    let (works_at, registered_at) = wait_deployed(admin, &tag, n, enabled).await?;
    let used = requests.load(Ordering::Relaxed) - start_requests;
    println!(
        "{n:>5} clusters: {} ManagedClusterAddOns written in {:.2} s; all deploy works {:.2} s, all registrations {:.2} s after enable; {used} controller requests ({:.1} per cluster); RSS +{:.0} MiB ({:.0} MiB)",
        n,
        created.as_secs_f64(),
        works_at.as_secs_f64(),
        registered_at.as_secs_f64(),
        used as f64 / n as f64,
        rss_mib() - rss_before,
        rss_mib(),
    );
    let breakdown: Vec<String> = kinds
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("        requests: {}", breakdown.join(", "));
    shutdown.cancel();
    tokio::time::sleep(Duration::from_millis(500)).await;
    remove(admin, &tag, &names).await
}

/// Deletes what [`run`] made.
async fn remove(admin: &Client, tag: &str, names: &[String]) -> anyhow::Result<()> {
    let dp = DeleteParams::default();
    Api::<ClusterManagementAddOn>::all(admin.clone())
        .delete(tag, &dp)
        .await?;
    Api::<AddOnTemplate>::all(admin.clone())
        .delete(&format!("{tag}-0.0.1"), &dp)
        .await?;
    for_each(names, |name| async move {
        let _ = Api::<ManagedCluster>::all(admin.clone())
            .delete(&name, &DeleteParams::default())
            .await;
        let _ = Api::<Namespace>::all(admin.clone())
            .delete(&name, &DeleteParams::default())
            .await;
        Ok(())
    })
    .await
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .map(|a| {
            a.parse()
                .with_context(|| format!("{a} is not a number of clusters"))
        })
        .collect::<anyhow::Result<_>>()?;
    let sizes = if sizes.is_empty() {
        vec![1, 100, 1000]
    } else {
        sizes
    };
    let (config, admin) = common::hub_with_crds("scripts/bench/controller addon").await?;
    for n in sizes {
        run(&config, &admin, n).await?;
    }
    Ok(())
}
