//! The hub's add-on manager for template add-ons, as upstream's addon-manager runs them: a
//! `Controller` over ManagedClusterAddOns, woken by their ClusterManagementAddOns, AddOnTemplates
//! and deploy ManifestWorks. For each add-on on each cluster it owns the ManagedClusterAddOn by
//! its ClusterManagementAddOn (so deleting the add-on deletes it everywhere), and for a template
//! add-on it keeps the deploy work, the hub RoleBindings and the status [`deploy::decide`]s.
//!
//! Cleanup is the API server's garbage collector's (kube-controller-manager), as upstream's:
//! ClusterManagementAddOn → ManagedClusterAddOn → deploy work and cluster-namespace RoleBindings
//! by owner references. The work agent then removes the agent's objects from the cluster.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::deploy::{self, Inputs};
use super::template;
use crate::api::addon::{
    ADDON_NAME_LABEL, AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn,
    ManagedClusterAddOn,
};
use crate::api::cluster::ManagedCluster;
use crate::api::work::ManifestWork;
use crate::hub::watch;
use crate::runtime::{Shutdown, report, shutdown};

const FIELD_MANAGER: &str = "clusteradm-addon-manager";
const RETRY: Duration = Duration::from_secs(5);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the hub.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// A template that renders to something that is not an object.
    #[error(transparent)]
    Render(#[from] template::RenderError),
}

struct Context {
    client: Client,
    clusters: Store<ManagedCluster>,
    cmas: Store<ClusterManagementAddOn>,
    templates: Store<AddOnTemplate>,
    configs: Store<AddOnDeploymentConfig>,
    works: Store<ManifestWork>,
    /// RoleBindings as this process last applied them: applied again only when they change.
    applied: Mutex<HashMap<(String, String), RoleBinding>>,
    /// Deploy works as this process last applied them, until the store shows them: a reconcile
    /// woken by its own status write does not apply the same work again.
    works_applied: Mutex<HashMap<(String, String), ManifestWork>>,
}

/// The ManagedClusterAddOns of add-on `name`.
fn of_addon(
    addons: &Store<ManagedClusterAddOn>,
    name: &str,
) -> Vec<ObjectRef<ManagedClusterAddOn>> {
    addons
        .state()
        .iter()
        .filter(|a| a.name_any() == name)
        .map(|a| ObjectRef::from_obj(&**a))
        .collect()
}

/// The ManagedClusterAddOns that use the AddOnDeploymentConfig `namespace/name`.
fn using_config(
    addons: &Store<ManagedClusterAddOn>,
    cmas: &Store<ClusterManagementAddOn>,
    namespace: &str,
    name: &str,
) -> Vec<ObjectRef<ManagedClusterAddOn>> {
    let wanted = (namespace.to_string(), name.to_string());
    addons
        .state()
        .iter()
        .filter(|a| {
            cmas.get(&ObjectRef::new(&a.name_any()))
                .and_then(|cma| super::config::reference(a, &cma))
                .is_some_and(|r| r == wanted)
        })
        .map(|a| ObjectRef::from_obj(&**a))
        .collect()
}

/// Runs until `shutdown` is cancelled.
pub async fn run_with(
    hub: Client,
    clusters: Store<ManagedCluster>,
    addons: Store<ManagedClusterAddOn>,
    addon_events: impl Stream<Item = Arc<ManagedClusterAddOn>> + Send + 'static,
    (cmas, cma_events): (
        Store<ClusterManagementAddOn>,
        impl Stream<Item = Arc<ClusterManagementAddOn>> + Send + 'static,
    ),
    (templates, template_events): (
        Store<AddOnTemplate>,
        impl Stream<Item = Arc<AddOnTemplate>> + Send + 'static,
    ),
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let (configs, config_events, config_watch) =
        watch::shared::<AddOnDeploymentConfig>(&hub, watcher::Config::default());
    let (works, work_events, work_watch) =
        watch::shared::<ManifestWork>(&hub, watcher::Config::default().labels(ADDON_NAME_LABEL));
    let ctx = Arc::new(Context {
        client: hub,
        clusters: clusters.clone(),
        cmas: cmas.clone(),
        templates: templates.clone(),
        configs: configs.clone(),
        works: works.clone(),
        applied: Mutex::default(),
        works_applied: Mutex::default(),
    });
    let (by_cma, by_template) = (addons.clone(), addons.clone());
    let (by_config, cmas_by_config) = (addons.clone(), cmas.clone());
    let run = Controller::for_shared_stream(addon_events, addons.clone())
        .watches_shared_stream(cma_events, move |cma| of_addon(&by_cma, &cma.name_any()))
        .watches_shared_stream(template_events, move |t| {
            of_addon(&by_template, &t.spec.addon_name)
        })
        .watches_shared_stream(config_events, move |c| {
            using_config(
                &by_config,
                &cmas_by_config,
                &c.namespace().unwrap_or_default(),
                &c.name_any(),
            )
        })
        .watches_shared_stream(work_events, |w| {
            let addon = w.labels().get(ADDON_NAME_LABEL)?;
            Some(ObjectRef::new(addon).within(&w.namespace()?))
        })
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            report::controller_result("add-on manager", &result);
        });
    let run = async {
        let _ = tokio::join!(
            clusters.wait_until_ready(),
            addons.wait_until_ready(),
            cmas.wait_until_ready(),
            templates.wait_until_ready(),
            configs.wait_until_ready(),
            works.wait_until_ready()
        );
        tracing::info!("add-on manager started");
        run.await;
    };
    let watches = async {
        tokio::join!(config_watch, work_watch);
    };
    tokio::select! {
        () = run => {}
        () = watches => {}
        () = shutdown.cancelled() => {}
    }
    Ok(())
}

#[allow(clippy::needless_pass_by_value)] // the signature kube-runtime calls
fn error_policy(mca: Arc<ManagedClusterAddOn>, e: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(
        cluster = %mca.namespace().unwrap_or_default(),
        addon = %mca.name_any(),
        "add-on manager: {}; retrying in {RETRY:?}",
        report::chain(e)
    );
    Action::requeue(RETRY)
}

async fn reconcile(mca: Arc<ManagedClusterAddOn>, ctx: Arc<Context>) -> Result<Action, Error> {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let Some(cma) = ctx.cmas.get(&ObjectRef::new(&name)) else {
        return Ok(Action::await_change());
    };
    if mca.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let mca = match own(&ctx.client, &mca, &cma).await? {
        Owned::Already => mca,
        // Carry on with the updated object: its version guards the status write below.
        Owned::Now(updated) => Arc::new(*updated),
        // Changed meanwhile: the change wakes this add-on again.
        Owned::Conflict => return Ok(Action::await_change()),
    };
    let Some(template_name) = template::template_name(&mca, &cma) else {
        // Not a template add-on: its own manager deploys it.
        return Ok(Action::await_change());
    };
    let template = ctx.templates.get(&ObjectRef::new(&template_name));
    let work = ctx
        .works
        .get(&ObjectRef::new(&deploy::work_name(&name)).within(&cluster));
    let managed_cluster = ctx.clusters.get(&ObjectRef::new(&cluster));
    let config_ref = super::config::reference(&mca, &cma);
    let config = config_ref
        .as_ref()
        .and_then(|(ns, name)| ctx.configs.get(&ObjectRef::new(name).within(ns)));
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let plan = deploy::decide(&Inputs {
        mca: &mca,
        template: Some((template_name, template.as_deref())),
        config: config_ref.map(|r| (r, config.as_deref())),
        work: work.as_deref(),
        cluster: managed_cluster.as_deref(),
        now: &now,
    })?;
    for binding in &plan.bindings {
        apply_binding(&ctx, binding).await?;
    }
    if let Some(wanted) = &plan.work {
        apply_work(&ctx, work.as_deref(), wanted).await?;
    }
    if mca.status.as_ref() != Some(&plan.status) {
        // Guarded by the version read: the agent's own status writes are not overwritten.
        let patch = json!({
            "metadata": {"resourceVersion": mca.metadata.resource_version},
            "status": plan.status,
        });
        match Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), &cluster)
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => {}
            // Changed meanwhile: the change wakes this add-on again.
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Action::await_change())
}

/// Whether the stored work already is what `wanted` says: made from the same template, with the
/// label and owner.
fn same_work(current: &ManifestWork, wanted: &ManifestWork) -> bool {
    deploy::same_configs(current, wanted)
        && current.labels().get(ADDON_NAME_LABEL) == wanted.labels().get(ADDON_NAME_LABEL)
        && current.owner_references() == wanted.owner_references()
}

/// Applies the deploy work unless the store, or this process's last write, shows it as wanted.
async fn apply_work(
    ctx: &Context,
    current: Option<&ManifestWork>,
    wanted: &ManifestWork,
) -> Result<(), kube::Error> {
    let key = (wanted.namespace().unwrap_or_default(), wanted.name_any());
    let written = {
        let mut memo = ctx
            .works_applied
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if current.is_some_and(|w| same_work(w, wanted)) {
            memo.remove(&key);
            true
        } else {
            memo.get(&key).is_some_and(|w| same_work(w, wanted))
        }
    };
    if written {
        return Ok(());
    }
    Api::<ManifestWork>::namespaced(ctx.client.clone(), &key.0)
        .patch(
            &key.1,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(wanted),
        )
        .await?;
    ctx.works_applied
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, wanted.clone());
    Ok(())
}

async fn apply_binding(ctx: &Context, binding: &RoleBinding) -> Result<(), kube::Error> {
    let key = (binding.namespace().unwrap_or_default(), binding.name_any());
    if ctx
        .applied
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        == Some(binding)
    {
        return Ok(());
    }
    let mut body = serde_json::to_value(binding).map_err(kube::Error::SerdeError)?;
    body["apiVersion"] = json!("rbac.authorization.k8s.io/v1");
    body["kind"] = json!("RoleBinding");
    Api::<RoleBinding>::namespaced(ctx.client.clone(), &key.0)
        .patch(
            &key.1,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?;
    ctx.applied
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, binding.clone());
    Ok(())
}

/// What [`own`] found or did.
enum Owned {
    /// The add-on already owned it.
    Already,
    /// Owned now: the object as written.
    Now(Box<ManagedClusterAddOn>),
    /// It changed since it was read.
    Conflict,
}

/// Makes the ClusterManagementAddOn an owner of `mca`, as upstream's addon-owner controller
/// does.
async fn own(
    client: &Client,
    mca: &ManagedClusterAddOn,
    cma: &ClusterManagementAddOn,
) -> Result<Owned, kube::Error> {
    let uid = cma.uid().unwrap_or_default();
    if mca.owner_references().iter().any(|o| o.uid == uid) {
        return Ok(Owned::Already);
    }
    let mut owners = mca.owner_references().to_vec();
    owners.push(deploy::owner_reference(cma, false));
    let patch = json!({
        "metadata": {"resourceVersion": mca.metadata.resource_version, "ownerReferences": owners},
    });
    match Api::<ManagedClusterAddOn>::namespaced(
        client.clone(),
        &mca.namespace().unwrap_or_default(),
    )
    .patch(
        &mca.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await
    {
        Ok(updated) => Ok(Owned::Now(Box::new(updated))),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(Owned::Conflict),
        Err(e) => Err(e),
    }
}
