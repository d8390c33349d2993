//! `status-report manager` (on the hub) and `status-report agent` (on each cluster, deployed by
//! the manager): see the library.
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    about = "An example OCM add-on: agents report their cluster's Kubernetes version to the manager"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The add-on's manager, on the hub (in-cluster credentials, or KUBECONFIG).
    Manager {
        /// The namespace of the add-on's CA Secret.
        #[arg(long, env = "POD_NAMESPACE")]
        namespace: String,
        /// The agents' image.
        #[arg(long)]
        image: String,
        /// Where agents reach this manager (`https://host:port`).
        #[arg(long)]
        url: String,
        /// Where it listens.
        #[arg(long, default_value = "0.0.0.0:8443")]
        listen: std::net::SocketAddr,
        /// More names for its serving certificate (the URL's host is always one).
        #[arg(long = "dns-name")]
        dns_names: Vec<String>,
    },
    /// The agent, on a managed cluster (in-cluster credentials).
    Agent {
        /// The manager, `https://host:port`.
        #[arg(long)]
        manager: String,
        /// The add-on's CA.
        #[arg(long)]
        ca_file: std::path::PathBuf,
        /// The directory of the client certificate (`tls.crt`, `tls.key`).
        #[arg(long)]
        cert_dir: std::path::PathBuf,
        /// The cluster's name (for the logs).
        #[arg(long)]
        cluster: Option<String>,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let shutdown = ocm_addon_framework::shutdown_on_signal();
    let client = kube::Client::try_default().await?;
    match Cli::parse().command {
        Command::Manager {
            namespace,
            image,
            url,
            listen,
            mut dns_names,
        } => {
            let host: hyper::Uri = url.parse()?;
            dns_names.insert(
                0,
                host.host()
                    .unwrap_or_default()
                    .trim_matches(['[', ']'])
                    .to_owned(),
            );
            let listener = tokio::net::TcpListener::bind(listen).await?;
            let opts = status_report::ManagerOptions {
                name: status_report::NAME.into(),
                namespace,
                image,
                url,
                dns_names,
            };
            status_report::run_manager(client, opts, listener, shutdown).await
        }
        Command::Agent {
            manager,
            ca_file,
            cert_dir,
            cluster,
        } => {
            tracing::info!(?cluster, %manager, "status-report agent starting");
            let opts = status_report::agent::Options {
                manager,
                ca_file,
                cert_dir,
            };
            status_report::agent::run(opts, client, shutdown).await;
            Ok(())
        }
    }
}
