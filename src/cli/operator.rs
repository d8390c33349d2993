//! `clusteradm operator hub|klusterlet`: run an operator loop in the foreground, as upstream's
//! `registration-operator hub|klusterlet` does in its pod — here from any shell, against the
//! cluster of the current kubeconfig, until Ctrl-C or SIGTERM.
use std::process::ExitCode;

use super::Ctx;
use crate::operator::cluster_manager;

/// Flags of `operator`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which operator to run.
    #[command(subcommand)]
    pub which: Which,
}

/// The operators.
#[derive(Debug, clap::Subcommand)]
pub enum Which {
    /// Run the ClusterManager operator: install and keep the hub components as the ClusterManager asks
    Hub,
    /// Run the Klusterlet operator: install and keep the agents as the Klusterlet asks
    Klusterlet,
}

/// Runs `operator`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.which {
        Which::Hub => {
            let kube = ctx.kube().await?;
            kube.server_version().await?;
            ctx.printer.info(format!(
                "running the ClusterManager operator against {} (context {}); Ctrl-C to stop",
                kube.url(),
                kube.loaded.context
            ));
            cluster_manager::run(kube.client.clone(), crate::shutdown::signal()).await?;
            ctx.printer.done("ClusterManager operator stopped");
            Ok(ExitCode::SUCCESS)
        }
        Which::Klusterlet => {
            let kube = ctx.kube().await?;
            kube.server_version().await?;
            ctx.printer.info(format!(
                "running the Klusterlet operator against {} (context {}); Ctrl-C to stop",
                kube.url(),
                kube.loaded.context
            ));
            let opts = crate::operator::klusterlet::Options {
                cleanup_timeout: ctx.global.timeout,
                ..Default::default()
            };
            crate::operator::klusterlet::run(kube.client.clone(), opts, crate::shutdown::signal())
                .await?;
            ctx.printer.done("Klusterlet operator stopped");
            Ok(ExitCode::SUCCESS)
        }
    }
}
