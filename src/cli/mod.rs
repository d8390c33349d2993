//! The command-line surface: one module per command, each an `Args` struct and an async `run`.
//! Glue only: the work is done by the library modules.
pub mod accept;
pub mod addon;
pub mod args;
pub mod argv;
pub mod backup;
#[cfg(test)]
mod book_links;
pub mod bundle;
pub mod clean;
pub mod clusters;
pub mod clusterset;
pub mod cobra;
pub mod compat;
pub mod completion;
pub mod controller;
pub mod create;
pub mod delete;
pub mod explain;
pub mod generate;
pub mod get;
pub mod grpc_server;
pub mod hub_addon;
pub mod hub_ready;
pub mod init;
pub mod join;
pub mod operator;
pub mod placement;
pub mod proxy;
pub mod reference;
pub mod restore;
pub mod unjoin;
pub mod upgrade;
pub mod values_file;
pub mod version;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use crate::kubeconfig::Loaded;
use crate::ui::Printer;
use args::GlobalArgs;

/// `clusteradm`: bootstrap and run Open Cluster Management.
#[derive(Debug, Parser)]
#[command(
    name = "clusteradm",
    version,
    about = "Bootstrap and run Open Cluster Management (OCM) hubs and managed clusters",
    long_about = None,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Flags every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Make the current cluster an OCM hub and print the command that joins clusters to it
    Init(init::Args),
    /// Remove OCM from the hub: the ClusterManager, hub components, operator and bootstrap credentials
    Clean(clean::Args),
    /// Join the current cluster to a hub as a managed cluster
    Join(join::Args),
    /// Remove the current cluster's klusterlet (and operator) so it leaves its hub
    Unjoin(unjoin::Args),
    /// Accept managed clusters: approve their agents' CSRs and set hubAcceptsClient
    Accept(accept::Args),
    /// Show hub state: the join token, ManifestWorks
    Get(get::Args),
    /// Write the hub's OCM objects (clusters, sets, placements, works, add-ons) as a YAML stream,
    /// for `restore` on a hub rebuilt from scratch
    Backup(backup::Args),
    /// Create the objects of a `backup` again on a hub `init` set up; objects already there are
    /// left as they are
    Restore(restore::Args),
    /// Create objects on the hub: a ManifestWork, a cluster set, a placement
    Create(create::Args),
    /// Delete objects from the hub: a ManifestWork, a cluster set, the join token
    Delete(delete::Args),
    /// Enable or disable add-ons on managed clusters
    Addon(addon::Args),
    /// Manage cluster sets: move clusters into one, bind one to a namespace or unbind it
    Clusterset(clusterset::Args),
    /// Run an operator loop in the foreground (hub: the ClusterManager operator)
    Operator(operator::Args),
    /// Run OCM's controllers in the foreground: the hub's, or a managed cluster's agents
    Controller(controller::Args),
    /// Print the client version and the API server's version
    Version(version::Args),
    /// Move the hub or this cluster's klusterlet to other images (a release, a registry, or ours)
    Upgrade(upgrade::Args),
    /// Reach managed clusters' API servers through the cluster-proxy add-on
    Proxy(proxy::Args),
    /// Install upstream's built-in hub add-ons (governance-policy-framework)
    Install(hub_addon::InstallArgs),
    /// Remove upstream's built-in hub add-ons
    Uninstall(hub_addon::UninstallArgs),
    /// Print a shell completion script (bash, zsh, fish)
    Completion(completion::Args),
    /// Regenerate (or check) the files derived from the code: CRDs and completions
    #[command(hide = true)]
    Generate(generate::Args),
}

/// What every command gets: the global flags and the printer.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Global flags.
    pub global: GlobalArgs,
    /// Where messages go.
    pub printer: Printer,
}

/// A client for the cluster selected by `--kubeconfig`/`--context`.
#[derive(Clone)]
pub struct Kube {
    /// The client.
    pub client: kube::Client,
    /// The kubeconfig selection it came from.
    pub loaded: Loaded,
}

impl Kube {
    /// The CA this client trusts the API server with (PEM), when the kubeconfig names one.
    #[must_use]
    pub fn server_ca(&self) -> Option<Vec<u8>> {
        let ders = self.loaded.config.root_cert.as_ref()?;
        Some(crate::pki::der_to_pem(ders).into_bytes())
    }

    /// The API server URL, for messages.
    #[must_use]
    pub fn url(&self) -> String {
        self.loaded
            .config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string()
    }

    /// Asks the server its version: the cheapest proof that it is reachable, trusts us and is
    /// trusted by us.
    pub async fn server_version(
        &self,
    ) -> anyhow::Result<k8s_openapi::apimachinery::pkg::version::Info> {
        self.client.apiserver_version().await.with_context(|| {
            format!(
                "cannot talk to the Kubernetes API server at {} (context {})",
                self.url(),
                self.loaded.context
            )
        })
    }
}

/// Fails with a clear error unless `kube` is reachable and an OCM hub (it has the ClusterManager
/// CRD `init` installs), as upstream's hub commands check.
pub async fn require_hub(kube: &Kube) -> anyhow::Result<()> {
    kube.server_version().await?;
    require_cluster_manager_crd(kube).await
}

/// Fails with a clear error unless `kube` has the ClusterManager CRD `init` installs.
async fn require_cluster_manager_crd(kube: &Kube) -> anyhow::Result<()> {
    use kube::CustomResourceExt as _;
    let crds: kube::Api<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    > = kube::Api::all(kube.client.clone());
    let name = crate::api::operator::ClusterManager::crd_name();
    if crds.get_opt(name).await?.is_none() {
        return Err(crate::error::UserError::new(
            format!(
                "{} is not an OCM hub: it has no ClusterManager CRD",
                kube.url()
            ),
            "point --kubeconfig or --context at the hub `clusteradm init` set up",
        )
        .into());
    }
    Ok(())
}

/// What this tool's requests say they come from: `clusteradm/<version>`.
pub const USER_AGENT: &str = concat!("clusteradm/", env!("CARGO_PKG_VERSION"));

impl Ctx {
    /// Builds a client for the selected cluster (sends no request).
    pub async fn kube(&self) -> anyhow::Result<Kube> {
        self.kube_of(self.global.selection()).await
    }

    /// A client for the kubeconfig file `flag` names (its current context): another cluster
    /// than the global flags name, such as a hosted hub's.
    pub async fn kube_of_file(&self, path: &std::path::Path, flag: &str) -> anyhow::Result<Kube> {
        let selection = crate::kubeconfig::Selection {
            kubeconfig: Some(path.to_path_buf()),
            context: None,
        };
        self.kube_of(selection).await.context(flag.to_owned())
    }

    /// A client for `selection` (another cluster than the global flags name, e.g. a hosted
    /// hub's).
    pub async fn kube_of(&self, selection: crate::kubeconfig::Selection) -> anyhow::Result<Kube> {
        let loaded = selection.load().await?;
        let mut config = loaded.config.clone();
        // Names this tool in the API server's audit log, as kubectl does.
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static(USER_AGENT),
        ));
        let client = kube::Client::try_from(config)
            .with_context(|| format!("cannot build a client for context {}", loaded.context))?;
        Ok(Kube { client, loaded })
    }
}

/// Runs the parsed command line.
pub async fn run(cli: Cli, printer: Printer) -> anyhow::Result<ExitCode> {
    let ctx = Ctx {
        global: cli.global,
        printer,
    };
    match cli.command {
        Command::Init(args) => init::run(args, &ctx).await,
        Command::Clean(args) => clean::run(args, &ctx).await,
        Command::Join(args) => join::run(args, &ctx).await,
        Command::Unjoin(args) => unjoin::run(args, &ctx).await,
        Command::Accept(args) => accept::run(args, &ctx).await,
        Command::Get(args) => get::run(args, &ctx).await,
        Command::Backup(args) => backup::run(args, &ctx).await,
        Command::Restore(args) => restore::run(args, &ctx).await,
        Command::Create(args) => create::run(args, &ctx).await,
        Command::Delete(args) => delete::run(args, &ctx).await,
        Command::Addon(args) => addon::run(args, &ctx).await,
        Command::Clusterset(args) => clusterset::run(args, &ctx).await,
        Command::Operator(args) => operator::run(args, &ctx).await,
        Command::Controller(args) => controller::run(args, &ctx).await,
        Command::Version(args) => version::run(args, &ctx).await,
        Command::Upgrade(args) => upgrade::run(args, &ctx).await,
        Command::Proxy(args) => proxy::run(args, &ctx).await,
        Command::Install(args) => hub_addon::install(args, &ctx).await,
        Command::Uninstall(args) => hub_addon::uninstall(args, &ctx).await,
        Command::Completion(args) => completion::run(&args),
        Command::Generate(args) => generate::run(&args, &ctx),
    }
}

/// A client from the kubeconfig of a mounted Secret given by `flag` (an add-on's hub identity, a
/// Hosted agent's managed cluster): loaded under the cluster's rules (inline credentials or files
/// beside it), so whoever writes that Secret cannot make this process run a command; a file that
/// cannot be used is the user's error, with `hint`.
pub(crate) async fn mounted_kubeconfig(
    path: &std::path::Path,
    flag: &str,
    hint: &str,
    rate: Option<crate::runtime::rate::Rate>,
) -> anyhow::Result<kube::Client> {
    use crate::runtime::client::{Timeouts, from_mounted_secret};
    from_mounted_secret(path, flag, Timeouts::LOOP.limited(rate))
        .await
        .map_err(|e| crate::error::UserError::new(crate::runtime::report::chain(&e), hint).into())
}

/// Says that `--output-file` writes nothing here: upstream's `clean`, `unjoin` and `get token`
/// take the flag and never write the file, so a script may pass it and must not fail.
fn ignored_output_file(ctx: &Ctx, path: Option<&std::path::Path>) {
    if let Some(path) = path {
        ctx.printer.warn(format!(
            "--output-file {} ignored: this command applies nothing to copy (upstream's takes the flag and writes nothing either)",
            path.display()
        ));
    }
}
