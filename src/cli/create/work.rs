//! `clusteradm create work NAME -f FILE|DIR|- (--clusters a,b | --placement ns/name)`: wrap
//! manifests into a ManifestWork in each target cluster's namespace on the hub; with
//! `--replicaset`, into one ManifestWorkReplicaSet that the hub keeps on the placement's clusters.
//!
//! Order: read and validate every manifest (no request yet) → size check → resolve the target
//! clusters → observe them → plan ([`publish::plan`], refusing unknown clusters and existing
//! works without `--overwrite` before any write) → `--dry-run` prints the works, else execute.
use crate::api::work::ManifestWork;
use kube::CustomResourceExt as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::cli::Ctx;
use crate::error::UserError;
use crate::work::manifests;
use crate::work::publish::{self, Change};

/// Flags of `create work`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["clusters", "placement"])))]
pub struct Args {
    /// Name of the ManifestWork
    pub name: String,
    /// A manifest file, a directory of them (*.yaml, *.yml, *.json), or - for stdin; repeatable
    #[arg(short = 'f', long = "filename", visible_alias = "file", required = true, value_name = "PATH", value_hint = clap::ValueHint::AnyPath)]
    pub files: Vec<PathBuf>,
    /// Also read the subdirectories of directories given with -f
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// The clusters to create the work in, comma-separated
    #[arg(
        short = 'c',
        long,
        visible_alias = "cluster",
        value_delimiter = ',',
        value_name = "NAMES"
    )]
    pub clusters: Vec<String>,
    /// Create the work in the clusters a placement has chosen
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub placement: Option<String>,
    /// Update the work's manifests where it already exists
    #[arg(long)]
    pub overwrite: bool,
    /// Create a ManifestWorkReplicaSet in the placement's namespace instead: the hub then keeps
    /// one work on every cluster the placement decides, now and as decisions change
    #[arg(short = 'r', long, requires = "placement")]
    pub replicaset: bool,
}

/// Runs `create work`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    publish::validate_name(&args.name)
        .map_err(|e| UserError::new(e, "a work name is a DNS subdomain, e.g. my-first-work"))?;
    let manifests = read_manifests(&args)?;
    let kube = ctx.hub(&[ManifestWork::crd_name()]).await?;
    if args.replicaset {
        return replicaset(&args, manifests, &kube.client, ctx).await;
    }
    let clusters = target_clusters(&args, &kube.client).await?;

    let observed = publish::observe(&kube.client, &args.name, &clusters)
        .await
        .map_err(|e| {
            if e.missing_kind {
                anyhow::Error::new(UserError::new(
                    format!("the hub {} does not serve ManifestWorks (work.open-cluster-management.io/v1)", kube.url()),
                    "is this an OCM hub? run `clusteradm init` on it first",
                ))
            } else {
                anyhow::Error::new(e)
            }
        })?;
    let steps = publish::plan(&args.name, &manifests, &observed, args.overwrite).map_err(|r| {
        let hint = match r {
            publish::Refusal::UnknownClusters(_) => {
                "a cluster's namespace exists once the cluster is accepted (`clusteradm accept --clusters NAME`); check the names with `clusteradm get clusters`"
            }
            publish::Refusal::Exists { .. } => "pass --overwrite to replace its manifests",
        };
        UserError::new(r.to_string(), hint)
    })?;

    if ctx.global.dry_run {
        for step in &steps {
            crate::ui::stdout::print(format_args!("---\n{}", crate::yaml::to_string(&step.work)?))?;
        }
        ctx.printer.info("dry run: nothing was sent to the hub");
        return Ok(ExitCode::SUCCESS);
    }
    publish::execute(&kube.client, &steps)
        .await
        .with_context(|| format!("writing work {} on the hub", args.name))?;
    for step in &steps {
        let verb = match step.change {
            Change::Create => "created",
            Change::Update => "updated",
            Change::Unchanged => "unchanged",
        };
        ctx.printer.done(format!(
            "work {} {verb} in cluster {}",
            args.name, step.cluster
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--replicaset`: creates (or with `--overwrite` updates) the ManifestWorkReplicaSet `NAME` in
/// the placement's namespace, naming that placement.
async fn replicaset(
    args: &Args,
    manifests: Vec<serde_json::Value>,
    client: &kube::Client,
    ctx: &Ctx,
) -> anyhow::Result<ExitCode> {
    use kube::api::{Api, Patch, PatchParams, PostParams};

    use crate::api::work::{
        LocalPlacementReference, ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
    };

    let (namespace, placement) = placement_ref(args.placement.as_deref().unwrap_or_default())?;
    if publish::placement_clusters(client, namespace, placement)
        .await?
        .is_none()
    {
        return Err(UserError::new(
            format!("placement {namespace}/{placement} not found on the hub"),
            "create it first: `clusteradm create placement NAME --namespace NS ...`",
        )
        .into());
    }
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), namespace);
    let existing = api.get_opt(&args.name).await.map_err(|e| match &e {
        kube::Error::Api(s) if s.code == 404 => anyhow::Error::new(UserError::new(
            "the hub does not serve ManifestWorkReplicaSets (work.open-cluster-management.io/v1alpha1)",
            "run `clusteradm init` with this version on the hub to install the CRD",
        )),
        _ => anyhow::Error::new(e),
    })?;
    let mut set = existing.clone().unwrap_or_else(|| {
        ManifestWorkReplicaSet::new(&args.name, ManifestWorkReplicaSetSpec::default())
    });
    set.metadata.namespace = Some(namespace.to_owned());
    set.spec.manifest_work_template.workload.manifests = manifests;
    set.spec.placement_refs = vec![LocalPlacementReference {
        name: placement.to_owned(),
        rollout_strategy: existing
            .as_ref()
            .and_then(|e| e.spec.placement_refs.iter().find(|r| r.name == placement))
            .and_then(|r| r.rollout_strategy.clone()),
    }];
    let what = format!("manifestworkreplicaset {namespace}/{}", args.name);
    if let Some(old) = &existing {
        if !args.overwrite {
            return Err(UserError::new(
                format!("{what} already exists"),
                "pass --overwrite to replace its manifests and placement",
            )
            .into());
        }
        if old.spec == set.spec {
            ctx.printer.done(format!("{what} unchanged"));
            return Ok(ExitCode::SUCCESS);
        }
    }
    if ctx.global.dry_run {
        crate::ui::stdout::print(format_args!("{}", crate::yaml::to_string(&set)?))?;
        ctx.printer.info("dry run: nothing was sent to the hub");
        return Ok(ExitCode::SUCCESS);
    }
    if existing.is_some() {
        // Only the spec fields this command owns, with no resourceVersion: the hub's status
        // writes in between are no conflict.
        let spec = serde_json::json!({ "spec": {
            "manifestWorkTemplate": { "workload": { "manifests": set.spec.manifest_work_template.workload.manifests } },
            "placementRefs": set.spec.placement_refs,
        } });
        api.patch(&args.name, &PatchParams::default(), &Patch::Merge(&spec))
            .await
            .with_context(|| format!("updating {what}"))?;
        ctx.printer.done(format!("{what} updated"));
    } else {
        api.create(&PostParams::default(), &set)
            .await
            .with_context(|| format!("creating {what}"))?;
        ctx.printer.done(format!(
            "{what} created: the hub keeps a work on each cluster {placement} decides"
        ));
    }
    if !replica_sets_on(client).await {
        ctx.printer.warn(
            "the ClusterManager's ManifestWorkReplicaSet gate is off (upstream's default): no work is made until it is on \
             (`clusteradm init --feature-gates ManifestWorkReplicaSet=true`, or its workConfiguration.featureGates)",
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether the hub's ClusterManager switches `ManifestWorkReplicaSet` on (no ClusterManager
/// readable: assumed on, nothing to say).
async fn replica_sets_on(client: &kube::Client) -> bool {
    use crate::api::operator::{CLUSTER_MANAGER_NAME, ClusterManager};
    match kube::Api::<ClusterManager>::all(client.clone())
        .get_opt(CLUSTER_MANAGER_NAME)
        .await
    {
        Ok(Some(cm)) => crate::hub::settings::Settings::of(Some(&cm)).manifest_work_replica_set,
        _ => true,
    }
}

/// `NAMESPACE/NAME` of `--placement`.
fn placement_ref(placement: &str) -> anyhow::Result<(&str, &str)> {
    placement
        .split_once('/')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        .ok_or_else(|| {
            UserError::new(
                format!("--placement {placement:?} is not NAMESPACE/NAME"),
                "e.g. --placement default/my-placement",
            )
            .into()
        })
}

/// Reads, validates and size-checks every manifest; nothing has been sent yet.
fn read_manifests(args: &Args) -> anyhow::Result<Vec<serde_json::Value>> {
    let user = |e: manifests::Error| {
        let hint = match &e {
            manifests::Error::TooLarge(_)
            | manifests::Error::InputTooLarge { .. }
            | manifests::Error::TreeTooLarge { .. } => "split the manifests into several works",
            manifests::Error::TooManyEntries { .. } => {
                "pass the directories you mean without -R, or fewer of them"
            }
            manifests::Error::Read { .. } | manifests::Error::EmptyDir { .. } => {
                "check the -f paths"
            }
            manifests::Error::Loop { .. } => {
                "remove the link, or pass the directories it joins without -R"
            }
            manifests::Error::Yaml { .. }
            | manifests::Error::Invalid { .. }
            | manifests::Error::Empty(_) => {
                "every manifest needs apiVersion, kind and metadata.name; fix the document named above"
            }
        };
        anyhow::Error::new(UserError::new(crate::runtime::report::chain(&e), hint))
    };
    let mut all = Vec::new();
    for (name, text) in manifests::read_all(&args.files, args.recursive).map_err(user)? {
        all.extend(manifests::parse(&name, &text).map_err(user)?);
    }
    if all.is_empty() {
        let sources: Vec<String> = args.files.iter().map(|p| p.display().to_string()).collect();
        return Err(user(manifests::Error::Empty(sources.join(", "))));
    }
    manifests::check_size(&all).map_err(user)?;
    Ok(all)
}

/// `--clusters` as given (deduplicated), or the clusters of `--placement`.
async fn target_clusters(args: &Args, client: &kube::Client) -> anyhow::Result<Vec<String>> {
    let Some(placement) = &args.placement else {
        let mut clusters: Vec<String> = Vec::new();
        for c in args
            .clusters
            .iter()
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
        {
            if !clusters.iter().any(|x| x == c) {
                clusters.push(c.to_owned());
            }
        }
        if clusters.is_empty() {
            return Err(UserError::new(
                "--clusters names no cluster",
                "e.g. --clusters cluster1,cluster2",
            )
            .into());
        }
        return Ok(clusters);
    };
    let (namespace, name) = placement_ref(placement)?;
    match publish::placement_clusters(client, namespace, name).await? {
        None => Err(UserError::new(
            format!("placement {namespace}/{name} not found on the hub"),
            "list placements with `kubectl get placements -A`",
        )
        .into()),
        Some(clusters) if clusters.is_empty() => Err(UserError::new(
            format!("placement {namespace}/{name} has not chosen any cluster"),
            format!("see why in its status: `kubectl get placement -n {namespace} {name} -o yaml`"),
        )
        .into()),
        Some(clusters) => Ok(clusters),
    }
}
