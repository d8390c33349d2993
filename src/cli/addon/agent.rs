//! `addon agent helloworld`: the example add-on's agent, as the helloworld template's Deployment
//! runs it (`join --in-process` runs the same agent in its own process instead).
//!
//! `--hub-kubeconfig` is the mounted `<addon>-hub-kubeconfig` Secret, written by the registration
//! agent, not by the user: it is loaded under the cluster's rules
//! ([`crate::cli::mounted_kubeconfig`]), so whoever can write that Secret cannot make
//! this agent run a command or send a file of this host to a server.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::agent::addon::helloworld;
use crate::cli::Ctx;
use crate::runtime::shutdown;

/// The add-on agents this binary carries.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Example {
    /// Copies ConfigMaps from the cluster's namespace on the hub to the managed cluster
    Helloworld,
}

/// Flags of `addon agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// Which add-on's agent
    pub addon: Example,
    /// Kubeconfig of the add-on's hub identity (the `<addon>-hub-kubeconfig` secret's)
    #[arg(long, value_name = "FILE")]
    pub hub_kubeconfig: PathBuf,
    /// The managed cluster's name on the hub
    #[arg(long, value_name = "NAME")]
    pub cluster_name: String,
    /// The add-on's install namespace on the managed cluster
    #[arg(long, value_name = "NAMESPACE", default_value = crate::api::addon::DEFAULT_INSTALL_NAMESPACE)]
    pub addon_namespace: String,
    /// The add-on's name (its Lease's)
    #[arg(long, value_name = "NAME", default_value = helloworld::NAME)]
    pub addon_name: String,
    /// Kubeconfig of the managed cluster, for a Hosted add-on: the agent runs on the hosting
    /// cluster (`--kubeconfig` or in-cluster, where its Lease stays) and acts on this one
    #[arg(long, value_name = "FILE")]
    pub managed_kubeconfig: Option<PathBuf>,
}

/// Runs the agent until Ctrl-C or SIGTERM; the managed cluster is `--managed-kubeconfig`'s, else
/// `--kubeconfig`'s (or in-cluster), where it runs.
pub async fn agent(args: AgentArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let hub = crate::cli::mounted_kubeconfig(
        &args.hub_kubeconfig,
        "--hub-kubeconfig",
        "pass the kubeconfig of the add-on's <addon>-hub-kubeconfig secret: inline credentials, or files beside it",
        None,
    )
    .await?;
    let local = ctx
        .kube()
        .await
        .context("the cluster the agent runs on")?
        .client;
    let managed = match &args.managed_kubeconfig {
        Some(path) => {
            crate::cli::mounted_kubeconfig(
                path,
                "--managed-kubeconfig",
                "pass the kubeconfig of the add-on's <addon>-managed-kubeconfig secret: inline credentials, or files beside it",
                None,
            )
            .await?
        }
        None => local.clone(),
    };
    let Example::Helloworld = args.addon;
    let opts = helloworld::Options {
        hub,
        managed,
        local,
        cluster: args.cluster_name,
        addon: args.addon_name,
        namespace: args.addon_namespace,
    };
    helloworld::run(opts, shutdown::on_signal()).await;
    Ok(ExitCode::SUCCESS)
}
