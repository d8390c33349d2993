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

use futures::StreamExt as _;
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use super::deploy::{self, Hosting, HostingInputs, Inputs};
use super::{hook, hosting, template};
use crate::api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnTemplate,
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ConfigMeta, ConfigReferent,
    DEPRECATED_PRE_DELETE_HOOK_FINALIZER, HOOK_MANIFEST_COMPLETED, HOSTING_MANIFEST_FINALIZER,
    ManagedClusterAddOn, ManagedClusterAddOnStatus, PRE_DELETE_HOOK_FINALIZER,
};
use crate::api::cluster::ManagedCluster;
use crate::api::conditions::{self, TRUE};
use crate::api::work::ManifestWork;
use crate::hub::informers::{Feed, Informers};
use crate::runtime::{Shutdown, report, shutdown};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on manager";
const FIELD_MANAGER: &str = "clusteradm-addon-manager";
const RETRY: Duration = Duration::from_secs(5);
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

/// The manager over `informers`' add-ons, their ClusterManagementAddOns, templates, configs and
/// works, running until `shutdown` is cancelled.
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
    run(
        hub,
        informers.store(),
        informers.feed(),
        informers.feed(),
        (informers.feed(), informers.feed()),
        informers.feed(),
        shutdown,
    )
}

async fn run(
    hub: Client,
    clusters: Store<ManagedCluster>,
    (addons, addon_events): Feed<ManagedClusterAddOn>,
    (cmas, cma_events): Feed<ClusterManagementAddOn>,
    ((templates, template_events), (configs, config_events)): (
        Feed<AddOnTemplate>,
        Feed<AddOnDeploymentConfig>,
    ),
    (works, work_events): Feed<ManifestWork>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
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
    crate::runtime::queue_depth::track(
        CONTROLLER,
        addons.clone(),
        crate::runtime::queue_depth::Wakes::OnAnyChange,
    );
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
            // A hosting work lives in the hosting cluster's namespace; its label names the add-on's.
            let cluster = w
                .labels()
                .get(ADDON_NAMESPACE_LABEL)
                .cloned()
                .or_else(|| w.namespace())?;
            Some(ObjectRef::new(addon).within(&cluster))
        })
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            report::controller_result(CONTROLLER, &result);
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
    tokio::select! {
        () = run => {}
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
    let deleting = mca.metadata.deletion_timestamp.is_some();
    if deleting && has_finalizer(&mca, HOSTING_MANIFEST_FINALIZER) {
        // Its work on the hosting cluster first: nothing else removes it. The finalizer's
        // removal wakes the add-on again for its hook.
        remove_hosting(&ctx, &mca).await?;
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
        match own(&ctx.client, &mca, &cma).await? {
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
            set_hook_finalizer(&ctx.client, &mca, false).await?;
        }
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
    let hosting = HostingSeen::of(&ctx, &mca);
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let mut plan = deploy::decide(&Inputs {
        mca: &mca,
        template: Some((template_name, template.as_deref())),
        config: config_ref.map(|r| (r, config.as_deref())),
        pinned: super::rollout::pins(&cma),
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
        set_hook_finalizer(&ctx.client, &mca, plan.hook.is_some()).await?;
        // The update wakes this add-on again, with the version the status write needs.
        return Ok(Action::await_change());
    }
    for binding in &plan.bindings {
        apply_binding(&ctx, binding).await?;
    }
    if let Some(wanted) = &plan.work {
        apply_work(&ctx, work.as_deref(), wanted).await?;
    }
    let current = hosting.as_ref().and_then(|h| h.work.as_deref());
    if sync_hosting(&ctx, &mca, &plan.hosting, current).await? {
        // A finalizer changed: the update wakes this add-on again.
        return Ok(Action::await_change());
    }
    plan.status
        .conditions
        .retain(|c| c.type_ != HOOK_MANIFEST_COMPLETED);
    write_status(&ctx.client, &mca, &plan.status).await?;
    if hosting.is_some_and(|h| h.cluster.is_none()) {
        // Cluster changes do not wake add-ons: look again for the hosting cluster to join.
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
            remove_hosting(ctx, mca).await?;
            return Ok(true);
        }
        Hosting::Keep | Hosting::Remove => {}
        // Added before a work can go to the hosting cluster.
        Hosting::Deploy(_) if !finalized => {
            set_finalizer(&ctx.client, mca, HOSTING_MANIFEST_FINALIZER, true).await?;
            return Ok(true);
        }
        Hosting::Deploy(None) => delete_hosting_works(ctx, mca).await?,
        Hosting::Deploy(Some(work)) => apply_work(ctx, current, work).await?,
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

/// Deletes the add-on's works on hosting clusters (the work agent there then removes what they
/// made).
async fn delete_hosting_works(ctx: &Context, mca: &ManagedClusterAddOn) -> Result<(), kube::Error> {
    for work in hosting_works(ctx, mca) {
        let namespace = work.namespace().unwrap_or_default();
        match Api::<ManifestWork>::namespaced(ctx.client.clone(), &namespace)
            .delete(&work.name_any(), &DeleteParams::default())
            .await
        {
            Ok(_) => {
                tracing::info!(addon = %mca.name_any(), "deleted hosting work {namespace}/{}", work.name_any());
            }
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Deletes the hosting works of an add-on that holds the hosting finalizer, then releases it.
async fn remove_hosting(ctx: &Context, mca: &ManagedClusterAddOn) -> Result<(), kube::Error> {
    delete_hosting_works(ctx, mca).await?;
    set_finalizer(&ctx.client, mca, HOSTING_MANIFEST_FINALIZER, false).await
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
    mut plan: deploy::Plan,
    now: &Time,
) -> Result<Action, Error> {
    let Some(wanted) = plan.hook.take() else {
        set_hook_finalizer(&ctx.client, mca, false).await?;
        return Ok(Action::await_change());
    };
    let key = ObjectRef::new(&wanted.name_any()).within(&wanted.namespace().unwrap_or_default());
    let current = ctx.works.get(&key);
    apply_hook_work(ctx, current.is_some(), &wanted).await?;
    let condition = hook::condition(current.as_deref().unwrap_or(&wanted), now);
    if condition.status == TRUE {
        // Released first, as upstream updates finalizers before status: a status write would
        // move the version this guarded update is made against, and the add-on is going anyway.
        set_hook_finalizer(&ctx.client, mca, false).await?;
        return Ok(Action::await_change());
    }
    conditions::set(&mut plan.status.conditions, condition);
    write_status(&ctx.client, mca, &plan.status).await?;
    // The hook work's status changes wake this add-on again.
    Ok(Action::await_change())
}

/// Writes the add-on's status if it differs, guarded by the version read: the agent's own status
/// writes are not overwritten (a conflict's change wakes the add-on again).
pub(super) async fn write_status(
    client: &Client,
    mca: &ManagedClusterAddOn,
    status: &ManagedClusterAddOnStatus,
) -> Result<(), kube::Error> {
    if mca.status.as_ref() == Some(status) {
        return Ok(());
    }
    let patch = json!({
        "metadata": {"resourceVersion": mca.metadata.resource_version},
        "status": status,
    });
    match Api::<ManagedClusterAddOn>::namespaced(
        client.clone(),
        &mca.namespace().unwrap_or_default(),
    )
    .patch_status(
        &mca.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await
    {
        // A conflict: the add-on changed meanwhile, and that change wakes its controllers again;
        // gone: nothing to write.
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Applies the hook work unless it is there as this process last wrote it.
async fn apply_hook_work(
    ctx: &Context,
    exists: bool,
    wanted: &ManifestWork,
) -> Result<(), kube::Error> {
    let key = (wanted.namespace().unwrap_or_default(), wanted.name_any());
    let written = ctx
        .works_applied
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        .is_some_and(|w| w == wanted);
    if exists && written {
        return Ok(());
    }
    write_work(ctx, key, wanted).await
}

/// Applies a work and remembers it as written.
async fn write_work(
    ctx: &Context,
    key: (String, String),
    wanted: &ManifestWork,
) -> Result<(), kube::Error> {
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

fn has_finalizer(mca: &ManagedClusterAddOn, finalizer: &str) -> bool {
    mca.finalizers().iter().any(|f| f == finalizer)
}

/// Adds or removes the hook finalizer (and drops the deprecated one, as upstream does).
async fn set_hook_finalizer(
    client: &Client,
    mca: &ManagedClusterAddOn,
    present: bool,
) -> Result<(), kube::Error> {
    let mut mca = mca.clone();
    mca.finalizers_mut()
        .retain(|f| f != DEPRECATED_PRE_DELETE_HOOK_FINALIZER);
    set_finalizer(client, &mca, PRE_DELETE_HOOK_FINALIZER, present).await
}

/// Adds or removes `finalizer`, guarded by the version read.
async fn set_finalizer(
    client: &Client,
    mca: &ManagedClusterAddOn,
    finalizer: &str,
    present: bool,
) -> Result<(), kube::Error> {
    let mut finalizers: Vec<String> = mca
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    if present {
        finalizers.push(finalizer.into());
    }
    update_metadata(client, mca, json!({"finalizers": finalizers}))
        .await
        .map(|_| ())
}

/// Whether the stored work already is what `wanted` says: made from the same template, asking
/// for the same status feedback (which the template's prober annotation, outside its spec,
/// changes), with the label and owner.
fn same_work(current: &ManifestWork, wanted: &ManifestWork) -> bool {
    // Only identifiers and rules: the API server fills in the options' other defaults.
    let feedback = |w: &ManifestWork| {
        w.spec
            .manifest_configs
            .iter()
            .map(|c| (c.resource_identifier.clone(), c.feedback_rules.clone()))
            .collect::<Vec<_>>()
    };
    deploy::same_configs(current, wanted)
        && feedback(current) == feedback(wanted)
        && current.labels().get(ADDON_NAME_LABEL) == wanted.labels().get(ADDON_NAME_LABEL)
        && current.labels().get(ADDON_NAMESPACE_LABEL) == wanted.labels().get(ADDON_NAMESPACE_LABEL)
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
    write_work(ctx, key, wanted).await
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

/// What a metadata update found or did.
enum Updated {
    /// Nothing needed changing.
    Unchanged,
    /// Updated: the object as written.
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
) -> Result<Updated, kube::Error> {
    let uid = cma.uid().unwrap_or_default();
    if mca.owner_references().iter().any(|o| o.uid == uid) {
        return Ok(Updated::Unchanged);
    }
    let mut owners = mca.owner_references().to_vec();
    owners.push(deploy::owner_reference(cma, false));
    update_metadata(client, mca, json!({"ownerReferences": owners})).await
}

/// Merges `metadata` into the add-on's, guarded by the version read.
async fn update_metadata(
    client: &Client,
    mca: &ManagedClusterAddOn,
    mut metadata: serde_json::Value,
) -> Result<Updated, kube::Error> {
    metadata["resourceVersion"] = json!(mca.metadata.resource_version);
    match Api::<ManagedClusterAddOn>::namespaced(
        client.clone(),
        &mca.namespace().unwrap_or_default(),
    )
    .patch(
        &mca.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": metadata})),
    )
    .await
    {
        Ok(updated) => Ok(Updated::Now(Box::new(updated))),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(Updated::Conflict),
        Err(e) => Err(e),
    }
}
