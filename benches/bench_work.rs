//! Work agent benchmark (run by `scripts/bench/controller work`; not a test): against the clusters named by
//! HUB_KUBECONFIG and MANAGED_KUBECONFIG, runs the work agent in this process and measures
//!
//! 1. latency from creating a ManifestWork to seeing it `Applied` (a watch on the hub), one work
//!    at a time, `--samples` times (median, p90, min, max);
//! 2. throughput: `--works` works created at once on one cluster, until all are `Applied`;
//! 3. the API requests the agent sent to the hub and to the managed cluster (counted by a layer
//!    on its clients), in total and per work.
//!
//! Each work holds one ConfigMap. Everything is created in fresh namespaces and removed after.
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clusteradm::agent::work::WorkAgentOptions;
use clusteradm::api::conditions::{self, APPLIED};
use clusteradm::api::work::{ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use clusteradm::apply::Applier;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt};

const TIMEOUT: Duration = Duration::from_secs(300);

struct Target {
    config: kube::Config,
}

impl Target {
    async fn from_env(var: &str) -> anyhow::Result<Self> {
        let path = std::env::var(var)
            .with_context(|| format!("{var} is not set (see scripts/bench/controller work)"))?;
        let kc = Kubeconfig::read_from(&path).with_context(|| format!("reading {path}"))?;
        let config =
            kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
        Ok(Self { config })
    }

    fn client(&self) -> anyhow::Result<Client> {
        Ok(Client::try_from(self.config.clone())?)
    }

    /// A client whose every request increments `counter`.
    fn counted(&self, counter: Arc<AtomicU64>) -> anyhow::Result<Client> {
        let layer = tower::util::MapRequestLayer::new(move |req| {
            counter.fetch_add(1, Ordering::Relaxed);
            req
        });
        Ok(kube::client::ClientBuilder::try_from(self.config.clone())?
            .with_layer(&layer)
            .build())
    }
}

fn work(name: &str, cluster: &str, ns: &str) -> ManifestWork {
    let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns}, "data": {"bench": name}});
    let mut w = ManifestWork::new(
        name,
        ManifestWorkSpec {
            workload: ManifestsTemplate {
                manifests: vec![cm],
            },
            ..Default::default()
        },
    );
    w.metadata.namespace = Some(cluster.into());
    w
}

fn is_applied(w: &ManifestWork) -> bool {
    w.status.as_ref().is_some_and(|s| {
        conditions::find(&s.conditions, APPLIED)
            .is_some_and(|c| c.status == "True" && c.observed_generation == w.metadata.generation)
    })
}

/// Waits until every name in `names` is Applied, watching the namespace.
async fn wait_applied(works: &Api<ManifestWork>, names: &HashSet<String>) -> anyhow::Result<()> {
    let mut pending = names.clone();
    let stream = watcher(works.clone(), watcher::Config::default()).applied_objects();
    let mut stream = std::pin::pin!(stream);
    tokio::time::timeout(TIMEOUT, async {
        while !pending.is_empty() {
            let w = stream.try_next().await?.context("watch ended")?;
            if is_applied(&w) {
                pending.remove(&w.name_any());
            }
        }
        anyhow::Ok(())
    })
    .await
    .context("timed out waiting for works to be Applied")?
}

/// Waits until none of `names` exists any more, watching the namespace.
async fn wait_deleted(
    works: &Api<ManifestWork>,
    mut remaining: HashSet<String>,
) -> anyhow::Result<()> {
    let mut listed = HashSet::new();
    let mut stream = std::pin::pin!(watcher(works.clone(), watcher::Config::default()));
    tokio::time::timeout(TIMEOUT, async {
        while !remaining.is_empty() {
            match stream.try_next().await?.context("watch ended")? {
                watcher::Event::Delete(w) => {
                    remaining.remove(&w.name_any());
                }
                watcher::Event::Init => listed.clear(),
                watcher::Event::InitApply(w) => {
                    listed.insert(w.name_any());
                }
                watcher::Event::InitDone => remaining.retain(|n| listed.contains(n)),
                watcher::Event::Apply(_) => {}
            }
        }
        anyhow::Ok(())
    })
    .await
    .context("timed out waiting for the works to be deleted")?
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

async fn namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    let ns: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": name}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(())
}

/// Phase 1: create → Applied latency, one work at a time.
async fn latency(works: &Api<ManifestWork>, cluster: &str, samples: usize) -> anyhow::Result<()> {
    let mut latencies = Vec::new();
    for i in 0..samples {
        let name = format!("latency-{i}");
        let t0 = Instant::now();
        works
            .create(&PostParams::default(), &work(&name, cluster, cluster))
            .await?;
        wait_applied(works, &HashSet::from([name])).await?;
        latencies.push(t0.elapsed());
    }
    latencies.sort();
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    println!("latency create → Applied ({samples} works, one at a time):");
    println!(
        "  median {}  p90 {}  min {}  max {}",
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.9)),
        ms(latencies[0]),
        ms(latencies[samples - 1])
    );
    Ok(())
}

/// Phase 2: `count` works created at once (20 requests in flight), until all are Applied.
async fn burst(works: &Api<ManifestWork>, cluster: &str, count: usize) -> anyhow::Result<()> {
    let names: HashSet<String> = (0..count).map(|i| format!("burst-{i}")).collect();
    let t0 = Instant::now();
    futures::stream::iter(names.iter())
        .map(|n| {
            let w = work(n, cluster, cluster);
            async move { works.create(&PostParams::default(), &w).await }
        })
        .buffer_unordered(20)
        .try_collect::<Vec<_>>()
        .await?;
    let created = t0.elapsed();
    wait_applied(works, &names).await?;
    let elapsed = t0.elapsed();
    #[allow(clippy::cast_precision_loss)]
    let rate = count as f64 / elapsed.as_secs_f64();
    println!(
        "throughput: {count} works on one cluster Applied in {:.2} s = {rate:.1} works/s (creating them took {:.2} s)",
        elapsed.as_secs_f64(),
        created.as_secs_f64()
    );
    Ok(())
}

/// Phase 3: delete every work and wait until the agent has removed them.
async fn delete_all(works: &Api<ManifestWork>) -> anyhow::Result<usize> {
    let all = works.list(&ListParams::default()).await?;
    for w in &all {
        works
            .delete(&w.name_any(), &DeleteParams::default())
            .await?;
    }
    wait_deleted(works, all.items.iter().map(ResourceExt::name_any).collect()).await?;
    Ok(all.items.len())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut samples, mut count) = (20_usize, 100_usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--samples" => samples = args.next().context("--samples N")?.parse()?,
            "--works" => count = args.next().context("--works N")?.parse()?,
            "--bench" => {} // added by `cargo bench`
            other => anyhow::bail!("unknown argument {other} (use --samples N, --works N)"),
        }
    }
    let hub_target = Target::from_env("HUB_KUBECONFIG").await?;
    let managed_target = Target::from_env("MANAGED_KUBECONFIG").await?;
    let (hub, managed) = (hub_target.client()?, managed_target.client()?);
    let crds = |list: Vec<_>| -> Vec<DynamicObject> {
        list.into_iter()
            .map(|c| serde_json::from_value(serde_json::to_value(c).unwrap()).unwrap())
            .collect()
    };
    Applier::new(hub.clone(), TIMEOUT)
        .apply(crds(clusteradm::api::hub_crds()))
        .await?;
    Applier::new(managed.clone(), TIMEOUT)
        .apply(crds(clusteradm::api::managed_crds()))
        .await?;
    let cluster = format!("bench-{}", std::process::id());
    namespace(&hub, &cluster).await?;
    namespace(&managed, &cluster).await?;

    let (hub_requests, managed_requests) =
        (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut opts = WorkAgentOptions::new(
        hub_target.counted(hub_requests.clone())?,
        hub_target.config.cluster_url.to_string(),
        managed_target.counted(managed_requests.clone())?,
        &cluster,
        format!("{cluster}-agent"),
    );
    opts.resync = Duration::from_secs(600);
    let stop = clusteradm::runtime::Shutdown::new();
    let agent = tokio::spawn(clusteradm::agent::work::run(opts, stop.clone()));
    let works: Api<ManifestWork> = Api::namespaced(hub.clone(), &cluster);
    let counts = || {
        (
            hub_requests.load(Ordering::Relaxed),
            managed_requests.load(Ordering::Relaxed),
        )
    };

    latency(&works, &cluster, samples).await?;
    let (h0, m0) = counts();
    burst(&works, &cluster, count).await?;
    let (h1, m1) = counts();
    #[allow(clippy::cast_precision_loss)]
    let per = |n: u64| n as f64 / count as f64;
    println!("agent API requests so far: hub {h1}, managed {m1}");
    println!(
        "  per work in the burst: hub {:.2}, managed {:.2}",
        per(h1 - h0),
        per(m1 - m0)
    );
    let deleted = delete_all(&works).await?;
    let (h2, m2) = counts();
    println!(
        "deleting {deleted} works: hub {} requests, managed {} requests",
        h2 - h1,
        m2 - m1
    );

    stop.cancel();
    let _ = agent.await;
    Api::<Namespace>::all(hub)
        .delete(&cluster, &DeleteParams::default())
        .await?;
    Api::<Namespace>::all(managed)
        .delete(&cluster, &DeleteParams::default())
        .await?;
    Ok(())
}
