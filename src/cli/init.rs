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
    /// `--output-file`, `--create-namespace`
    #[command(flatten)]
    pub bundle: super::bundle::BundleArgs,
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
    let kube = ctx.kube().await?;
    opts.drivers
        .complete_arn(context_cluster(&kube).as_deref())
        .map_err(|e| {
            UserError::new(
                format!("--registration-drivers: {e}"),
                "e.g. --hub-cluster-arn arn:aws:eks:us-west-2:123456789012:cluster/hub",
            )
        })?;

    if ctx.global.dry_run {
        if args.use_bootstrap_token {
            opts.credential = Credential::BootstrapToken {
                secret: "<generated>".into(),
            };
        }
        opts.extra_bootstrap.token_secret = "<generated>".into();
        args.bundle.dry_run(&hub::plan(&opts)?)?;
        return Ok(ExitCode::SUCCESS);
    }

    let server = kube.url();
    let advertised = args.hub_apiserver.clone().unwrap_or_else(|| server.clone());
    if !args.force {
        preflight(&kube, ctx, &advertised, args.hub_apiserver.is_some()).await?;
    }
    let ca_pem = cluster_info::hub_ca_pem(&kube.client, &kube.loaded.config).await?;
    if cluster_info::ensure(&kube.client, &advertised, &ca_pem).await?
        == cluster_info::Outcome::Created
    {
        ctx.printer.done("created kube-public/cluster-info");
    }
    if args.use_bootstrap_token || opts.extra_bootstrap.token {
        let secret = credential::existing_bootstrap_token_secret(&kube.client)
            .await?
            .unwrap_or_else(|| crate::pki::random_token_chars(16));
        if args.use_bootstrap_token {
            opts.credential = Credential::BootstrapToken { secret };
        } else {
            opts.extra_bootstrap.token_secret = secret;
        }
    }

    apply_hub(&kube, ctx, &args.bundle, &opts).await?;

    let ca_cert_hash = crate::pki::ca_cert_hash(ca_pem.as_bytes()).context("reading the hub CA")?;
    let token = if args.use_bootstrap_token {
        credential::read_bootstrap_token(&kube.client)
            .await?
            .context("the bootstrap token just applied is missing")?
    } else {
        credential::issue_service_account_token(&kube.client, args.token_expiration, &ca_cert_hash)
            .await?
    };
    let join = JoinCommand {
        hub_token: token.value,
        hub_apiserver: advertised,
        ca_cert_hash,
        expires: token.expires,
    };
    print_join(&join, &args, ctx)?;

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
        wait_hub_ready(&kube, ctx).await?;
    } else if args.wait {
        ctx.printer.info(
            "not waiting for the hub: the values file's clusterManager.create is false, so there is no ClusterManager to wait for",
        );
    }
    Ok(ExitCode::SUCCESS)
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
    if let Some(values) = values {
        values.onto_init(&mut opts);
        check_values(&opts, ours)?;
    }
    Ok(opts)
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

/// The kubeconfig context's cluster name: upstream's default for the hub's EKS ARN (an EKS
/// kubeconfig names its cluster by ARN).
fn context_cluster(kube: &Kube) -> Option<String> {
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

/// Applies the hub plan (saying whether anything changed) and copies it to `--output-file`.
async fn apply_hub(
    kube: &Kube,
    ctx: &Ctx,
    bundle: &super::bundle::BundleArgs,
    opts: &InitOptions,
) -> anyhow::Result<()> {
    let objects = bundle.namespaces(&kube.client, hub::plan(opts)?).await?;
    let spinner = ctx.printer.spinner("applying the hub");
    let report = Applier::new(kube.client.clone(), ctx.global.timeout)
        .apply(objects.clone())
        .await;
    spinner.finish_and_clear();
    let report = report.context("applying the hub failed; re-run `clusteradm init` to retry (it is idempotent), or `clusteradm clean` to remove what was applied")?;
    if report.unchanged() {
        ctx.printer.done(format!(
            "hub already initialised: nothing changed ({} objects unchanged)",
            report.applied.len()
        ));
    } else {
        ctx.printer
            .done(format!("hub initialised: {}", report.summary()));
    }
    bundle.write(&objects)
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
