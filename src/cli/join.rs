//! `clusteradm join`: make the current cluster (or, `--mode hosted`, the cluster of
//! `--managed-cluster-kubeconfig`) a managed cluster of a hub.
//!
//! Order: check the flags (no request) → find and verify the hub CA (`join::discovery`)
//! → preflight against the hub with the bootstrap token ([`crate::join::hub::preflight`]) → only
//! then touch the managed cluster: apply the plan ([`klusterlet::plan`]) → `--in-process` /
//! `--wait` → the `accept` hint. `--dry-run` prints the plan (token redacted; `--output-file` holds it) and changes nothing.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::Ctx;
use crate::api::names;
use crate::api::operator::KLUSTERLET_NAME;
use crate::api::operator::{
    AddOnAuthType, AddOnKubeClientRegistrationDriver, AwsIrsa, RegistrationAuthType,
    RegistrationDriver, TokenConfiguration,
};
use crate::apply::Applier;
use crate::error::UserError;
use crate::install::klusterlet::{self, JoinOptions};
use crate::join::bootstrap::Bootstrap;
use crate::operator::klusterlet as operator;
use crate::runtime::client::{self as kubeconfig_client, Origin, Timeouts};

/// Flags of `join`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bootstrap token (`clusteradm init` or `clusteradm get token` on the hub prints it)
    #[arg(long, value_name = "TOKEN")]
    pub hub_token: String,
    /// The hub API server URL (https)
    #[arg(long, value_name = "URL")]
    pub hub_apiserver: String,
    /// The name this cluster registers under (a DNS-1123 label)
    #[arg(long, value_name = "NAME")]
    pub cluster_name: String,
    /// The hub's CA certificate (PEM); by default it is discovered and verified
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Pin of the hub CA's public key, as `clusteradm init` prints it
    #[arg(long, value_name = "sha256:HEX")]
    pub ca_cert_hash: Option<String>,
    /// Where the agents run: on this cluster, or (hosted) on this management cluster for the
    /// cluster of --managed-cluster-kubeconfig
    #[arg(short = 'm', long, value_enum, default_value_t = Mode::Default)]
    pub mode: Mode,
    /// The managed cluster's kubeconfig (--mode hosted)
    #[arg(long, value_name = "FILE")]
    pub managed_cluster_kubeconfig: Option<PathBuf>,
    /// Run one combined agent instead of the registration and work agents
    #[arg(long)]
    pub singleton: bool,
    /// Wait until the Klusterlet is applied (and the cluster has registered with the hub)
    #[arg(long)]
    pub wait: bool,
    /// Run our image (this clusteradm, as `scripts/image` builds it) for the operator and every
    /// component it deploys, instead of upstream's images; e.g. registry.example.com/clusteradm:v0.1.0
    #[arg(long, value_name = "IMAGE", conflicts_with = "in_process", value_parser = crate::api::image::reference)]
    pub image: Option<String>,
    /// Registry of the OCM images
    #[arg(long, default_value = crate::api::names::DEFAULT_REGISTRY, value_name = "REGISTRY", value_parser = crate::api::image::registry)]
    pub image_registry: String,
    /// OCM release of the images: default, latest, or a version such as 1.3.1
    #[arg(long, default_value = "default", value_name = "VERSION")]
    pub bundle_version: String,
    /// Agent feature gates, e.g. `ClusterClaim=true,AddonManagement=true`
    #[arg(long, default_value = "", value_name = "GATES")]
    pub feature_gates: String,
    /// A proxy between the agents and the hub (http or https URL)
    #[arg(long, value_name = "URL")]
    pub proxy_url: Option<String>,
    /// The CA of an https proxy (PEM), trusted beside the hub CA
    #[arg(long, value_name = "FILE")]
    pub proxy_ca_file: Option<PathBuf>,
    /// An annotation for the ManagedCluster, key=value (repeatable; prefixed with
    /// agent.open-cluster-management.io/)
    #[arg(long, value_name = "KEY=VALUE")]
    pub klusterlet_annotation: Vec<String>,
    /// Lifetime asked for the agent's hub client certificate, in seconds (at least 600; unset or 0:
    /// the hub's signer decides)
    #[arg(long, value_name = "SECONDS")]
    pub client_cert_expiration_seconds: Option<i32>,
    /// How add-ons' hub clients register: `csr` (a client certificate) or `token` (a token of a
    /// ServiceAccount the hub makes per add-on)
    #[arg(long, default_value = "csr", value_name = "AUTH")]
    pub addon_kubeclient_registration_auth: String,
    /// Lifetime of each add-on token in seconds, with `--addon-kubeclient-registration-auth token`
    /// (at least 600; unset or 0: a year)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub addon_token_expiration_seconds: Option<i64>,
    /// Use the hub URL recorded in the hub's kube-public/cluster-info instead of --hub-apiserver
    #[arg(long)]
    pub force_internal_endpoint_lookup: bool,
    /// Hosted: the agents reach the managed cluster at the API server URL its
    /// kube-public/cluster-info names, instead of the one in --managed-cluster-kubeconfig
    #[arg(long, requires = "managed_cluster_kubeconfig")]
    pub force_internal_endpoint_lookup_managed: bool,
    /// Run the klusterlet operator (and the agents) in this process instead of deploying the
    /// operator image; runs in the foreground until Ctrl-C or SIGTERM
    #[arg(long)]
    pub in_process: bool,
    /// How this cluster registers: `csr`, or with upstream's images `awsirsa` (an EKS cluster's
    /// IAM role; our image's agents register by CSR only); `grpc` is refused
    #[arg(long, default_value = "csr", value_name = "DRIVER")]
    pub registration_auth: String,
    /// With `--registration-auth awsirsa`: the ARN of the hub's EKS cluster
    #[arg(long, value_name = "ARN")]
    pub hub_cluster_arn: Option<String>,
    /// With `--registration-auth awsirsa`: the ARN of this EKS cluster (default: the kubeconfig
    /// context's cluster name, which an EKS kubeconfig sets to the ARN)
    #[arg(long, value_name = "ARN")]
    pub managed_cluster_arn: Option<String>,
    /// A docker config JSON with credentials for the image registry: it goes into Secret
    /// open-cluster-management-image-pull-credentials, which the operator copies to the agents
    #[arg(long, value_name = "FILE")]
    pub image_pull_credential_file: Option<PathBuf>,
    /// Copy the Klusterlet's labels to every agent object its operator makes (upstream's
    /// operator flag of the same name; `app` and `open-cluster-management.io*` keys are not copied)
    #[arg(long)]
    pub enable_sync_labels: bool,
    /// Upstream's klusterlet Helm chart values (YAML): they override the flags. Taken:
    /// images.registry/tag/imageCredentials, enableSyncLabels, klusterlet.mode (Default or
    /// Singleton) and the Klusterlet's featureGates; any other key is refused
    #[arg(long, value_name = "FILE")]
    pub klusterlet_values_file: Option<PathBuf>,
    /// Format of what --dry-run prints: the objects as YAML (the one format; kubectl's spelling)
    #[arg(short, long, value_enum, default_value = "yaml", value_name = "FORMAT")]
    pub output: DryRunFormat,
    /// `--output-file`, `--create-namespace`
    #[command(flatten)]
    pub bundle: super::bundle::BundleArgs,
}

/// `join -o`: what `--dry-run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DryRunFormat {
    /// The objects, as YAML documents
    Yaml,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Agents on the managed cluster.
    Default,
    /// Agents on this (management) cluster, for the cluster of --managed-cluster-kubeconfig.
    Hosted,
}

/// The managed cluster's side of a join: its API server URLs from its cluster-info (reported to
/// the hub), and the Hosted mode's managed kubeconfig, pointed at the first of them with
/// `--force-internal-endpoint-lookup-managed`.
async fn managed_side(
    args: &Args,
    ctx: &Ctx,
    current: &kube::Client,
    external: Option<String>,
) -> anyhow::Result<(Option<String>, Vec<String>)> {
    let managed = match &external {
        Some(text) => kubeconfig_client::from_kubeconfig(
            text,
            Origin::User,
            "--managed-cluster-kubeconfig",
            Timeouts::command(ctx.global.timeout),
        )
        .await
        .map_err(|e| UserError::new(e.to_string(), "pass a kubeconfig of the cluster to join"))?,
        None => current.clone(),
    };
    let external_server_urls: Vec<String> = crate::install::cluster_info::server(&managed)
        .await?
        .into_iter()
        .collect();
    if external_server_urls.is_empty() {
        ctx.printer.warn("the managed cluster has no kube-public/cluster-info: the hub will not learn its API server URL (externalServerURLs is empty)");
    }
    let external = match external {
        Some(text) if args.force_internal_endpoint_lookup_managed => {
            let Some(server) = external_server_urls.first() else {
                return Err(UserError::new(
                    "--force-internal-endpoint-lookup-managed: the managed cluster has no kube-public/cluster-info naming its API server",
                    "drop the flag, or create cluster-info on the managed cluster (`kubeadm init phase bootstrap-token` does)",
                )
                .into());
            };
            Some(with_server(&text, server)?)
        }
        other => other,
    };
    Ok((external, external_server_urls))
}

/// `kubeconfig` (YAML) with its clusters' server set to `server` (upstream sets the first; a
/// kubeconfig for one cluster has one).
fn with_server(kubeconfig: &str, server: &str) -> anyhow::Result<String> {
    let mut kc = kube::config::Kubeconfig::from_yaml(kubeconfig).map_err(|e| {
        UserError::new(
            format!("--managed-cluster-kubeconfig: {e}"),
            "pass a kubeconfig of the cluster to join",
        )
    })?;
    for cluster in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        cluster.server = Some(server.to_owned());
    }
    Ok(crate::yaml::to_string(&kc)?)
}

/// Reads a file flag, bounded as every user file is ([`crate::input`]).
fn read(path: Option<&std::path::Path>, what: &str) -> anyhow::Result<Option<String>> {
    let Some(path) = path else { return Ok(None) };
    let text = crate::input::read_text(path, what)
        .map_err(|e| UserError::new(crate::runtime::report::chain(&e), format!("check {what}")))?;
    Ok(Some(text))
}

/// Discovery and preflight against the hub, bounded by `--timeout`: the bootstrap kubeconfig the
/// hub accepts, with a verified CA.
async fn verify_hub(
    args: &Args,
    ctx: &Ctx,
    ca_file: Option<&str>,
    proxy_ca: Option<&str>,
    pin: Option<&str>,
) -> anyhow::Result<crate::join::bootstrap::Bootstrap> {
    let spinner = ctx.printer.spinner("verifying the hub");
    // A hub `init` just set up gets its API from the operator a little later: said once, on the
    // spinner or (without a terminal) as a line.
    let waited = std::sync::atomic::AtomicBool::new(false);
    let waiting = |what: &str| {
        waited.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.set_message(what.to_owned());
        if spinner.is_hidden() {
            ctx.printer.info(what);
        }
    };
    let connect = crate::join::hub::connect(crate::join::hub::Connect {
        server: &args.hub_apiserver,
        token: &args.hub_token,
        ca_file,
        pin,
        proxy_url: args.proxy_url.as_deref(),
        proxy_ca,
        internal_endpoint: args.force_internal_endpoint_lookup,
        waiting: &waiting,
    });
    let hub = tokio::time::timeout(ctx.global.timeout, connect).await;
    spinner.finish_and_clear();
    hub.map_err(|_| {
        let (server, timeout) = (&args.hub_apiserver, ctx.global.timeout);
        if waited.load(std::sync::atomic::Ordering::Relaxed) {
            UserError::new(
                format!("the hub {server} did not get its OCM API within {timeout:?} (cluster.open-cluster-management.io/v1 managedclusters)"),
                "check the cluster-manager operator on the hub (`clusteradm get hub-info`), or raise --timeout",
            )
        } else {
            UserError::new(
                format!("the hub {server} did not answer within {timeout:?}"),
                "check --hub-apiserver, or raise --timeout",
            )
        }
    })?
}

/// The pin the hub's CA is verified by: `--ca-cert-hash`, else the pin the token carries (a
/// service-account token `init` or `get token` printed, [`crate::join::trust::carried_pin`]).
/// Nothing more is needed when `--ca-file` or a bootstrap token (whose signature on cluster-info
/// vouches for the CA) is given. A token that carries nothing (minted by someone else) gets the
/// CA the hub presents: checked against the one this cluster trusted when it last joined that
/// server, if any; else shown and, on a terminal, trusted only if the user says so; without a
/// terminal trusted on first use with a loud warning, as upstream's join trusts it (see the
/// README's security section).
async fn pin(args: &Args, ctx: &Ctx, managed: &kube::Client) -> anyhow::Result<Option<String>> {
    let carried = crate::join::trust::carried_pin(&args.hub_token);
    if let Some(carried) = &carried {
        klusterlet::validate_pin(carried).map_err(|e| {
            UserError::new(
                format!("the token's CA pin: {e}"),
                "use the token `clusteradm init` or `clusteradm get token` printed, unchanged",
            )
        })?;
    }
    if let (Some(flag), Some(carried)) = (&args.ca_cert_hash, &carried)
        && !flag.eq_ignore_ascii_case(carried)
    {
        return Err(UserError::new(
            format!("--ca-cert-hash {flag} differs from the pin the token carries ({carried})"),
            "drop --ca-cert-hash (the token names its hub's CA), or pass the token `clusteradm get token` prints with it",
        )
        .into());
    }
    let pin = args.ca_cert_hash.clone().or(carried);
    let vouched = pin.is_some()
        || args.ca_file.is_some()
        || crate::join::jws::split_bootstrap_token(&args.hub_token).is_some();
    if vouched {
        return Ok(pin);
    }
    let server = &args.hub_apiserver;
    // The read is bounded by --timeout; the question below waits for the person.
    let timeout = ctx.global.timeout;
    let (pin, subject) =
        tokio::time::timeout(timeout, crate::join::discovery::presented_ca(server))
            .await
            .map_err(|_| {
                UserError::new(
                    format!("the hub {server} did not answer within {timeout:?}"),
                    "check --hub-apiserver, or raise --timeout",
                )
            })??;
    let recorded = if args.mode == Mode::Hosted {
        None // a Hosted join makes a new Klusterlet: nothing was trusted before
    } else {
        crate::join::trust::recorded_ca(managed, server).await?
    };
    if let Some(ca) = recorded {
        if crate::pki::certificates_matching_pin(ca.as_bytes(), &pin).is_ok_and(|m| !m.is_empty()) {
            ctx.printer.info(format!(
                "the hub {server} presents the CA this cluster trusted when it joined it before ({pin})"
            ));
            return Ok(Some(pin));
        }
        return Err(UserError::new(
            format!("the hub {server} presents a CA ({subject:?}, {pin}) other than the one this cluster trusted when it joined it before: a man in the middle, or the hub's CA changed"),
            "if the hub's CA changed, pass --ca-cert-hash with the value `clusteradm get token` prints on the hub",
        )
        .into());
    }
    if ctx.printer.interactive() {
        ctx.printer.warn(format!(
            "the join command has no --ca-cert-hash and its token carries no pin: nothing vouches for the hub {server}.\n  It presents the CA {subject:?} with --ca-cert-hash {pin}\n  Compare it with what `clusteradm get token` prints on the hub."
        ));
        return if crate::ui::prompt::ask("Trust this CA and join?")? {
            Ok(Some(pin))
        } else {
            Err(UserError::new(
                "the hub's CA was not trusted: nothing done",
                "re-run with --ca-cert-hash (from `clusteradm get token` on the hub)",
            )
            .into())
        };
    }
    ctx.printer.warn(format!(
        "TRUSTING THE HUB ON FIRST USE: the join command has no --ca-cert-hash and its token carries no pin, so nothing vouches for the hub {server}.\n  Its CA {subject:?} ({pin}) is trusted as upstream's clusteradm trusts it, and recorded in this cluster's {BOOTSTRAP}: a later join to {server} must find the same CA.\n  Compare it with what `clusteradm get token` prints on the hub; pass --ca-cert-hash to verify instead.",
        BOOTSTRAP = names::BOOTSTRAP_SECRET,
    ));
    Ok(Some(pin))
}

/// Upstream's name of the AWS IRSA registration driver.
const AWS_IRSA: &str = "awsirsa";

/// Checks every flag before any request is sent.
fn check(args: &Args) -> anyhow::Result<()> {
    check_registration_auth(args)?;
    names::validate_cluster_name(&args.cluster_name)
        .map_err(|e| UserError::new(e, "e.g. --cluster-name cluster1"))?;
    super::init::validate_url(&args.hub_apiserver)?;
    if let Some(secs @ 1..600) = args.client_cert_expiration_seconds {
        return Err(UserError::new(
            format!("--client-cert-expiration-seconds {secs} is too short: a certificate request may not ask for less than 600 seconds"),
            "pass 600 or more, or 0 to let the hub's signer decide",
        )
        .into());
    }
    if args
        .client_cert_expiration_seconds
        .is_some_and(i32::is_negative)
    {
        return Err(UserError::new(
            "--client-cert-expiration-seconds may not be negative",
            "pass 600 or more, or 0 to let the hub's signer decide",
        )
        .into());
    }
    if let Some(pin) = &args.ca_cert_hash {
        klusterlet::validate_pin(pin)
            .map_err(|e| UserError::new(e, "use the value `clusteradm init` prints"))?;
    }
    if args.mode == Mode::Hosted && args.managed_cluster_kubeconfig.is_none() {
        let hint = "pass the kubeconfig of the cluster to join";
        return Err(
            UserError::new("--mode hosted needs --managed-cluster-kubeconfig", hint).into(),
        );
    }
    if let Some(url) = &args.proxy_url {
        klusterlet::validate_proxy_url(url)
            .map_err(|e| UserError::new(e, "e.g. http://proxy:3128"))?;
    }
    addon_driver(args)?;
    Ok(())
}

/// `--registration-auth` and its ARNs: `awsirsa` only for upstream's agents, with the hub's ARN.
fn check_registration_auth(args: &Args) -> anyhow::Result<()> {
    let ours = args.in_process || args.image.is_some();
    let arn_flags = args.hub_cluster_arn.is_some() || args.managed_cluster_arn.is_some();
    if args.registration_auth != AWS_IRSA || ours {
        super::args::check_registration_drivers(
            std::slice::from_ref(&args.registration_auth),
            "--registration-auth",
        )?;
    }
    if args.registration_auth != AWS_IRSA && arn_flags {
        return Err(UserError::new(
            "--hub-cluster-arn and --managed-cluster-arn are read with --registration-auth awsirsa only",
            "drop them, or pass --registration-auth awsirsa",
        )
        .into());
    }
    if args.registration_auth != AWS_IRSA {
        return Ok(());
    }
    let example = "e.g. --hub-cluster-arn arn:aws:eks:us-west-2:123456789012:cluster/hub";
    let Some(hub) = &args.hub_cluster_arn else {
        return Err(UserError::new(
            "--registration-auth awsirsa needs --hub-cluster-arn",
            example,
        )
        .into());
    };
    // This cluster's ARN, when given; its default is checked once the kubeconfig is read.
    let given = [
        ("--hub-cluster-arn", Some(hub)),
        ("--managed-cluster-arn", args.managed_cluster_arn.as_ref()),
    ];
    for (flag, arn) in given {
        if let Some(arn) = arn {
            operator::aws_irsa::check_arn(flag, arn).map_err(|why| UserError::new(why, example))?;
        }
    }
    Ok(())
}

/// The Klusterlet's `registrationDriver`, written (as upstream's join writes it) only for
/// `awsirsa`: this cluster's ARN defaults to the kubeconfig context's cluster, as upstream's.
fn registration_driver(
    args: &Args,
    context_cluster: Option<String>,
) -> anyhow::Result<Option<RegistrationDriver>> {
    let Some(hub) = args
        .hub_cluster_arn
        .clone()
        .filter(|_| args.registration_auth == AWS_IRSA)
    else {
        return Ok(None);
    };
    let managed = args
        .managed_cluster_arn
        .clone()
        .or(context_cluster)
        .unwrap_or_default();
    operator::aws_irsa::AwsIrsa::from_arns(&hub, &managed).map_err(|why| {
        UserError::new(
            format!("--registration-auth awsirsa: {why}"),
            "pass --hub-cluster-arn, and --managed-cluster-arn unless the kubeconfig context's cluster is this EKS cluster's ARN",
        )
    })?;
    Ok(Some(RegistrationDriver {
        auth_type: RegistrationAuthType::Awsirsa,
        aws_irsa: Some(AwsIrsa {
            hub_cluster_arn: hub,
            managed_cluster_arn: managed,
        }),
    }))
}

/// The Klusterlet's `addOnKubeClientRegistrationDriver` the flags ask for, written (as upstream's
/// join writes it) only when it is not the default `csr`.
fn addon_driver(args: &Args) -> anyhow::Result<Option<AddOnKubeClientRegistrationDriver>> {
    let hint = "--addon-kubeclient-registration-auth csr or token; --addon-token-expiration-seconds 600 or more, or 0 for a year";
    if args
        .addon_token_expiration_seconds
        .is_some_and(i64::is_negative)
    {
        return Err(
            UserError::new("--addon-token-expiration-seconds may not be negative", hint).into(),
        );
    }
    let auth = crate::agent::addon::token::Auth::from_flags(
        &args.addon_kubeclient_registration_auth,
        args.addon_token_expiration_seconds,
    )
    .map_err(|why| UserError::new(why, hint))?;
    Ok(
        (auth.driver == AddOnAuthType::Token).then(|| AddOnKubeClientRegistrationDriver {
            auth_type: Some(AddOnAuthType::Token),
            token: args
                .addon_token_expiration_seconds
                .filter(|s| *s > 0)
                .map(|s| TokenConfiguration {
                    expiration_seconds: Some(s),
                }),
        }),
    )
}

/// `MultipleHubs` needs the Klusterlet's list of hubs, which `join` does not write: refused, with
/// how to set it instead.
fn refuse_multiple_hubs(
    flags: &[(String, bool)],
    values: Option<&super::values_file::Values>,
) -> anyhow::Result<()> {
    let on = flags
        .iter()
        .chain(values.iter().flat_map(|v| v.feature_gates.iter()))
        .rev()
        .find(|(name, _)| name == "MultipleHubs")
        .is_some_and(|(_, on)| *on);
    // A values file may carry the whole setup, as upstream's chart takes it: the hubs'
    // bootstrap secrets and the Klusterlet's list of them.
    let whole = values.is_some_and(|v| {
        !v.multi_hub_kubeconfigs.is_empty()
            && v.cr_spec
                .as_ref()
                .and_then(|s| s.pointer("/registrationConfiguration/bootstrapKubeConfigs"))
                .is_some()
    });
    if on && !whole {
        return Err(UserError::new(
            "MultipleHubs=true needs the Klusterlet's spec.registrationConfiguration.bootstrapKubeConfigs (at least two hubs' bootstrap secrets), which join does not write",
            "give both in --klusterlet-values-file (multiHubBootstrapHubKubeConfigs and klusterlet.registrationConfiguration.bootstrapKubeConfigs), or join without the gate, then create the hubs' bootstrap secrets and set the gate and the list on the Klusterlet (README: \"Moving between hubs\")",
        )
        .into());
    }
    Ok(())
}

/// `opts` with a values file's settings over the flags'; what the operator would refuse (a
/// field no agent it deploys acts on) is refused here, before anything is applied.
fn with_values(
    mut opts: JoinOptions,
    values: Option<super::values_file::Values>,
    ctx: &Ctx,
) -> anyhow::Result<JoinOptions> {
    if let Some(values) = values {
        if values.external_managed_kubeconfig.is_some() && !opts.hosted {
            return Err(UserError::new(
                "--klusterlet-values-file: externalManagedKubeConfig is read in Hosted modes only",
                "drop it, or join with --mode hosted",
            )
            .into());
        }
        values.onto_join(&mut opts);
    }
    if !opts.deploy_operator && !opts.operator_pod.is_empty() {
        ctx.printer.warn(format!(
            "no klusterlet operator Deployment is made (--in-process, or noOperator), so these values of --klusterlet-values-file have no effect: {}",
            opts.operator_pod.keys().join(", ")
        ));
    }
    crate::operator::klusterlet::validate::validate(&klusterlet::klusterlet(&opts)).map_err(
        |e| {
            UserError::new(
                format!("the Klusterlet join would write is refused: {e}"),
                "drop that setting from --klusterlet-values-file",
            )
        },
    )?;
    Ok(opts)
}

/// Runs `join`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    check(&args)?;
    let tag = args.bundle.image_tag(&args.bundle_version)?;
    let feature_gates = crate::install::hub::parse_feature_gates(&args.feature_gates)
        .map_err(|e| UserError::new(e, "e.g. --feature-gates ClusterClaim=true"))?;
    let annotations = klusterlet::parse_annotations(&args.klusterlet_annotation)
        .map_err(|e| UserError::new(e, "e.g. --klusterlet-annotation owner=team-a"))?;
    let resource_requirement = args.bundle.resource_requirement()?;
    let ca_file = read(args.ca_file.as_deref(), "--ca-file")?;
    let proxy_ca = read(args.proxy_ca_file.as_deref(), "--proxy-ca-file")?;
    let external = read(
        args.managed_cluster_kubeconfig.as_deref(),
        "--managed-cluster-kubeconfig",
    )?;
    let image_pull_credential = args
        .image_pull_credential_file
        .as_deref()
        .map(super::init::read_credential)
        .transpose()?;
    let values = super::values_file::read_checked(
        args.klusterlet_values_file.as_deref(),
        super::values_file::Chart::Klusterlet,
        super::values_file::Runs::of(args.in_process, args.image.is_some()),
        &feature_gates,
    )?;
    refuse_multiple_hubs(&feature_gates, values.as_ref())?;
    let kube = ctx.kube().await?;

    let pin = pin(&args, ctx, &kube.client).await?;
    let bootstrap = verify_hub(
        &args,
        ctx,
        ca_file.as_deref(),
        proxy_ca.as_deref(),
        pin.as_deref(),
    )
    .await?;

    let (external, external_server_urls) = managed_side(&args, ctx, &kube.client, external).await?;
    let hosted = args.mode == Mode::Hosted;
    let opts = JoinOptions {
        resource_requirement,
        cluster_name: args.cluster_name.clone(),
        klusterlet_name: if hosted {
            klusterlet::hosted_name()
        } else {
            KLUSTERLET_NAME.into()
        },
        hosted,
        singleton: args.singleton,
        registry: args.image_registry.clone(),
        tag,
        single_image: args.image.clone(),
        bootstrap_kubeconfig: bootstrap_kubeconfig(&bootstrap, &args, ctx),
        external_managed_kubeconfig: external.map(String::into_bytes),
        external_server_urls,
        feature_gates,
        annotations,
        client_cert_expiration_seconds: args.client_cert_expiration_seconds.filter(|s| *s != 0),
        addon_driver: addon_driver(&args)?,
        registration_driver: registration_driver(&args, super::init::context_cluster(&kube))?,
        deploy_operator: !args.in_process,
        image_pull_credential,
        sync_labels: args.enable_sync_labels,
        spec_overlay: None,
        operator_pod: crate::install::operator_pod::OperatorPod::default(),
        create_klusterlet: true,
        multi_hub_kubeconfigs: Vec::new(),
    };
    let opts = with_values(opts, values, ctx)?;
    if ctx.global.dry_run {
        args.bundle.dry_run(&klusterlet::plan(&opts)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let objects = args
        .bundle
        .namespaces(&kube.client, klusterlet::plan(&opts)?)
        .await?;
    let spinner = ctx.printer.spinner("applying the klusterlet");
    let report = Applier::new(kube.client.clone(), ctx.global.timeout)
        .apply(objects.clone())
        .await;
    spinner.finish_and_clear();
    let report = report.context("applying the klusterlet failed; re-run `clusteradm join` to retry (it is idempotent), or `clusteradm unjoin` to remove what was applied")?;
    if report.unchanged() {
        ctx.printer.done(format!(
            "already joined: nothing changed ({} objects unchanged)",
            report.applied.len()
        ));
    } else {
        ctx.printer.done(format!(
            "klusterlet {} applied for cluster {}: {}",
            opts.klusterlet_name,
            opts.cluster_name,
            report.summary()
        ));
    }
    args.bundle.write(&objects)?;
    finish(&args, ctx, &kube, &opts, &bootstrap).await?;
    Ok(ExitCode::SUCCESS)
}

/// After applying: run in process, wait, and print what to do on the hub.
async fn finish(
    args: &Args,
    ctx: &Ctx,
    kube: &super::Kube,
    opts: &JoinOptions,
    bootstrap: &Bootstrap,
) -> anyhow::Result<()> {
    let client = &kube.client;
    let hint = || {
        ctx.printer.info(format!(
            "Then, on the hub, accept the cluster:\n    clusteradm accept --clusters {}",
            opts.cluster_name
        ));
    };
    if !args.in_process {
        if args.wait && opts.create_klusterlet {
            wait(ctx, client, opts, bootstrap, true).await?;
        } else if args.wait {
            ctx.printer.info("not waiting: the values file's klusterlet.create is false, so there is no Klusterlet to wait for");
        }
        hint();
        return Ok(());
    }
    let shutdown = crate::runtime::shutdown::on_signal();
    // The agents start with what the operator will read from the Klusterlet (checked in
    // `with_values`), so it finds them serving it and does not start them again.
    let validated = crate::operator::klusterlet::validate::validate(&klusterlet::klusterlet(opts))?;
    let config = crate::inprocess::klusterlet::Config {
        managed: client.clone(),
        managed_ca: kube.server_ca(),
        cluster_name: opts.cluster_name.clone(),
        agent_namespace: opts.agent_namespace(),
        cleanup_timeout: ctx.global.timeout,
        sync_labels: opts.sync_labels,
        gates: validated.agent_gates(),
        registration: validated.registration.clone(),
        work: validated.work_settings(),
    };
    let waiting = |holder: &str| {
        ctx.printer.warn(format!(
            "another process ({holder}) runs the klusterlet operator on this cluster: the agents run, the operator waits for it to stop"
        ));
    };
    let running = Box::pin(crate::inprocess::klusterlet::run(
        config,
        shutdown.clone(),
        waiting,
    ));
    ctx.printer
        .info("running the klusterlet operator and agents in this process (Ctrl-C to stop)");
    if args.wait {
        // The loops run while we wait; a failed wait stops them.
        let waited = async {
            let result = wait(ctx, client, opts, bootstrap, true).await;
            if result.is_ok() {
                hint();
            } else {
                shutdown.cancel();
            }
            result
        };
        let (waited, running) = tokio::join!(waited, running);
        waited?;
        return running;
    }
    hint();
    running.await
}

/// The bootstrap kubeconfig the plan holds. The token is in what is applied and in a `--dry-run
/// --output-file` (mode 0600: the user asked for the objects to apply later), never on stdout.
fn bootstrap_kubeconfig(bootstrap: &Bootstrap, args: &Args, ctx: &Ctx) -> String {
    if ctx.global.dry_run && args.bundle.output_file.is_none() {
        bootstrap.redacted().kubeconfig()
    } else {
        bootstrap.kubeconfig()
    }
}

async fn wait(
    ctx: &Ctx,
    client: &kube::Client,
    opts: &JoinOptions,
    bootstrap: &Bootstrap,
    registers: bool,
) -> anyhow::Result<()> {
    let spinner = ctx
        .printer
        .spinner("waiting for the Klusterlet to be Applied");
    let result =
        operator::wait_applied(client.clone(), &opts.klusterlet_name, ctx.global.timeout).await;
    spinner.finish_and_clear();
    result?;
    ctx.printer
        .done(format!("Klusterlet {} is Applied", opts.klusterlet_name));
    if registers {
        let what = format!(
            "waiting for ManagedCluster {} on the hub",
            opts.cluster_name
        );
        let spinner = ctx.printer.spinner(what);
        let seen =
            crate::join::hub::wait_registered(bootstrap, &opts.cluster_name, ctx.global.timeout)
                .await;
        spinner.finish_and_clear();
        seen?;
        ctx.printer.done(format!(
            "cluster {} registered with the hub",
            opts.cluster_name
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_managed_kubeconfig_gets_the_internal_server_and_keeps_its_credentials() {
        let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: m\n  cluster: {server: 'https://outside:6443', certificate-authority-data: Q0E=}\nusers:\n- name: u\n  user: {token: secret-token}\ncontexts:\n- name: c\n  context: {cluster: m, user: u}\ncurrent-context: c\n";
        let out = with_server(text, "https://10.0.0.1:6443").unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&out).unwrap();
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Q0E="));
        assert!(out.contains("secret-token"), "the credential stays: {out}");
        assert_eq!(kc.current_context.as_deref(), Some("c"));
    }
}
