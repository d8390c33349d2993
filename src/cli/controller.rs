//! `clusteradm controller hub|agent`: OCM's controllers in the foreground, as the pods of our
//! image run them (the operators deploy them with these commands) or from any shell. Each holds a
//! Lease while it works, so a second replica waits and takes over when the first stops.
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use futures::FutureExt;

use super::Ctx;
use crate::api::names::{AGENT_NAMESPACE, HUB_NAMESPACE};
use crate::hub::webhook::{self, Webhook};
use crate::inprocess::klusterlet::{Agents, Components};
use crate::runtime::lease::{self, LeaseLock};
use crate::runtime::metrics_server;
use crate::runtime::probes::{self, Readiness};
use crate::runtime::rate::Rate;

/// The Lease the hub controllers hold in the hub namespace.
pub const HUB_LEASE: &str = "clusteradm-hub-controllers";
/// The Lease a cluster's agents hold in their namespace.
pub const AGENT_LEASE: &str = "clusteradm-klusterlet-agent";

/// The Lease under which the replicas of `components`' Deployment elect their leader: each of
/// the Default-mode pair has its own, so one's leader never waits on the other's.
#[must_use]
pub fn agent_lease(components: Components) -> String {
    match components {
        Components::All => AGENT_LEASE.to_owned(),
        Components::Registration => format!("{AGENT_LEASE}-registration"),
        Components::Work => format!("{AGENT_LEASE}-work"),
    }
}

/// Flags of `controller`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which controllers to run.
    #[command(subcommand)]
    pub which: Which,
}

/// The controller sets.
#[derive(Debug, clap::Subcommand)]
pub enum Which {
    /// Run every hub controller: registration, cluster sets, placement, replica sets, add-ons,
    /// and the hub's webhooks (admission, the add-on API's conversion)
    Hub(HubArgs),
    /// Run a managed cluster's agents: registration (with add-on registration) and work
    Agent(Box<AgentArgs>),
    /// Run the hub's gRPC server (upstream's cluster-manager-grpc-server): agents register
    /// through CloudEvents over gRPC instead of the hub's API server
    GrpcServer(super::grpc_server::Args),
}

/// Where the probes and metrics are served.
#[derive(Debug, Clone, clap::Args)]
pub struct Serve {
    /// Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)
    #[arg(long, global = true)]
    pub probe_address: Option<SocketAddr>,
    /// Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer
    /// token the API server authenticates and allows `get` on the non-resource URL /metrics
    #[arg(long, global = true)]
    pub metrics_address: Option<SocketAddr>,
}

/// Flags of `controller hub`.
#[derive(Debug, clap::Args)]
pub struct HubArgs {
    /// Serve the hub's webhooks (add-on conversion, admission) on every replica, on port 9443
    /// behind the hub's Service, with the tls.crt and tls.key in this directory (the operator's
    /// mounted serving certificate); the operator points the CRDs and webhook configurations at
    /// the Service. Without it the leader serves them on the address it reaches the API server
    /// from, and points the CRDs and configurations at itself
    #[arg(long, value_name = "DIR", alias = "conversion-cert-dir")]
    pub webhook_cert_dir: Option<std::path::PathBuf>,
    /// Serve upstream's placement debug endpoint (/debug/placements/, the PlacementDebugServer
    /// gate) over HTTPS on this address (e.g. 0.0.0.0:9444) to callers whose bearer token the API
    /// server authenticates and allows the URL and `create` on the placement's namespace
    #[arg(long, value_name = "ADDRESS")]
    pub placement_debug_address: Option<SocketAddr>,
    /// A hosted hub's pods: read the ClusterManager (whose gates the hub follows) from the
    /// cluster this pod runs in, with its in-cluster credentials; everything else from the hub
    /// that --kubeconfig names
    #[arg(long)]
    pub cluster_manager_in_cluster: bool,
    #[command(flatten)]
    serve: Serve,
}

/// Flags of `controller agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The name the cluster registers under (none: the name stored with the hub credential, or
    /// a generated one, as upstream's agent)
    #[arg(long, default_value = "")]
    pub cluster_name: String,
    /// The namespace of the bootstrap and hub kubeconfig secrets (default: the pod's namespace,
    /// else open-cluster-management-agent)
    #[arg(long)]
    pub agent_namespace: Option<String>,
    /// Which agents to run: all (upstream's Singleton agent), or one of upstream's Default-mode
    /// pair, registration (with add-on registration) or work, each in its own Deployment
    #[arg(long, value_enum, default_value = "all")]
    pub components: Components,
    /// Hosted mode: the managed cluster's kubeconfig (the mounted external-managed-kubeconfig
    /// secret). The agents act there, while their secrets and Lease stay on the cluster they run on
    #[arg(long, visible_alias = "spoke-kubeconfig", value_name = "FILE")]
    pub managed_kubeconfig: Option<std::path::PathBuf>,
    /// The Klusterlet's feature gates, upstream's `Name=true|false` list (the operator passes
    /// them); those the agents do not act on are passed over
    #[arg(long, value_delimiter = ',', value_name = "GATES")]
    pub feature_gates: Vec<String>,
    /// How long an AppliedManifestWork no work on the hub manages any more is kept before what
    /// it applied is removed (upstream's flag; the operator passes the Klusterlet's
    /// `workConfiguration.appliedManifestWorkEvictionGracePeriod`); 876000h or more: never
    #[arg(long = "appliedmanifestwork-eviction-grace-period", value_name = "DURATION", default_value = "60m", value_parser = go_duration)]
    pub eviction_grace_period: std::time::Duration,
    /// How often a work with status feedback or condition rules is read again for them
    /// (upstream's flag; the operator passes the Klusterlet's `workConfiguration.statusSyncInterval`)
    #[arg(long = "status-sync-interval", value_name = "DURATION", default_value = "10s", value_parser = go_duration)]
    pub status_sync_interval: std::time::Duration,
    /// MultipleHubs: the bootstrap kubeconfig secrets of the hubs to choose from, in order (at
    /// least two; the operator passes the Klusterlet's `bootstrapKubeConfigs`)
    #[arg(long, value_delimiter = ',', value_name = "SECRETS", num_args = 1..)]
    pub bootstrap_kubeconfig_secrets: Vec<String>,
    /// MultipleHubs: seconds without a heartbeat reaching the hub before another is selected
    /// (at least 180, the Klusterlet's minimum: less could leave a healthy hub between beats)
    #[arg(long, default_value_t = crate::agent::registration::hubs::DEFAULT_TIMEOUT_SECONDS, value_name = "SECONDS", value_parser = clap::value_parser!(u32).range(180..))]
    pub hub_connection_timeout_seconds: u32,
    /// Annotations put on the ManagedCluster the agent creates, `k=v,...`; only keys under
    /// agent.open-cluster-management.io are (upstream's flag; the Klusterlet's `clusterAnnotations`)
    #[arg(long, value_name = "PAIRS", value_parser = crate::agent::registration::settings::parse_pairs)]
    pub cluster_annotations: Option<std::collections::BTreeMap<String, String>>,
    /// Labels put on the ManagedCluster the agent creates, `k=v,...` (the Klusterlet's
    /// `clusterLabels`; upstream's agents have no such flag)
    #[arg(long, value_name = "PAIRS", value_parser = crate::agent::registration::settings::parse_pairs)]
    pub cluster_labels: Option<std::collections::BTreeMap<String, String>>,
    /// This cluster's API server URLs the hub is told (upstream's flag; the Klusterlet's
    /// `externalServerURLs`), each with the CA the agent trusts this cluster with
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub spoke_external_server_urls: Vec<String>,
    /// Requested lifetime of the hub client certificate (upstream's flag)
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(i32).range(600..))]
    pub client_cert_expiration_seconds: Option<i32>,
    /// How add-ons' hub clients register: csr (a client certificate) or token (a ServiceAccount
    /// token from the hub), as upstream's agent flag.
    #[arg(long, default_value = "csr", value_parser = ["csr", "token"], value_name = "AUTH")]
    pub addon_kubeclient_registration_auth: String,
    /// The lifetime asked for each add-on token (at least 600; 0: a year), under token auth.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(i64).range(0..))]
    pub addon_token_expiration_seconds: Option<i64>,
    /// Custom ClusterClaims reported at most (upstream's flag)
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_custom_cluster_claims: usize,
    /// ClusterClaims whose names end so are reserved: always reported (upstream's flag)
    #[arg(long, value_delimiter = ',', value_name = "SUFFIXES")]
    pub reserved_cluster_claim_suffixes: Vec<String>,
    /// Requests a second to the managed cluster (upstream's flag; 0: unlimited unless
    /// --kube-api-burst is set)
    #[arg(long, default_value_t = 0.0, value_name = "QPS")]
    pub kube_api_qps: f32,
    /// Requests at once to the managed cluster (upstream's flag)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub kube_api_burst: i32,
    /// Requests a second to the hub by the work agent (upstream's flag)
    #[arg(long, default_value_t = 0.0, value_name = "QPS")]
    pub hub_kube_api_qps: f32,
    /// Requests at once to the hub by the work agent (upstream's flag)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub hub_kube_api_burst: i32,
    #[command(flatten)]
    serve: Serve,
}

impl AgentArgs {
    /// The registration settings the flags give.
    fn registration(&self) -> anyhow::Result<crate::agent::registration::settings::Settings> {
        use crate::agent::registration::settings::{ClaimLimits, Settings};
        let addon_auth = crate::agent::addon::token::Auth::from_flags(
            &self.addon_kubeclient_registration_auth,
            self.addon_token_expiration_seconds,
        )
        .map_err(|why| {
            crate::runtime::error::UserError::new(why, "see --help for the flag's values")
        })?;
        Ok(Settings {
            cert_expiration_seconds: self.client_cert_expiration_seconds,
            cluster_annotations: self.cluster_annotations.clone().unwrap_or_default(),
            cluster_labels: self.cluster_labels.clone().unwrap_or_default(),
            external_servers: self
                .spoke_external_server_urls
                .iter()
                .map(|url| crate::api::cluster::ClientConfig {
                    url: url.clone(),
                    ca_bundle: None,
                })
                .collect(),
            claims: ClaimLimits {
                max_custom: self.max_custom_cluster_claims,
                reserved_suffixes: self.reserved_cluster_claim_suffixes.clone(),
            },
            addon_auth,
        })
    }

    /// The hubs to choose from, when given.
    fn hubs(&self) -> anyhow::Result<Option<crate::agent::registration::hubs::HubList>> {
        match self.bootstrap_kubeconfig_secrets.len() {
            0 => Ok(None),
            1 => anyhow::bail!(
                "--bootstrap-kubeconfig-secrets names one secret: MultipleHubs needs at least two"
            ),
            _ => Ok(Some(crate::agent::registration::hubs::HubList {
                secrets: self.bootstrap_kubeconfig_secrets.clone(),
                timeout: std::time::Duration::from_secs(self.hub_connection_timeout_seconds.into()),
            })),
        }
    }
}

/// The namespace of the pod this runs in, when it runs in one.
fn pod_namespace() -> Option<String> {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Starts the probe endpoint if asked for one, and reports ready once the API server answers. A
/// standby replica is ready too: it is healthy, and takes over when the leader stops.
pub(super) async fn start(
    serve: &Serve,
    kube: &super::Kube,
    shutdown: &crate::runtime::Shutdown,
) -> anyhow::Result<()> {
    let readiness = Arc::new(Readiness::default());
    if let Some(addr) = serve.probe_address {
        probes::serve(addr, readiness.clone(), shutdown.clone()).await?;
    }
    if let Some(addr) = serve.metrics_address {
        metrics_server::serve(addr, kube.client.clone(), shutdown.clone()).await?;
    }
    kube.server_version().await?;
    readiness.set_ready();
    Ok(())
}

/// The managed cluster's client in Hosted mode, from the kubeconfig the operator mounts, checked
/// to answer before the agents start.
async fn managed_client(
    path: &std::path::Path,
    rate: Option<Rate>,
) -> anyhow::Result<kube::Client> {
    let client = super::mounted_kubeconfig(
        path,
        "--managed-kubeconfig",
        "pass the managed cluster's kubeconfig (the external-managed-kubeconfig secret's)",
        rate,
    )
    .await?;
    client
        .apiserver_version()
        .await
        .with_context(|| format!("the managed cluster of {}", path.display()))?;
    Ok(client)
}

/// The CA (PEM) of the mounted managed kubeconfig at `path`, for the client configs the
/// agent reports.
fn mounted_ca(path: &std::path::Path) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = std::fs::read_to_string(path).ok()?;
    let dir = path.parent()?;
    let kc = crate::runtime::client::load_mounted(&text, dir, "--managed-kubeconfig").ok()?;
    let context = kc.current_context.as_deref()?;
    let cluster_name = &kc
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster;
    let cluster = kc
        .clusters
        .iter()
        .find(|c| &c.name == cluster_name)?
        .cluster
        .as_ref()?;
    let data = cluster.certificate_authority_data.as_deref()?;
    base64::engine::general_purpose::STANDARD.decode(data).ok()
}

/// A Go duration flag (`90s`, `60m`, `1h0m0s`).
pub(super) fn go_duration(text: &str) -> Result<std::time::Duration, String> {
    crate::api::go_duration(text).ok_or_else(|| format!("{text:?} is not a duration such as 60m"))
}

/// How often a mounted managed kubeconfig is compared with what the agents started with.
const MOUNT_CHECK: std::time::Duration = std::time::Duration::from_secs(10);

/// Cancels `shutdown` once one of the files at `paths`, read every `period`, holds other bytes
/// than now (the kubelet rewrites a mounted Secret in place: a new kubeconfig, or a renewed token
/// beside it, which the client read once); resolves to that path when one did.
fn stop_when_changed(
    paths: Vec<std::path::PathBuf>,
    period: std::time::Duration,
    shutdown: crate::runtime::Shutdown,
) -> tokio::task::JoinHandle<Option<std::path::PathBuf>> {
    let started_with: Vec<_> = paths.iter().map(|p| std::fs::read(p).ok()).collect();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(period);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return None,
                _ = every.tick() => {}
            }
            for (path, before) in paths.iter().zip(&started_with) {
                let now = std::fs::read(path).ok();
                // A file missing for a moment (the kubelet's swap) is no change.
                if now.is_some() && now != *before {
                    tracing::warn!("{} changed: stopping the agents", path.display());
                    shutdown.cancel();
                    return Some(path.clone());
                }
            }
        }
    })
}

/// The hub controllers under the hub's Lease, with the webhooks (every replica serves them with
/// a mounted certificate, or the leader on its own address) and the placement debug endpoint.
async fn run_hub(
    h: HubArgs,
    kube: &super::Kube,
    shutdown: crate::runtime::Shutdown,
    waiting: impl FnOnce(&str),
) -> anyhow::Result<()> {
    let client = kube.client.clone();
    if let Some(addr) = h.placement_debug_address {
        // Every replica serves: the endpoint reads from the API server and writes nothing.
        crate::hub::placement::debug::serve(addr, client.clone(), shutdown.clone()).await?;
    }
    let webhook = match &h.webhook_cert_dir {
        Some(dir) => {
            // Every replica serves: webhooks need no Lease.
            let addr = SocketAddr::from(([0, 0, 0, 0], webhook::mounted::PORT));
            let settings_from = if h.cluster_manager_in_cluster {
                in_cluster_client()?
            } else {
                client.clone()
            };
            let settings = crate::hub::settings::watch(settings_from, shutdown.clone());
            let reviewer = crate::hub::admission::Reviewer::with_settings(client.clone(), settings);
            let settings = reviewer.settings();
            let routes = webhook::HubRoutes::new(reviewer);
            webhook::mounted::serve(dir, addr, routes, shutdown.clone()).await?;
            Webhook::Service(settings)
        }
        None => Webhook::Leader(kube.loaded.config.cluster_url.clone()),
    };
    let lock = LeaseLock::new(client.clone(), HUB_NAMESPACE, HUB_LEASE);
    lease::lead(lock, shutdown, waiting, move |token| {
        crate::inprocess::hub::controllers(client, webhook, token)
    })
    .await?;
    Ok(())
}

/// The client of the cluster this pod runs in (a hosted hub's management cluster).
fn in_cluster_client() -> anyhow::Result<kube::Client> {
    let config = kube::Config::incluster().map_err(|e| {
        crate::runtime::error::UserError::new(
            format!("--cluster-manager-in-cluster: no in-cluster credentials: {e}"),
            "the flag is for a hosted hub's pods, which the ClusterManager operator deploys",
        )
    })?;
    Ok(kube::Client::try_from(config)?)
}

/// Runs `controller`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let hubs = match &args.which {
        Which::Agent(a) => a.hubs()?,
        Which::Hub(_) | Which::GrpcServer(_) => None,
    };
    let kube = ctx.kube().await?;
    let shutdown = crate::runtime::shutdown::on_signal();
    let (serve, what) = match &args.which {
        Which::GrpcServer(g) => {
            ctx.printer.info(format!(
                "serving CloudEvents over gRPC on {} for the hub at {} (context {})",
                g.address(),
                kube.url(),
                kube.loaded.context
            ));
            super::grpc_server::run(g, &kube, shutdown).await?;
            ctx.printer.done("the gRPC server stopped");
            return Ok(ExitCode::SUCCESS);
        }
        Which::Hub(h) => (&h.serve, "the hub controllers".to_owned()),
        Which::Agent(a) => (
            &a.serve,
            format!("the agents of cluster {}", a.cluster_name),
        ),
    };
    start(serve, &kube, &shutdown).await?;
    ctx.printer.info(format!(
        "running {what} against {} (context {})",
        kube.url(),
        kube.loaded.context
    ));
    let waiting = |holder: &str| {
        ctx.printer.info(format!(
            "{holder} holds the Lease: standing by until it stops"
        ));
    };
    let client = kube.client.clone();
    match args.which {
        Which::Hub(h) => run_hub(h, &kube, shutdown, waiting).await?,
        Which::GrpcServer(_) => unreachable!("served above"),
        Which::Agent(a) => {
            let registration = a.registration()?;
            let namespace = a
                .agent_namespace
                .or_else(pod_namespace)
                .unwrap_or_else(|| AGENT_NAMESPACE.to_owned());
            let lock = LeaseLock::new(client.clone(), &namespace, &agent_lease(a.components));
            let rate = Rate::from_flags(a.kube_api_qps, a.kube_api_burst);
            let (managed, managed_ca) = match &a.managed_kubeconfig {
                Some(path) => (managed_client(path, rate).await?, mounted_ca(path)),
                // The Lease and secrets are the agent's own: only the managed cluster's
                // requests are limited.
                None => (
                    crate::runtime::rate::client(kube.loaded.config.clone(), rate)?,
                    kube.server_ca(),
                ),
            };
            // A new managed kubeconfig (the Secret changed) needs a new client: stop, and let
            // the kubelet start the container again with it, as upstream's agents do.
            let replaced = a.managed_kubeconfig.as_ref().map(|path| {
                let files = vec![path.clone(), path.with_file_name("token")];
                stop_when_changed(files, MOUNT_CHECK, shutdown.clone())
            });
            let agents = Agents {
                managed,
                management: client,
                cluster: a.cluster_name,
                namespace,
                // The add-ons' own Deployments run their agents.
                example_agents: false,
                gates: crate::agent::gates::Gates::from_flags(&a.feature_gates),
                hubs,
                work: crate::agent::work::Settings {
                    eviction_grace: a.eviction_grace_period,
                    status_sync: a.status_sync_interval,
                    hub_rate: Rate::from_flags(a.hub_kube_api_qps, a.hub_kube_api_burst),
                },
                registration,
                managed_ca,
                components: a.components,
            };
            lease::lead(lock, shutdown, waiting, move |token| {
                crate::inprocess::klusterlet::agents(agents, token)
            })
            .await?;
            if let Some(path) = replaced
                .and_then(FutureExt::now_or_never)
                .and_then(Result::ok)
                .flatten()
            {
                anyhow::bail!(
                    "{} changed: exiting so that the agents start again with it",
                    path.display()
                );
            }
        }
    }
    ctx.printer.done(format!("{what} stopped"));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Our CLI parses every flag the Klusterlet operator gives our agent's Deployment (the
    /// container's entrypoint is the binary).
    #[test]
    fn our_agent_takes_every_flag_the_operator_gives_it() {
        use crate::operator::klusterlet::validate::test_support::{EVERY_AGENT_FIELD, klusterlet};
        use crate::operator::klusterlet::{InProcess, desired::build, validate::validate};
        use clap::Parser as _;
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1'\nworkImagePullSpec: 'r.example/clusteradm:v1'\n";
        let labelled = "registrationConfiguration:\n  clusterLabels: {env: prod}\n";
        let spec =
            format!("{EVERY_AGENT_FIELD}{ours}").replace("registrationConfiguration:\n", labelled);
        let desired = build(&validate(&klusterlet(&spec)).unwrap(), InProcess::default());
        let pod = desired.management.deployments[0]
            .spec
            .clone()
            .unwrap()
            .template
            .spec
            .unwrap();
        let agent_args = pod.containers[0].args.clone().unwrap();
        assert!(agent_args.contains(&"--cluster-labels=env=prod".to_owned()));
        let line = std::iter::once("clusteradm".to_owned()).chain(agent_args);
        crate::cli::Cli::try_parse_from(line).expect("our agent takes the operator's flags");
    }

    #[tokio::test]
    async fn a_renewed_token_beside_the_mounted_kubeconfig_stops_the_agents_and_untouched_files_do_not()
     {
        let dir = std::env::temp_dir().join(format!("mounted-kubeconfig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, "first").unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "first").unwrap();
        let shutdown = crate::runtime::Shutdown::new();
        let files = vec![kubeconfig, path.clone()];
        let watch = stop_when_changed(files, Duration::from_millis(10), shutdown.clone());
        // Unchanged: still running after several checks.
        let untouched =
            tokio::time::timeout(Duration::from_millis(100), shutdown.cancelled()).await;
        assert!(untouched.is_err(), "stopped with the file unchanged");
        std::fs::write(&path, "second").unwrap();
        let changed = tokio::time::timeout(Duration::from_secs(5), watch).await;
        assert_eq!(changed.unwrap().unwrap(), Some(path));
        assert!(shutdown.is_cancelled());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
