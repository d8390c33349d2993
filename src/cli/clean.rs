//! `clusteradm clean`: remove OCM from the hub — the ClusterManager (and with it the hub
//! components), the operator, the bootstrap credentials and the ClusterManager CRD.
//!
//! The ClusterManager's finalizer is normally removed by the operator after its cleanup. When no
//! operator is running (no pod can start, or `init --in-process` was stopped), `clean` runs the
//! same cleanup itself — the loop is a library — rather than waiting for a finalizer nobody
//! will remove.
use std::process::ExitCode;

use anyhow::Context as _;

use super::Ctx;
use crate::api::names::OPERATOR_NAMESPACE;
use crate::api::operator::CLUSTER_MANAGER_NAME;
use crate::apply::{Resolver, delete};
use crate::error::UserError;
use crate::install::hub::{self, Credential, InitOptions};
use crate::operator::cluster_manager as operator;

/// Flags of `clean`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Do not ask for confirmation
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Also remove the cluster-manager operator (as upstream; `--purge-operator=false` keeps it)
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub purge_operator: bool,
    /// The ClusterManager to remove (a hub has one, `cluster-manager`, as upstream's operator
    /// requires)
    #[arg(long, default_value = CLUSTER_MANAGER_NAME, value_name = "NAME")]
    pub name: String,
    /// Accepted for upstream's scripts; writes nothing, as upstream's `clean` does not
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<std::path::PathBuf>,
    /// A hosted hub (`init --mode hosted`, the kubeconfig naming the management cluster): the
    /// hub cluster's kubeconfig, from which the bootstrap credentials `init` made there are
    /// removed too (the operator removes the hub components from both clusters)
    #[arg(long, value_name = "FILE")]
    pub hub_kubeconfig: Option<std::path::PathBuf>,
}

/// Runs `clean`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    if args.name != CLUSTER_MANAGER_NAME {
        return Err(UserError::new(
            format!(
                "no ClusterManager {:?}: a hub has one, named {CLUSTER_MANAGER_NAME}",
                args.name
            ),
            "drop --name, or pass --name cluster-manager",
        )
        .into());
    }
    super::ignored_output_file(ctx, args.output_file.as_deref());
    let kube = ctx.kube().await?;
    if ctx.global.dry_run {
        ctx.printer.info("would delete the ClusterManager, the hub components, the operator and the bootstrap credentials");
        return Ok(ExitCode::SUCCESS);
    }
    let question = format!(
        "Remove Open Cluster Management from the hub {} (context {})?",
        kube.url(),
        kube.loaded.context
    );
    if !crate::ui::prompt::confirm(&ctx.printer, &question, args.yes)? {
        return Ok(crate::ui::prompt::declined(&ctx.printer));
    }
    kube.server_version().await?;
    let timeout = ctx.global.timeout;
    let hub_kube = match &args.hub_kubeconfig {
        Some(path) => Some(ctx.kube_of_file(path, "--hub-kubeconfig").await?),
        None => None,
    };
    if hub_kube.is_none() && is_hosted(&kube.client).await? {
        return Err(UserError::new(
            "this ClusterManager is hosted: its hub cluster keeps the bootstrap credential and the roles the hub made, which only --hub-kubeconfig reaches (nothing was removed)",
            "pass --hub-kubeconfig with the hub cluster's kubeconfig (the one `init --mode hosted` took)",
        )
        .into());
    }
    let hub_client = hub_kube.as_ref().map_or(&kube.client, |k| &k.client);
    let spinner = ctx
        .printer
        .spinner("removing the ClusterManager and the hub components");
    let result = remove_cluster_manager(&kube.client, hub_client, timeout).await;
    spinner.finish_and_clear();
    result?;

    // Everything init applies, for either credential kind, minus what --purge-operator keeps.
    let mut here = Vec::new();
    let mut on_hub = Vec::new();
    for credential in [
        Credential::ServiceAccount,
        Credential::BootstrapToken {
            secret: String::new(),
        },
    ] {
        let mut opts = InitOptions {
            registry: crate::api::names::DEFAULT_REGISTRY.into(),
            tag: "unused".into(),
            credential,
            ..InitOptions::default()
        };
        here.extend(hub::plan(&opts)?);
        on_hub.extend(hub::plan_hosted(&opts)?.0);
        if hub_kube.is_some() {
            // A hosted hub's management side: the hub's kubeconfig Secret, the NodePorts of
            // upstream's webhook servers.
            opts.hosted = Some(hub::Hosted::default());
            here.extend(hub::plan_hosted(&opts)?.1);
        }
    }
    here.retain(|o| {
        let kind = o
            .types
            .as_ref()
            .map(|t| t.kind.as_str())
            .unwrap_or_default();
        kind != "ClusterManager" && (args.purge_operator || !is_operator_object(o))
    });
    let mut removed = delete_objects(&kube, here, timeout).await?;
    if let Some(hub_kube) = &hub_kube {
        removed += delete_objects(hub_kube, on_hub, timeout).await?;
    }
    if removed == 0 {
        ctx.printer
            .done("nothing to clean: OCM is not installed on this hub");
    } else {
        ctx.printer
            .done(format!("removed {removed} objects; the hub is clean"));
    }
    Ok(ExitCode::SUCCESS)
}

/// Deletes `objects` but kubeadm's (cluster-info and its read access, which a kubeadm cluster has
/// without OCM) from `kube`'s cluster; how many were there.
async fn delete_objects(
    kube: &super::Kube,
    mut objects: Vec<kube::api::DynamicObject>,
    timeout: std::time::Duration,
) -> anyhow::Result<usize> {
    objects.retain(|o| o.metadata.namespace.as_deref() != Some("kube-public"));
    objects.dedup_by(|a, b| crate::apply::ObjectRef::of(a) == crate::apply::ObjectRef::of(b));
    let resolver = Resolver::new(kube.client.clone());
    let deleted = delete::delete_all(&resolver, &objects, timeout)
        .await
        .map_err(|failures| {
            anyhow::anyhow!(
                "some objects could not be removed (re-run `clusteradm clean -y` to retry):\n{}",
                crate::apply::list_failures(&failures)
            )
        })?;
    Ok(deleted
        .iter()
        .filter(|(_, d)| *d == delete::Deleted::Removed)
        .count())
}

/// The operator's own objects (kept with `--purge-operator=false`).
fn is_operator_object(o: &kube::api::DynamicObject) -> bool {
    let kind = o
        .types
        .as_ref()
        .map(|t| t.kind.as_str())
        .unwrap_or_default();
    let name = o.metadata.name.as_deref().unwrap_or_default();
    matches!(
        kind,
        "Deployment" | "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding"
    ) && name == "cluster-manager"
        || kind == "CustomResourceDefinition"
        || kind == "Namespace"
        || name == "open-cluster-management-image-pull-credentials"
}

/// Removes the ClusterManager from `client`'s cluster and what the hub made on `hub` (the same
/// cluster, or a hosted hub's).
async fn remove_cluster_manager(
    client: &kube::Client,
    hub: &kube::Client,
    timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let running = operator::is_running(client).await.with_context(|| {
        format!(
            "cannot tell whether a ClusterManager operator runs (reading Lease {OPERATOR_NAMESPACE}/{})",
            operator::LEASE_NAME
        )
    })?;
    if !running {
        // No hub serves the admission webhooks (a crashed in-process hub's configurations would
        // refuse the writes below), and nobody will act on the finalizers of ManagedClusters and
        // ManifestWorks either.
        crate::operator::cluster_manager::cleanup::remove_admission(hub, timeout)
            .await
            .context("removing the admission webhook configurations")?;
        crate::hub::registration::release_all(hub, timeout).await?;
    }
    operator::uninstall(client, running, timeout)
        .await
        .context("removing the ClusterManager and the hub components")?;
    crate::hub::registration::remove_shared_roles(hub).await
}

/// Whether the ClusterManager on `client`'s cluster is hosted (none, or no CRD: not).
async fn is_hosted(client: &kube::Client) -> anyhow::Result<bool> {
    let api: kube::Api<crate::api::operator::ClusterManager> = kube::Api::all(client.clone());
    let cm = match api.get_opt(CLUSTER_MANAGER_NAME).await {
        Ok(cm) => cm,
        Err(kube::Error::Api(s)) if s.code == 404 => None,
        Err(e) => return Err(e).context("reading the ClusterManager"),
    };
    Ok(cm
        .and_then(|cm| cm.spec.deploy_option)
        .is_some_and(|d| d.mode == crate::api::operator::HubInstallMode::Hosted))
}
