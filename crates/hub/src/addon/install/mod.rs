//! Install strategies, as upstream's addon-management controller applies them: for a
//! ClusterManagementAddOn with `installStrategy.type: Placements` that the add-on manager manages
//! (no lifecycle annotation, or `addon-manager`), a ManagedClusterAddOn on every cluster its
//! placements decide and on no other: created with the add-on as controlling owner, deleted when
//! the cluster is no longer decided, carrying the cluster's add-on annotations
//! ([`super::annotation`]) from the start. `Manual` add-ons are left to `addon enable` /
//! `disable`.
//! It then rolls the add-on's configs out ([`rollout`]) and writes the progress.
//!
//! The reconcile reads the stores (here), [`decide`] and [`rollout::decide`] say what
//! should change, and the [`writer`] is the only place that writes.
pub mod decide;
pub mod rollout;
pub mod writer;

pub use decide::{decided, managed_by_hub};
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use decide::made_for;
use ocm_api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnTemplate,
    ClusterManagementAddOn, ConfigSpecHash, ManagedClusterAddOn,
};
use ocm_api::cluster::{ManagedCluster, PLACEMENT_LABEL, PlacementDecision};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Writer;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on install controller";
const RETRY: Duration = Duration::from_secs(5);

struct Context {
    writer: Writer,
    clusters: Store<ManagedCluster>,
    addons: Store<ManagedClusterAddOn>,
    decisions: Store<PlacementDecision>,
    templates: Store<AddOnTemplate>,
    configs: Store<AddOnDeploymentConfig>,
}

/// The controller over `informers`' ClusterManagementAddOns, add-ons, PlacementDecisions,
/// templates and configs, running until `shutdown` is cancelled.
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
    let (decisions, decision_events) = informers.feed::<PlacementDecision>();
    let ctx = Arc::new(Context {
        writer: Writer::new(hub),
        clusters: clusters.clone(),
        addons: addons.clone(),
        decisions: decisions.clone(),
        templates: templates.clone(),
        configs: configs.clone(),
    });
    let for_decisions = cmas.clone();
    // A config's spec hash is part of every rollout that uses it: any change looks again at
    // the (few) rolled-out add-ons.
    let (for_templates, for_configs) = (cmas.clone(), cmas.clone());
    let controller = Controller::for_shared_stream(cma_events, cmas.clone())
        .watches_shared_stream(addon_events, |mca| Some(ObjectRef::new(&mca.name_any())))
        .watches_shared_stream(decision_events, move |d| {
            let (ns, placement) = (d.namespace(), d.labels().get(PLACEMENT_LABEL).cloned());
            for_decisions
                .state()
                .iter()
                .filter(|c| {
                    c.spec.install_strategy.as_ref().is_some_and(|s| {
                        s.placements.iter().any(|p| {
                            Some(&p.namespace) == ns.as_ref() && Some(&p.name) == placement.as_ref()
                        })
                    })
                })
                .map(|c| ObjectRef::from_obj(&**c))
                .collect::<Vec<_>>()
        })
        .watches_shared_stream(template_events, move |_| rolled_out(&for_templates))
        .watches_shared_stream(config_events, move |_| rolled_out(&for_configs));
    let run = Runner::new(CONTROLLER, controller)
        .gated(gate)
        .after(&clusters)
        .after(&addons)
        .after(&cmas)
        .after(&decisions)
        .after(&templates)
        .after(&configs)
        .run(reconcile, ctx, shutdown);
    async move {
        run.await;
        Ok(())
    }
}

/// The add-ons whose configs are rolled out.
fn rolled_out(cmas: &Store<ClusterManagementAddOn>) -> Vec<ObjectRef<ClusterManagementAddOn>> {
    cmas.state()
        .iter()
        .filter(|c| rollout::pins(c))
        .map(|c| ObjectRef::from_obj(&**c))
        .collect()
}

async fn reconcile(
    cma: Arc<ClusterManagementAddOn>,
    ctx: Arc<Context>,
) -> Result<Action, kube::Error> {
    if !rollout::pins(&cma) || cma.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let name = cma.name_any();
    let plan = decide::plan(
        &cma,
        &decided(&cma, &ctx.decisions.state()),
        &ctx.addons.state(),
        |cluster| ctx.clusters.get(&ObjectRef::new(cluster)),
    );
    for mca in &plan.create {
        ctx.writer.create(mca).await?;
    }
    for cluster in &plan.remove {
        ctx.writer.remove(&name, cluster).await?;
    }
    let action = roll_out(&cma, &ctx).await?;
    // A decided cluster not yet in the store is installed on later, as upstream fails the
    // reconcile then: its add-on must start with the cluster's annotations.
    Ok(if plan.unseen {
        Action::requeue(RETRY)
    } else {
        action
    })
}

/// The spec hash of a config the add-on manager reads (templates and deployment configs); any
/// other kind, or one that does not exist, without a hash.
fn hash_of(
    ctx: &Context,
    kind: &(String, String),
    namespace: Option<&str>,
    name: &str,
) -> ConfigSpecHash {
    let found = match kind.1.as_str() {
        ADDON_TEMPLATES => ctx
            .templates
            .get(&ObjectRef::new(name))
            .map(|t| super::template::spec_hash(&t)),
        ADDON_DEPLOYMENT_CONFIGS => ctx
            .configs
            .get(&ObjectRef::new(name).within(namespace.unwrap_or_default()))
            .map(|c| super::template::spec_hash_of(namespace, name, &c.spec)),
        _ => None,
    };
    found
        .filter(|_| kind.0 == super::template::GROUP)
        .unwrap_or_else(|| ConfigSpecHash {
            namespace: namespace.filter(|n| !n.is_empty()).map(Into::into),
            name: name.into(),
            spec_hash: None,
        })
}

/// Pins each add-on's configs as the rollout decides, and writes the add-on's progress.
async fn roll_out(cma: &ClusterManagementAddOn, ctx: &Context) -> Result<Action, kube::Error> {
    let name = cma.name_any();
    let addons: Vec<Arc<ManagedClusterAddOn>> = ctx
        .addons
        .state()
        .into_iter()
        .filter(|a| a.name_any() == name && a.metadata.deletion_timestamp.is_none())
        .collect();
    let decisions = ctx.decisions.state();
    let strategies = cma
        .spec
        .install_strategy
        .as_ref()
        .map(|s| s.placements.as_slice())
        .unwrap_or_default();
    let placements = strategies
        .iter()
        .map(|strategy| {
            let mine: Vec<&PlacementDecision> = decisions
                .iter()
                .filter(|d| made_for(d, strategy))
                .map(AsRef::as_ref)
                .collect();
            rollout::PlacementInput {
                strategy,
                groups: crate::replicaset::decide::groups(&mine),
            }
        })
        .collect();
    let hash = |kind: &(String, String), ns: Option<&str>, n: &str| hash_of(ctx, kind, ns, n);
    let outcome = rollout::decide(&rollout::Inputs {
        cma,
        addons: &addons,
        placements,
        hash: &hash,
        now: k8s_openapi::jiff::Timestamp::now(),
    });
    for e in &outcome.errors {
        tracing::warn!(addon = %name, "rollout: {e}");
    }
    for (mca, status) in &outcome.addons {
        ctx.writer.addon_status(mca, status).await?;
    }
    ctx.writer.cma_status(cma, &outcome.status).await?;
    Ok(outcome
        .recheck_after
        .map_or_else(Action::await_change, Action::requeue))
}
