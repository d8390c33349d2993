//! `clusteradm operator hub|klusterlet`: run an operator loop in the foreground, as upstream's
//! `registration-operator hub|klusterlet` does in its pod — here from any shell, against the
//! cluster of the current kubeconfig, until Ctrl-C or SIGTERM.
use std::process::ExitCode;

use super::Ctx;
use crate::inprocess;

/// Flags of `operator`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which operator to run.
    #[command(subcommand)]
    pub which: Which,
    #[command(flatten)]
    serve: super::controller::Serve,
    /// Copy the CR's labels (but `app` and `open-cluster-management.io*`) to every object the
    /// operator makes and to its pods, as upstream's operators do with this flag
    #[arg(long, global = true)]
    enable_sync_labels: bool,
}

/// The operators.
#[derive(Debug, clap::Subcommand)]
pub enum Which {
    /// Run the ClusterManager operator: install and keep the hub components as the ClusterManager asks
    Hub,
    /// Run the Klusterlet operator: install and keep the agents as the Klusterlet asks
    Klusterlet {
        /// Run every Klusterlet's registration and work agents in this process instead of
        /// deploying them (as `join --in-process` does for its own Klusterlet)
        #[arg(long)]
        in_process: bool,
    },
}

/// Runs `operator`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx.kube().await?;
    let shutdown = crate::runtime::shutdown::on_signal();
    super::controller::start(&args.serve, &kube, &shutdown).await?;
    let which = match args.which {
        Which::Hub => "ClusterManager",
        Which::Klusterlet { .. } => "Klusterlet",
    };
    ctx.printer.info(format!(
        "running the {which} operator against {} (context {}); Ctrl-C to stop",
        kube.url(),
        kube.loaded.context
    ));
    let waiting = |holder: &str| {
        ctx.printer.warn(format!(
            "another process ({holder}) runs the {which} operator here: waiting for it to stop"
        ));
    };
    match args.which {
        Which::Hub => {
            inprocess::hub::run_operator(
                kube.client.clone(),
                args.enable_sync_labels,
                shutdown,
                waiting,
            )
            .await?;
        }
        Which::Klusterlet { in_process } => {
            let opts = crate::operator::klusterlet::Options {
                cleanup_timeout: ctx.global.timeout,
                sync_labels: args.enable_sync_labels,
                ..Default::default()
            };
            let client = kube.client.clone();
            if in_process {
                inprocess::klusterlet::run_operator_hosting(
                    client,
                    kube.server_ca(),
                    opts,
                    shutdown,
                    waiting,
                )
                .await?;
            } else {
                inprocess::klusterlet::run_operator(client, opts, shutdown, waiting).await?;
            }
        }
    }
    ctx.printer.done(format!("{which} operator stopped"));
    Ok(ExitCode::SUCCESS)
}
