//! `clusteradm delete <noun>`: remove objects from the hub.
pub mod token;
pub mod work;

use std::process::ExitCode;

use super::Ctx;

/// `delete` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to delete.
    #[command(subcommand)]
    pub what: What,
}

/// The nouns of `delete`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Delete a ManagedClusterSet that no namespace is bound to
    Clusterset(crate::cli::clusterset::NameArgs),
    /// Delete the bootstrap token: revoke the join credential `init` made, so join commands
    /// printed before stop working (clusters already joined are not affected)
    Token(token::Args),
    /// Delete a ManifestWork from clusters and wait until its resources are removed
    Work(work::Args),
}

/// Runs `delete`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Work(a) => work::run(a, ctx).await,
        What::Token(a) => token::run(a, ctx).await,
        What::Clusterset(a) => crate::cli::clusterset::delete(a, ctx).await,
    }
}
