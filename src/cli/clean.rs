//! `clusteradm clean`: remove OCM from the hub — the ClusterManager (and with it the hub
//! components), the operator, the bootstrap credentials and the ClusterManager CRD.
//!
//! The ClusterManager's finalizer is normally removed by the operator after its cleanup. When no
//! operator is running (no pod can start, or `init --in-process` was stopped), `clean` runs the
//! same cleanup itself — the loop is a library — rather than waiting for a finalizer nobody
//! will remove.
use std::process::ExitCode;

use anyhow::Context as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};

use super::Ctx;
use crate::api::operator::{CLUSTER_MANAGER_NAME, ClusterManager};
use crate::apply::{Resolver, delete};
use crate::hub::{self, Credential, InitOptions};
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
}

/// Runs `clean`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
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
        ctx.printer.info("nothing done");
        return Ok(ExitCode::from(1));
    }
    kube.server_version().await?;
    let timeout = ctx.global.timeout;
    let spinner = ctx
        .printer
        .spinner("removing the ClusterManager and the hub components");
    let result = remove_cluster_manager(&kube.client, timeout).await;
    spinner.finish_and_clear();
    result?;

    // Everything init applies, for either credential kind, minus what --purge-operator keeps.
    let mut objects = Vec::new();
    for credential in [
        Credential::ServiceAccount,
        Credential::BootstrapToken {
            secret: String::new(),
        },
    ] {
        let opts = InitOptions {
            registry: hub::DEFAULT_REGISTRY.into(),
            tag: "unused".into(),
            credential,
            deploy_operator: true,
            image_pull_credential: None,
            feature_gates: vec![],
        };
        objects.extend(hub::plan(&opts)?);
    }
    objects.retain(|o| {
        let kind = o
            .types
            .as_ref()
            .map(|t| t.kind.as_str())
            .unwrap_or_default();
        // cluster-info and its read access are kubeadm's convention (a kubeadm cluster has them
        // without OCM): they stay.
        let kubeadm = o.metadata.namespace.as_deref() == Some("kube-public");
        kind != "ClusterManager" && !kubeadm && (args.purge_operator || !is_operator_object(o))
    });
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
    let removed = deleted
        .iter()
        .filter(|(_, d)| *d == delete::Deleted::Removed)
        .count();
    if removed == 0 {
        ctx.printer
            .done("nothing to clean: OCM is not installed on this hub");
    } else {
        ctx.printer
            .done(format!("removed {removed} objects; the hub is clean"));
    }
    Ok(ExitCode::SUCCESS)
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

async fn remove_cluster_manager(
    client: &kube::Client,
    timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let api: Api<ClusterManager> = match crate::apply::Resolver::new(client.clone())
        .resolve(&kube::api::GroupVersionKind::gvk(
            "operator.open-cluster-management.io",
            "v1",
            "ClusterManager",
        ))
        .await
    {
        Ok(_) => Api::all(client.clone()),
        Err(_) => return Ok(()), // no CRD: no ClusterManager
    };
    let Some(cm) = api
        .get_opt(CLUSTER_MANAGER_NAME)
        .await
        .context("reading the ClusterManager")?
    else {
        return Ok(());
    };
    let uid = cm.metadata.uid.clone().unwrap_or_default();
    if operator::is_running(client).await? {
        api.delete(CLUSTER_MANAGER_NAME, &DeleteParams::default())
            .await
            .context("deleting the ClusterManager")?;
    } else {
        // Nobody will act on the finalizers: do the hub controllers' and the operator's cleanup here.
        release_registrations(client).await?;
        operator::cleanup(client, timeout)
            .await
            .context("cleaning up the hub components")?;
        let _ = api
            .delete(CLUSTER_MANAGER_NAME, &DeleteParams::default())
            .await;
        let strip = serde_json::json!({"metadata": {"finalizers": null}});
        match api
            .patch(
                CLUSTER_MANAGER_NAME,
                &PatchParams::default(),
                &Patch::Merge(&strip),
            )
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e).context("removing the ClusterManager's finalizer"),
        }
    }
    tokio::time::timeout(timeout, await_condition(api, CLUSTER_MANAGER_NAME, conditions::is_deleted(&uid)))
        .await
        .map_err(|_| anyhow::anyhow!("the ClusterManager was not removed within {timeout:?}: is the operator stuck? see its logs, then re-run `clusteradm clean -y`"))?
        .context("watching the ClusterManager's deletion")?;
    Ok(())
}

/// With no hub controller running, ManagedClusters and ManifestWorks keep finalizers nobody
/// removes, and their CRDs could never go. Does what the registration controller does for a
/// deleted cluster (namespace and RBAC removed, finalizer dropped), and releases the works:
/// what they applied stays on the managed clusters, whose agents are no longer answerable here.
async fn release_registrations(client: &kube::Client) -> anyhow::Result<()> {
    use crate::api::cluster::ManagedCluster;
    use crate::api::work::ManifestWork;
    use crate::registration::hub::{index::Action, writer::Writer};
    let strip = serde_json::json!({"metadata": {"finalizers": null}});
    let works: Api<ManifestWork> = Api::all(client.clone());
    if let Ok(list) = works.list(&kube::api::ListParams::default()).await {
        for work in list.items.iter().filter(|w| {
            w.metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
        }) {
            let ns = work.metadata.namespace.clone().unwrap_or_default();
            let name = work.metadata.name.clone().unwrap_or_default();
            Api::<ManifestWork>::namespaced(client.clone(), &ns)
                .patch(&name, &PatchParams::default(), &Patch::Merge(&strip))
                .await
                .with_context(|| format!("releasing ManifestWork {ns}/{name}"))?;
        }
    }
    let clusters: Api<ManagedCluster> = Api::all(client.clone());
    let Ok(list) = clusters.list(&kube::api::ListParams::default()).await else {
        return Ok(());
    };
    let writer = Writer::new(client.clone());
    for mc in list.items {
        let name = mc.metadata.name.clone().unwrap_or_default();
        let _ = clusters.delete(&name, &DeleteParams::default()).await;
        writer
            .apply(&Action::Cleanup(name.clone()))
            .await
            .or_else(|e| match e {
                kube::Error::Api(s) if s.code == 404 => Ok(()),
                e => Err(e),
            })
            .with_context(|| format!("removing managed cluster {name}"))?;
    }
    Ok(())
}
