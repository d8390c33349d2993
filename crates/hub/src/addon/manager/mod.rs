//! The hub's add-on manager for template add-ons, as upstream's addon-manager runs them: a
//! `Controller` over ManagedClusterAddOns, woken by their ClusterManagementAddOns, AddOnTemplates,
//! deploy ManifestWorks and the changes of their cluster that upstream's deploy controller
//! watches (its image mirrors annotation, its `Available` condition). For each add-on on each
//! cluster it owns the ManagedClusterAddOn by its ClusterManagementAddOn (so deleting the add-on
//! deletes it everywhere), and for a template add-on it keeps the deploy work, the hub
//! RoleBindings and the status [`plan`] decides.
//!
//! Cleanup is the API server's garbage collector's (kube-controller-manager), as upstream's:
//! ClusterManagementAddOn → ManagedClusterAddOn → deploy work and cluster-namespace RoleBindings
//! by owner references. The work agent then removes the agent's objects from the cluster.
//!
//! The reconcile reads the stores (here), [`plan`] plans the add-on (with [`bindings`] and
//! [`status`]), and the [`writer`] is the only place that writes.
mod bindings;
pub mod plan;
mod status;
pub mod writer;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use super::template::{self, hook, hosting, work};
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnTemplate,
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ConfigMeta, ConfigReferent,
    HOOK_MANIFEST_COMPLETED, HOSTING_MANIFEST_FINALIZER, ManagedClusterAddOn,
    PRE_DELETE_HOOK_FINALIZER,
};
use ocm_api::cluster::{
    IMAGE_REGISTRIES_ANNOTATION, MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster,
};
use ocm_api::conditions::{self, TRUE};
use ocm_api::work::ManifestWork;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use plan::{Hosting, HostingInputs, Inputs};
use writer::{Updated, Writer};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on manager";
/// How soon an add-on whose hosting cluster the hub does not know looks for it again.
const HOSTING_RETRY: Duration = Duration::from_secs(30);

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

impl ocm_runtime::controller::Failure for Error {}

struct Context {
    writer: Writer,
    clusters: Store<ManagedCluster>,
    cmas: Store<ClusterManagementAddOn>,
    templates: Store<AddOnTemplate>,
    configs: Store<AddOnDeploymentConfig>,
    works: Store<ManifestWork>,
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

/// What of a cluster its add-ons' manifests and health depend on: its image mirrors annotation
/// and its `Available` condition (upstream's `AgentDeployTriggerClusterFilter` for template
/// add-ons). A change of either wakes the cluster's add-ons.
fn deploy_inputs(cluster: &ManagedCluster) -> (Option<String>, Option<String>) {
    let available = cluster
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE))
        .map(|c| c.status.clone());
    (
        cluster
            .annotations()
            .get(IMAGE_REGISTRIES_ANNOTATION)
            .cloned(),
        available,
    )
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
                .and_then(|cma| super::template::config::reference(a, &cma))
                .is_some_and(|r| r == wanted)
        })
        .map(|a| ObjectRef::from_obj(&**a))
        .collect()
}

/// The manager over `informers`' add-ons, their ClusterManagementAddOns, templates, configs and
/// works, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    gate: ocm_runtime::controller::Gate,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    let clusters = informers.store::<ManagedCluster>();
    let (addons, addon_events) = informers.feed::<ManagedClusterAddOn>();
    let (cmas, cma_events) = informers.feed::<ClusterManagementAddOn>();
    let (templates, template_events) = informers.feed::<AddOnTemplate>();
    let (configs, config_events) = informers.feed::<AddOnDeploymentConfig>();
    let (works, work_events) = informers.feed::<ManifestWork>();
    let ctx = Arc::new(Context {
        writer: Writer::new(hub),
        clusters: clusters.clone(),
        cmas: cmas.clone(),
        templates: templates.clone(),
        configs: configs.clone(),
        works: works.clone(),
    });
    let (by_cma, by_template) = (addons.clone(), addons.clone());
    let (by_config, cmas_by_config) = (addons.clone(), cmas.clone());
    let by_cluster = addons.clone();
    let controller = Controller::for_shared_stream(addon_events, addons.clone())
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
        .watches_shared_stream(informers.changes_of(deploy_inputs), move |c| {
            let cluster = c.name_any();
            by_cluster
                .state()
                .iter()
                .filter(|a| a.namespace().as_deref() == Some(cluster.as_str()))
                .map(|a| ObjectRef::from_obj(&**a))
                .collect::<Vec<_>>()
        })
        .watches_shared_stream(work_events, |w| {
            let addon = w.labels().get(ADDON_NAME_LABEL)?;
            // A hosting work lives in the hosting cluster's namespace; its label names the add-on's.
            let cluster = w
                .labels()
                .get(ADDON_NAMESPACE_LABEL)
                .cloned()
                .or_else(|| w.namespace())?;
            Some(ObjectRef::new(addon).within(&cluster))
        });
    let run = Runner::new(CONTROLLER, controller)
        .gated(gate)
        .after(&clusters)
        .after(&addons)
        .after(&cmas)
        .after(&templates)
        .after(&configs)
        .after(&works)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

async fn reconcile(mca: Arc<ManagedClusterAddOn>, ctx: Arc<Context>) -> Result<Action, Error> {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let deleting = mca.metadata.deletion_timestamp.is_some();
    if deleting && has_finalizer(&mca, HOSTING_MANIFEST_FINALIZER) {
        // Its work on the hosting cluster first: nothing else removes it. The finalizer's
        // removal wakes the add-on again for its hook.
        ctx.writer
            .remove_hosting(&mca, &hosting_works(&ctx, &mca))
            .await?;
        return Ok(Action::await_change());
    }
    if deleting && !has_finalizer(&mca, PRE_DELETE_HOOK_FINALIZER) {
        // Nothing to run first: the garbage collector removes what it owns.
        return Ok(Action::await_change());
    }
    let cma = match ctx.cmas.get(&ObjectRef::new(&name)) {
        Some(cma) => cma,
        // The add-on itself was deleted (its add-ons go with it): the hook still runs, from the
        // template the add-on last used.
        None if deleting => Arc::new(last_used(&mca)),
        None => return Ok(Action::await_change()),
    };
    let mca = if deleting {
        mca
    } else {
        match ctx.writer.own(&mca, &cma).await? {
            Updated::Unchanged => mca,
            // Carry on with the updated object: its version guards the status write below.
            Updated::Now(updated) => Arc::new(*updated),
            // Changed meanwhile: the change wakes this add-on again.
            Updated::Conflict => return Ok(Action::await_change()),
        }
    };
    let Some(template_name) = template::template_name(&mca, &cma) else {
        if deleting {
            // No template to take a hook from: nothing holds the add-on back.
            ctx.writer.set_hook_finalizer(&mca, false).await?;
        }
        // Not a template add-on: its own manager deploys it.
        return Ok(Action::await_change());
    };
    let template = ctx.templates.get(&ObjectRef::new(&template_name));
    let work = ctx
        .works
        .get(&ObjectRef::new(&work::work_name(&name)).within(&cluster));
    let managed_cluster = ctx.clusters.get(&ObjectRef::new(&cluster));
    let config_ref = super::template::config::reference(&mca, &cma);
    let config = config_ref
        .as_ref()
        .and_then(|(ns, name)| ctx.configs.get(&ObjectRef::new(name).within(ns)));
    let hosting = HostingSeen::of(&ctx, &mca);
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let mut plan = plan::plan(&Inputs {
        mca: &mca,
        template: Some((template_name, template.as_deref())),
        config: config_ref.map(|r| (r, config.as_deref())),
        pinned: super::install::rollout::pins(&cma),
        work: work.as_deref(),
        cluster: managed_cluster.as_deref(),
        hosting: hosting.as_ref().map(HostingSeen::inputs),
        now: &now,
    })?;
    if deleting {
        return run_hook(&ctx, &mca, plan, &now).await;
    }
    // The finalizer goes with the hook: added before anything could need it, dropped with it
    // (and left as it is while the add-on cannot be rendered: its hooks are unknown then).
    if plan.work.is_some() && plan.hook.is_some() != has_finalizer(&mca, PRE_DELETE_HOOK_FINALIZER)
    {
        ctx.writer
            .set_hook_finalizer(&mca, plan.hook.is_some())
            .await?;
        // The update wakes this add-on again, with the version the status write needs.
        return Ok(Action::await_change());
    }
    for binding in &plan.bindings {
        ctx.writer.apply_binding(binding).await?;
    }
    if let Some(wanted) = &plan.work {
        ctx.writer.apply_work(work.as_deref(), wanted).await?;
    }
    let current = hosting.as_ref().and_then(|h| h.work.as_deref());
    if sync_hosting(&ctx, &mca, &plan.hosting, current).await? {
        // A finalizer changed: the update wakes this add-on again.
        return Ok(Action::await_change());
    }
    plan.status
        .conditions
        .retain(|c| c.type_ != HOOK_MANIFEST_COMPLETED);
    ctx.writer.status(&mca, &plan.status).await?;
    if hosting.is_some_and(|h| h.cluster.is_none()) {
        // A cluster first seen wakes no add-on: look again for the hosting cluster to join.
        return Ok(Action::requeue(HOSTING_RETRY));
    }
    Ok(Action::await_change())
}

/// The hosting cluster a Hosted add-on names, and its hosting work, as the stores show them.
struct HostingSeen {
    name: String,
    cluster: Option<Arc<ManagedCluster>>,
    work: Option<Arc<ManifestWork>>,
}

impl HostingSeen {
    fn of(ctx: &Context, mca: &ManagedClusterAddOn) -> Option<Self> {
        let name = mca.hosting_cluster()?.to_string();
        let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
        let work_name = hosting::work_name(&addon, &cluster);
        Some(Self {
            cluster: ctx.clusters.get(&ObjectRef::new(&name)),
            work: ctx.works.get(&ObjectRef::new(&work_name).within(&name)),
            name,
        })
    }

    fn inputs(&self) -> HostingInputs<'_> {
        HostingInputs {
            name: &self.name,
            found: self.cluster.is_some(),
            deleting: self
                .cluster
                .as_ref()
                .is_some_and(|c| c.metadata.deletion_timestamp.is_some()),
            work: self.work.as_deref(),
        }
    }
}

/// Makes the add-on's hosting side what the plan says: the finalizer first (then `true`: the
/// update wakes the add-on again), the work applied or removed.
async fn sync_hosting(
    ctx: &Context,
    mca: &ManagedClusterAddOn,
    wanted: &Hosting,
    current: Option<&ManifestWork>,
) -> Result<bool, kube::Error> {
    let finalized = has_finalizer(mca, HOSTING_MANIFEST_FINALIZER);
    match wanted {
        // Only a finalized add-on ever had a hosting work: the others cost no lookup.
        Hosting::Remove if finalized => {
            ctx.writer
                .remove_hosting(mca, &hosting_works(ctx, mca))
                .await?;
            return Ok(true);
        }
        Hosting::Keep | Hosting::Remove => {}
        // Added before a work can go to the hosting cluster.
        Hosting::Deploy(_) if !finalized => {
            ctx.writer
                .set_finalizer(mca, HOSTING_MANIFEST_FINALIZER, true)
                .await?;
            return Ok(true);
        }
        Hosting::Deploy(None) => {
            ctx.writer
                .delete_hosting_works(mca, &hosting_works(ctx, mca))
                .await?;
        }
        Hosting::Deploy(Some(work)) => ctx.writer.apply_work(current, work).await?,
    }
    Ok(false)
}

/// The add-on's works on any hosting cluster, as the store shows them.
fn hosting_works(ctx: &Context, mca: &ManagedClusterAddOn) -> Vec<Arc<ManifestWork>> {
    let (addon, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    ctx.works
        .state()
        .into_iter()
        .filter(|w| hosting::is_work_of(w, &addon, &cluster))
        .collect()
}

/// A stand-in for a deleted ClusterManagementAddOn: its default template the one `mca` last used.
fn last_used(mca: &ManagedClusterAddOn) -> ClusterManagementAddOn {
    let supported_configs = mca
        .status
        .iter()
        .flat_map(|s| &s.config_references)
        .filter(|r| r.resource == ADDON_TEMPLATES)
        .map(|r| ConfigMeta {
            group: r.group.clone(),
            resource: r.resource.clone(),
            default_config: Some(ConfigReferent {
                namespace: None,
                name: r.name.clone(),
            }),
        })
        .collect();
    ClusterManagementAddOn::new(
        &mca.name_any(),
        ClusterManagementAddOnSpec {
            supported_configs,
            ..ClusterManagementAddOnSpec::default()
        },
    )
}

/// For a deleted add-on holding the hook finalizer: sends the hook work, reports
/// `HookManifestCompleted`, and releases the add-on once the hook finished (or there is none).
async fn run_hook(
    ctx: &Context,
    mca: &ManagedClusterAddOn,
    mut plan: plan::Plan,
    now: &Time,
) -> Result<Action, Error> {
    let Some(wanted) = plan.hook.take() else {
        ctx.writer.set_hook_finalizer(mca, false).await?;
        return Ok(Action::await_change());
    };
    let key = ObjectRef::new(&wanted.name_any()).within(&wanted.namespace().unwrap_or_default());
    let current = ctx.works.get(&key);
    ctx.writer
        .apply_hook_work(current.is_some(), &wanted)
        .await?;
    let condition = hook::condition(current.as_deref().unwrap_or(&wanted), now);
    if condition.status == TRUE {
        // Released first, as upstream updates finalizers before status: a status write would
        // move the version this guarded update is made against, and the add-on is going anyway.
        ctx.writer.set_hook_finalizer(mca, false).await?;
        return Ok(Action::await_change());
    }
    conditions::set(&mut plan.status.conditions, condition);
    ctx.writer.status(mca, &plan.status).await?;
    // The hook work's status changes wake this add-on again.
    Ok(Action::await_change())
}

fn has_finalizer(mca: &ManagedClusterAddOn, finalizer: &str) -> bool {
    mca.finalizers().iter().any(|f| f == finalizer)
}
