//! `clusteradm init`: make the current cluster an OCM hub and print the join command.
//!
//! Order: preflight (skippable with `--force`) → cluster-info → apply the hub plan
//! ([`crate::install::hub::plan`]) → issue the bootstrap token → print the join command → `--wait` /
//! `--in-process`. `--dry-run` prints the plan and sends no request at all.
use crate::operator::cluster_manager::Admission;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::{Ctx, Kube};
use crate::api::names::{DEFAULT_REGISTRY, OPERATOR_NAMESPACE};
use crate::apply::Applier;
use crate::error::UserError;
use crate::install::hub::{self, Credential, InitOptions};
use crate::install::{cluster_info, credential, join_command::JoinCommand};
use crate::preflight::{self, Permission};

/// Flags of `init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wait until the ClusterManager is Applied and the hub components are available
    #[arg(long)]
    pub wait: bool,
    /// Use a bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token
    #[arg(long)]
    pub use_bootstrap_token: bool,
    /// Lifetime of the service-account bootstrap token
    #[arg(long, default_value = "1h", value_parser = super::args::parse_duration, value_name = "DURATION")]
    pub token_expiration: Duration,
    /// The hub API server URL managed clusters should use [default: the kubeconfig's server]
    #[arg(long, value_name = "URL")]
    pub hub_apiserver: Option<String>,
    /// Write a script that joins a cluster (`sh FILE <cluster-name>`) to FILE (mode 0700)
    #[arg(long, value_name = "FILE")]
    pub output_join_command_file: Option<PathBuf>,
    /// Output format of the join command (with --dry-run the bundle is YAML whatever this says)
    #[arg(short, long, value_enum, default_value_t = JoinOutput::Text)]
    pub output: JoinOutput,
    /// Skip the preflight checks
    #[arg(long)]
    pub force: bool,
    /// OCM release of the images: default, latest, or a version such as 1.3.1
    #[arg(long, default_value = "default", value_name = "VERSION")]
    pub bundle_version: String,
    /// Registry of the OCM images
    #[arg(long, default_value = DEFAULT_REGISTRY, value_name = "REGISTRY", value_parser = crate::api::image::registry)]
    pub image_registry: String,
    /// A docker config JSON with credentials for the image registry
    #[arg(long, value_name = "FILE")]
    pub image_pull_credential_file: Option<PathBuf>,
    /// Hub feature gates, e.g. `ManifestWorkReplicaSet=true,ManagedClusterAutoApproval=false`
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// Run our image (this clusteradm, as `scripts/image` builds it) for the operator and every
    /// component it deploys, instead of upstream's images; e.g. registry.example.com/clusteradm:v0.1.0
    #[arg(long, value_name = "IMAGE", conflicts_with = "in_process", value_parser = crate::api::image::reference)]
    pub image: Option<String>,
    /// Run the ClusterManager operator and hub controllers in this process instead of deploying
    /// the operator image; runs in the foreground until Ctrl-C or SIGTERM
    #[arg(long)]
    pub in_process: bool,
    /// How the hub enforces its admission rules: `webhooks` (upstream's, served by upstream's
    /// webhook Deployments, our hub pods with --image, or this process with --in-process) or
    /// `policies` (ValidatingAdmissionPolicies the API server enforces itself, no webhook server;
    /// they refuse the same requests with 422 Invalid and their own messages)
    #[arg(long, value_enum, value_name = "MODE", default_value_t = Admission::Webhooks)]
    pub admission: Admission,
    /// How clusters register, comma-separated: `csr`, `awsirsa`, `grpc`. Our components
    /// implement `csr`: the others are refused with --in-process or --image, and written into
    /// the ClusterManager as upstream's init writes them for upstream's images
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "csr",
        value_name = "DRIVERS"
    )]
    pub registration_drivers: Vec<String>,
    /// Bootstrap identities (users) whose clusters the hub accepts and whose certificates it
    /// approves without `accept`, comma-separated; with --feature-gates
    /// ManagedClusterAutoApproval=true
    #[arg(long, value_delimiter = ',', value_name = "USERS")]
    pub auto_approved_csr_identities: Vec<String>,
    /// awsirsa: the hub's EKS cluster ARN [default: the kubeconfig context's cluster name]
    #[arg(long, value_name = "ARN")]
    pub hub_cluster_arn: Option<String>,
    /// awsirsa: tags for the AWS resources the hub creates, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "TAGS")]
    pub aws_resource_tags: Vec<String>,
    /// awsirsa: managed-cluster ARN patterns approved without `accept`, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "PATTERNS")]
    pub auto_approved_arn_patterns: Vec<String>,
    /// grpc: identities approved without `accept`, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "IDENTITIES")]
    pub auto_approved_grpc_identities: Vec<String>,
    /// grpc: the gRPC server's address agents reach
    #[arg(long, value_name = "ADDRESS")]
    pub grpc_server: Option<String>,
    /// grpc: how the server is exposed, `hostname` or `loadBalancer`
    #[arg(long, default_value = "hostname", value_name = "TYPE")]
    pub grpc_endpoint_type: String,
    /// Copy the ClusterManager's labels to every hub object its operator makes (upstream's
    /// operator flag of the same name; `app` and `open-cluster-management.io*` keys are not copied)
    #[arg(long)]
    pub enable_sync_labels: bool,
    /// Upstream's cluster-manager Helm chart values (YAML): they override the flags. Taken:
    /// images.registry/tag/imageCredentials, enableSyncLabels, the ClusterManager's featureGates
    /// and autoApproveUsers; any other key is refused
    #[arg(long, value_name = "FILE")]
    pub cluster_manager_values_file: Option<PathBuf>,
    /// Where the hub controllers run: `default` (on the hub cluster the kubeconfig names) or
    /// `hosted` (as pods on the cluster the kubeconfig names, the management cluster, acting on
    /// the hub cluster --hub-kubeconfig names, which needs no node); with upstream's images,
    /// hosted needs --hosted-webhook-address
    #[arg(long, value_enum, default_value_t = Mode::Default)]
    pub mode: Mode,
    /// --mode hosted: the hub cluster's kubeconfig. The operator keeps it in upstream's Secret
    /// cluster-manager/external-hub-kubeconfig on the management cluster; the hub pods get a
    /// token of their own ServiceAccount on the hub instead
    #[arg(long, value_name = "FILE")]
    pub hub_kubeconfig: Option<PathBuf>,
    /// --mode hosted: the address (IP or DNS name) at which the hub's API server reaches the
    /// hub pods' webhooks, exposed by you (upstream's hosted webhook configuration) [default
    /// with --image: the hub pods' own addresses, which the operator keeps in the hub's
    /// Endpoints, for a hub API server that reaches the management cluster's pod network].
    /// With upstream's images: a management cluster node's address, where init exposes their
    /// two webhook servers on NodePorts 30443 and 31443
    #[arg(long, value_name = "ADDRESS")]
    pub hosted_webhook_address: Option<String>,
    /// --mode hosted --image: the port at --hosted-webhook-address [default: 443]
    #[arg(long, value_name = "PORT", requires = "hosted_webhook_address")]
    pub hosted_webhook_port: Option<u16>,
    /// `--output-file`, `--create-namespace`
    #[command(flatten)]
    pub bundle: super::bundle::BundleArgs,
}

/// `--mode` of init.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// The hub controllers on the hub cluster.
    Default,
    /// The hub controllers on a management cluster.
    Hosted,
}

/// `-o` of init: the join command as text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JoinOutput {
    /// `clusteradm join ...`
    Text,
    /// `{"hub-token": ..., "hub-apiserver": ..., "ca-cert-hash": ...}`
    Json,
    /// The same fields as YAML
    Yaml,
}

/// `--image-pull-credential-file`, bounded as every user file is ([`crate::input`]).
pub(super) fn read_credential(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    crate::input::read(path, "--image-pull-credential-file").map_err(|e| {
        let hint = "pass a docker config JSON file";
        UserError::new(crate::runtime::report::chain(&e), hint).into()
    })
}

/// Runs `init`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let ours = args.in_process || args.image.is_some();
    if ours {
        super::args::check_registration_drivers(
            &args.registration_drivers,
            "--registration-drivers",
        )?;
    }
    if let Some(url) = &args.hub_apiserver {
        validate_url(url)?;
    }
    let mut opts = options(&args, ours)?;
    if !opts.deploy_operator && !opts.operator_pod.is_empty() {
        ctx.printer.warn(format!(
            "--in-process runs the operator in this process, so these values of --cluster-manager-values-file (for its Deployment) have no effect: {}",
            opts.operator_pod.keys().join(", ")
        ));
    }
    let debug_server = opts
        .feature_gates
        .iter()
        .any(|(name, on)| name == "PlacementDebugServer" && *on);
    if debug_server && opts.hosted.is_some() && !ours {
        ctx.printer.warn(
            "upstream's operator (v1.3.1) runs the placement debug server of a hosted hub without the hub's kubeconfig: it will crash-loop and the ClusterManager report HubPlacementDegraded; drop --feature-gates PlacementDebugServer=true, or host our image (--image), whose hub pods serve it",
        );
    }
    let kube = ctx.kube().await?;
    opts.drivers
        .complete_arn(context_cluster(&kube).as_deref())
        .map_err(|e| {
            UserError::new(
                format!("--registration-drivers: {e}"),
                "e.g. --hub-cluster-arn arn:aws:eks:us-west-2:123456789012:cluster/hub",
            )
        })?;
    // Hosted: the hub is the cluster --hub-kubeconfig names; the kubeconfig's is the management
    // cluster, where the operator and the hub pods run.
    let hub_kube = match &args.hub_kubeconfig {
        Some(path) => Some(ctx.kube_of_file(path, "--hub-kubeconfig").await?),
        None => None,
    };
    let hub_kube_ref = hub_kube.as_ref().unwrap_or(&kube);

    if ctx.global.dry_run {
        if args.use_bootstrap_token {
            opts.credential = Credential::BootstrapToken {
                secret: "<generated>".into(),
            };
        }
        opts.extra_bootstrap.token_secret = "<generated>".into();
        args.bundle.dry_run(&plan_objects(&opts)?.concat())?;
        return Ok(ExitCode::SUCCESS);
    }

    let server = hub_kube_ref.url();
    let advertised = args.hub_apiserver.clone().unwrap_or_else(|| server.clone());
    if !args.force {
        preflight(&kube, ctx, &advertised, args.hub_apiserver.is_some()).await?;
    }
    let hub_client = &hub_kube_ref.client;
    let ca_pem = cluster_info::hub_ca_pem(hub_client, &hub_kube_ref.loaded.config).await?;
    if cluster_info::ensure(hub_client, &advertised, &ca_pem).await?
        == cluster_info::Outcome::Created
    {
        ctx.printer.done("created kube-public/cluster-info");
    }
    if args.use_bootstrap_token || opts.extra_bootstrap.token {
        let secret = credential::existing_bootstrap_token_secret(hub_client)
            .await?
            .unwrap_or_else(|| crate::pki::random_token_chars(16));
        if args.use_bootstrap_token {
            opts.credential = Credential::BootstrapToken { secret };
        } else {
            opts.extra_bootstrap.token_secret = secret;
        }
    }

    let [on_hub, on_management] = plan_objects(&opts)?;
    let mut applied = Vec::new();
    if !on_hub.is_empty() {
        applied = apply_hub(hub_kube_ref, ctx, &args.bundle, on_hub, "the hub cluster").await?;
    }
    let what = if hub_kube.is_some() {
        "the management cluster"
    } else {
        "the hub"
    };
    applied.extend(apply_hub(&kube, ctx, &args.bundle, on_management, what).await?);
    args.bundle.write(&applied)?;

    let join = join_command(hub_client, &args, advertised, &ca_pem).await?;
    print_join(&join, &args, ctx)?;
    run_or_wait(&args, &opts, &kube, ctx).await?;
    Ok(ExitCode::SUCCESS)
}

/// The join command: the bootstrap token just applied, or a ServiceAccount token issued now.
async fn join_command(
    hub: &kube::Client,
    args: &Args,
    advertised: String,
    ca_pem: &str,
) -> anyhow::Result<JoinCommand> {
    let ca_cert_hash = crate::pki::ca_cert_hash(ca_pem.as_bytes()).context("reading the hub CA")?;
    let token = if args.use_bootstrap_token {
        credential::read_bootstrap_token(hub)
            .await?
            .context("the bootstrap token just applied is missing")?
    } else {
        credential::issue_service_account_token(hub, args.token_expiration, &ca_cert_hash).await?
    };
    Ok(JoinCommand {
        hub_token: token.value,
        hub_apiserver: advertised,
        ca_cert_hash,
        expires: token.expires,
    })
}

/// `--in-process`: the operator and hub controllers here until a signal; `--wait`: until the
/// hub is ready.
async fn run_or_wait(
    args: &Args,
    opts: &InitOptions,
    kube: &Kube,
    ctx: &Ctx,
) -> anyhow::Result<()> {
    if args.in_process {
        ctx.printer.info("running the ClusterManager operator and hub controllers in this process (Ctrl-C to stop)");
        crate::inprocess::hub::run(
            kube.client.clone(),
            kube.loaded.config.cluster_url.clone(),
            // The flag's, or the values file's.
            opts.sync_labels,
            crate::runtime::shutdown::on_signal(),
            |holder| {
                ctx.printer.warn(format!(
                    "another process ({holder}) runs this hub's operator: waiting for it to stop"
                ));
            },
        )
        .await?;
    } else if args.wait && opts.create_cluster_manager {
        wait_hub_ready(kube, ctx).await?;
    } else if args.wait {
        ctx.printer.info(
            "not waiting for the hub: the values file's clusterManager.create is false, so there is no ClusterManager to wait for",
        );
    }
    Ok(())
}

/// The hub plan's options from the flags and `--cluster-manager-values-file` (which overrides
/// them), each checked before any request is sent.
fn options(args: &Args, ours: bool) -> anyhow::Result<InitOptions> {
    let tag = args.bundle.image_tag(&args.bundle_version)?;
    let feature_gates = hub::parse_feature_gates(&args.feature_gates)
        .map_err(|e| UserError::new(e, "e.g. --feature-gates ManifestWorkReplicaSet=true"))?;
    let image_pull_credential = args
        .image_pull_credential_file
        .as_deref()
        .map(read_credential)
        .transpose()?;
    let values = super::values_file::read_checked(
        args.cluster_manager_values_file.as_deref(),
        super::values_file::Chart::ClusterManager,
        super::values_file::Runs::of(args.in_process, args.image.is_some()),
        &feature_gates,
    )?;
    let drivers = driver_flags(args).resolve().map_err(|e| {
        UserError::new(
            format!("--registration-drivers: {e}"),
            "see `clusteradm init --help` for each driver's flags",
        )
    })?;
    let mut opts = InitOptions {
        resource_requirement: args.bundle.resource_requirement()?,
        drivers,
        admission: args.admission,
        registry: args.image_registry.clone(),
        tag,
        single_image: args.image.clone(),
        credential: Credential::ServiceAccount,
        deploy_operator: !args.in_process,
        image_pull_credential,
        sync_labels: args.enable_sync_labels,
        feature_gates,
        ..InitOptions::default()
    };
    opts.hosted = hosted(args)?;
    if let Some(values) = values {
        values.onto_init(&mut opts);
        check_values(&opts, ours)?;
    }
    Ok(opts)
}

/// `--mode hosted` and its flags, checked: the hub's kubeconfig read, with upstream's images the
/// address their webhooks are exposed at, no `--in-process` (a hosted hub's controllers are pods
/// on the management cluster).
fn hosted(args: &Args) -> anyhow::Result<Option<hub::Hosted>> {
    let refuse = |what: &str, hint: &str| Err(UserError::new(what, hint).into());
    if args.mode == Mode::Default {
        if args.hub_kubeconfig.is_some() || args.hosted_webhook_address.is_some() {
            return refuse(
                "--hub-kubeconfig and --hosted-webhook-address are for --mode hosted",
                "add --mode hosted to run the hub controllers on this cluster for the hub --hub-kubeconfig names",
            );
        }
        return Ok(None);
    }
    let Some(path) = &args.hub_kubeconfig else {
        return refuse(
            "--mode hosted needs --hub-kubeconfig",
            "pass the hub cluster's kubeconfig; the current kubeconfig names the management cluster, where the hub controllers run",
        );
    };
    if args.in_process {
        return refuse(
            "--mode hosted runs the hub controllers as pods on the management cluster, --in-process in this process",
            "drop one of them",
        );
    }
    // Upstream's operator hosts upstream's images; their webhook servers need an address.
    if args.image.is_none() {
        if args.hosted_webhook_address.is_none() {
            return refuse(
                "--mode hosted with upstream's images needs --hosted-webhook-address: the address of a management cluster node the hub's API server reaches, where init exposes their two webhook servers (NodePorts 30443 and 31443)",
                "pass --hosted-webhook-address <node IP or DNS name>, or --image <our image> (whose hub pods need none)",
            );
        }
        if args.hosted_webhook_port.is_some() {
            return refuse(
                "--hosted-webhook-port is for --image: upstream's two webhook servers are exposed on NodePorts 30443 and 31443 of --hosted-webhook-address",
                "drop --hosted-webhook-port",
            );
        }
    }
    let hub_kubeconfig = crate::input::read(path, "--hub-kubeconfig")?;
    Ok(Some(hub::Hosted {
        hub_kubeconfig,
        webhook: args
            .hosted_webhook_address
            .clone()
            .map(|a| (a, args.hosted_webhook_port.unwrap_or(443))),
    }))
}

/// What a values file set that our components would refuse (the ClusterManager, checked as the
/// operator checks it, when ours run the hub), refused before anything is applied.
fn check_values(opts: &InitOptions, ours: bool) -> anyhow::Result<()> {
    if ours && opts.create_cluster_manager {
        crate::operator::cluster_manager::validate::validate(&hub::cluster_manager(opts)).map_err(
            |e| {
                UserError::new(
                    format!("the ClusterManager init would write is refused: {e}"),
                    "drop that setting from --cluster-manager-values-file",
                )
            },
        )?;
    }
    Ok(())
}

/// The kubeconfig context's cluster name: upstream's default for an EKS ARN (an EKS kubeconfig
/// names its cluster by ARN).
pub(super) fn context_cluster(kube: &Kube) -> Option<String> {
    kube.loaded
        .kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == kube.loaded.context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
}

/// The registration-driver flags.
fn driver_flags(args: &Args) -> crate::install::drivers::DriverFlags {
    crate::install::drivers::DriverFlags {
        names: args.registration_drivers.clone(),
        csr_identities: args.auto_approved_csr_identities.clone(),
        hub_cluster_arn: args.hub_cluster_arn.clone(),
        aws_resource_tags: args.aws_resource_tags.clone(),
        arn_patterns: args.auto_approved_arn_patterns.clone(),
        grpc_identities: args.auto_approved_grpc_identities.clone(),
        grpc_server: args.grpc_server.clone(),
        grpc_endpoint_type: args.grpc_endpoint_type.clone(),
    }
}

/// The plan's objects as `[hub cluster, this cluster]`: all on this cluster but in Hosted mode.
fn plan_objects(opts: &InitOptions) -> anyhow::Result<[Vec<kube::api::DynamicObject>; 2]> {
    Ok(if opts.hosted.is_some() {
        let (hub, management) = hub::plan_hosted(opts)?;
        [hub, management]
    } else {
        [Vec::new(), hub::plan(opts)?]
    })
}

/// Applies `objects` to `what` (saying whether anything changed); returns them as applied, for
/// `--output-file`.
async fn apply_hub(
    kube: &Kube,
    ctx: &Ctx,
    bundle: &super::bundle::BundleArgs,
    objects: Vec<kube::api::DynamicObject>,
    what: &str,
) -> anyhow::Result<Vec<kube::api::DynamicObject>> {
    let objects = bundle.namespaces(&kube.client, objects).await?;
    let spinner = ctx.printer.spinner(format!("applying {what}"));
    let report = Applier::new(kube.client.clone(), ctx.global.timeout)
        .apply(objects.clone())
        .await;
    spinner.finish_and_clear();
    let report = report.with_context(|| format!("applying {what} failed; re-run `clusteradm init` to retry (it is idempotent), or `clusteradm clean` to remove what was applied"))?;
    if report.unchanged() {
        ctx.printer.done(format!(
            "{what} already initialised: nothing changed ({} objects unchanged)",
            report.applied.len()
        ));
    } else {
        ctx.printer
            .done(format!("{what} initialised: {}", report.summary()));
    }
    Ok(objects)
}

async fn preflight(kube: &Kube, ctx: &Ctx, advertised: &str, explicit: bool) -> anyhow::Result<()> {
    kube.server_version().await?;
    let wanted = [
        Permission {
            verb: "create",
            group: "apiextensions.k8s.io",
            resource: "customresourcedefinitions",
            namespace: None,
        },
        Permission {
            verb: "create",
            group: "rbac.authorization.k8s.io",
            resource: "clusterroles",
            namespace: None,
        },
        Permission {
            verb: "create",
            group: "rbac.authorization.k8s.io",
            resource: "clusterrolebindings",
            namespace: None,
        },
        Permission {
            verb: "create",
            group: "",
            resource: "namespaces",
            namespace: None,
        },
        Permission {
            verb: "create",
            group: "",
            resource: "serviceaccounts/token",
            namespace: Some(OPERATOR_NAMESPACE),
        },
    ];
    let missing = preflight::missing(&kube.client, &wanted).await?;
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(ToString::to_string).collect();
        return Err(UserError::new(
            format!("the user of context {} may not: {}", kube.loaded.context, list.join("; ")),
            "init installs CRDs and cluster-wide RBAC: run it with a cluster-admin context (nothing was changed)",
        )
        .into());
    }
    if !explicit && is_loopback(advertised) {
        ctx.printer.warn(format!(
            "the hub API server is {advertised}, a loopback address: only clusters on this machine can reach it. \
             Pass --hub-apiserver <url> with an address managed clusters can reach."
        ));
    }
    Ok(())
}

fn print_join(join: &JoinCommand, args: &Args, ctx: &Ctx) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(path) = &args.output_join_command_file {
        crate::kubeconfig::write_private(path, join.script().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
        ctx.printer.done(format!(
            "join command written to {} (run: sh {} <cluster-name>)",
            path.display(),
            path.display()
        ));
    }
    match args.output {
        JoinOutput::Json => crate::ui::stdout::println(serde_json::to_string_pretty(join)?)?,
        JoinOutput::Yaml => crate::ui::stdout::print(crate::yaml::to_string(join)?)?,
        JoinOutput::Text => {
            ctx.printer.info(
                "Run this on each cluster to join, with its kubeconfig (replace <cluster_name>):",
            );
            crate::ui::stdout::println(join.command_line("<cluster_name>"))?;
            if let Some(expires) = &join.expires {
                ctx.printer.info(format!(
                    "The token expires at {expires}; `clusteradm get token` prints a fresh one."
                ));
            }
        }
    }
    Ok(())
}

async fn wait_hub_ready(kube: &Kube, ctx: &Ctx) -> anyhow::Result<()> {
    let spinner = ctx
        .printer
        .spinner("waiting for the ClusterManager to be Applied");
    let result =
        crate::operator::cluster_manager::wait_ready(kube.client.clone(), ctx.global.timeout).await;
    spinner.finish_and_clear();
    result?;
    ctx.printer.done("the hub is ready");
    Ok(())
}

/// A hub URL must be absolute https (agents always verify TLS).
pub fn validate_url(url: &str) -> anyhow::Result<()> {
    let ok = url
        .parse::<http::Uri>()
        .ok()
        .is_some_and(|u| u.scheme_str() == Some("https") && u.host().is_some());
    if !ok {
        bail!(UserError::new(
            format!("invalid hub API server URL {url:?}"),
            "use an https URL such as https://hub.example.com:6443"
        ));
    }
    Ok(())
}

/// Whether a URL's host is a loopback address or `localhost`.
#[must_use]
pub fn is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    let host = uri
        .host()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("https://127.0.0.1:6443"));
        assert!(is_loopback("https://localhost:6443"));
        assert!(is_loopback("https://[::1]:6443"));
        assert!(!is_loopback("https://10.0.0.1:6443"));
        assert!(!is_loopback("https://hub.example.com"));
    }

    #[test]
    fn hub_urls_must_be_https() {
        assert!(validate_url("https://hub:6443").is_ok());
        assert!(validate_url("http://hub:6443").is_err());
        assert!(validate_url("hub:6443").is_err());
    }
}
