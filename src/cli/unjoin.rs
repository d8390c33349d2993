//! `clusteradm unjoin`: remove a cluster's klusterlet — the Klusterlet (its agents, their RBAC,
//! the agent namespace with the bootstrap secret) and, with `--purge-operator` (the default),
//! the klusterlet operator and the Klusterlet CRD.
//!
//! Upstream's unjoin can wait for many minutes on a finalizer nobody removes (its issues #130,
//! #169). Here every wait is bounded by `--timeout`, and when no klusterlet operator is running
//! the cleanup the operator would do runs here, directly — the loop is a library.
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt as _};

use super::Ctx;
use crate::api::names::OPERATOR_NAMESPACE;
use crate::api::operator::{KLUSTERLET_NAME, Klusterlet};
use crate::apply::{Resolver, delete};
use crate::error::UserError;
use crate::install::klusterlet;
use crate::operator::klusterlet as operator;
use crate::runtime::uninstall::Outcome;

/// Flags of `unjoin`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The name the cluster joined under
    #[arg(long, value_name = "NAME")]
    pub cluster_name: String,
    /// Also remove the klusterlet operator and the Klusterlet CRD (`--purge-operator=false` keeps them)
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub purge_operator: bool,
    /// Do not ask for confirmation
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Accepted for upstream's scripts; writes nothing, as upstream's `unjoin` does not
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<std::path::PathBuf>,
}

/// Runs `unjoin`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    crate::api::names::validate_cluster_name(&args.cluster_name)
        .map_err(|e| UserError::new(e, "pass the --cluster-name the cluster joined with"))?;
    super::ignored_output_file(ctx, args.output_file.as_deref());
    let kube = ctx.kube().await?;
    let client = kube.client.clone();
    let all = match Api::<Klusterlet>::all(client.clone())
        .list(&ListParams::default())
        .await
    {
        Ok(list) => list.items,
        Err(kube::Error::Api(s)) if s.code == 404 => vec![], // no Klusterlet CRD
        Err(e) => return Err(e).context(format!("listing Klusterlets on {}", kube.url())),
    };
    let (mine, others): (Vec<Klusterlet>, Vec<Klusterlet>) = all
        .into_iter()
        .partition(|k| k.spec.cluster_name.as_deref() == Some(args.cluster_name.as_str()));
    if mine.is_empty() && !others.is_empty() {
        let found: Vec<String> = others
            .iter()
            .map(|k| {
                format!(
                    "{} (cluster {})",
                    k.name_any(),
                    k.spec.cluster_name.as_deref().unwrap_or("?")
                )
            })
            .collect();
        return Err(UserError::new(
            format!(
                "no Klusterlet for cluster {} on {} (found: {})",
                args.cluster_name,
                kube.url(),
                found.join(", ")
            ),
            "check --cluster-name and --context",
        )
        .into());
    }
    let names: Vec<String> = if mine.is_empty() {
        vec![KLUSTERLET_NAME.to_string()]
    } else {
        mine.iter().map(kube::ResourceExt::name_any).collect()
    };
    if ctx.global.dry_run {
        ctx.printer.info(format!(
            "would delete Klusterlet {} with its agents and agent namespace{}",
            names.join(", "),
            if args.purge_operator {
                ", the klusterlet operator and the Klusterlet CRD"
            } else {
                ""
            }
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let question = format!(
        "Remove cluster {} from its hub (context {}, {})?",
        args.cluster_name,
        kube.loaded.context,
        kube.url()
    );
    if !crate::ui::prompt::confirm(&ctx.printer, &question, args.yes)? {
        return Ok(crate::ui::prompt::declined(&ctx.printer));
    }
    if mine.is_empty() {
        ctx.printer.info(format!(
            "no Klusterlet for cluster {} here: removing what is left",
            args.cluster_name
        ));
    }
    for name in &names {
        remove_klusterlet(&client, name, ctx).await?;
    }
    if args.purge_operator {
        purge_operator(&client, ctx, others.is_empty()).await?;
    }
    ctx.printer.done(format!(
        "cluster {} unjoined; to forget it on the hub too, delete its ManagedCluster there",
        args.cluster_name
    ));
    Ok(ExitCode::SUCCESS)
}

/// Deletes the Klusterlet and waits until it is gone, running the cleanup here when no operator
/// will (or when the operator did not finish within the timeout).
async fn remove_klusterlet(client: &Client, name: &str, ctx: &Ctx) -> anyhow::Result<()> {
    let timeout = ctx.global.timeout;
    let running = operator::is_running(client).await.with_context(|| {
        format!("cannot tell whether a klusterlet operator runs (reading Lease {OPERATOR_NAMESPACE}/{})", operator::LEASE_NAME)
    })?;
    let spinner = ctx.printer.spinner(format!("removing Klusterlet {name}"));
    let outcome = operator::uninstall(client, name, running, timeout).await;
    spinner.finish_and_clear();
    if let Outcome::Here {
        operator_timed_out: true,
    } = outcome?
    {
        ctx.printer.warn(format!(
            "the klusterlet operator did not remove Klusterlet {name} within {timeout:?}: cleaned up here"
        ));
    }
    ctx.printer.done(format!(
        "removed Klusterlet {name}, its agents and the agent namespace"
    ));
    Ok(())
}

/// Removes the operator and the Klusterlet CRD; keeps the CRD while other Klusterlets remain, and
/// the operator namespace on a cluster that is also a hub.
async fn purge_operator(
    client: &Client,
    ctx: &Ctx,
    no_other_klusterlets: bool,
) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let is_hub = crds
        .get_opt("clustermanagers.operator.open-cluster-management.io")
        .await?
        .is_some();
    let mut objects =
        klusterlet::operator_objects("unused", false, &klusterlet::OperatorSettings::default())?;
    objects.retain(|o| {
        let kind = o.types.as_ref().map_or("", |t| t.kind.as_str());
        match kind {
            "CustomResourceDefinition" => no_other_klusterlets,
            "Namespace" => !is_hub && no_other_klusterlets,
            _ => true,
        }
    });
    let spinner = ctx.printer.spinner("removing the klusterlet operator");
    let result =
        delete::delete_all(&Resolver::new(client.clone()), &objects, ctx.global.timeout).await;
    spinner.finish_and_clear();
    result.map_err(|failures| {
        let list: Vec<String> = failures.iter().map(ToString::to_string).collect();
        anyhow::anyhow!(
            "removing the klusterlet operator failed: {}",
            list.join("; ")
        )
    })?;
    ctx.printer.done("removed the klusterlet operator");
    Ok(())
}
