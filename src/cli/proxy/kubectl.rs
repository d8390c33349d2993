//! `clusteradm proxy kubectl --cluster C --sa NAME --args "get nodes"` (or `-i`): kubectl against
//! a managed cluster's API server through cluster-proxy, as the ManagedServiceAccount NAME's
//! token (the managed-serviceaccount add-on keeps it in a hub Secret).
//!
//! Unlike upstream's, which terminates TLS locally and skips verifying the cluster, a local
//! listener on a loopback port relays raw bytes through a tunnel per connection, so kubectl's TLS
//! goes end to end to the cluster's API server, verified against the CA bundle the cluster
//! reported ([`crate::cluster_proxy::managed_tls`]). The kubeconfig kubectl is given lives in a
//! directory only the user can read, and goes when the command ends, Ctrl-C and SIGTERM
//! included. While it runs, the loopback port reaches the cluster's API server for any local
//! process, which still needs credentials of its own there.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::CustomResourceExt as _;
use kube::api::{Api, DynamicObject};
use serde_json::json;
use tokio::io::AsyncBufReadExt as _;
use tokio::net::TcpListener;

use crate::api::cluster::ManagedCluster;
use crate::cli::Ctx;
use crate::cli::get::managed_service_account as msa;
use crate::cluster_proxy::tunnel::{self, Credentials, Route};
use crate::cluster_proxy::{api_server_address, installation, managed_tls};
use crate::error::UserError;

/// Flags of `proxy kubectl`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The managed cluster
    #[arg(short = 'c', long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// The managed cluster, as upstream's --clusters (exactly one)
    #[arg(long, value_delimiter = ',', value_name = "NAMES", hide = true)]
    pub clusters: Vec<String>,
    /// The ManagedServiceAccount (in the cluster's namespace on the hub) whose token kubectl uses
    #[arg(long, value_name = "NAME")]
    pub sa: String,
    /// kubectl's arguments, split at spaces (e.g. "get nodes")
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Read kubectl commands from the terminal until `exit`
    #[arg(short = 'i', long)]
    pub interactive_mode: bool,
}

/// Runs `proxy kubectl`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let cluster_name = one_cluster(&args)?;
    if !args.interactive_mode && args.args.as_deref().is_none_or(|a| a.trim().is_empty()) {
        return Err(UserError::new(
            "no kubectl arguments",
            "pass --args \"get nodes\", or -i to type commands",
        )
        .into());
    }
    let kube = ctx.hub(&[ManagedCluster::crd_name()]).await?;
    let cluster = Api::<ManagedCluster>::all(kube.client.clone())
        .get_opt(&cluster_name)
        .await
        .map_err(crate::error::ocm_api_missing)?
        .ok_or_else(|| {
            UserError::new(
                format!("managed cluster {cluster_name} not found on the hub"),
                "list the clusters with `clusteradm get clusters`",
            )
        })?;
    let ca_bundle = managed_tls::ca_bundle(&cluster)?;
    let server = installation::find(&kube.client).await?;
    let token = service_account_token(&kube.client, &cluster_name, &args.sa).await?;
    let credentials = Credentials::in_cluster(&kube.client, &server).await?;
    let tunnel = tunnel::connect(
        &kube.client,
        &server,
        &Route::PortForward {
            port: tunnel::SERVER_PORT,
        },
        &credentials,
    )
    .await?;
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("listening on a loopback port")?;
    let port = listener.local_addr()?.port();
    // One dial first, so that a cluster the tunnel does not reach fails here, saying why, and
    // not as a dropped connection inside kubectl.
    let address = api_server_address(&cluster_name);
    drop(tunnel.dial(&address).await.with_context(|| {
        format!("reaching {cluster_name}'s API server through cluster-proxy (is the add-on Available there? `clusteradm proxy health -c {cluster_name}`)")
    })?);
    let relay = tokio::spawn(relay(listener, tunnel, address));
    let dir = PrivateDir::new()?;
    let kubeconfig = dir.0.join("kubeconfig");
    crate::kubeconfig::write_private(&kubeconfig, &kubeconfig_yaml(port, &ca_bundle, &token)?)
        .context("writing the kubeconfig for kubectl")?;
    let code = if args.interactive_mode {
        interactive(&kubeconfig).await?
    } else {
        match kubectl(&kubeconfig, args.args.as_deref().unwrap_or_default()).await? {
            Ran::Exited(code) => code,
            Ran::Interrupted => ExitCode::from(130),
        }
    };
    relay.abort();
    // `dir` goes here, with the token in it.
    Ok(code)
}

fn one_cluster(args: &Args) -> anyhow::Result<String> {
    let mut names: Vec<&String> = args.cluster.iter().chain(&args.clusters).collect();
    names.dedup();
    match names.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(UserError::new("no managed cluster named", "pass --cluster <name>").into()),
        _ => Err(UserError::new(
            "proxy kubectl runs against one managed cluster",
            "pass one --cluster",
        )
        .into()),
    }
}

/// The token the managed-serviceaccount add-on keeps for `name` in `cluster`'s namespace.
async fn service_account_token(
    client: &kube::Client,
    cluster: &str,
    name: &str,
) -> anyhow::Result<String> {
    let accounts: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), cluster, &msa::resource());
    let account = match accounts.get_opt(name).await {
        Ok(found) => found,
        Err(kube::Error::Api(status)) if status.code == 404 => None,
        Err(e) => return Err(e).context("reading the ManagedServiceAccount"),
    }
    .ok_or_else(|| {
        UserError::new(
            format!("no ManagedServiceAccount {name} in {cluster} on the hub"),
            format!(
                "create one (the managed-serviceaccount add-on must be enabled on {cluster}) and bind it a role on the cluster"
            ),
        )
    })?;
    let secret_name = account.data["status"]["tokenSecretRef"]["name"]
        .as_str()
        .ok_or_else(|| {
            UserError::new(
                format!("the ManagedServiceAccount {name} has no token yet"),
                format!("wait for the managed-serviceaccount agent on {cluster} to report one"),
            )
        })?;
    let secret = Api::<Secret>::namespaced(client.clone(), cluster)
        .get(secret_name)
        .await
        .with_context(|| format!("reading the token Secret {cluster}/{secret_name}"))?;
    let token = secret
        .data
        .as_ref()
        .and_then(|d| d.get("token"))
        .with_context(|| format!("the Secret {cluster}/{secret_name} has no token"))?;
    String::from_utf8(token.0.clone()).context("the token is not text")
}

/// Each connection to the listener becomes one tunnelled connection to the cluster's API server.
async fn relay(listener: TcpListener, tunnel: konnectivity::Client, address: String) {
    while let Ok((mut local, _)) = listener.accept().await {
        let (tunnel, address) = (tunnel.clone(), address.clone());
        tokio::spawn(async move {
            match tunnel.dial(&address).await {
                Ok(mut remote) => {
                    let _ = tokio::io::copy_bidirectional(&mut local, &mut remote).await;
                }
                Err(e) => tracing::warn!("{e}"),
            }
        });
    }
}

fn kubeconfig_yaml(port: u16, ca_bundle: &[u8], token: &str) -> anyhow::Result<Vec<u8>> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": {
            "server": format!("https://127.0.0.1:{port}"),
            "certificate-authority-data": b64.encode(ca_bundle),
            "tls-server-name": managed_tls::SERVER_NAME,
        }}],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [{"name": "context", "context": {"cluster": "cluster", "user": "user"}}],
        "current-context": "context",
    });
    Ok(serde_yaml::to_string(&config)?.into_bytes())
}

/// kubectl: `KUBECTL`, or the one on PATH.
fn kubectl_binary() -> PathBuf {
    std::env::var_os("KUBECTL").map_or_else(|| PathBuf::from("kubectl"), PathBuf::from)
}

/// How a kubectl run ended.
enum Ran {
    /// With this exit code.
    Exited(ExitCode),
    /// This process was interrupted (Ctrl-C, SIGTERM) and stopped it.
    Interrupted,
}

/// Runs kubectl until it exits, or until this process is asked to stop: then kubectl is stopped
/// and this returns, so that the kubeconfig holding the token is removed on the way out (Ctrl-C
/// ends `get -w` and `logs -f`).
async fn kubectl(kubeconfig: &Path, args: &str) -> anyhow::Result<Ran> {
    let binary = kubectl_binary();
    let mut child = tokio::process::Command::new(&binary)
        .args(args.split_whitespace())
        .env("KUBECONFIG", kubeconfig)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("running {}", binary.display()))?;
    tokio::select! {
        status = child.wait() => {
            let code = status?.code().and_then(|c| u8::try_from(c).ok());
            Ok(Ran::Exited(code.map_or(ExitCode::FAILURE, ExitCode::from)))
        }
        () = crate::runtime::shutdown::signal() => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            Ok(Ran::Interrupted)
        }
    }
}

async fn interactive(kubeconfig: &Path) -> anyhow::Result<ExitCode> {
    crate::ui::stdout::println("Enter kubectl commands (without `kubectl`); `exit` quits.")?;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        crate::ui::stdout::print("kubectl> ")?;
        let line = tokio::select! {
            line = lines.next_line() => line?,
            () = crate::runtime::shutdown::signal() => return Ok(ExitCode::from(130)),
        };
        let Some(line) = line else {
            break;
        };
        match line.trim() {
            "exit" => break,
            "" => {}
            command => {
                if let Ran::Interrupted = kubectl(kubeconfig, command).await? {
                    return Ok(ExitCode::from(130));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A directory only the user can enter, removed with its contents when dropped.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> anyhow::Result<Self> {
        use std::os::unix::fs::DirBuilderExt as _;
        let path = std::env::temp_dir().join(format!(
            "clusteradm-proxy-{}-{}",
            std::process::id(),
            crate::pki::random_token_chars(8)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
