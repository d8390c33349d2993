//! `clusteradm get <noun>`: read-only views of hub state.
pub mod addons;
pub mod clusters;
pub mod clustersets;
pub mod credentials;
pub mod info;
pub mod managed_service_account;
pub mod token;
pub mod works;

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
    /// List add-ons per cluster: install namespace, available, degraded, progressing, identity
    #[command(visible_alias = "addons")]
    Addon(addons::Args),
    /// List managed clusters: accepted, joined, available, Kubernetes version
    Clusters(clusters::Args),
    /// List cluster sets: bound namespaces, status and how many clusters each selects
    #[command(visible_alias = "clusterset")]
    Clustersets(clustersets::Args),
    /// Print a token for a managed cluster as an ExecCredential (the ClusterProfile exec plugin)
    Credentials(credentials::Args),
    /// List placements: satisfied, reason, and every cluster selected
    #[command(visible_alias = "placement")]
    Placements(crate::cli::placement::GetArgs),
    /// Show the hub's operator and components: replicas, images, CRDs (upstream's layout)
    HubInfo(info::Args),
    /// Show this cluster's Klusterlet: conditions, operator, agents, CRDs (upstream's layout)
    KlusterletInfo(info::Args),
    /// Print the join command with a bootstrap token (a fresh one when the old has expired)
    Token(token::Args),
    /// List ManifestWorks and their status, per cluster
    Works(works::Args),
}

/// Runs `get`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Addon(a) => addons::run(a, ctx).await,
        What::Clusters(a) => clusters::run(a, ctx).await,
        What::Clustersets(a) => clustersets::run(a, ctx).await,
        What::Credentials(a) => credentials::run(a, ctx).await,
        What::Placements(a) => crate::cli::placement::get(a, ctx).await,
        What::Token(a) => token::run(a, ctx).await,
        What::HubInfo(a) => info::hub(a, ctx).await,
        What::KlusterletInfo(a) => info::klusterlet(a, ctx).await,
        What::Works(a) => works::run(a, ctx).await,
    }
}
