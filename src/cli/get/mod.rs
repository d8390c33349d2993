//! `clusteradm get <noun>`: read-only views of hub state.
pub mod token;

use std::process::ExitCode;

use super::Ctx;

/// `get` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to get.
    #[command(subcommand)]
    pub what: What,
}

/// The nouns of `get`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Print the join command with a bootstrap token (a fresh one when the old has expired)
    Token(token::Args),
}

/// Runs `get`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Token(a) => token::run(a, ctx).await,
    }
}
