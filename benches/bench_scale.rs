//! Fleet simulation (run by `scripts/bench/scale`; a benchmark, not a test): one hub, `clusteradm init
//! --in-process` in its own process, and N managed clusters whose registration and work agents
//! run in this process, all against the managed API server of MANAGED_KUBECONFIG, each cluster
//! in its own agent namespace (as hosted mode has it) and naming its AppliedManifestWorks per
//! cluster. Nothing in the hub or the agents knows it is a simulation: the agents bootstrap from
//! `bootstrap-hub-kubeconfig`, send CSRs, are accepted by `clusteradm accept`, heartbeat and apply
//! works exactly as `join --in-process` runs them.
//!
//! For one N it measures, prints, and appends to a CSV:
//! 1. joins → N CSRs, and `accept --clusters` (all N in one command) → N Available;
//!    The hub process's CPU-seconds and its WATCH and LIST requests (from the audit log) up to then;
//! 2. a steady-state window: hub API requests per second by verb and resource (the hub API
//!    server's own `apiserver_request_total`), CPU and RSS of the hub API server and the hub
//!    process, and this process's RSS per cluster;
//! 3. `create work --clusters <all N>`: time until every copy is Applied, and its hub requests;
//! 4. one Placement over all N clusters → its decisions, and one cluster's label change → the
//!    decision of a placement selecting that label;
//! 5. a restart of the hub API server with it down for `--outage` seconds (0 skips it): time until every
//!    cluster has heartbeated again and is Available, and how many works were re-applied or had
//!    their status rewritten meanwhile (none should be).
//!
//! `--light` replaces the agents with [`light_fleet`]'s, for fleets beyond what real agents can
//! open connections for here (the light agents' own cost is then not measured).
//!
//! `--plot CSV PNG` draws the times and memory against N from the CSV instead.
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::too_many_lines
)]

mod common;
#[path = "scale/light_fleet.rs"]
mod light_fleet;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use clusteradm::agent::registration::AgentOptions;
use clusteradm::agent::work::AppliedNames;
use clusteradm::agent::work::supervisor::Supervised;
use clusteradm::api::cluster::{
    CLUSTER_LEASE_NAME, MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster,
    ManagedClusterSetBinding, PLACEMENT_LABEL, Placement, PlacementDecision,
};
use clusteradm::api::conditions::{self, APPLIED};
use clusteradm::api::names::BOOTSTRAP_SECRET;
use clusteradm::api::work::ManifestWork;
use clusteradm::join::bootstrap::Bootstrap;
use clusteradm::runtime::Shutdown;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt as _};
use serde::de::DeserializeOwned;
use serde_json::json;

use common::{Kinds, counted, rss_mib, rss_mib_of};

/// How long any one step may take: ten minutes, or 0.12 s per cluster beyond 5,000 (10,000
/// clusters' registrations take the API server longer than ten minutes here). Set by `main`.
static TIMEOUT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

fn timeout() -> Duration {
    *TIMEOUT.get_or_init(|| Duration::from_secs(600))
}

const CONCURRENCY: usize = 32;
const WORK: &str = "scale-work";
/// Kernel clock ticks per second of `/proc/<pid>/stat` (100 on Linux everywhere that matters).
const TICKS: f64 = 100.0;

struct Options {
    clusters: usize,
    /// Light agents ([`light_fleet`]) instead of real ones.
    light: bool,
    steady: Duration,
    outage: Duration,
    csv: PathBuf,
    logs: PathBuf,
}

/// One row of the CSV.
#[derive(Default)]
struct Row {
    clusters: usize,
    joins_to_csrs_s: f64,
    accept_s: f64,
    accept_to_available_s: f64,
    hub_rss_mib: f64,
    hub_cpu_pct: f64,
    apiserver_rss_mib: f64,
    apiserver_cpu_pct: f64,
    hub_requests_per_s: f64,
    agents_rss_mib: f64,
    agent_rss_per_cluster_mib: f64,
    work_applied_s: f64,
    work_hub_requests: f64,
    outage_recovered_s: f64,
    reapplied: u64,
    hub_cpu_s: f64,
    hub_watches: u64,
    hub_lists: u64,
    placement_all_s: f64,
    label_change_ms: f64,
    light: bool,
}

const HEADER: &str = "clusters,joins_to_csrs_s,accept_s,accept_to_available_s,hub_rss_mib,hub_cpu_pct,\
apiserver_rss_mib,apiserver_cpu_pct,hub_requests_per_s,agents_rss_mib,agent_rss_per_cluster_mib,\
work_applied_s,work_hub_requests,outage_recovered_s,reapplied,hub_cpu_s,hub_watches,hub_lists,\
placement_all_s,label_change_ms,light";

impl Row {
    fn csv(&self) -> String {
        format!(
            "{},{:.2},{:.2},{:.2},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.3},{:.2},{:.0},{:.2},{},{:.1},{},{},{:.2},{:.0},{}",
            self.clusters,
            self.joins_to_csrs_s,
            self.accept_s,
            self.accept_to_available_s,
            self.hub_rss_mib,
            self.hub_cpu_pct,
            self.apiserver_rss_mib,
            self.apiserver_cpu_pct,
            self.hub_requests_per_s,
            self.agents_rss_mib,
            self.agent_rss_per_cluster_mib,
            self.work_applied_s,
            self.work_hub_requests,
            self.outage_recovered_s,
            self.reapplied,
            self.hub_cpu_s,
            self.hub_watches,
            self.hub_lists,
            self.placement_all_s,
            self.label_change_ms,
            u8::from(self.light),
        )
    }
}

/// CPU ticks and RSS of a process, from `/proc`.
#[derive(Clone, Copy)]
struct ProcSample {
    ticks: u64,
    rss_mib: f64,
    at: Instant,
}

fn proc_sample(pid: u32) -> anyhow::Result<ProcSample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("process {pid} is gone"))?;
    // Fields after the `(comm)`: state is the 3rd field, utime the 14th, stime the 15th.
    let after = &stat[stat.rfind(')').context("odd /proc stat")? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    Ok(ProcSample {
        ticks,
        rss_mib: rss_mib_of(&pid.to_string()),
        at: Instant::now(),
    })
}

fn cpu_pct(before: ProcSample, after: ProcSample) -> f64 {
    let secs = after.at.duration_since(before.at).as_secs_f64();
    (after.ticks - before.ticks) as f64 / TICKS / secs * 100.0
}

fn apiserver_pid() -> anyhow::Result<u32> {
    let dir = std::env::var("CP_DIR").context("CP_DIR is not set (see scripts/bench/scale)")?;
    let text = std::fs::read_to_string(Path::new(&dir).join("pids/hub-apiserver.pid"))?;
    Ok(text.trim().parse()?)
}

/// `apiserver_request_total` of the hub API server, summed by `VERB resource[/subresource]`.
async fn request_totals(admin: &Client) -> anyhow::Result<BTreeMap<String, f64>> {
    let text = admin
        .request_text(http::Request::get("/metrics").body(vec![])?)
        .await?;
    let mut totals = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(&format!("{name}=\"")))
                .map(|v| v.trim_end_matches('"').to_string())
                .unwrap_or_default()
        };
        let (resource, sub) = (label("resource"), label("subresource"));
        let kind = if sub.is_empty() {
            format!("{} {resource}", label("verb"))
        } else {
            format!("{} {resource}/{sub}", label("verb"))
        };
        *totals.entry(kind).or_default() += value.trim().parse::<f64>().unwrap_or(0.0);
    }
    Ok(totals)
}

fn delta(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Waits until `ready` holds for `n` objects of `api` (as a watch sees them); returns how long.
async fn until_all<K>(
    api: Api<K>,
    config: watcher::Config,
    n: usize,
    ready: impl Fn(&K) -> bool,
) -> anyhow::Result<Duration>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let start = Instant::now();
    let mut done = HashSet::new();
    let mut listing = HashSet::new();
    let mut events = std::pin::pin!(watcher(api, config));
    tokio::time::timeout(timeout(), async {
        while done.len() < n {
            match events.try_next().await {
                Ok(Some(watcher::Event::Apply(o))) => {
                    if ready(&o) {
                        done.insert(o.name_any() + &o.namespace().unwrap_or_default());
                    }
                }
                Ok(Some(watcher::Event::InitApply(o))) => {
                    if ready(&o) {
                        listing.insert(o.name_any() + &o.namespace().unwrap_or_default());
                    }
                }
                Ok(Some(watcher::Event::Init)) => listing.clear(),
                Ok(Some(watcher::Event::InitDone)) => done = std::mem::take(&mut listing),
                Ok(Some(watcher::Event::Delete(_))) => {}
                Ok(None) => anyhow::bail!("the watch ended"),
                // The API server restarting: the watcher relists.
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
        Ok(())
    })
    .await
    .with_context(|| format!("only {} of {n} ready after {:?}", done.len(), timeout()))??;
    Ok(start.elapsed())
}

/// The hub process's WATCH and LIST requests received between `from` and `to`, from the hub API
/// server's audit log: those sent as `clusteradm/` (the user agent of every `clusteradm` client;
/// the agents here and this bench send none).
fn hub_requests(from: Timestamp, to: Timestamp) -> anyhow::Result<(u64, u64)> {
    use std::io::BufRead as _;
    let dir = std::env::var("CP_DIR").context("CP_DIR is not set (see scripts/bench/scale)")?;
    let logs = Path::new(&dir).join("logs");
    // The API server rotates its audit log (`hub-audit-<time>.log`) as it grows: read them all.
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&logs)? {
        let path = entry?.path();
        let audit = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("hub-audit"));
        if audit && path.extension().is_some_and(|e| e == "log") {
            files.push(path);
        }
    }
    let (mut watches, mut lists) = (0, 0);
    let lines = files
        .iter()
        .map(std::fs::File::open)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flat_map(|f| std::io::BufReader::new(f).lines());
    for line in lines {
        let line = line?;
        if !line.contains("\"userAgent\":\"clusteradm/") {
            continue;
        }
        let event: serde_json::Value = serde_json::from_str(&line)?;
        let at = event["requestReceivedTimestamp"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok());
        if !at.is_some_and(|at| at >= from && at <= to) {
            continue;
        }
        match (event["verb"].as_str(), event["stage"].as_str()) {
            (Some("watch"), Some("ResponseStarted")) => watches += 1,
            (Some("list"), Some("ResponseComplete")) => lists += 1,
            _ => {}
        }
    }
    Ok((watches, lists))
}

/// The namespace of the placements: the `global` set (every cluster) bound in it.
const PLACEMENTS: &str = "scale-placement";

/// Creates Placement `name` with `spec` in [`PLACEMENTS`] and waits until `decided` holds.
async fn place(
    admin: &Client,
    name: &str,
    spec: serde_json::Value,
    decided: impl Fn(&Placement) -> bool + Send + Sync + 'static,
) -> anyhow::Result<Duration> {
    let placements: Api<Placement> = Api::namespaced(admin.clone(), PLACEMENTS);
    let placement: Placement = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": name, "namespace": PLACEMENTS}, "spec": spec}))?;
    let waiting = tokio::spawn(until_all(
        placements.clone(),
        watcher::Config::default().fields(&format!("metadata.name={name}")),
        1,
        decided,
    ));
    let start = Instant::now();
    placements
        .create(&PostParams::default(), &placement)
        .await?;
    waiting.await??;
    Ok(start.elapsed())
}

/// How long after one cluster gets label `scale-picked=yes` the placement selecting that label
/// decides it: from the label's patch to the decision's change reaching this process's watch
/// (started, and its list done, before the patch).
async fn label_change(admin: &Client, cluster: &str) -> anyhow::Result<Duration> {
    let decisions: Api<PlacementDecision> = Api::namespaced(admin.clone(), PLACEMENTS);
    let mut events = std::pin::pin!(watcher(
        decisions,
        watcher::Config::default().labels(&format!("{PLACEMENT_LABEL}=picked")),
    ));
    while !matches!(events.try_next().await?, Some(watcher::Event::InitDone)) {}
    let names = |d: &PlacementDecision| {
        d.status
            .iter()
            .flat_map(|s| &s.decisions)
            .any(|c| c.cluster_name == cluster)
    };
    let clusters: Api<ManagedCluster> = Api::all(admin.clone());
    let start = Instant::now();
    clusters
        .patch(
            cluster,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"scale-picked": "yes"}}})),
        )
        .await?;
    tokio::time::timeout(timeout(), async {
        loop {
            match events.try_next().await? {
                Some(watcher::Event::Apply(d)) if names(&d) => return anyhow::Ok(start.elapsed()),
                Some(_) => {}
                None => anyhow::bail!("the decision watch ended"),
            }
        }
    })
    .await
    .context("the labelled cluster was never decided")?
}

fn cluster_name(i: usize) -> String {
    format!("scale-{i:04}")
}

/// `clusteradm` itself, as the user runs it: this tree's, or the build `SCALE_BIN` names (to
/// measure an older hub against the same fleet).
fn clusteradm() -> tokio::process::Command {
    let bin =
        std::env::var_os("SCALE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_clusteradm").into());
    tokio::process::Command::new(bin)
}

/// Starts `init --in-process` and returns it with the join command's JSON.
async fn start_hub(
    opts: &Options,
    hub_kubeconfig: &str,
) -> anyhow::Result<(tokio::process::Child, serde_json::Value)> {
    use tokio::io::AsyncBufReadExt as _;
    let log = std::fs::File::create(opts.logs.join(format!("hub-{}.log", opts.clusters)))?;
    let mut hub = clusteradm()
        .args([
            "init",
            "--in-process",
            "-o",
            "json",
            "--kubeconfig",
            hub_kubeconfig,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(hub.stdout.take().context("no stdout")?).lines();
    let mut text = String::new();
    let join = tokio::time::timeout(timeout(), async {
        while let Some(line) = lines.next_line().await? {
            text.push_str(&line);
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                return Ok(v);
            }
        }
        anyhow::bail!("init --in-process exited without a join command")
    })
    .await??;
    // The rest of stdout must keep draining or the hub blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((hub, join))
}

/// The hub CA of a kubeconfig file, PEM.
fn hub_ca(path: &str) -> anyhow::Result<String> {
    let kc = Kubeconfig::read_from(path)?;
    let data = kc
        .clusters
        .iter()
        .find_map(|c| c.cluster.as_ref()?.certificate_authority_data.clone())
        .context("the hub kubeconfig has no certificate-authority-data")?;
    Ok(String::from_utf8(
        base64::engine::general_purpose::STANDARD.decode(data)?,
    )?)
}

/// What `join` leaves for the agents: the managed cluster's CRDs (the klusterlet operator's job),
/// and per cluster its agent namespace and `bootstrap-hub-kubeconfig`; and the namespace that is
/// `default` in the cluster's view ([`cluster_view`]).
async fn join_all(managed: &Client, names: &[String], kubeconfig: &str) -> anyhow::Result<()> {
    let crds = clusteradm::api::managed_crds();
    clusteradm::apply::Applier::new(managed.clone(), timeout())
        .apply(crds.iter().map(clusteradm::apply::to_dynamic).collect())
        .await?;
    futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let managed = managed.clone();
            async move {
                for ns in [name.clone(), own_default(&name)] {
                    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}}))?;
                    create(&Api::all(managed.clone()), &ns).await?;
                }
                let secret: Secret = serde_json::from_value(json!({
                    "metadata": {"name": BOOTSTRAP_SECRET, "namespace": name},
                    "stringData": {"kubeconfig": kubeconfig},
                }))?;
                create(&Api::namespaced(managed, &name), &secret).await
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

async fn create<K>(api: &Api<K>, object: &K) -> anyhow::Result<()>
where
    K: Resource + Clone + DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_already_exists() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The namespace that stands for `default` in `cluster`'s view of the shared managed API server.
fn own_default(cluster: &str) -> String {
    format!("{cluster}-default")
}

/// `cluster`'s view of the shared managed API server: namespace `default` is its own
/// ([`own_default`]), so the same work sent to every cluster writes one object per cluster, as in
/// a real fleet, rather than a thousand writers contending for one object. Requests naming
/// `default` (path and body) are rewritten; everything else goes through unchanged.
fn cluster_view(shared: &Client, cluster: &str) -> Client {
    let (shared, own) = (shared.clone(), own_default(cluster));
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let (shared, own) = (shared.clone(), own.clone());
        async move {
            let (mut parts, body) = req.into_parts();
            let path = parts.uri.path();
            let segment = "/namespaces/default";
            let named = path.ends_with(segment) || path.contains(&format!("{segment}/"));
            if !named {
                return shared.send(http::Request::from_parts(parts, body)).await;
            }
            let path_and_query = parts
                .uri
                .path_and_query()
                .map(ToString::to_string)
                .unwrap_or_default()
                .replacen(segment, &format!("/namespaces/{own}"), 1);
            parts.uri = path_and_query
                .parse()
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
            let bytes = body.collect_bytes().await?;
            let text = String::from_utf8_lossy(&bytes).replace(
                "\"namespace\":\"default\"",
                &format!("\"namespace\":\"{own}\""),
            );
            shared
                .send(http::Request::from_parts(parts, text.into_bytes().into()))
                .await
        }
    });
    Client::new(service, "default")
}

/// The agents of every cluster, as `join --in-process` runs them, under one token.
fn start_agents(managed: &Client, names: &[String], token: &Shutdown) {
    for name in names {
        let mut registration = AgentOptions::new(managed.clone(), name.clone());
        registration.namespace.clone_from(name);
        tokio::spawn(clusteradm::agent::registration::run(
            registration,
            token.clone(),
        ));
        let work = Supervised {
            managed: cluster_view(managed, name),
            management: managed.clone(),
            namespace: name.clone(),
            cluster: name.clone(),
            applied_names: AppliedNames::PerCluster,
            addons: false,
            work_agent: true,
            example_agents: false,
            gates: clusteradm::agent::gates::Gates::default(),
            work: clusteradm::agent::work::Settings::default(),
            addon_renewal: clusteradm::agent::registration::rotate::Renewal::default(),
            addon_auth: clusteradm::agent::addon::token::Auth::default(),
        };
        tokio::spawn(clusteradm::agent::work::supervisor::run(
            work,
            token.clone(),
        ));
    }
}

fn available(mc: &ManagedCluster) -> bool {
    mc.status
        .as_ref()
        .is_some_and(|s| conditions::is_true(&s.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE))
}

fn applied(w: &ManifestWork) -> bool {
    w.status.as_ref().is_some_and(|s| {
        conditions::find(&s.conditions, APPLIED)
            .is_some_and(|c| c.status == "True" && c.observed_generation == w.metadata.generation)
    })
}

async fn run_command(what: &str, cmd: &mut tokio::process::Command) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let out = cmd.output().await?;
    anyhow::ensure!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(start.elapsed())
}

fn print_rates(title: &str, rates: &[(String, f64)], per: f64, top: usize) {
    println!("  {title}");
    for (kind, count) in rates.iter().take(top) {
        println!("    {:>9.2}  {kind}", count / per);
    }
}

async fn simulate(opts: &Options) -> anyhow::Result<Row> {
    let n = opts.clusters;
    let hub_path = std::env::var("HUB_KUBECONFIG").context("HUB_KUBECONFIG is not set")?;
    let managed_path =
        std::env::var("MANAGED_KUBECONFIG").context("MANAGED_KUBECONFIG is not set")?;
    let hub_config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&hub_path)?,
        &KubeConfigOptions::default(),
    )
    .await?;
    let admin = Client::try_from(hub_config)?;
    let managed_config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&managed_path)?,
        &KubeConfigOptions::default(),
    )
    .await?;
    let managed_kinds: Kinds = Arc::default();
    let managed = counted(
        &managed_config,
        Arc::new(AtomicU64::new(0)),
        managed_kinds.clone(),
    )?;
    let mut row = Row {
        clusters: n,
        light: opts.light,
        ..Row::default()
    };
    println!("== {n} clusters");

    let hub_started = Timestamp::now();
    let (mut hub, join) = start_hub(opts, &hub_path).await?;
    let hub_pid = hub.id().context("the hub process has no pid")?;
    let field = |k: &str| join[k].as_str().map(str::to_owned).context(k.to_owned());
    let bootstrap = Bootstrap {
        server: field("hub-apiserver")?,
        ca_pem: hub_ca(&hub_path)?,
        token: field("hub-token")?,
        proxy_url: None,
    };
    // The hub is ready once it serves ManagedClusters (its operator installs the CRDs).
    let clusters: Api<ManagedCluster> = Api::all(admin.clone());
    tokio::time::timeout(timeout(), async {
        while clusters
            .list(&kube::api::ListParams::default().limit(1))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(200)).await; // polling another process
        }
    })
    .await
    .context("the hub never served ManagedClusters")?;

    // 1. Joins → CSRs → accept → Available.
    let names: Vec<String> = (0..n).map(cluster_name).collect();
    let start = Instant::now();
    if !opts.light {
        join_all(&managed, &names, &bootstrap.kubeconfig()).await?;
        println!(
            "  joined (namespace + bootstrap secret each): {:.2?}",
            start.elapsed()
        );
    }
    let rss_before_agents = rss_mib();
    let agents = Shutdown::new();
    let joined_at = Instant::now();
    if opts.light {
        light_fleet::register(&bootstrap.client().await?, &names).await?;
        tokio::spawn(light_fleet::run(
            admin.clone(),
            names.clone(),
            agents.clone(),
        ));
        println!("  light agents: {n} ManagedClusters and CSRs created");
    } else {
        start_agents(&managed, &names, &agents);
    }
    let ours = |c: &str| c.starts_with("scale-");
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    until_all(
        csrs,
        watcher::Config::default().labels(clusteradm::api::cluster::CLUSTER_NAME_LABEL),
        n,
        |csr| {
            csr.labels()
                .get(clusteradm::api::cluster::CLUSTER_NAME_LABEL)
                .is_some_and(|c| ours(c))
        },
    )
    .await?;
    row.joins_to_csrs_s = joined_at.elapsed().as_secs_f64();
    println!(
        "  all {n} CSRs: {:.2} s after the agents started",
        row.joins_to_csrs_s
    );

    let accept_started = Instant::now();
    let waiting = tokio::spawn(until_all(
        clusters.clone(),
        watcher::Config::default(),
        n,
        available,
    ));
    row.accept_s = run_command(
        "accept",
        clusteradm().args([
            "accept",
            "--clusters",
            &names.join(","),
            "--kubeconfig",
            &hub_path,
        ]),
    )
    .await?
    .as_secs_f64();
    waiting.await??;
    row.accept_to_available_s = accept_started.elapsed().as_secs_f64();
    println!(
        "  accept --clusters (all {n}): {:.2} s; all Available {:.2} s after accept started",
        row.accept_s, row.accept_to_available_s
    );
    row.hub_cpu_s = proc_sample(hub_pid)?.ticks as f64 / TICKS;
    (row.hub_watches, row.hub_lists) = hub_requests(hub_started, Timestamp::now())?;
    println!(
        "  hub process from its start to all Available: {:.1} CPU-s, {} WATCH and {} LIST requests",
        row.hub_cpu_s, row.hub_watches, row.hub_lists
    );

    // 2. Steady state.
    let apiserver = apiserver_pid()?;
    let (hub0, api0, totals0) = (
        proc_sample(hub_pid)?,
        proc_sample(apiserver)?,
        request_totals(&admin).await?,
    );
    let managed0 = managed_kinds.lock().unwrap().clone();
    println!("  steady state for {:?}...", opts.steady);
    tokio::time::sleep(opts.steady).await; // the measurement window itself
    let (hub1, api1, totals1) = (
        proc_sample(hub_pid)?,
        proc_sample(apiserver)?,
        request_totals(&admin).await?,
    );
    let secs = opts.steady.as_secs_f64();
    let rates = delta(&totals0, &totals1);
    row.hub_requests_per_s = rates.iter().map(|(_, v)| v).sum::<f64>() / secs;
    row.hub_rss_mib = hub1.rss_mib;
    row.hub_cpu_pct = cpu_pct(hub0, hub1);
    row.apiserver_rss_mib = api1.rss_mib;
    row.apiserver_cpu_pct = cpu_pct(api0, api1);
    row.agents_rss_mib = rss_mib() - rss_before_agents;
    row.agent_rss_per_cluster_mib = row.agents_rss_mib / n as f64;
    println!(
        "  hub API: {:.1} requests/s; hub API server {:.1}% CPU, {:.0} MiB; hub process {:.1}% CPU, {:.0} MiB",
        row.hub_requests_per_s,
        row.apiserver_cpu_pct,
        row.apiserver_rss_mib,
        row.hub_cpu_pct,
        row.hub_rss_mib
    );
    print_rates("hub API requests/s by verb and resource:", &rates, secs, 12);
    let managed1 = managed_kinds.lock().unwrap().clone();
    let managed_rates: Vec<(String, f64)> = {
        let to_f =
            |m: &BTreeMap<String, u64>| m.iter().map(|(k, v)| (k.clone(), *v as f64)).collect();
        delta(&to_f(&managed0), &to_f(&managed1))
    };
    print_rates("agents' managed API requests/s:", &managed_rates, secs, 6);
    println!(
        "  agents: {:.1} MiB for {n} clusters, {:.2} MiB per cluster",
        row.agents_rss_mib, row.agent_rss_per_cluster_mib
    );

    // 3. One work to every cluster.
    let manifest = opts.logs.join("scale-work.yaml");
    std::fs::write(
        &manifest,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {WORK}\n  namespace: default\ndata:\n  fleet: \"{n}\"\n"
        ),
    )?;
    let before = request_totals(&admin).await?;
    let works: Api<ManifestWork> = Api::all(admin.clone());
    let waiting = tokio::spawn(until_all(
        works.clone(),
        watcher::Config::default().fields(&format!("metadata.name={WORK}")),
        n,
        applied,
    ));
    let start = Instant::now();
    let created = run_command(
        "create work",
        clusteradm()
            .args(["create", "work", WORK, "-f"])
            .arg(&manifest)
            .args(["--clusters", &names.join(","), "--kubeconfig", &hub_path]),
    )
    .await?;
    waiting.await??;
    row.work_applied_s = start.elapsed().as_secs_f64();
    let work_requests = delta(&before, &request_totals(&admin).await?);
    row.work_hub_requests = work_requests.iter().map(|(_, v)| v).sum();
    println!(
        "  create work --clusters (all {n}): command {:.2?}, all Applied {:.2} s; {:.0} hub requests",
        created, row.work_applied_s, row.work_hub_requests
    );
    print_rates(
        "hub requests of that work, by verb and resource:",
        &work_requests,
        1.0,
        6,
    );

    // 4. One Placement over every cluster, and one cluster's label change under another.
    clusteradm::apply::Applier::new(admin.clone(), timeout())
        .apply(vec![
            clusteradm::apply::to_dynamic(&serde_json::from_value::<Namespace>(
                json!({"metadata": {"name": PLACEMENTS}}),
            )?),
            clusteradm::apply::to_dynamic(&serde_json::from_value::<ManagedClusterSetBinding>(
                json!({"metadata": {"name": "global", "namespace": PLACEMENTS},
                       "spec": {"clusterSet": "global"}}),
            )?),
        ])
        .await?;
    let every = i32::try_from(n)?;
    // A placement selects no tainted cluster (unavailable, unreachable): how many are, now.
    let tainted = Api::<ManagedCluster>::all(admin.clone())
        .list(&kube::api::ListParams::default())
        .await?
        .items
        .iter()
        .filter(|c| !c.spec.taints.is_empty())
        .count();
    row.placement_all_s = place(
        &admin,
        "all",
        json!({"clusterSets": ["global"]}),
        move |p| {
            p.status
                .as_ref()
                .and_then(|s| s.number_of_selected_clusters)
                == Some(every)
        },
    )
    .await?
    .as_secs_f64();
    place(
        &admin,
        "picked",
        json!({"predicates": [{"requiredClusterSelector":
            {"labelSelector": {"matchLabels": {"scale-picked": "yes"}}}}]}),
        |p| p.status.as_ref().is_some_and(|s| !s.conditions.is_empty()),
    )
    .await?;
    row.label_change_ms = label_change(&admin, &names[0]).await?.as_secs_f64() * 1000.0;
    println!(
        "  a Placement over all {n}: decided in {:.2} s ({tainted} clusters tainted when it was made); one cluster labelled → its decision {:.0} ms",
        row.placement_all_s, row.label_change_ms
    );

    // 5. The hub API server down for `outage`, then back.
    if opts.outage.is_zero() {
        agents.cancel();
        hub.start_kill()?;
        let _ = hub.wait().await;
        return Ok(row);
    }
    let applies = |kinds: &Kinds| {
        kinds
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.ends_with(" configmaps") && k.starts_with("PATCH"))
            .map(|(_, v)| *v)
            .sum::<u64>()
    };
    let applies_before = applies(&managed_kinds);
    let down_at = Instant::now();
    println!("  hub API server down for {:?}...", opts.outage);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/control-plane");
    let status = tokio::process::Command::new(script)
        .args(["restart-hub-apiserver", &opts.outage.as_secs().to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .await?;
    anyhow::ensure!(status.success(), "restarting the hub API server failed");
    let back = Timestamp::now();
    let back_at = Instant::now();
    let status_before = request_totals(&admin).await?;
    let leases: Api<Lease> = Api::all(admin.clone());
    let renewed = until_all(
        leases,
        watcher::Config::default().fields(&format!("metadata.name={CLUSTER_LEASE_NAME}")),
        n,
        move |l| {
            l.spec
                .as_ref()
                .and_then(|s| s.renew_time.as_ref())
                .is_some_and(|t| t.0 > back)
        },
    );
    let all_available = until_all(clusters.clone(), watcher::Config::default(), n, available);
    let (renewed, all_available) = tokio::join!(renewed, all_available);
    renewed?;
    all_available?;
    row.outage_recovered_s = back_at.elapsed().as_secs_f64();
    anyhow::ensure!(
        hub.try_wait()?.is_none(),
        "the hub process stopped during the outage (see {})",
        opts.logs.display()
    );
    let status_after = request_totals(&admin).await?;
    let rewritten = delta(&status_before, &status_after)
        .iter()
        .filter(|(k, _)| k.contains("manifestworks/status"))
        .map(|(_, v)| *v)
        .fold(0.0, |a, b| a + b);
    // Every agent re-applies its work once per resync (60 s) anyway: count what goes beyond it.
    let window = down_at.elapsed().as_secs_f64();
    let resync_due = (n as f64 * window / 60.0).ceil() as u64 + n as u64;
    let reapplied = applies(&managed_kinds) - applies_before;
    row.reapplied = reapplied.saturating_sub(resync_due);
    println!(
        "  hub back after {:.1} s down; every cluster heartbeated and Available {:.2} s later; \
         {reapplied} applies in {window:.0} s (the 60 s resync alone allows {resync_due}); \
         {rewritten:.0} work status writes after the hub returned",
        back_at.duration_since(down_at).as_secs_f64(),
        row.outage_recovered_s
    );

    agents.cancel();
    hub.start_kill()?;
    let _ = hub.wait().await;
    Ok(row)
}

fn append_csv(path: &Path, row: &Row) -> anyhow::Result<()> {
    use std::io::Write as _;
    let fresh = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if fresh {
        writeln!(file, "{HEADER}")?;
    }
    writeln!(file, "{}", row.csv())?;
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut opts = Options {
        clusters: 10,
        light: false,
        steady: Duration::from_secs(300),
        outage: Duration::from_secs(30),
        csv: PathBuf::from("target/scale/scale.csv"),
        logs: PathBuf::from("target/scale"),
    };
    let mut plot: Option<(PathBuf, PathBuf)> = None;
    let seconds = |v: Option<String>| -> anyhow::Result<Duration> {
        Ok(Duration::from_secs(
            v.context("a number of seconds")?.parse()?,
        ))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--steady" => opts.steady = seconds(args.next())?,
            "--outage" => opts.outage = seconds(args.next())?,
            "--light" => opts.light = true,
            "--csv" => opts.csv = args.next().context("--csv PATH")?.into(),
            "--plot" => {
                let csv = args.next().context("--plot CSV PNG")?;
                let png = args.next().context("--plot CSV PNG")?;
                plot = Some((csv.into(), png.into()));
            }
            n if n.parse::<usize>().is_ok() => opts.clusters = n.parse()?,
            other => anyhow::bail!(
                "unknown argument {other} (N [--light] [--steady SECS] [--outage SECS] [--csv PATH], or --plot CSV PNG)"
            ),
        }
    }
    if let Some((csv, png)) = plot {
        return plot::draw(&csv, &png);
    }
    let _ = TIMEOUT
        .set(Duration::from_secs(600).max(Duration::from_millis(120 * opts.clusters as u64)));
    std::fs::create_dir_all(&opts.logs)?;
    let log = std::fs::File::create(opts.logs.join(format!("agents-{}.log", opts.clusters)))?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::sync::Mutex::new(log))
        .with_ansi(false)
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    let row = runtime.block_on(simulate(&opts))?;
    append_csv(&opts.csv, &row)?;
    println!("  appended to {}", opts.csv.display());
    runtime.shutdown_timeout(Duration::from_secs(5));
    Ok(())
}

mod plot {
    //! The PNG: times and memory against the number of clusters, log-scaled.
    use std::path::Path;

    use anyhow::Context as _;
    use plotters::prelude::*;

    const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

    type Series = (&'static str, usize);

    pub fn draw(csv: &Path, png: &Path) -> anyhow::Result<()> {
        let font = std::fs::read(FONT)
            .with_context(|| format!("reading {FONT} (apt install fonts-dejavu-core)"))?;
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            Box::leak(font.into_boxed_slice()),
        )
        .map_err(|_| anyhow::anyhow!("{FONT} is not a usable font"))?;
        let text = std::fs::read_to_string(csv)?;
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().context("empty CSV")?.split(',').collect();
        let rows: Vec<Vec<f64>> = lines
            .map(|l| l.split(',').map(|v| v.parse().unwrap_or(0.0)).collect())
            .collect();
        let column = |name: &str| header.iter().position(|h| *h == name);
        // A step not run (0) is no point, nor are light agents' own memory (not theirs to measure).
        let light = column("light");
        let agents = column("agents_rss_mib");
        let points = |i: usize| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r[i] > 0.0)
                .filter(|r| !(Some(i) == agents && light.is_some_and(|l| r[l] > 0.0)))
                .map(|r| (r[0], r[i]))
                .collect()
        };

        let root = BitMapBackend::new(png, (1200, 500)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, right) = root.split_horizontally(600);
        let times: [Series; 5] = [
            (
                "joins → all CSRs",
                column("joins_to_csrs_s").context("column")?,
            ),
            (
                "accept → all Available",
                column("accept_to_available_s").context("column")?,
            ),
            (
                "one work → all Applied",
                column("work_applied_s").context("column")?,
            ),
            (
                "hub back → all heartbeating",
                column("outage_recovered_s").context("column")?,
            ),
            (
                "a Placement over all → decided",
                column("placement_all_s").context("column")?,
            ),
        ];
        chart(&left, "Time (s)", &times, &points)?;
        let memory: [Series; 3] = [
            (
                "hub process RSS (MiB)",
                column("hub_rss_mib").context("column")?,
            ),
            (
                "agents RSS, all clusters (MiB)",
                column("agents_rss_mib").context("column")?,
            ),
            (
                "hub API server RSS (MiB)",
                column("apiserver_rss_mib").context("column")?,
            ),
        ];
        chart(&right, "Memory (MiB)", &memory, &points)?;
        root.present()?;
        println!(
            "plotted {} rows of {} into {}",
            rows.len(),
            csv.display(),
            png.display()
        );
        Ok(())
    }

    fn chart(
        area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
        title: &str,
        series: &[Series],
        points: &dyn Fn(usize) -> Vec<(f64, f64)>,
    ) -> anyhow::Result<()> {
        let all: Vec<(f64, f64)> = series.iter().flat_map(|(_, i)| points(*i)).collect();
        let max_x = all.iter().map(|p| p.0).fold(10.0, f64::max);
        let max_y = all.iter().map(|p| p.1).fold(1.0, f64::max) * 3.0;
        let min_y = all.iter().map(|p| p.1).fold(max_y, f64::min) / 3.0;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{title} vs managed clusters"), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d((5f64..max_x * 2.0).log_scale(), (min_y..max_y).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("managed clusters")
            .y_desc(title)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| {
                if *y < 1.0 {
                    format!("{y:.2}")
                } else {
                    format!("{y:.0}")
                }
            })
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .draw()?;
        for (k, (label, i)) in series.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(LineSeries::new(points(*i), color.stroke_width(2)))?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            chart.draw_series(
                points(*i)
                    .into_iter()
                    .map(|p| Circle::new(p, 4, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    }
}
