//! `addon create NAME -f FILE...`: the flags of upstream's command, checked, and what
//! [`crate::addon::define`] plans and applies (the add-on, its template and the hub roles
//! beside it), printed.
use crate::api::addon::ClusterManagementAddOn;
use kube::CustomResourceExt as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::pairs;
use crate::addon::define::{self, Request};
use crate::api::names::is_dns_label;
use crate::cli::Ctx;
use crate::error::UserError;
use crate::ui::stdout::println;

/// Flags of `addon create`.
#[derive(Debug, clap::Args)]
// `--version` is the add-on's, as upstream's; the binary's version stays `clusteradm --version`.
#[command(disable_version_flag = true)]
pub struct CreateArgs {
    /// Name of the add-on
    pub name: String,
    /// Files or directories with the agent's manifests, or with an AddOnTemplate
    #[arg(short = 'f', long = "filename", required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Version of the add-on (the template is named NAME-VERSION)
    #[arg(long = "version", id = "addon_version", default_value = "0.0.1")]
    pub addon_version: String,
    /// Replace the add-on and its template if they exist
    #[arg(long)]
    pub overwrite: bool,
    /// Give the agent an identity on the hub (a client certificate)
    #[arg(long)]
    pub hub_registration: bool,
    /// A ClusterRole the agent's hub identity is bound to in its cluster's namespace
    #[arg(long, value_name = "CLUSTERROLE", requires = "hub_registration")]
    pub cluster_role_bind: Option<String>,
    /// Labels of the ClusterManagementAddOn and AddOnTemplate (key=value, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// A placement whose clusters get the add-on (NAMESPACE/NAME); without it, `addon enable`
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub placement_ref: Option<String>,
    /// Look into subdirectories of -f directories
    #[arg(short = 'R', long, default_value_t = true)]
    pub recursive: bool,
}

fn user(message: String, hint: &str) -> anyhow::Error {
    UserError::new(message, hint).into()
}

fn placement_ref(given: Option<&str>) -> anyhow::Result<Option<(String, String)>> {
    let Some(given) = given else { return Ok(None) };
    match given.split_once('/') {
        Some((ns, name))
            if !ns.trim().is_empty() && !name.trim().is_empty() && !name.contains('/') =>
        {
            Ok(Some((ns.trim().to_string(), name.trim().to_string())))
        }
        _ => Err(user(
            format!("invalid --placement-ref {given:?}: it must be in the format 'namespace/name'"),
            "e.g. `--placement-ref default/all-clusters`",
        )),
    }
}

/// Runs `addon create`.
pub async fn create(args: CreateArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    if !is_dns_label(&args.name) {
        return Err(user(
            format!(
                "invalid add-on name {:?}: it must be a DNS-1123 label",
                args.name
            ),
            "e.g. `clusteradm addon create helloworld -f agent.yaml`",
        ));
    }
    if args.addon_version.trim().is_empty() {
        return Err(user(
            "addon version must be specified".into(),
            "e.g. `--version 0.0.1`",
        ));
    }
    let template_name = format!("{}-{}", args.name, args.addon_version);
    if !crate::api::names::is_dns_subdomain(&template_name) {
        return Err(user(
            format!(
                "invalid --version {:?}: the template name {template_name:?} must be a DNS-1123 subdomain",
                args.addon_version
            ),
            "use lowercase letters, digits, '-' and '.'",
        ));
    }
    let request = Request {
        name: args.name.clone(),
        version: args.addon_version.clone(),
        files: args.files.clone(),
        recursive: args.recursive,
        hub_registration: args.hub_registration,
        cluster_role_bind: args.cluster_role_bind.clone(),
        labels: pairs("labels", &args.labels)?,
        placement: placement_ref(args.placement_ref.as_deref())?,
    };
    let plan = define::plan(&request)?;
    if ctx.global.dry_run {
        for object in plan.objects()? {
            println(format!(
                "---\n{}",
                crate::yaml::to_string(&object)?.trim_end()
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let kube = ctx.hub(&[ClusterManagementAddOn::crd_name()]).await?;
    for line in define::apply(&kube.client, &plan, args.overwrite, ctx.global.timeout).await? {
        println(line)?;
    }
    Ok(ExitCode::SUCCESS)
}
