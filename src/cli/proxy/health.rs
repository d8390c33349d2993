//! `clusteradm proxy health [--clusters a,b]`: for each managed cluster, whether cluster-proxy is
//! enabled and Available there, and whether its API server answers `/healthz` through the tunnel
//! (and how fast), in upstream's columns. The probes run side by side.
use std::process::ExitCode;

use futures::StreamExt as _;
use kube::api::{Api, ListParams};
use kube::{CustomResourceExt as _, ResourceExt};
use serde::Serialize;

use super::ServerArgs;
use crate::api::addon::ManagedClusterAddOn;
use crate::api::cluster::ManagedCluster;
use crate::cli::Ctx;
use crate::cluster_proxy::health::{self, Health};
use crate::cluster_proxy::{ADDON, installation, tunnel};
use crate::error::UserError;
use crate::ui::output::Format;
use crate::ui::table;

/// Probes in flight at once.
const CONCURRENCY: usize = 16;

/// Flags of `proxy health`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this managed cluster (with --clusters: that one too)
    #[arg(short = 'c', long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// Only these managed clusters, comma-separated [default: every one]
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub clusters: Vec<String>,
    /// How to reach the proxy server.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

/// One cluster's row.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The managed cluster.
    pub cluster: String,
    /// Whether the add-on is enabled on it.
    pub installed: bool,
    /// Whether the add-on reports Available there.
    pub available: bool,
    /// `True`, `False` or `Unknown`.
    pub probed_health: &'static str,
    /// How long the probe took, when healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_seconds: Option<f64>,
    /// Why not healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Runs `proxy health`.
pub async fn run(mut args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    args.clusters.extend(args.cluster.take());
    let files = args.server.files()?;
    let kube = ctx.hub(&[ManagedCluster::crd_name()]).await?;
    let mut clusters = Api::<ManagedCluster>::all(kube.client.clone())
        .list(&ListParams::default())
        .await
        .map_err(crate::error::ocm_api_missing)?
        .items;
    if let Some(unknown) = args
        .clusters
        .iter()
        .find(|name| !clusters.iter().any(|c| &c.name_any() == *name))
    {
        return Err(UserError::new(
            format!("managed cluster {unknown} not found on the hub"),
            "list the clusters with `clusteradm get clusters`",
        )
        .into());
    }
    clusters.retain(|c| args.clusters.is_empty() || args.clusters.contains(&c.name_any()));
    clusters.sort_by_key(ResourceExt::name_any);
    let server = installation::find(&kube.client).await?;
    let (route, credentials) = args.server.resolve(files, &kube.client, &server).await?;
    let tunnel = tunnel::connect(&kube.client, &server, &route, &credentials).await?;
    let spinner = ctx.printer.spinner(format!(
        "probing {} clusters through cluster-proxy",
        clusters.len()
    ));
    let rows: Vec<Row> = futures::stream::iter(&clusters)
        .map(|cluster| row(&kube.client, &tunnel, cluster))
        .buffered(CONCURRENCY)
        .collect()
        .await;
    spinner.finish_and_clear();
    for row in rows.iter().filter(|r| r.installed) {
        if let Some(reason) = &row.reason {
            ctx.printer.warn(format!("{}: {reason}", row.cluster));
        }
    }
    if args.output.is_objects() {
        crate::ui::output::print_value(&serde_json::to_value(&rows)?, args.output)?;
    } else {
        crate::ui::stdout::println(render(&rows))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn row(
    client: &kube::Client,
    tunnel: &konnectivity::Client,
    cluster: &ManagedCluster,
) -> Row {
    let name = cluster.name_any();
    let addon = Api::<ManagedClusterAddOn>::namespaced(client.clone(), &name)
        .get_opt(ADDON)
        .await
        .ok()
        .flatten();
    let available = addon
        .as_ref()
        .and_then(|a| a.status.as_ref())
        .is_some_and(|s| crate::api::conditions::is_true(&s.conditions, "Available"));
    let (probed_health, latency_seconds, reason) = match health::probe(tunnel, cluster).await {
        Health::Healthy(took) => ("True", Some(took.as_secs_f64()), None),
        Health::Unhealthy(answer) => ("False", None, Some(answer)),
        Health::Unknown(why) => ("Unknown", None, Some(why)),
    };
    Row {
        cluster: name,
        installed: addon.is_some(),
        available,
        probed_health,
        latency_seconds,
        reason,
    }
}

/// Upstream's table: CLUSTER NAME, INSTALLED, AVAILABLE, PROBED HEALTH, LATENCY.
#[must_use]
pub fn render(rows: &[Row]) -> String {
    let mut t = table::new(&[
        "cluster name",
        "installed",
        "available",
        "probed health",
        "latency",
    ]);
    let word = |b: bool| if b { "True" } else { "False" }.to_string();
    for row in rows {
        let latency = row
            .latency_seconds
            .map_or_else(|| "<none>".to_string(), |s| format!("{:.1}ms", s * 1000.0));
        t.add_row(vec![
            row.cluster.clone(),
            word(row.installed),
            word(row.available),
            row.probed_health.to_string(),
            latency,
        ]);
    }
    table::render(&t)
}
