//! `clusteradm upgrade clustermanager|klusterlet`: move an installed hub or klusterlet to other
//! images (`--bundle-version`, `--image-registry`, or our `--image`), as upstream's does: the
//! operator's CRD, RBAC and Deployment are applied with the new image and the CR's component
//! images are patched; every other setting stays. `--wait` waits for the operator's rollout and
//! the CR to report the new generation applied. An operator running in-process has no Deployment:
//! the CR's images change and the message says to restart that process with the new binary.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt as _};

use super::Ctx;
use crate::api::names::{DEFAULT_REGISTRY, OPERATOR_NAMESPACE};
use crate::api::operator::{CLUSTER_MANAGER_NAME, ClusterManager, Klusterlet};
use crate::apply::Applier;
use crate::error::UserError;
use crate::install::upgrade::{self, Images};

/// `upgrade ...`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to upgrade.
    #[command(subcommand)]
    pub what: What,
}

/// The upgradable parts.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Upgrade the hub: the cluster-manager operator and the ClusterManager's component images
    #[command(name = "clustermanager")]
    ClusterManager(ImageArgs),
    /// Upgrade this cluster's klusterlet: the klusterlet operator and every Klusterlet's agent images
    Klusterlet(ImageArgs),
}

/// The images to move to.
#[derive(Debug, clap::Args)]
pub struct ImageArgs {
    /// OCM release of the images: default, latest, or a version such as 1.3.1
    #[arg(long, default_value = "default", value_name = "VERSION")]
    pub bundle_version: String,
    /// A JSON file overriding the bundle's image versions, as upstream's: `{"ocm": "v1.3.0"}`
    #[arg(long, value_name = "FILE")]
    pub bundle_version_overrides: Option<PathBuf>,
    /// Registry of the OCM images
    #[arg(long, default_value = DEFAULT_REGISTRY, value_name = "REGISTRY", value_parser = crate::api::image::registry)]
    pub image_registry: String,
    /// Our image (this clusteradm, as `scripts/image` builds it) for the operator and every
    /// component, instead of upstream's
    #[arg(long, value_name = "IMAGE", value_parser = crate::api::image::reference)]
    pub image: Option<String>,
    /// Wait until the operator has rolled out and the CR reports the new images applied
    #[arg(long)]
    pub wait: bool,
}

impl ImageArgs {
    fn images(&self) -> anyhow::Result<Images> {
        Ok(Images {
            registry: self.image_registry.clone(),
            tag: super::bundle::image_tag(
                &self.bundle_version,
                self.bundle_version_overrides.as_deref(),
            )?,
            single: self.image.clone(),
        })
    }
}

/// Runs `upgrade ...`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::ClusterManager(a) => cluster_manager(&a, ctx).await,
        What::Klusterlet(a) => klusterlet(&a, ctx).await,
    }
}

async fn cluster_manager(args: &ImageArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let images = args.images()?;
    let kube = ctx.kube().await?;
    let client = kube.client.clone();
    let cms: Api<ClusterManager> = Api::all(client.clone());
    let cm = cms
        .get_opt(CLUSTER_MANAGER_NAME)
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("reading the ClusterManager")?
        .ok_or_else(|| {
            UserError::new(
                "clustermanager is not installed",
                "make this cluster a hub first: `clusteradm init`",
            )
        })?;
    ctx.printer
        .info("clustermanager installed. starting upgrade");
    let sync_labels = syncs_labels(&client, "cluster-manager").await?;
    let operator =
        upgrade::hub_operator(&images, cm.spec.resource_requirement.as_ref(), sync_labels)?;
    let patch = upgrade::cluster_manager_patch(&images);
    let spec_changed = !upgrade::already(&serde_json::to_value(&cm.spec)?, &patch);
    let outcome = apply(
        ctx,
        &client,
        "cluster-manager",
        operator,
        &patch,
        spec_changed,
    )
    .await?;
    if !ctx.global.dry_run {
        cms.patch(
            CLUSTER_MANAGER_NAME,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .context("patching the ClusterManager's images")?;
    }
    report(ctx, "the hub", &outcome, &images);
    if args.wait && !ctx.global.dry_run {
        if outcome.deployed {
            wait_rollout(ctx, &client, "cluster-manager").await?;
        }
        let spinner = ctx
            .printer
            .spinner("waiting for the ClusterManager to apply the new images");
        let ready = crate::operator::cluster_manager::wait_ready(client, ctx.global.timeout).await;
        spinner.finish_and_clear();
        ready?;
        ctx.printer.done("the hub is ready");
    }
    Ok(ExitCode::SUCCESS)
}

async fn klusterlet(args: &ImageArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let images = args.images()?;
    let kube = ctx.kube().await?;
    let client = kube.client.clone();
    let klusterlets: Api<Klusterlet> = Api::all(client.clone());
    let not_installed = || {
        UserError::new(
            "klusterlet is not installed",
            "join this cluster to a hub first: `clusteradm join`",
        )
    };
    let all = match klusterlets.list(&ListParams::default()).await {
        Ok(list) => list.items,
        // No Klusterlet CRD: nothing was ever joined here.
        Err(kube::Error::Api(s)) if s.code == 404 => return Err(not_installed().into()),
        Err(e) => return Err(anyhow::Error::new(e).context("listing Klusterlets")),
    };
    let Some(first) = all.first() else {
        return Err(not_installed().into());
    };
    ctx.printer.info("klusterlet installed. starting upgrade");
    let sync_labels = syncs_labels(&client, crate::api::names::KLUSTERLET_OPERATOR).await?;
    let operator = upgrade::klusterlet_operator(
        &images,
        first.spec.resource_requirement.as_ref(),
        sync_labels,
    )?;
    let patch = upgrade::klusterlet_patch(&images);
    // Every Klusterlet here shares the one operator; each moves to the new images.
    let mut spec_changed = false;
    for k in &all {
        spec_changed |= !upgrade::already(&serde_json::to_value(&k.spec)?, &patch);
    }
    let outcome = apply(ctx, &client, "klusterlet", operator, &patch, spec_changed).await?;
    if !ctx.global.dry_run {
        for k in &all {
            klusterlets
                .patch(
                    &k.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .with_context(|| format!("patching Klusterlet {}'s images", k.name_any()))?;
        }
    }
    report(ctx, "the klusterlet", &outcome, &images);
    if args.wait && !ctx.global.dry_run {
        if outcome.deployed {
            wait_rollout(ctx, &client, "klusterlet").await?;
        }
        for k in &all {
            crate::operator::klusterlet::wait_applied(
                client.clone(),
                &k.name_any(),
                ctx.global.timeout,
            )
            .await?;
        }
        ctx.printer.done("the klusterlet is ready");
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether the operator Deployment `name` runs with `--enable-sync-labels` (an upgrade keeps it).
async fn syncs_labels(client: &kube::Client, name: &str) -> anyhow::Result<bool> {
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), crate::api::names::OPERATOR_NAMESPACE);
    let current = deployments
        .get_opt(name)
        .await
        .with_context(|| format!("reading the operator Deployment {name}"))?;
    Ok(current
        .and_then(|d| d.spec?.template.spec)
        .is_some_and(|pod| {
            pod.containers
                .iter()
                .flat_map(|c| c.args.iter().flatten())
                .any(|a| a == "--enable-sync-labels")
        }))
}

/// What an upgrade changed.
struct Outcome {
    /// The operator runs as a Deployment (not in a clusteradm process).
    deployed: bool,
    /// Something was (or, with --dry-run, would be) changed.
    changed: bool,
}

/// Applies the operator's objects when it runs as Deployment `name` (with --dry-run, prints them
/// and the CR's `patch` instead); `spec_changed`: the patch changes a CR.
async fn apply(
    ctx: &Ctx,
    client: &Client,
    name: &str,
    operator: Vec<kube::api::DynamicObject>,
    patch: &serde_json::Value,
    spec_changed: bool,
) -> anyhow::Result<Outcome> {
    let deployed = Api::<Deployment>::namespaced(client.clone(), OPERATOR_NAMESPACE)
        .get_opt(name)
        .await
        .with_context(|| format!("reading Deployment {OPERATOR_NAMESPACE}/{name}"))?
        .is_some();
    if ctx.global.dry_run {
        if deployed {
            crate::ui::stdout::print(crate::apply::to_yaml(&operator)?)?;
        }
        crate::ui::stdout::print(format!(
            "---\n# merge patch of the CR\n{}",
            crate::yaml::to_string(patch)?
        ))?;
        return Ok(Outcome {
            deployed,
            changed: spec_changed,
        });
    }
    let mut changed = spec_changed;
    if deployed {
        let report = Applier::new(client.clone(), ctx.global.timeout)
            .apply(operator)
            .await
            .context("applying the operator; re-run the upgrade to retry (it is idempotent)")?;
        changed |= !report.unchanged();
    }
    Ok(Outcome { deployed, changed })
}

fn report(ctx: &Ctx, what: &str, outcome: &Outcome, images: &Images) {
    let target = images
        .single
        .clone()
        .unwrap_or_else(|| format!("{}/*:{}", images.registry, images.tag));
    if !outcome.changed {
        ctx.printer
            .done(format!("{what} already runs {target}: nothing changed"));
        return;
    }
    if !outcome.deployed {
        ctx.printer.warn(format!(
            "the operator runs in a clusteradm process here (--in-process), not as a Deployment: \
             its images are set to {target}; run the new clusteradm binary to upgrade the process itself"
        ));
    }
    if !ctx.global.dry_run {
        ctx.printer.done(format!(
            "upgraded completed successfully: {what} runs {target}"
        ));
    }
}

/// Waits until Deployment `name`'s current spec is rolled out and available.
async fn wait_rollout(ctx: &Ctx, client: &Client, name: &str) -> anyhow::Result<()> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    let rolled = |d: Option<&Deployment>| {
        d.is_some_and(|d| {
            let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            d.status.as_ref().is_some_and(|s| {
                s.observed_generation >= d.metadata.generation
                    && s.updated_replicas.unwrap_or(0) >= wanted
                    && s.available_replicas.unwrap_or(0) >= wanted
                    && s.replicas.unwrap_or(0) == wanted
            })
        })
    };
    let spinner = ctx
        .printer
        .spinner(format!("waiting for the {name} operator to roll out"));
    let waited = tokio::time::timeout(
        ctx.global.timeout,
        kube::runtime::wait::await_condition(api, name, rolled),
    )
    .await;
    spinner.finish_and_clear();
    match waited {
        Ok(result) => {
            result.with_context(|| format!("watching Deployment {OPERATOR_NAMESPACE}/{name}"))?;
            Ok(())
        }
        Err(_) => Err(UserError::new(
            format!(
                "the {name} operator did not roll out within {:?}",
                ctx.global.timeout
            ),
            format!("see `kubectl -n {OPERATOR_NAMESPACE} rollout status deployment/{name}` and its pods' events (is the new image reachable?)"),
        )
        .into()),
    }
}
