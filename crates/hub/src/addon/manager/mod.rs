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
//! The reconcile reads the stores (here), [`decide`] chooses the steps — owning the add-on, its
//! finalizers, and what [`plan`] wants of a template add-on (with [`bindings`] and [`status`]) —
//! and the [`writer`], the only place that writes, carries them out.
pub mod bindings;
pub mod decide;
pub mod plan;
pub mod status;
pub mod writer;

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use super::template::{self, config, hook, hosting, work};
use decide::{Decision, HostingSeen, Seen, Step, Then};
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, AddOnDeploymentConfig, AddOnTemplate,
    ClusterManagementAddOn, ManagedClusterAddOn,
};
use ocm_api::cluster::{
    IMAGE_REGISTRIES_ANNOTATION, MANAGED_CLUSTER_CONDITION_AVAILABLE, ManagedCluster,
};
use ocm_api::conditions;
use ocm_api::work::ManifestWork;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::{Updated, Writer};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on manager";

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
                .and_then(|cma| config::reference(a, &cma))
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
    let seen = observe(&ctx, &mca);
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let decision = decide::decide(&mca, &seen, &now);
    carry_out(&ctx, mca, decision).await
}

/// What the stores show of `mca`'s world, as [`decide`] reads it.
fn observe(ctx: &Context, mca: &ManagedClusterAddOn) -> Seen {
    let (name, cluster) = (mca.name_any(), mca.namespace().unwrap_or_default());
    let cma = decide::addon_of(mca, ctx.cmas.get(&ObjectRef::new(&name)));
    let template = cma
        .as_ref()
        .and_then(|cma| template::template_name(mca, cma))
        .map(|t| {
            let found = ctx.templates.get(&ObjectRef::new(&t));
            (t, found)
        });
    let config = cma
        .as_ref()
        .and_then(|cma| config::reference(mca, cma))
        .map(|(ns, config)| {
            let found = ctx.configs.get(&ObjectRef::new(&config).within(&ns));
            ((ns, config), found)
        });
    let hosting = mca.hosting_cluster().map(|hosting| {
        let work_name = hosting::work_name(&name, &cluster);
        HostingSeen {
            cluster: ctx.clusters.get(&ObjectRef::new(hosting)),
            work: ctx.works.get(&ObjectRef::new(&work_name).within(hosting)),
            name: hosting.to_string(),
        }
    });
    let hook_work = mca.metadata.deletion_timestamp.as_ref().and_then(|_| {
        ctx.works
            .get(&ObjectRef::new(&hook::work_name(&name)).within(&cluster))
    });
    Seen {
        cma,
        template,
        config,
        work: ctx
            .works
            .get(&ObjectRef::new(&work::work_name(&name)).within(&cluster)),
        cluster: ctx.clusters.get(&ObjectRef::new(&cluster)),
        hosting,
        hook_work,
    }
}

/// Carries out the decision's steps in order with the [`writer`], then what follows them.
async fn carry_out(
    ctx: &Context,
    mut mca: Arc<ManagedClusterAddOn>,
    decision: Decision,
) -> Result<Action, Error> {
    for step in decision.steps {
        match step {
            Step::Own(owners) => match ctx.writer.own(&mca, &owners).await? {
                // Carry on with the updated object: its version guards the writes after it.
                Updated::Now(updated) => mca = Arc::new(*updated),
                // Changed meanwhile: the change wakes this add-on again.
                Updated::Conflict => return Ok(Action::await_change()),
            },
            Step::Finalizers(finalizers) => ctx.writer.set_finalizers(&mca, &finalizers).await?,
            Step::DeleteHostingWorks => {
                ctx.writer
                    .delete_hosting_works(&mca, &hosting_works(ctx, &mca))
                    .await?;
            }
            Step::Binding(binding) => {
                if let Err(e) = ctx.writer.apply_binding(&binding).await {
                    permission_failed(ctx, &mca, &e).await;
                    return Err(e.into());
                }
            }
            Step::Work { current, wanted } => {
                ctx.writer.apply_work(current.as_deref(), &wanted).await?;
            }
            Step::HookWork { exists, wanted } => {
                ctx.writer.apply_hook_work(exists, &wanted).await?;
            }
            Step::Status(status) => ctx.writer.status(&mca, &status).await?,
        }
    }
    match decision.then {
        Then::AwaitChange => Ok(Action::await_change()),
        Then::Requeue(after) => Ok(Action::requeue(after)),
        Then::Fail(e) => Err(e.into()),
    }
}

/// `RegistrationApplied` False with why a hub RoleBinding could not be written (RBAC refuses to
/// grant through it what upstream's add-on manager's account does not hold), as upstream's
/// registration controller reports it. The write's error is what the controller retries on.
async fn permission_failed(ctx: &Context, mca: &ManagedClusterAddOn, e: &kube::Error) {
    let mut status = mca.status.clone().unwrap_or_default();
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let why = match e {
        kube::Error::Api(status) => status.message.clone(),
        e => e.to_string(),
    };
    status::permission_failed(&mut status, &why, &now);
    if let Err(write) = ctx.writer.status(mca, &status).await {
        tracing::warn!(addon = %mca.name_any(), "reporting a refused hub permission: {write}");
    }
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
