//! `clusteradm get credentials [CLUSTER] [--cluster-role ROLE]`: a token for a managed cluster's
//! API server, printed as an `ExecCredential`, so the command serves as the exec plugin a
//! ClusterInventory consumer runs for the `open-cluster-management` access provider of a
//! ClusterProfile ([`crate::hub::cluster_profiles`]). Run by such a consumer, it reads the
//! cluster's name from `KUBERNETES_EXEC_INFO` (client-go's `provideClusterInfo`: the profile's
//! `client.authentication.k8s.io/exec` extension).
//!
//! The hub cannot reach a managed cluster (its agents pull), so the token comes through what the
//! hub already has: a ManifestWork in the cluster's namespace makes a ServiceAccount on the
//! managed cluster, binds it to ROLE and reports its token Secret back as status feedback. Making
//! that work needs the right to create ManifestWorks in the cluster's namespace, which already
//! lets one do on the cluster whatever its work agent may; the credential never reaches further,
//! and only as far as ROLE (`view` unless asked). Once read, the feedback rule is taken off, so
//! the token stays in the work's status only while a call reads it. Deleting the work revokes it.
//! Run as a plugin, the token goes only to a server the cluster's agent reported as its own, or
//! to cluster-proxy's user server for that cluster (where cluster-proxy's ClusterProfile
//! controller points consumers that cannot reach the cluster), in the namespace the add-on's
//! ManagedProxyConfiguration names, with the add-on enabled on the cluster.
//! Where the cluster has the managed-serviceaccount add-on, the token is its instead: short-lived,
//! rotated, and in a hub Secret only ([`super::managed_service_account`]).
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use kube::ResourceExt as _;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::api::addon::ManagedClusterAddOn;
use crate::api::cluster::ManagedCluster;
use crate::api::inventory::cluster_proxy_user_server;
use crate::api::work::{
    FeedbackRule, FeedbackType, JsonPath, ManifestConfigOption, ManifestWork, ManifestWorkSpec,
    ManifestsTemplate, ResourceIdentifier,
};
use crate::cli::Ctx;
use crate::cli::get::managed_service_account as msa;
use crate::error::UserError;

/// The namespace on the managed cluster that holds the ServiceAccounts.
pub const NAMESPACE: &str = "open-cluster-management-credentials";
/// What the work's and the managed objects' names start with.
pub const PREFIX: &str = "clusteradm-credentials";
/// The environment variable client-go passes an exec plugin its request in.
const EXEC_INFO: &str = "KUBERNETES_EXEC_INFO";
/// The feedback value holding the token.
const TOKEN_VALUE: &str = "token";

/// Flags of `get credentials`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The managed cluster [default: the cluster named in KUBERNETES_EXEC_INFO, as an exec plugin]
    pub cluster: Option<String>,
    /// The ClusterRole on the managed cluster the credential is bound to
    #[arg(long, default_value = "view", value_name = "ROLE")]
    pub cluster_role: String,
    /// How long a token of the managed-serviceaccount add-on is valid (it renews it before)
    #[arg(long, default_value = "1h", value_parser = crate::cli::args::parse_duration, value_name = "DURATION")]
    pub token_validity: Duration,
    /// Without the managed-serviceaccount add-on on the cluster, accept a ServiceAccount token
    /// Secret's token, which does not expire and passes through the work's status while read
    #[arg(long)]
    pub non_expiring: bool,
    /// How long to wait for the managed cluster's agent to report the token
    #[arg(long, default_value = "60s", value_parser = crate::cli::args::parse_duration, value_name = "DURATION")]
    pub timeout: Duration,
}

/// Runs `get credentials`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let exec_info = std::env::var(EXEC_INFO).ok();
    let request = exec_info.as_deref().map(ExecRequest::parse).transpose()?;
    let cluster = match (&args.cluster, &request) {
        (Some(cluster), _) => cluster.clone(),
        (None, Some(request)) => request.cluster.clone().ok_or_else(|| {
            UserError::new(
                format!("{EXEC_INFO} names no cluster (spec.cluster.config.clusterName)"),
                "read the kubeconfig from a ClusterProfile's `open-cluster-management` access provider with provideClusterInfo: true, or name the cluster",
            )
        })?,
        (None, None) => {
            return Err(UserError::new(
                "no cluster named",
                "name one (`clusteradm get credentials <cluster>`), or run this as an exec plugin",
            )
            .into());
        }
    };
    check_role(&args.cluster_role)?;
    let kube = ctx.kube().await?;
    let clusters: Api<ManagedCluster> = Api::all(kube.client.clone());
    let Some(managed_cluster) = clusters
        .get_opt(&cluster)
        .await
        .map_err(|e| match e {
            kube::Error::Api(ref s) if s.code == 403 => denied_hint(e, &cluster),
            other => crate::error::ocm_api_missing(other),
        })
        .context("reading the ManagedCluster")?
    else {
        return Err(UserError::new(
            format!("managed cluster {cluster} not found on the hub"),
            "list the clusters with `clusteradm get clusters`",
        )
        .into());
    };
    if let Some(request) = &request {
        let proxy = cluster_proxy_namespace(&kube.client, request, &cluster).await?;
        check_server(request, &managed_cluster, proxy.as_deref())?;
    }
    let api_version = request
        .as_ref()
        .map_or_else(|| V1.to_string(), |r| r.api_version.clone());
    let token = if let Some(namespace) = msa::install_namespace(&kube.client, &cluster).await {
        msa::credential(
            &kube.client,
            &cluster,
            &args.cluster_role,
            &namespace,
            args.token_validity,
            args.timeout,
        )
        .await?
    } else if args.non_expiring {
        if request.is_none() {
            ctx.printer.warn(format!(
                "the token is a ServiceAccount token Secret's, which does not expire (revoke it with `clusteradm delete work {PREFIX}-{} --clusters {cluster}`)",
                args.cluster_role
            ));
        }
        non_expiring_token(&kube.client, &cluster, &args).await?
    } else {
        return Err(UserError::new(
            format!("{cluster} has no Available {} add-on to take a short-lived token from", msa::ADDON),
            format!("install it on the hub (its Helm chart) and enable it on {cluster}, or pass --non-expiring to accept a ServiceAccount token that does not expire"),
        )
        .into());
    };
    let mut status = json!({"token": token.token});
    if let Some(expires) = token.expires {
        status["expirationTimestamp"] = json!(expires);
    }
    let credential = json!({"apiVersion": api_version, "kind": "ExecCredential", "status": status});
    crate::ui::stdout::println(serde_json::to_string(&credential)?)?;
    Ok(ExitCode::SUCCESS)
}

/// The token of a ServiceAccount token Secret the cluster's work agent makes and reports back as
/// the work's feedback, taken off the status once read.
async fn non_expiring_token(
    client: &kube::Client,
    cluster: &str,
    args: &Args,
) -> anyhow::Result<msa::Token> {
    let works: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
    let mut work = work(cluster, &args.cluster_role);
    let name = work.metadata.name.clone().unwrap_or_default();
    let apply = |work: ManifestWork| {
        let works = works.clone();
        let name = name.clone();
        async move {
            works
                .patch(
                    &name,
                    &PatchParams::apply(crate::FIELD_MANAGER).force(),
                    &Patch::Apply(&work),
                )
                .await
                .map_err(|e| denied_hint(e, cluster))
                .with_context(|| format!("applying ManifestWork {cluster}/{name}"))
        }
    };
    apply(work.clone()).await?;
    let token = wait_token(&works, &name, args.timeout).await?;
    // The token is in the work's status only while it is being read: without the feedback rule
    // the agent takes the value off again.
    work.spec.manifest_configs.clear();
    apply(work).await?;
    Ok(msa::Token {
        token,
        expires: None,
    })
}

/// The ExecCredential API version answered when none is asked.
const V1: &str = "client.authentication.k8s.io/v1";

/// What client-go asks an exec plugin (`KUBERNETES_EXEC_INFO`).
#[derive(Debug, PartialEq)]
struct ExecRequest {
    api_version: String,
    cluster: Option<String>,
    /// The server the caller will send the token to (`spec.cluster.server`).
    server: Option<String>,
    /// The CA it will trust there (`spec.cluster.certificate-authority-data`).
    ca: Option<Vec<u8>>,
}

impl ExecRequest {
    fn parse(text: &str) -> anyhow::Result<Self> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            UserError::new(
                format!("{EXEC_INFO} is not an ExecCredential: {e}"),
                format!("unset {EXEC_INFO} to name the cluster yourself"),
            )
        })?;
        Ok(Self {
            api_version: value["apiVersion"].as_str().unwrap_or(V1).to_string(),
            cluster: value["spec"]["cluster"]["config"]["clusterName"]
                .as_str()
                .map(str::to_string),
            server: value["spec"]["cluster"]["server"]
                .as_str()
                .map(str::to_string),
            ca: value["spec"]["cluster"]["certificate-authority-data"]
                .as_str()
                .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok()),
        })
    }
}

/// When the caller asks for cluster-proxy's user server, the namespace of the add-on's proxy
/// server, with the add-on enabled on `cluster`; or why not.
async fn cluster_proxy_namespace(
    client: &kube::Client,
    request: &ExecRequest,
    cluster: &str,
) -> anyhow::Result<Option<String>> {
    if request
        .server
        .as_deref()
        .and_then(cluster_proxy_user_server)
        .is_none()
    {
        return Ok(None);
    }
    let proxy = crate::cluster_proxy::installation::find(client).await?;
    let addons: Api<ManagedClusterAddOn> = Api::namespaced(client.clone(), cluster);
    let enabled = addons
        .get_opt(crate::cluster_proxy::ADDON)
        .await
        .map_err(|e| refused(e, "a credential through cluster-proxy needs the right to read the cluster's ManagedClusterAddOns"))
        .context("reading the cluster's cluster-proxy add-on")?;
    if enabled.is_none() {
        return Err(UserError::new(
            format!("the caller would send the token through cluster-proxy, which is not enabled on {cluster}"),
            format!("enable it: clusteradm addon enable --names cluster-proxy --clusters {cluster}"),
        )
        .into());
    }
    Ok(Some(proxy.namespace))
}

/// A token goes only to the cluster's own API server: the server (and CA) the caller asks for
/// must be one the cluster's agent reported, or cluster-proxy's user server for the cluster in
/// the proxy's namespace (`proxy_namespace`, when the caller asks for one). A ClusterProfile's
/// status is not proof: whoever can write one could name a server of theirs beside a real
/// cluster's name.
fn check_server(
    request: &ExecRequest,
    cluster: &ManagedCluster,
    proxy_namespace: Option<&str>,
) -> anyhow::Result<()> {
    let Some(server) = &request.server else {
        return Ok(());
    };
    if let (Some((namespace, named)), Some(proxy)) =
        (cluster_proxy_user_server(server), proxy_namespace)
        && named == cluster.name_any()
        && namespace == proxy
    {
        return Ok(());
    }
    let same = |url: &str| url.trim_end_matches('/') == server.trim_end_matches('/');
    let configs = &cluster.spec.managed_cluster_client_configs;
    let matches = configs.iter().any(|c| {
        let ca_agrees = match (&request.ca, &c.ca_bundle) {
            (Some(asked), Some(known)) => *asked == known.0,
            _ => true,
        };
        same(&c.url) && ca_agrees
    });
    if matches {
        return Ok(());
    }
    let known: Vec<&str> = configs.iter().map(|c| c.url.as_str()).collect();
    Err(UserError::new(
        format!(
            "the caller would send the token to {server}, which is not managed cluster {}'s API server ({}) nor cluster-proxy's user server for it",
            cluster.name_any(),
            if known.is_empty() { "none reported".to_string() } else { known.join(", ") }
        ),
        "use the kubeconfig of the cluster's ClusterProfile as the hub writes it (its `open-cluster-management` access provider)",
    )
    .into())
}

/// ROLE ends up in object names on the managed cluster: a DNS label keeps them valid.
fn check_role(role: &str) -> anyhow::Result<()> {
    if is_dns_label(role) {
        Ok(())
    } else {
        Err(UserError::new(
            format!("--cluster-role {role:?} is not usable in a ServiceAccount's name"),
            "name a ClusterRole of lowercase letters, digits and '-' (e.g. view, edit, admin), or aggregate yours into one",
        )
        .into())
    }
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The ManifestWork that makes the credential: a namespace, a ServiceAccount and its token
/// Secret, a ClusterRoleBinding to `role`; the token reported back as feedback.
#[must_use]
pub fn work(cluster: &str, role: &str) -> ManifestWork {
    let account = format!("{PREFIX}-{cluster}-{role}");
    let manifests = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": account, "namespace": NAMESPACE}}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
               "metadata": {"name": account, "namespace": NAMESPACE,
                            "annotations": {"kubernetes.io/service-account.name": account}}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": account},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]}),
    ];
    let mut work = ManifestWork::new(
        &format!("{PREFIX}-{role}"),
        ManifestWorkSpec {
            workload: ManifestsTemplate { manifests },
            manifest_configs: vec![ManifestConfigOption {
                resource_identifier: ResourceIdentifier {
                    group: Some(String::new()),
                    resource: "secrets".into(),
                    name: account.clone(),
                    namespace: Some(NAMESPACE.into()),
                },
                feedback_rules: vec![FeedbackRule {
                    type_: FeedbackType::JsonPaths,
                    json_paths: vec![JsonPath {
                        name: TOKEN_VALUE.into(),
                        version: None,
                        path: ".data.token".into(),
                    }],
                }],
                ..ManifestConfigOption::default()
            }],
            ..ManifestWorkSpec::default()
        },
    );
    work.metadata.namespace = Some(cluster.to_string());
    work
}

/// The token the work's agent reported, decoded, waiting up to `timeout` for it.
async fn wait_token(
    works: &Api<ManifestWork>,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<String> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let work = works
            .get(name)
            .await
            .context("reading the credentials' ManifestWork")?;
        if let Some(token) = reported_token(&work) {
            return Ok(token);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(UserError::new(
                format!("the managed cluster's agent reported no token within {timeout:?}"),
                format!(
                    "check the cluster is available (`clusteradm get clusters`) and the work's status (`clusteradm get works {name} --cluster {}`)",
                    work.metadata.namespace.unwrap_or_default()
                ),
            )
            .into());
        }
        // The agent reports feedback on its status sync; a watch would add nothing but a
        // connection for one value.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The decoded token in `work`'s feedback, once its agent reported it.
fn reported_token(work: &ManifestWork) -> Option<String> {
    let manifests = &work.status.as_ref()?.resource_status.as_ref()?.manifests;
    let encoded = manifests
        .iter()
        .filter_map(|m| m.status_feedback.as_ref())
        .flat_map(|f| f.values.iter())
        .find(|v| v.name == TOKEN_VALUE)?
        .field_value
        .string
        .clone()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok().filter(|t| !t.is_empty())
}

/// A refusal from the hub, with what right is missing.
fn denied_hint(err: kube::Error, cluster: &str) -> anyhow::Error {
    refused(
        err,
        &format!(
            "a credential for {cluster} needs the rights to read its ManagedCluster and to create, patch and read ManifestWorks in the hub namespace {cluster}"
        ),
    )
}

/// A 403 from the hub as a user error saying what `needs`; any other error as it is.
pub(super) fn refused(err: kube::Error, needs: &str) -> anyhow::Error {
    match err {
        kube::Error::Api(ref s) if s.code == 403 => {
            UserError::new(format!("the hub refused: {}", s.message), needs).into()
        }
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exec_request_names_the_cluster_and_the_version() {
        let request = ExecRequest::parse(
            r#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"https://x","config":{"clusterName":"c1"}}}}"#,
        )
        .unwrap();
        assert_eq!(
            request,
            ExecRequest {
                api_version: "client.authentication.k8s.io/v1beta1".into(),
                cluster: Some("c1".into()),
                server: Some("https://x".into()),
                ca: None,
            }
        );
        assert!(ExecRequest::parse("not json").is_err());
    }

    #[test]
    fn a_token_goes_only_to_a_server_the_agent_reported() {
        let cluster: ManagedCluster = crate::yaml::from_str(
            "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: c1}\nspec: {managedClusterClientConfigs: [{url: 'https://c1:6443', caBundle: aGVsbG8=}]}\n",
        )
        .unwrap();
        let asking = |server: &str, ca: Option<&[u8]>| ExecRequest {
            api_version: V1.into(),
            cluster: Some("c1".into()),
            server: Some(server.into()),
            ca: ca.map(<[u8]>::to_vec),
        };
        let check =
            |server: &str, ca: Option<&[u8]>| check_server(&asking(server, ca), &cluster, None);
        assert!(check("https://c1:6443/", Some(b"hello")).is_ok());
        assert!(check("https://c1:6443", None).is_ok());
        assert!(check("https://elsewhere:6443", None).is_err());
        assert!(check("https://c1:6443", Some(b"other")).is_err());
        // Through cluster-proxy: its user server for this cluster, in the proxy's namespace.
        let proxied = |server: &str| check_server(&asking(server, None), &cluster, Some("proxy"));
        assert!(proxied("https://cluster-proxy-addon-user.proxy:9092/c1").is_ok());
        assert!(proxied("https://cluster-proxy-addon-user.proxy:9092/c2").is_err());
        assert!(proxied("https://cluster-proxy-addon-user.other:9092/c1").is_err());
        assert!(check("https://cluster-proxy-addon-user.proxy:9092/c1", None).is_err());
    }

    #[test]
    fn roles_must_fit_in_names() {
        assert!(check_role("view").is_ok());
        assert!(check_role("system:aggregate-to-view").is_err());
        assert!(check_role("").is_err());
    }

    #[test]
    fn the_work_binds_the_role_and_asks_for_the_token() {
        let w = work("c1", "edit");
        assert_eq!(
            w.metadata.name.as_deref(),
            Some("clusteradm-credentials-edit")
        );
        let binding = &w.spec.workload.manifests[3];
        assert_eq!(binding["roleRef"]["name"], "edit");
        assert_eq!(
            binding["subjects"][0]["name"],
            "clusteradm-credentials-c1-edit"
        );
        let config = &w.spec.manifest_configs[0];
        assert_eq!(
            config.resource_identifier.name,
            "clusteradm-credentials-c1-edit"
        );
        assert_eq!(config.feedback_rules[0].json_paths[0].path, ".data.token");
    }
}
