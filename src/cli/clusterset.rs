//! Cluster sets, with upstream's commands and messages: `create clusterset NAME`,
//! `delete clusterset NAME`, `clusterset set NAME --clusters a,b`,
//! `clusterset bind|unbind NAME --namespace NS`. Every check runs before the first write, so a
//! refused command changes nothing; each is idempotent and says so.
use kube::CustomResourceExt as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::api::cluster::{
    CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET, GLOBAL_CLUSTER_SET, ManagedCluster, ManagedClusterSet,
    ManagedClusterSetBinding, ManagedClusterSetBindingSpec, ManagedClusterSetSpec,
    ManagedNamespace,
};
use crate::api::names::is_dns_label;
use crate::cli::Ctx;
use crate::cli::clusters;
use crate::error::UserError;
use crate::ui::stdout::println;

/// Flags of `create clusterset` and `delete clusterset`.
#[derive(Debug, clap::Args)]
pub struct NameArgs {
    /// Name of the cluster set (a DNS-1123 label: it is the value of the cluster-set label)
    pub name: String,
}

/// `clusterset` subcommands.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub what: What,
}

/// The verbs of `clusterset`.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Move clusters into a cluster set (sets their cluster-set label)
    Set(SetArgs),
    /// Let placements in a namespace use a cluster set (a ManagedClusterSetBinding)
    Bind(BindArgs),
    /// Remove a cluster set's binding from a namespace
    Unbind(BindArgs),
}

/// Flags of `clusterset set`.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// Name of the cluster set
    pub name: String,
    /// The clusters to move into the set, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAMES",
        required_unless_present = "namespaces"
    )]
    pub clusters: Vec<String>,
    /// Namespaces every cluster of the set should have (added to its `spec.managedNamespaces`;
    /// the agents create them), comma-separated
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub namespaces: Vec<String>,
}

/// Flags of `clusterset bind` and `unbind`.
#[derive(Debug, clap::Args)]
pub struct BindArgs {
    /// Name of the cluster set
    pub name: String,
    /// The namespace (as upstream's, `default` unless given)
    #[arg(short = 'n', long, value_name = "NAMESPACE", default_value = "default")]
    pub namespace: String,
}

/// Runs `clusterset ...`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Set(a) => set(a, ctx).await,
        What::Bind(a) => bind(a, ctx).await,
        What::Unbind(a) => unbind(a, ctx).await,
    }
}

fn check_name(name: &str) -> Result<(), UserError> {
    if is_dns_label(name) {
        Ok(())
    } else {
        Err(UserError::new(
            format!(
                "invalid cluster set name {name:?}: it must be a DNS-1123 label (lower-case letters, digits and '-', at most 63)"
            ),
            "e.g. `clusteradm create clusterset prod-eu`",
        ))
    }
}

/// The set `name`, or an error saying how to make it.
async fn existing_set(client: &Client, name: &str) -> anyhow::Result<ManagedClusterSet> {
    Api::<ManagedClusterSet>::all(client.clone())
        .get_opt(name)
        .await
        .map_err(crate::error::ocm_api_missing)
        .with_context(|| format!("reading ManagedClusterSet {name}"))?
        .ok_or_else(|| {
            UserError::new(
                format!("cluster set {name} not found on the hub"),
                format!("create it with `clusteradm create clusterset {name}`"),
            )
            .into()
        })
}

/// Runs `create clusterset`.
pub async fn create(args: NameArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let kube = ctx.hub(&[ManagedClusterSet::crd_name()]).await?;
    let api: Api<ManagedClusterSet> = Api::all(kube.client.clone());
    let name = args.name.as_str();
    if api
        .get_opt(name)
        .await
        .map_err(crate::error::ocm_api_missing)?
        .is_some()
    {
        println(format!("Clusterset {name} is already created"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !ctx.global.dry_run {
        let set = ManagedClusterSet::new(name, ManagedClusterSetSpec::default());
        api.create(&PostParams::default(), &set)
            .await
            .with_context(|| format!("creating ManagedClusterSet {name}"))?;
    }
    println(format!("Clusterset {name} is created"))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `delete clusterset`: refuses the built-in sets and a set still bound anywhere.
pub async fn delete(args: NameArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let name = args.name.as_str();
    if [DEFAULT_CLUSTER_SET, GLOBAL_CLUSTER_SET].contains(&name) {
        return Err(UserError::new(
            format!(
                "cluster set {name} cannot be deleted: the hub keeps it (and would re-create it)"
            ),
            "move clusters out of it with `clusteradm clusterset set <other> --clusters ...`",
        )
        .into());
    }
    let kube = ctx.hub(&[ManagedClusterSet::crd_name()]).await?;
    let api: Api<ManagedClusterSet> = Api::all(kube.client.clone());
    let Some(set) = api
        .get_opt(name)
        .await
        .map_err(crate::error::ocm_api_missing)?
    else {
        println(format!("Clusterset {name} not found or is already deleted"))?;
        return Ok(ExitCode::SUCCESS);
    };
    let bound: Vec<String> = Api::<ManagedClusterSetBinding>::all(kube.client.clone())
        .list(&ListParams::default().fields(&format!("metadata.name={name}")))
        .await
        .context("listing ManagedClusterSetBindings")?
        .items
        .iter()
        .filter_map(ResourceExt::namespace)
        .collect();
    if let Some(ns) = bound.first() {
        return Err(UserError::new(
            format!(
                "cluster set {name} is still bound to namespace(s) {}",
                bound.join(", ")
            ),
            format!("unbind it first: `clusteradm clusterset unbind {name} --namespace {ns}`"),
        )
        .into());
    }
    if !ctx.global.dry_run {
        api.delete(name, &DeleteParams::default()).await?;
        let uid = set.uid().unwrap_or_default();
        tokio::time::timeout(
            ctx.global.timeout,
            await_condition(api, name, conditions::is_deleted(&uid)),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "cluster set {name} was not gone within {:?}",
                ctx.global.timeout
            )
        })??;
    }
    println(format!("Clusterset {name} is deleted"))?;
    Ok(ExitCode::SUCCESS)
}

async fn set(args: SetArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let name = args.name.as_str();
    let namespaces = clusters::names(&args.namespaces);
    if let Some(bad) = namespaces.iter().find(|n| !is_dns_label(n)) {
        return Err(UserError::new(
            format!("--namespaces: {bad:?} is not a namespace name"),
            "a namespace name is a DNS label: lowercase letters, digits and '-', at most 63",
        )
        .into());
    }
    let kube = ctx.hub(&[ManagedClusterSet::crd_name()]).await?;
    let set = existing_set(&kube.client, name).await?;
    if !args.clusters.is_empty() {
        move_clusters(&args, &kube.client, ctx).await?;
    }
    if !namespaces.is_empty() {
        add_managed_namespaces(&kube.client, set, &namespaces, ctx).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// How often a write of `spec.managedNamespaces` is redone after another writer (the hub's
/// cluster-set controller updates status right after a set is made) changed the set first.
const CONFLICT_ATTEMPTS: usize = 5;

/// Adds `namespaces` to the set's `spec.managedNamespaces` (those it has stay), in upstream's lines.
async fn add_managed_namespaces(
    client: &Client,
    mut set: ManagedClusterSet,
    namespaces: &[String],
    ctx: &Ctx,
) -> anyhow::Result<()> {
    let name = set.name_any();
    let api = Api::<ManagedClusterSet>::all(client.clone());
    println(format!(
        "Processing managed namespaces: [{}]",
        namespaces.join(" ")
    ))?;
    let mut attempt = 1;
    let added = loop {
        let added = merge_managed_namespaces(&mut set, namespaces);
        if added.is_empty() || ctx.global.dry_run {
            break added;
        }
        // Replaced on the version read: a concurrent change is a conflict, not lost; it is read
        // again and merged again.
        match api.replace(&name, &PostParams::default(), &set).await {
            Ok(_) => break added,
            Err(kube::Error::Api(s)) if s.is_conflict() && attempt < CONFLICT_ATTEMPTS => {
                attempt += 1;
                set = existing_set(client, &name).await?;
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("adding managed namespaces to cluster set {name}"));
            }
        }
    };
    for ns in namespaces.iter().filter(|ns| !added.contains(ns)) {
        println(format!(
            "Managed namespace {ns} already exists in Clusterset {name}"
        ))?;
    }
    if added.is_empty() {
        println(format!(
            "\nAll specified namespaces already exist in Clusterset {name}"
        ))?;
        return Ok(());
    }
    println(format!("\nSuccessfully updated Clusterset {name}"))?;
    println(format!(
        "Added {} managed namespace(s): {}",
        added.len(),
        added.join(", ")
    ))?;
    println(format!(
        "Total managed namespaces in clusterset: {}",
        set.spec.managed_namespaces.len()
    ))?;
    Ok(())
}

/// Appends to the set each of `namespaces` it does not manage yet; returns those appended.
fn merge_managed_namespaces(set: &mut ManagedClusterSet, namespaces: &[String]) -> Vec<String> {
    let mut added = Vec::new();
    for ns in namespaces {
        if set.spec.managed_namespaces.iter().any(|m| &m.name == ns) {
            continue;
        }
        set.spec
            .managed_namespaces
            .push(ManagedNamespace { name: ns.clone() });
        added.push(ns.clone());
    }
    added
}

/// Moves `--clusters` into the set (its label on each).
async fn move_clusters(args: &SetArgs, client: &Client, ctx: &Ctx) -> anyhow::Result<()> {
    let name = args.name.as_str();
    let api: Api<ManagedCluster> = Api::all(client.clone());
    let names = clusters::names(&args.clusters);
    let found = clusters::existing(client, &names, "no cluster was moved").await?;
    for mc in found {
        let cluster = mc.name_any();
        let old = mc
            .labels()
            .get(CLUSTER_SET_LABEL)
            .cloned()
            .unwrap_or_default();
        if old == name {
            println(format!("Cluster {cluster} is already in Clusterset {name}"))?;
            continue;
        }
        if !ctx.global.dry_run {
            let patch = json!({"metadata": {"labels": {CLUSTER_SET_LABEL: name}}});
            api.patch(&cluster, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .with_context(|| format!("moving cluster {cluster} into cluster set {name}"))?;
        }
        if old.is_empty() {
            println(format!("Cluster {cluster} is set to Clusterset {name}"))?;
        } else {
            println(format!(
                "Cluster {cluster} is set, from ClusterSet {old} to Clusterset {name}"
            ))?;
        }
    }
    Ok(())
}

async fn bind(args: BindArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let (name, ns) = (args.name.as_str(), args.namespace.as_str());
    let kube = ctx.hub(&[ManagedClusterSetBinding::crd_name()]).await?;
    existing_set(&kube.client, name).await?;
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(kube.client.clone());
    if namespaces.get_opt(ns).await?.is_none() {
        return Err(UserError::new(
            format!("namespace {ns} not found on the hub"),
            format!("create it first: `kubectl create namespace {ns}`"),
        )
        .into());
    }
    let api: Api<ManagedClusterSetBinding> = Api::namespaced(kube.client.clone(), ns);
    if api.get_opt(name).await?.is_some() {
        println(format!(
            "Clusterset {name} is already bound to Namespace {ns}"
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !ctx.global.dry_run {
        let binding = ManagedClusterSetBinding::new(
            name,
            ManagedClusterSetBindingSpec {
                cluster_set: name.into(),
            },
        );
        api.create(&PostParams::default(), &binding)
            .await
            .with_context(|| format!("binding cluster set {name} to namespace {ns}"))?;
    }
    println(format!("Clusterset {name} is bound to Namespace {ns}"))?;
    Ok(ExitCode::SUCCESS)
}

async fn unbind(args: BindArgs, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let (name, ns) = (args.name.as_str(), args.namespace.as_str());
    let kube = ctx.hub(&[ManagedClusterSetBinding::crd_name()]).await?;
    let api: Api<ManagedClusterSetBinding> = Api::namespaced(kube.client.clone(), ns);
    if api.get_opt(name).await?.is_none() {
        println(format!("Clusterset {name} is not bound to namespace {ns}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !ctx.global.dry_run {
        api.delete(name, &DeleteParams::default()).await?;
    }
    println(format!("Clusterset {name} is unbind from namespace {ns}"))?;
    Ok(ExitCode::SUCCESS)
}
