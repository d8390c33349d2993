//! `clusteradm create <noun>`: put new objects on the hub.
pub mod work;

use std::process::ExitCode;

use super::Ctx;

/// `create` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to create.
    #[command(subcommand)]
    pub what: What,
}

/// The nouns of `create`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Create a ManagedClusterSet (clusters join it by label: `clusterset set`)
    Clusterset(crate::cli::clusterset::NameArgs),
    /// Create a Placement: which clusters of the bound sets to choose
    Placement(crate::cli::placement::CreateArgs),
    /// Wrap manifests into a ManifestWork for each target cluster
    Work(work::Args),
}

/// Runs `create`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Work(a) => work::run(a, ctx).await,
        What::Clusterset(a) => crate::cli::clusterset::create(a, ctx).await,
        What::Placement(a) => crate::cli::placement::create(a, ctx).await,
    }
}
