//! `clusteradm create work NAME -f FILE|DIR|- (--clusters a,b | --placement ns/name)`: wrap
//! manifests into a ManifestWork in each target cluster's namespace on the hub.
//!
//! Order: read and validate every manifest (no request yet) → size check → resolve the target
//! clusters → observe them → plan ([`publish::plan`], refusing unknown clusters and existing
//! works without `--overwrite` before any write) → `--dry-run` prints the works, else execute.
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
}

/// Runs `create work`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    publish::validate_name(&args.name)
        .map_err(|e| UserError::new(e, "a work name is a DNS subdomain, e.g. my-first-work"))?;
    let manifests = read_manifests(&args)?;
    let kube = ctx.kube().await?;
    kube.server_version().await?;
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

/// Reads, validates and size-checks every manifest; nothing has been sent yet.
fn read_manifests(args: &Args) -> anyhow::Result<Vec<serde_json::Value>> {
    let user = |e: manifests::Error| {
        let hint = match &e {
            manifests::Error::TooLarge(_) | manifests::Error::InputTooLarge { .. } => {
                "split the manifests into several works"
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
    for path in manifests::files(&args.files, args.recursive).map_err(user)? {
        let (name, text) = manifests::read(&path).map_err(user)?;
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
    let Some((namespace, name)) = placement
        .split_once('/')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
    else {
        return Err(UserError::new(
            format!("--placement {placement:?} is not NAMESPACE/NAME"),
            "e.g. --placement default/my-placement",
        )
        .into());
    };
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
