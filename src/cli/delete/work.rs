//! `clusteradm delete work NAME --clusters a,b [--force] [-y]`: delete a ManifestWork and wait
//! (bounded by `--timeout`) until it is gone — that is, until the cluster's work agent has
//! removed what it applied and dropped its finalizer. `--force` strips the finalizer instead,
//! which leaves the applied resources to whatever cleans up after the agent.
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use crate::api::work::ManifestWork;
use crate::cli::Ctx;
use crate::error::UserError;

/// Flags of `delete work`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Name of the ManifestWork
    pub name: String,
    /// The clusters to delete it from, comma-separated
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        required = true,
        value_name = "NAMES"
    )]
    pub clusters: Vec<String>,
    /// Remove the work's finalizer instead of waiting for the agent's cleanup (its resources may
    /// be left on the managed clusters)
    #[arg(long)]
    pub force: bool,
    /// Accepted for scripts written for earlier versions: `delete work` never asks, as upstream's
    /// `clusteradm delete work` and `kubectl delete` do not
    #[arg(short = 'y', long, hide = true)]
    pub yes: bool,
}

/// Runs `delete work`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut clusters: Vec<String> = args
        .clusters
        .iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect();
    clusters.dedup();
    let kube = ctx.hub(&[ManifestWork::crd_name()]).await?;
    let name = args.name.as_str();
    let found = crate::runtime::fan_out::try_all(clusters.iter().map(|c| {
        let api: Api<ManifestWork> = Api::namespaced(kube.client.clone(), c);
        async move { api.get_opt(name).await }
    }))
    .await
    .with_context(|| format!("reading work {name} on the hub"))?;
    let missing: Vec<&str> = clusters
        .iter()
        .zip(&found)
        .filter(|(_, w)| w.is_none())
        .map(|(c, _)| c.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(UserError::new(
            format!("work {name} not found in cluster {}", missing.join(", ")),
            format!("`clusteradm get works {name}` lists the clusters that have it"),
        )
        .into());
    }
    let works: Vec<ManifestWork> = found.into_iter().flatten().collect();
    if ctx.global.dry_run {
        for w in &works {
            ctx.printer.info(format!(
                "would delete work {name} from cluster {}",
                w.namespace().unwrap_or_default()
            ));
        }
        return Ok(ExitCode::SUCCESS);
    }
    for w in &works {
        delete(&kube.client, w, args.force).await?;
        if args.force {
            ctx.printer.warn(format!(
                "removed the finalizer of work {name} in cluster {}: its work agent will not clean up, so the resources it applied may be left on that managed cluster",
                w.namespace().unwrap_or_default()
            ));
        }
    }
    let timeout = ctx.global.timeout;
    let spinner = ctx
        .printer
        .spinner(format!("waiting for the work agents to remove work {name}"));
    // One deadline for all: waits queued behind others (a bounded number run at once) get what
    // is left of the timeout, not a timeout of their own.
    let deadline = tokio::time::Instant::now() + timeout;
    let waits =
        crate::runtime::fan_out::all(works.iter().map(|w| wait_gone(&kube.client, w, deadline)))
            .await;
    spinner.finish_and_clear();
    let mut stuck = Vec::new();
    for (w, gone) in works.iter().zip(waits) {
        let cluster = w.namespace().unwrap_or_default();
        if gone.with_context(|| format!("watching work {name} in cluster {cluster}"))? {
            ctx.printer
                .done(format!("work {name} deleted from cluster {cluster}"));
        } else {
            stuck.push(cluster);
        }
    }
    if !stuck.is_empty() {
        return Err(UserError::new(
            format!("work {name} is still in cluster {} after {}s: its work agent has not removed it", stuck.join(", "), timeout.as_secs()),
            "is the cluster's work agent running? (`clusteradm get works NAME` shows what it reports); `--force` removes the work without its cleanup",
        )
        .into());
    }
    Ok(ExitCode::SUCCESS)
}

async fn delete(client: &Client, work: &ManifestWork, force: bool) -> anyhow::Result<()> {
    let (name, cluster) = (work.name_any(), work.namespace().unwrap_or_default());
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), &cluster);
    let what = || format!("deleting work {name} in cluster {cluster}");
    match api.delete(&name, &DeleteParams::default()).await {
        Err(kube::Error::Api(s)) if s.is_not_found() => return Ok(()),
        other => other.map(drop).with_context(what)?,
    }
    if force {
        let patch = json!({"metadata": {"finalizers": null}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            other => other.map(drop).with_context(what)?,
        }
    }
    Ok(())
}

/// Whether the work disappeared within `timeout`.
async fn wait_gone(
    client: &Client,
    work: &ManifestWork,
    deadline: tokio::time::Instant,
) -> Result<bool, kube::runtime::wait::Error> {
    let api: Api<ManifestWork> =
        Api::namespaced(client.clone(), &work.namespace().unwrap_or_default());
    let uid = work.uid().unwrap_or_default();
    match tokio::time::timeout_at(
        deadline,
        await_condition(api, &work.name_any(), conditions::is_deleted(&uid)),
    )
    .await
    {
        Ok(result) => result.map(|_| true),
        Err(_) => Ok(false),
    }
}
