//! Placement benchmark (run by `scripts/bench/controller placement`; not a test): against the hub named by
//! HUB_KUBECONFIG, runs the placement controller in this process (with the shared cluster watch
//! it runs under in `init --in-process`) and, for each shape `N clusters × P placements`:
//!
//! 1. creates N available ManagedClusters in a set of their own (allocatable CPU spread), bound to
//!    a fresh namespace, directly on the hub (no agents);
//! 2. creates P placements, each `numberOfClusters: 10` with `ResourceAllocatableCPU` and
//!    `Balance` in Additive mode — or, with `--upstream`, upstream's benchmark spec exactly (Exact
//!    mode, an AddOn score, `ResourceAllocatableCPU` and `Balance`; every cluster gets a namespace
//!    and an AddOnPlacementScore) — and times until every one has its decision;
//! 3. times a one-cluster label change until a placement selecting that label decides it;
//! 4. counts the controller's API requests (a layer on its client) and reads its RSS.
//!
//! Everything is removed after each shape.
// A benchmark script: one long measuring function, and ratios printed as floats.
#![allow(
    clippy::cast_precision_loss,
    clippy::too_many_lines,
    clippy::needless_pass_by_value
)]

mod common;
use common::{Kinds, counted, cpu_seconds_of, cpu_used, plane_cpu_seconds, rss_mib};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clusteradm::api::cluster::{
    AddOnPlacementScore, ManagedCluster, Placement, PlacementDecision, PlacementDecisionSpec,
};
use clusteradm::runtime::informers::Informers;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, Resource as _, ResourceExt as _};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(600);
const CONCURRENCY: usize = 32;

fn object(v: serde_json::Value) -> DynamicObject {
    serde_json::from_value(v).expect("a valid object")
}

/// Creates `n` available clusters in set `set` (name `<set>-<i>`).
async fn clusters(hub: &Client, set: &str, n: usize) -> anyhow::Result<()> {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            let name = format!("{set}-{i}");
            async move {
                let mc: ManagedCluster = serde_json::from_value(json!({
                    "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                    "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": set, "bench": set}},
                    "spec": {}}))?;
                api.create(&PostParams::default(), &mc).await?;
                let cpu = 2 + (i * 7919) % 62;
                let status = json!({"status": {"allocatable": {"cpu": cpu.to_string()}, "capacity": {"cpu": cpu.to_string()},
                    "conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True", "reason": "Bench",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(status)).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// Upstream's benchmark scores: a namespace per cluster holding AddOnPlacementScore `demo` with
/// score `demo` = 80, valid for 1000 minutes.
async fn scores(hub: &Client, set: &str, n: usize) -> anyhow::Result<()> {
    let valid_until = k8s_openapi::jiff::Timestamp::now() + Duration::from_secs(1000 * 60);
    futures::stream::iter(0..n)
        .map(|i| {
            let hub = hub.clone();
            let name = format!("{set}-{i}");
            async move {
                let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
                Api::<Namespace>::all(hub.clone()).create(&PostParams::default(), &ns).await?;
                let api: Api<AddOnPlacementScore> = Api::namespaced(hub, &name);
                let score: AddOnPlacementScore = serde_json::from_value(json!({
                    "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
                    "metadata": {"name": "demo"}}))?;
                api.create(&PostParams::default(), &score).await?;
                let status = json!({"status": {"scores": [{"name": "demo", "value": 80}],
                    "validUntil": valid_until.to_string()}});
                api.patch_status("demo", &PatchParams::default(), &Patch::Merge(status)).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// The spec of every timed placement: upstream's benchmark's (Exact: an AddOn score,
/// `ResourceAllocatableCPU` and `Balance`), or ours (Additive, so `Steady` holds decisions).
fn timed_spec(upstream: bool) -> serde_json::Value {
    let builtin =
        |name: &str| json!({"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": 1});
    if upstream {
        json!({"numberOfClusters": 10, "prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1},
            builtin("ResourceAllocatableCPU"), builtin("Balance")]}})
    } else {
        json!({"numberOfClusters": 10, "prioritizerPolicy": {"mode": "Additive", "configurations": [
            builtin("ResourceAllocatableCPU"), builtin("Balance")]}})
    }
}

/// Waits until `count` placements of `api` (only `name` when given: a watch of one object,
/// whose first list does not add to the time measured) satisfy `done`, watching them.
async fn wait_placements(
    api: &Api<Placement>,
    name: Option<&str>,
    count: usize,
    done: impl Fn(&Placement) -> bool,
) -> anyhow::Result<()> {
    let mut finished = std::collections::HashSet::new();
    let config = match name {
        Some(name) => watcher::Config::default().fields(&format!("metadata.name={name}")),
        None => watcher::Config::default(),
    };
    let mut stream = std::pin::pin!(watcher(api.clone(), config).applied_objects());
    tokio::time::timeout(TIMEOUT, async {
        while finished.len() < count {
            let p = stream.try_next().await?.context("watch ended")?;
            if done(&p) {
                finished.insert(p.name_any());
            }
        }
        anyhow::Ok(())
    })
    .await
    .context("timed out waiting for placements")?
}

/// The API server's floor for `p` placements: with the controller stopped, the same writes a
/// controller must make for each (create the placement, create its decision, write the
/// decision's status, write the placement's status, copied from `p0`'s), as fast as this
/// process can send them, with no scheduling and no watches.
async fn floor(
    admin: &Client,
    ns: &str,
    p: usize,
    spec: serde_json::Value,
) -> anyhow::Result<Duration> {
    let placements: Api<Placement> = Api::namespaced(admin.clone(), ns);
    let decisions: Api<PlacementDecision> = Api::namespaced(admin.clone(), ns);
    let status = placements.get_status("p0").await?.status;
    let decided = decisions.get("p0-decision-1").await?;
    let start = Instant::now();
    futures::stream::iter(0..p)
        .map(|i| {
            let (placements, decisions) = (placements.clone(), decisions.clone());
            let (spec, status, decided) = (spec.clone(), status.clone(), decided.clone());
            async move {
                let name = format!("floor{i}");
                let created = placements
                    .create(&PostParams::default(), &placement(&name, spec)?)
                    .await?;
                let mut d = PlacementDecision::new(
                    &format!("{name}-decision-1"),
                    PlacementDecisionSpec::default(),
                );
                d.metadata.labels = Some(decided.labels().clone());
                d.metadata.owner_references = created.controller_owner_ref(&()).map(|o| vec![o]);
                decisions.create(&PostParams::default(), &d).await?;
                let patch = Patch::Merge(json!({"status": decided.status}));
                decisions
                    .patch_status(&d.name_any(), &PatchParams::default(), &patch)
                    .await?;
                let patch = Patch::Merge(json!({"status": status}));
                placements
                    .patch_status(&name, &PatchParams::default(), &patch)
                    .await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(usize::from(clusteradm::hub::placement::CONCURRENCY))
        .try_collect::<()>()
        .await?;
    Ok(start.elapsed())
}

fn placement(name: &str, spec: serde_json::Value) -> anyhow::Result<Placement> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": name}, "spec": spec}))?)
}

async fn shape(
    config: &kube::Config,
    admin: &Client,
    n: usize,
    p: usize,
    upstream: bool,
) -> anyhow::Result<()> {
    let set = format!("bench-{}-{n}x{p}", std::process::id());
    let ns = set.clone();
    clusteradm::apply::Applier::new(admin.clone(), TIMEOUT)
        .apply(vec![
            object(json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
                "metadata": {"name": set}, "spec": {}})),
            object(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
            object(json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
                "metadata": {"name": set, "namespace": ns}, "spec": {"clusterSet": set}})),
        ])
        .await?;
    clusters(admin, &set, n).await?;
    if upstream {
        scores(admin, &set, n).await?;
    }

    // The controller, on its own counted client, started after the clusters exist (as after a
    // restart): its first list is part of the measure.
    let requests = Arc::new(AtomicU64::new(0));
    let kinds = Kinds::default();
    let client = counted(config, requests.clone(), kinds.clone())?;
    let shutdown = clusteradm::runtime::Shutdown::new();
    let rss_before = rss_mib();
    let controller = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let informers = Informers::new(client.clone());
            let run = clusteradm::hub::placement::run_with(client, &informers, shutdown.clone());
            let watch = informers.run(shutdown);
            let _ = tokio::join!(Box::pin(run), Box::pin(watch));
        })
    };
    let placements: Api<Placement> = Api::namespaced(admin.clone(), &ns);
    let warm_start = Instant::now();
    // A placement selecting label `picked` (no cluster has it yet), decided first: it shows the
    // controller's caches are filled, so what follows is timed from a warm start.
    placements
        .create(
            &PostParams::default(),
            &placement(
                "picked",
                json!({"predicates": [{"requiredClusterSelector":
            {"labelSelector": {"matchLabels": {"picked": "yes"}}}}]}),
            )?,
        )
        .await?;
    wait_placements(&placements, Some("picked"), 1, |pl| {
        pl.name_any() == "picked" && pl.status.as_ref().is_some_and(|s| !s.conditions.is_empty())
    })
    .await?;
    let warm_up = warm_start.elapsed();
    let startup_requests = requests.load(Ordering::Relaxed);
    let wanted = n.min(10);
    let (plane_before, own_before) = (plane_cpu_seconds(), cpu_seconds_of("self"));
    let start = Instant::now();
    futures::stream::iter(0..p)
        .map(|i| {
            let placements = placements.clone();
            async move {
                let pl = placement(&format!("p{i}"), timed_spec(upstream))?;
                placements.create(&PostParams::default(), &pl).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await?;
    wait_placements(&placements, None, p, |pl| {
        pl.status
            .as_ref()
            .and_then(|s| s.number_of_selected_clusters)
            == Some(i32::try_from(wanted).unwrap_or(0))
    })
    .await?;
    let decided = start.elapsed();
    let decide_requests = requests.load(Ordering::Relaxed) - startup_requests;
    let decide_cpu = format!(
        "{}, this process {:.1} s",
        cpu_used(&plane_before, &plane_cpu_seconds()),
        cpu_seconds_of("self") - own_before
    );

    // One cluster's label change, until the placement selecting that label has decided it.
    let before = requests.load(Ordering::Relaxed);
    let start = Instant::now();
    Api::<ManagedCluster>::all(admin.clone())
        .patch(
            &format!("{set}-0"),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"picked": "yes"}}})),
        )
        .await?;
    wait_placements(&placements, Some("picked"), 1, |pl| {
        pl.name_any() == "picked"
            && pl
                .status
                .as_ref()
                .and_then(|s| s.number_of_selected_clusters)
                == Some(1)
    })
    .await?;
    let relabel = start.elapsed();
    let relabel_requests = requests.load(Ordering::Relaxed) - before;
    let rss = rss_mib();

    shutdown.cancel();
    let _ = controller.await;
    let plane_before = plane_cpu_seconds();
    let floor = floor(admin, &ns, p, timed_spec(upstream)).await?;
    let floor_cpu = cpu_used(&plane_before, &plane_cpu_seconds());
    println!(
        "{n:>6} clusters × {p:>4} placements: all decided in {:>8.1} ms ({decide_requests} requests, {:.1} per placement); \
         label change → decision {:>6.1} ms ({relabel_requests} requests); RSS {rss:.0} MiB ({:+.0}); start (lists, first decision) {:.0} ms",
        decided.as_secs_f64() * 1000.0,
        decide_requests as f64 / p as f64,
        relabel.as_secs_f64() * 1000.0,
        rss - rss_before,
        warm_up.as_secs_f64() * 1000.0,
    );

    let breakdown: Vec<String> = kinds
        .lock()
        .unwrap()
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    println!("        requests: {}", breakdown.join(", "));
    println!("        CPU while deciding: {decide_cpu}");
    println!(
        "        the API server's floor (the same writes, no controller): {:.1} ms; CPU {floor_cpu}",
        floor.as_secs_f64() * 1000.0
    );

    // Clean up, and wait until it is done: the next shape's controller must not meet this one's
    // placements in a terminating namespace.
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    if upstream {
        futures::stream::iter(0..n)
            .map(|i| {
                let namespaces = namespaces.clone();
                let name = format!("{set}-{i}");
                async move {
                    namespaces
                        .delete(&name, &DeleteParams::default())
                        .await
                        .map(|_| ())
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<()>()
            .await?;
    }
    let uid = namespaces.get(&ns).await?.metadata.uid.unwrap_or_default();
    namespaces.delete(&ns, &DeleteParams::default()).await?;
    let clusters: Api<ManagedCluster> = Api::all(admin.clone());
    let mine = ListParams::default().labels(&format!("bench={set}"));
    clusters
        .delete_collection(&DeleteParams::default(), &mine)
        .await?;
    let _ = Api::<clusteradm::api::cluster::ManagedClusterSet>::all(admin.clone())
        .delete(&set, &DeleteParams::default())
        .await;
    tokio::time::timeout(
        TIMEOUT,
        kube::runtime::wait::await_condition(
            namespaces,
            &ns,
            kube::runtime::wait::conditions::is_deleted(&uid),
        ),
    )
    .await
    .context("the namespace was not deleted in time")??;
    tokio::time::timeout(TIMEOUT, async {
        while !clusters
            .list_metadata(&mine.clone().limit(1))
            .await?
            .items
            .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(200)).await; // polling a deletion the API server does
        }
        anyhow::Ok(())
    })
    .await
    .context("the clusters were not deleted in time")??;
    Ok(())
}

fn parse_list(text: &str) -> anyhow::Result<Vec<usize>> {
    text.split(',').map(|v| Ok(v.trim().parse()?)).collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut shapes = vec![
        (100, 1),
        (100, 100),
        (1000, 1),
        (1000, 100),
        (1000, 1000),
        (10000, 1),
    ];
    let mut upstream = false;
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        match a.as_str() {
            "--shapes" => {
                shapes = args
                    .next()
                    .context("--shapes NxP,...")?
                    .split(',')
                    .map(|s| {
                        let v = parse_list(&s.replace('x', ","))?;
                        anyhow::ensure!(v.len() == 2, "a shape is NxP");
                        Ok((v[0], v[1]))
                    })
                    .collect::<anyhow::Result<_>>()?;
            }
            "--upstream" => upstream = true,
            other => anyhow::bail!(
                "unknown argument {other} (use --shapes 100x1,1000x100 and --upstream for upstream's placement spec)"
            ),
        }
    }
    let (config, admin) = common::hub_with_crds("scripts/bench/controller placement").await?;
    for (n, p) in shapes {
        shape(&config, &admin, n, p, upstream).await?;
    }
    Ok(())
}
