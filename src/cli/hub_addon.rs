//! `clusteradm install hub-addon --names governance-policy-framework,application-manager` and
//! `uninstall hub-addon`:
//! upstream's built-in hub add-ons on the hub ([`crate::install::hub_addon`]). Installing applies
//! (idempotent: a second run reports every object unchanged); uninstalling refuses while a
//! cluster still has one of the add-on's agents (their ManagedClusterAddOns), as upstream's, and
//! leaves the CRDs, so policies and subscriptions outlive the controllers.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, ListParams};
use kube::{CustomResourceExt as _, ResourceExt};
use serde_json::json;

use super::Ctx;
use crate::api::addon::{ClusterManagementAddOn, ManagedClusterAddOn};
use crate::apply::Applier;
use crate::error::UserError;
use crate::install::hub_addon::{self, HubAddon};

/// `install` subcommands.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// What to install.
    #[command(subcommand)]
    pub what: InstallWhat,
}

/// What `install` installs.
#[derive(Debug, clap::Subcommand)]
pub enum InstallWhat {
    /// Install built-in add-ons on the hub (governance-policy-framework, application-manager)
    HubAddon(InstallHubAddon),
}

/// `uninstall` subcommands.
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// What to uninstall.
    #[command(subcommand)]
    pub what: UninstallWhat,
}

/// What `uninstall` removes.
#[derive(Debug, clap::Subcommand)]
pub enum UninstallWhat {
    /// Remove built-in add-ons from the hub (their CRDs, policies and subscriptions stay)
    HubAddon(UninstallHubAddon),
}

/// Flags of `install hub-addon`.
#[derive(Debug, clap::Args)]
pub struct InstallHubAddon {
    /// Which add-ons, where.
    #[command(flatten)]
    pub target: Target,
    /// Create the namespace when it does not exist
    #[arg(long)]
    pub create_namespace: bool,
    /// Also write the objects applied to FILE, as a YAML stream; with --dry-run, instead of
    /// applying them
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// The version bundle whose add-on images to install (default, latest or an OCM version:
    /// 1.3.1 installs the policy add-on v0.18.0, as upstream's, and application-manager v0.16.0,
    /// its last release)
    #[arg(long, default_value = "default", value_name = "VERSION")]
    pub bundle_version: String,
    /// A JSON file overriding the bundle's versions, as upstream's: `{"policy_addon": "v0.18.0",
    /// "app_addon": "v0.16.0"}`
    #[arg(long, value_name = "FILE")]
    pub bundle_version_overrides: Option<PathBuf>,
}

/// Flags of `uninstall hub-addon`.
#[derive(Debug, clap::Args)]
pub struct UninstallHubAddon {
    /// Which add-ons, where.
    #[command(flatten)]
    pub target: Target,
}

/// `--names` and `--namespace`, which both commands take.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The add-ons, comma-separated: governance-policy-framework, application-manager
    #[arg(long, value_delimiter = ',', required = true, value_name = "NAMES")]
    pub names: Vec<String>,
    /// The namespace of the add-ons' controllers on the hub
    #[arg(
        long,
        default_value = "open-cluster-management",
        value_name = "NAMESPACE"
    )]
    pub namespace: String,
}

/// Runs `install`.
pub async fn install(args: InstallArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let InstallWhat::HubAddon(args) = args.what;
    let addons = parse(&args.target.names)?;
    let mut objects = Vec::new();
    if args.create_namespace {
        objects.push(namespace_object(&args.target.namespace));
    }
    for addon in &addons {
        let overridden =
            super::bundle::hub_addon_override(args.bundle_version_overrides.as_deref(), *addon)?;
        let tag = addon
            .tag(&args.bundle_version, overridden.as_deref())
            .map_err(|e| UserError::new(e, "see --help for --bundle-version"))?;
        for object in
            hub_addon::plan(*addon, &args.target.namespace, &tag).map_err(crate::error::Internal)?
        {
            // Add-ons share CRDs (PlacementRules): each object once.
            if !objects.iter().any(|o| same_object(o, &object)) {
                objects.push(object);
            }
        }
    }
    let write = super::bundle::BundleArgs {
        output_file: args.output_file.clone(),
        ..super::bundle::BundleArgs::default()
    };
    if ctx.global.dry_run {
        write.dry_run(&objects)?;
        return Ok(ExitCode::SUCCESS);
    }
    let kube = ctx.hub(&[ClusterManagementAddOn::crd_name()]).await?;
    if !args.create_namespace
        && Api::<Namespace>::all(kube.client.clone())
            .get_opt(&args.target.namespace)
            .await
            .context("reading the namespace")?
            .is_none()
    {
        return Err(UserError::new(
            format!(
                "the namespace {} does not exist on the hub",
                args.target.namespace
            ),
            "pass --create-namespace, or --namespace with one that exists",
        )
        .into());
    }
    let spinner = ctx.printer.spinner("applying the hub add-ons");
    let report = Applier::new(kube.client.clone(), ctx.global.timeout)
        .apply(objects.clone())
        .await;
    spinner.finish_and_clear();
    let report = report.context(
        "installing the hub add-ons failed; re-run the command to retry (it is idempotent), or `clusteradm uninstall hub-addon` to remove what was applied",
    )?;
    write.write(&objects)?;
    let names: Vec<&str> = addons.iter().map(|a| a.name()).collect();
    if report.unchanged() {
        ctx.printer.done(format!(
            "{} already installed: nothing changed ({} objects unchanged)",
            names.join(", "),
            report.applied.len()
        ));
    } else {
        ctx.printer.done(format!(
            "{} installed: {}",
            names.join(", "),
            report.summary()
        ));
    }
    let cluster_addons: Vec<&str> = addons
        .iter()
        .flat_map(|a| a.cluster_addons())
        .copied()
        .collect();
    ctx.printer.info(format!(
        "enable them on clusters: clusteradm addon enable --names {} --clusters <clusters>",
        cluster_addons.join(",")
    ));
    Ok(ExitCode::SUCCESS)
}

/// Runs `uninstall`.
pub async fn uninstall(args: UninstallArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let UninstallWhat::HubAddon(args) = args.what;
    let addons = parse(&args.target.names)?;
    let kube = ctx.hub(&[ManagedClusterAddOn::crd_name()]).await?;
    let enabled = Api::<ManagedClusterAddOn>::all(kube.client.clone())
        .list(&ListParams::default())
        .await
        .context("listing ManagedClusterAddOns")?;
    for name in addons.iter().flat_map(|a| a.cluster_addons()) {
        let clusters: Vec<String> = enabled
            .iter()
            .filter(|m| m.name_any() == *name)
            .filter_map(ResourceExt::namespace)
            .collect();
        if !clusters.is_empty() {
            return Err(UserError::new(
                format!(
                    "{name} is still enabled on {}: nothing was uninstalled",
                    clusters.join(", ")
                ),
                format!(
                    "disable it first: clusteradm addon disable --names {name} --clusters {}",
                    clusters.join(",")
                ),
            )
            .into());
        }
    }
    let mut objects: Vec<DynamicObject> = Vec::new();
    for addon in &addons {
        objects.extend(
            hub_addon::removable(*addon, &args.target.namespace).map_err(crate::error::Internal)?,
        );
    }
    if ctx.global.dry_run {
        crate::ui::stdout::print(crate::apply::to_yaml(&objects)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let applier = Applier::new(kube.client.clone(), ctx.global.timeout);
    let deleted =
        crate::apply::delete::delete_all(applier.resolver(), &objects, ctx.global.timeout)
            .await
            .map_err(|failures| {
                let list: Vec<String> = failures.iter().map(ToString::to_string).collect();
                anyhow::anyhow!(
                    "uninstalling failed for: {}; re-run the command to retry",
                    list.join("; ")
                )
            })?;
    let removed = deleted
        .iter()
        .filter(|(_, d)| *d == crate::apply::delete::Deleted::Removed)
        .count();
    if removed == 0 {
        ctx.printer.done("not installed: nothing to remove");
    } else {
        let names: Vec<&str> = addons.iter().map(|a| a.name()).collect();
        ctx.printer.done(format!(
            "{} uninstalled: {removed} objects removed (their CRDs stay)",
            names.join(", ")
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn parse(names: &[String]) -> anyhow::Result<Vec<HubAddon>> {
    let mut addons = Vec::new();
    for name in names.iter().filter(|n| !n.trim().is_empty()) {
        let addon = HubAddon::parse(name).map_err(|e| UserError::new(e, "nothing was changed"))?;
        if !addons.contains(&addon) {
            addons.push(addon);
        }
    }
    if addons.is_empty() {
        return Err(UserError::new(
            "no add-on named",
            "pass --names governance-policy-framework, application-manager or both",
        )
        .into());
    }
    Ok(addons)
}

fn same_object(a: &DynamicObject, b: &DynamicObject) -> bool {
    a.types == b.types
        && a.metadata.name == b.metadata.name
        && a.metadata.namespace == b.metadata.namespace
}

fn namespace_object(name: &str) -> DynamicObject {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .expect("a well-formed Namespace")
}
