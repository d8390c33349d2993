//! `clusteradm controller grpc-server`: the hub's gRPC server (upstream's
//! `cluster-manager-grpc-server`), through which agents register with CloudEvents over gRPC
//! instead of the hub's API server. Upstream's flag names; the certificate paths default to
//! where upstream's Deployment mounts them.
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hub::grpc_server::signer::Signer;
use crate::hub::grpc_server::{Config, Tls};
use crate::runtime::error::UserError;

/// Flags of `controller grpc-server`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The port to serve on (all addresses)
    #[arg(
        long = "grpc-server-bindport",
        default_value_t = 8090,
        value_name = "PORT"
    )]
    pub bind_port: u16,
    /// The serving certificate (PEM)
    #[arg(
        long = "grpc-tls-cert-file",
        default_value = "/var/run/secrets/hub/grpc/serving-cert/tls.crt",
        value_name = "FILE"
    )]
    pub tls_cert_file: PathBuf,
    /// The serving certificate's key (PEM)
    #[arg(
        long = "grpc-tls-key-file",
        default_value = "/var/run/secrets/hub/grpc/serving-cert/tls.key",
        value_name = "FILE"
    )]
    pub tls_key_file: PathBuf,
    /// The CA that agents' client certificates chain to; without it only bearer tokens are
    /// accepted
    #[arg(long = "grpc-client-ca-file", value_name = "FILE")]
    pub client_ca_file: Option<PathBuf>,
    /// The CA that signs agents' gRPC client certificates (upstream's registration hub flag):
    /// with --grpc-key-file, this server signs the approved CSRs of signer
    /// open-cluster-management.io/grpc, and the CA is the client CA unless
    /// --grpc-client-ca-file names another
    #[arg(
        long = "grpc-ca-file",
        value_name = "FILE",
        requires = "signer_key_file"
    )]
    pub signer_ca_file: Option<PathBuf>,
    /// The signing CA's key
    #[arg(
        long = "grpc-key-file",
        value_name = "FILE",
        requires = "signer_ca_file"
    )]
    pub signer_key_file: Option<PathBuf>,
    /// The longest a signed client certificate lasts (a CSR may ask less)
    #[arg(long = "grpc-signer-duration", default_value = "720h", value_name = "DURATION", value_parser = super::controller::go_duration)]
    pub signer_duration: Duration,
    /// How often each subscription is sent a heartbeat (at least 10s, as upstream's)
    #[arg(long = "broker-heartbeat-interval", default_value = "10s", value_name = "DURATION", value_parser = heartbeat_interval)]
    pub heartbeat_interval: Duration,
    /// Send no heartbeats
    #[arg(long = "broker-heartbeat-disabled")]
    pub heartbeat_disabled: bool,
}

impl Args {
    /// Where to listen.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        (Ipv4Addr::UNSPECIFIED, self.bind_port).into()
    }

    /// Reads the files the flags name.
    pub fn config(&self) -> anyhow::Result<Config> {
        let signer_ca = self
            .signer_ca_file
            .as_deref()
            .map(|path| read_pem(path, "--grpc-ca-file"))
            .transpose()?;
        let signer = match (&signer_ca, &self.signer_key_file) {
            (Some(ca), Some(key_file)) => {
                let key = read_pem(key_file, "--grpc-key-file")?;
                Some(Signer::new(ca, &key, self.signer_duration).map_err(|e| {
                    UserError::new(
                        format!("--grpc-ca-file and --grpc-key-file: {e}"),
                        "give a CA certificate and its private key",
                    )
                })?)
            }
            _ => None,
        };
        let client_ca_pem = match &self.client_ca_file {
            Some(path) => Some(read_pem(path, "--grpc-client-ca-file")?),
            None => signer_ca,
        };
        Ok(Config {
            tls: Tls {
                cert_pem: read_pem(&self.tls_cert_file, "--grpc-tls-cert-file")?,
                key_pem: read_pem(&self.tls_key_file, "--grpc-tls-key-file")?,
                client_ca_pem,
            },
            heartbeat: (!self.heartbeat_disabled).then_some(self.heartbeat_interval),
            signer,
        })
    }
}

fn read_pem(path: &Path, flag: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        UserError::new(
            format!("{flag} {}: {e}", path.display()),
            format!("point {flag} at a readable PEM file"),
        )
    })?;
    if !text.contains("-----BEGIN") {
        return Err(UserError::new(
            format!("{flag} {}: not a PEM file", path.display()),
            format!("point {flag} at a PEM file"),
        )
        .into());
    }
    Ok(text)
}

fn heartbeat_interval(text: &str) -> Result<Duration, String> {
    let interval = super::controller::go_duration(text)?;
    if interval < Duration::from_secs(10) {
        return Err(format!(
            "{text}: the heartbeat interval must be at least 10s"
        ));
    }
    Ok(interval)
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn run(
    args: &Args,
    kube: &super::Kube,
    shutdown: crate::runtime::Shutdown,
) -> anyhow::Result<()> {
    let config = args.config()?;
    let address = args.address();
    let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
        UserError::new(
            format!("listening on {address}: {e}"),
            "choose a free port with --grpc-server-bindport",
        )
    })?;
    crate::hub::grpc_server::serve(kube.client.clone(), listener, config, shutdown).await
}
