//! `clusteradm proxy health|kubectl`: a managed cluster's API server reached from the hub through
//! the cluster-proxy add-on ([`crate::cluster_proxy`]), as upstream's `proxy` commands.
pub mod health;
pub mod kubectl;

use std::path::PathBuf;
use std::process::ExitCode;

use super::Ctx;
use crate::cluster_proxy::installation::ProxyServer;
use crate::cluster_proxy::tunnel::{self, Credentials, Route};
use crate::error::UserError;

/// `proxy` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub what: What,
}

/// The verbs of `proxy`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Probe each managed cluster's API server (/healthz) through cluster-proxy
    Health(health::Args),
    /// Run kubectl against a managed cluster through cluster-proxy, as a ManagedServiceAccount
    Kubectl(kubectl::Args),
}

/// Runs `proxy`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Health(a) => health::run(a, ctx).await,
        What::Kubectl(a) => kubectl::run(a, ctx).await,
    }
}

/// How to reach the proxy server and prove who we are to it (`proxy health`'s flags, upstream's).
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Read the proxy server's CA and the client certificate from the add-on's Secrets on the hub
    #[arg(long, default_value_t = true)]
    pub in_cluster_proxy_cert_lookup: bool,
    /// The proxy server's CA (PEM), with --proxy-cert and --proxy-key instead of the Secrets
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub proxy_ca_cert: Option<PathBuf>,
    /// A client certificate the proxy server accepts (PEM)
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub proxy_cert: Option<PathBuf>,
    /// Its key (PEM)
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub proxy_key: Option<PathBuf>,
    /// The proxy server's host; `localhost` (without the certificate files) port-forwards to one
    /// of its pods through the hub's API server
    #[arg(long, default_value = "localhost", value_name = "HOST")]
    pub proxy_server_host: String,
    /// The proxy server's port for clients
    #[arg(long, default_value_t = tunnel::SERVER_PORT, value_name = "PORT")]
    pub proxy_server_port: u16,
}

impl ServerArgs {
    /// The certificate files, read, when the flags name them; checked before anything is asked
    /// of the hub: all three or none, and none only with the in-cluster lookup.
    pub fn files(&self) -> anyhow::Result<Option<Credentials>> {
        match (&self.proxy_ca_cert, &self.proxy_cert, &self.proxy_key) {
            (Some(ca), Some(cert), Some(key)) => Ok(Some(Credentials::from_files(ca, cert, key)?)),
            (None, None, None) if self.in_cluster_proxy_cert_lookup => Ok(None),
            (None, None, None) => Err(UserError::new(
                "--in-cluster-proxy-cert-lookup=false needs the certificate files",
                "pass --proxy-ca-cert, --proxy-cert and --proxy-key",
            )
            .into()),
            _ => Err(UserError::new(
                "--proxy-ca-cert, --proxy-cert and --proxy-key go together",
                "give all three, or none to read the add-on's Secrets on the hub",
            )
            .into()),
        }
    }

    /// The route and credentials these flags ask for, as upstream's: an address when a host other
    /// than `localhost` or the files ([`Self::files`]) are given, a port-forward otherwise; without
    /// files, the add-on's Secrets.
    pub async fn resolve(
        &self,
        files: Option<Credentials>,
        client: &kube::Client,
        server: &ProxyServer,
    ) -> anyhow::Result<(Route, Credentials)> {
        let route = self.route(files.is_some());
        let credentials = match files {
            Some(files) => files,
            None => Credentials::in_cluster(client, server).await?,
        };
        Ok((route, credentials))
    }

    /// An address when a host other than `localhost` or the certificate files are given (the
    /// user runs their own port-forward then), a port-forward of ours otherwise.
    fn route(&self, files_given: bool) -> Route {
        if files_given || self.proxy_server_host != "localhost" {
            Route::Address {
                host: self.proxy_server_host.clone(),
                port: self.proxy_server_port,
            }
        } else {
            Route::PortForward {
                port: self.proxy_server_port,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::FromArgMatches as _;

    use super::*;

    /// The flags as the binary parses them (Go-style switches: `--flag=false`).
    fn server_args(flags: &[&str]) -> ServerArgs {
        let argv = ["clusteradm", "proxy", "health"].iter().chain(flags);
        let matches = crate::cli::cobra::command()
            .try_get_matches_from(argv)
            .unwrap();
        match crate::cli::Cli::from_arg_matches(&matches).unwrap().command {
            crate::cli::Command::Proxy(Args {
                what: What::Health(h),
            }) => h.server,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_proxy_server_is_port_forwarded_unless_an_address_or_files_are_given() {
        let default = server_args(&[]);
        assert!(default.in_cluster_proxy_cert_lookup);
        assert!(matches!(
            default.route(false),
            Route::PortForward { port: 8090 }
        ));
        let elsewhere = server_args(&[
            "--proxy-server-host",
            "10.0.0.5",
            "--proxy-server-port",
            "443",
        ]);
        assert!(
            matches!(elsewhere.route(false), Route::Address { ref host, port: 443 } if host == "10.0.0.5")
        );
        // With their own certificate, users port-forward themselves, as upstream's flags assume.
        assert!(
            matches!(default.route(true), Route::Address { ref host, port: 8090 } if host == "localhost")
        );
        let off = server_args(&["--in-cluster-proxy-cert-lookup=false"]);
        assert!(!off.in_cluster_proxy_cert_lookup);
    }
}
