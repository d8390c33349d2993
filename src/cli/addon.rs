//! `addon enable` and `addon disable`, with upstream's flags and messages: an add-on known to the
//! hub (a ClusterManagementAddOn) is enabled on a cluster by a ManagedClusterAddOn of the same name
//! in the cluster's namespace (`v1alpha1`, as upstream's `clusteradm` writes it). Every check runs
//! before the first write, so a refused command changes nothing; both are idempotent and say so.
use kube::CustomResourceExt as _;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::api::addon::{
    AddOnConfig, ClusterManagementAddOn, DEFAULT_INSTALL_NAMESPACE, ManagedClusterAddOn,
    ManagedClusterAddOnSpec,
};
use crate::api::cluster::ManagedCluster;
use crate::api::names::is_dns_label;
use crate::cli::Ctx;
use crate::cli::clusters::{self, names};
use crate::error::UserError;
use crate::ui::stdout::println;

mod agent;
mod create;

/// `addon` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub what: What,
}

/// The verbs of `addon`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Create an add-on from its agent's manifests or an AddOnTemplate (a ClusterManagementAddOn
    /// and its AddOnTemplate)
    Create(create::CreateArgs),
    /// Run an example add-on's agent (helloworld) against the add-on's hub identity
    Agent(agent::AgentArgs),
    /// Enable add-ons on clusters (a ManagedClusterAddOn in each cluster's namespace)
    Enable(EnableArgs),
    /// Disable add-ons on clusters (delete their ManagedClusterAddOns)
    Disable(DisableArgs),
}

/// Flags of `addon enable`.
#[derive(Debug, clap::Args)]
pub struct EnableArgs {
    /// Names of the add-ons to enable, comma-separated
    #[arg(long, value_delimiter = ',', required = true, value_name = "NAMES")]
    pub names: Vec<String>,
    /// The managed clusters, comma-separated
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        required = true,
        value_name = "NAMES"
    )]
    pub clusters: Vec<String>,
    /// Namespace the add-on's agent is installed in on the managed cluster
    #[arg(short = 'n', long, default_value = DEFAULT_INSTALL_NAMESPACE, value_name = "NAMESPACE")]
    pub namespace: String,
    /// Annotations to set on the ManagedClusterAddOns (key=value, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "KEY=VALUE")]
    pub annotate: Vec<String>,
    /// Labels to set on the ManagedClusterAddOns (key=value, comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Also write the ManagedClusterAddOns, as YAML, to this file
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Configs for the add-ons (e.g. AddOnDeploymentConfigs), YAML: applied to the hub and named
    /// in each ManagedClusterAddOn's `spec.configs`
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
}

/// Flags of `addon disable`.
#[derive(Debug, clap::Args)]
pub struct DisableArgs {
    /// Names of the add-ons to disable, comma-separated
    #[arg(long, value_delimiter = ',', required = true, value_name = "NAMES")]
    pub names: Vec<String>,
    /// The managed clusters, comma-separated
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        value_name = "NAMES",
        required_unless_present = "all_clusters",
        conflicts_with = "all_clusters"
    )]
    pub clusters: Vec<String>,
    /// Every managed cluster the hub knows
    #[arg(long)]
    pub all_clusters: bool,
}

/// Runs `addon ...`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Create(a) => create::create(a, ctx).await,
        What::Agent(a) => agent::agent(a, ctx).await,
        What::Enable(a) => enable(a, ctx).await,
        What::Disable(a) => disable(a, ctx).await,
    }
}

/// `key=value` pairs of `--annotate` or `--labels`.
fn pairs(flag: &str, given: &[String]) -> Result<BTreeMap<String, String>, UserError> {
    given
        .iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() && !v.contains('=') => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(UserError::new(
                format!("error parsing {flag} {p:?}: expected key=value"),
                format!("e.g. `--{flag} owner=platform-team`"),
            )),
        })
        .collect()
}

/// Fails, naming the first, unless every cluster has its namespace on the hub (the hub makes it
/// when it accepts the cluster), where its ManagedClusterAddOns live.
async fn check_namespaces(client: &Client, clusters: &[String]) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let found = crate::runtime::fan_out::try_all(clusters.iter().map(|c| api.get_opt(c)))
        .await
        .context("reading the clusters' namespaces")?;
    if let Some((missing, _)) = clusters.iter().zip(&found).find(|(_, n)| n.is_none()) {
        return Err(UserError::new(
            format!("managed cluster {missing} has no namespace on the hub yet (it is not accepted): no add-on was enabled"),
            format!("accept it first: `clusteradm accept --clusters {missing}`"),
        )
        .into());
    }
    Ok(())
}

/// The ManagedClusterAddOn that enables `addon` on `cluster`.
fn managed_addon(
    addon: &str,
    cluster: &str,
    namespace: &str,
    annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
    configs: &[AddOnConfig],
) -> ManagedClusterAddOn {
    let mut mca = ManagedClusterAddOn::new(
        addon,
        ManagedClusterAddOnSpec {
            install_namespace: Some(namespace.to_string()),
            configs: configs.to_vec(),
        },
    );
    mca.metadata.namespace = Some(cluster.to_string());
    if !annotations.is_empty() {
        mca.metadata.annotations = Some(annotations.clone());
    }
    if !labels.is_empty() {
        mca.metadata.labels = Some(labels.clone());
    }
    mca
}

/// Whether `existing` already carries everything `wanted` sets.
fn covers(existing: &ManagedClusterAddOn, wanted: &ManagedClusterAddOn) -> bool {
    let has_all = |have: &BTreeMap<String, String>, want: &Option<BTreeMap<String, String>>| {
        want.iter().flatten().all(|(k, v)| have.get(k) == Some(v))
    };
    existing.spec.install_namespace == wanted.spec.install_namespace
        && (wanted.spec.configs.is_empty() || existing.spec.configs == wanted.spec.configs)
        && has_all(existing.annotations(), &wanted.metadata.annotations)
        && has_all(existing.labels(), &wanted.metadata.labels)
}

async fn enable(args: EnableArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let (addons, clusters) = (names(&args.names), names(&args.clusters));
    if !is_dns_label(&args.namespace) {
        return Err(UserError::new(
            format!(
                "invalid install namespace {:?}: it must be a DNS-1123 label",
                args.namespace
            ),
            "e.g. `--namespace open-cluster-management-agent-addon`",
        )
        .into());
    }
    let annotations = pairs("annotate", &args.annotate)?;
    let labels = pairs("labels", &args.labels)?;
    let config_objects = match &args.config_file {
        Some(path) => {
            let (name, text) = crate::work::manifests::read(path)?;
            crate::apply::parse_objects(&text, &name)?
        }
        None => Vec::new(),
    };
    let addon_crds = [
        ClusterManagementAddOn::crd_name(),
        ManagedClusterAddOn::crd_name(),
    ];
    let kube = ctx.hub(&addon_crds).await?;
    clusters::existing(&kube.client, &clusters, "no add-on was enabled").await?;
    check_namespaces(&kube.client, &clusters).await?;
    require_known(&kube.client, &addons).await?;
    let configs = apply_configs(&kube.client, config_objects, ctx).await?;
    let wanted: Vec<ManagedClusterAddOn> = addons
        .iter()
        .flat_map(|a| {
            clusters
                .iter()
                .map(|c| managed_addon(a, c, &args.namespace, &annotations, &labels, &configs))
        })
        .collect();
    if let Some(path) = &args.output_file {
        let docs: Vec<String> = wanted
            .iter()
            .map(serde_yaml::to_string)
            .collect::<Result<_, _>>()?;
        std::fs::write(path, docs.join("---\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    for mca in &wanted {
        let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
        let api: Api<ManagedClusterAddOn> = Api::namespaced(kube.client.clone(), &cluster);
        let existing = api
            .get_opt(&addon)
            .await
            .with_context(|| format!("reading ManagedClusterAddOn {cluster}/{addon}"))?;
        if existing.as_ref().is_some_and(|e| covers(e, mca)) {
            println(format!(
                "{addon} add-on is already enabled in namespace {} of managed cluster: {cluster}.",
                args.namespace
            ))?;
            continue;
        }
        if !ctx.global.dry_run {
            let write = if existing.is_some() {
                let mut patch = json!({
                    "metadata": {"annotations": mca.metadata.annotations, "labels": mca.metadata.labels},
                    "spec": {"installNamespace": args.namespace},
                });
                if !configs.is_empty() {
                    patch["spec"]["configs"] = json!(configs);
                }
                api.patch(&addon, &PatchParams::default(), &Patch::Merge(patch))
                    .await
            } else {
                api.create(&PostParams::default(), mca).await
            };
            write.with_context(|| {
                format!(
                    "enabling add-on {addon} on cluster {cluster}; the clusters listed above are done, run the command again to finish"
                )
            })?;
        }
        println(format!(
            "Deploying {addon} add-on to namespaces {} of managed cluster: {cluster}.",
            args.namespace
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an add-on the hub has no ClusterManagementAddOn for, before anything is enabled.
async fn require_known(client: &kube::Client, addons: &[String]) -> anyhow::Result<()> {
    let known: Api<ClusterManagementAddOn> = Api::all(client.clone());
    for addon in addons {
        if known
            .get_opt(addon)
            .await
            .map_err(crate::error::ocm_api_missing)
            .with_context(|| format!("reading ClusterManagementAddOn {addon}"))?
            .is_none()
        {
            return Err(UserError::new(
                format!("enabling the unknown addon {addon} is not supported: the hub has no ClusterManagementAddOn {addon}, so no add-on was enabled"),
                "`clusteradm get addon` lists the add-ons the hub knows",
            )
            .into());
        }
    }
    Ok(())
}

/// Applies the config file's objects to the hub (not with `--dry-run`), as upstream's
/// `--config-file`, and names each as an add-on config: its group, resource (plural, from
/// discovery), namespace and name.
async fn apply_configs(
    client: &Client,
    objects: Vec<kube::api::DynamicObject>,
    ctx: &Ctx,
) -> anyhow::Result<Vec<AddOnConfig>> {
    if objects.is_empty() {
        return Ok(Vec::new());
    }
    let applier = crate::apply::Applier::new(client.clone(), ctx.global.timeout);
    let mut configs = Vec::new();
    for obj in &objects {
        let gvk = crate::apply::gvk_of(obj).with_context(|| {
            format!(
                "the config {} has no apiVersion or kind",
                obj.metadata.name.as_deref().unwrap_or("(unnamed)")
            )
        })?;
        let (resource, _) = applier
            .resolver()
            .resolve(&gvk)
            .await
            .map_err(|e| anyhow::anyhow!("config {}: {e}", gvk.kind))?;
        configs.push(AddOnConfig {
            group: gvk.group.clone(),
            resource: resource.plural,
            namespace: obj.metadata.namespace.clone(),
            name: obj.metadata.name.clone().unwrap_or_default(),
        });
    }
    if !ctx.global.dry_run {
        let report = applier
            .apply(objects)
            .await
            .context("applying the config file; no add-on was enabled")?;
        for a in &report.applied {
            println(format!("{} {}", a.object, a.change))?;
        }
    }
    Ok(configs)
}

async fn disable(args: DisableArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let addons = names(&args.names);
    let kube = ctx.hub(&[ManagedClusterAddOn::crd_name()]).await?;
    let clusters = if args.all_clusters {
        let mut all: Vec<String> = Api::<ManagedCluster>::all(kube.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(crate::error::ocm_api_missing)
            .context("listing ManagedClusters")?
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect();
        all.sort();
        all
    } else {
        let clusters = names(&args.clusters);
        clusters::existing(&kube.client, &clusters, "no add-on was disabled").await?;
        clusters
    };
    for addon in &addons {
        for cluster in &clusters {
            let api: Api<ManagedClusterAddOn> = Api::namespaced(kube.client.clone(), cluster);
            // One request either way: `--dry-run` asks the API server to only pretend.
            let params = DeleteParams {
                dry_run: ctx.global.dry_run,
                ..DeleteParams::default()
            };
            match api.delete(addon, &params).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    println(format!("{addon} add-on not found in cluster: {cluster}."))?;
                    continue;
                }
                Err(e) => {
                    return Err(anyhow::Error::from(e).context(format!(
                        "disabling add-on {addon} on cluster {cluster}; run the command again to finish"
                    )));
                }
            }
            println(format!(
                "Undeploying {addon} add-on in managed cluster: {cluster}."
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_need_one_equals_sign_and_a_key() {
        let ok = pairs("annotate", &["a=1".into(), "b=".into()]).unwrap();
        assert_eq!(ok.get("a").map(String::as_str), Some("1"));
        assert_eq!(ok.get("b").map(String::as_str), Some(""));
        for bad in ["novalue", "=v", "a=b=c"] {
            let e = pairs("annotate", &[bad.into()]).unwrap_err();
            assert!(e.to_string().contains("expected key=value"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_existing_addon_with_more_annotations_is_already_enabled() {
        let one = BTreeMap::from([("a".to_string(), "1".to_string())]);
        let wanted = managed_addon("hello", "c1", "ns", &one, &BTreeMap::new(), &[]);
        let mut existing = wanted.clone();
        existing
            .annotations_mut()
            .insert("other".into(), "x".into());
        assert!(covers(&existing, &wanted));
        let elsewhere = managed_addon("hello", "c1", "other-ns", &one, &BTreeMap::new(), &[]);
        assert!(!covers(&elsewhere, &wanted));
    }
}
