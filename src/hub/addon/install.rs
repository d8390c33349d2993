//! Install strategies, as upstream's addon-management controller applies them: for a
//! ClusterManagementAddOn with `installStrategy.type: Placements` that the add-on manager manages
//! (no lifecycle annotation, or `addon-manager`), a ManagedClusterAddOn on every cluster its
//! placements decide and on no other: created with the add-on as controlling owner, deleted when
//! the cluster is no longer decided, carrying the cluster's add-on annotations
//! ([`super::annotation`]) from the start. `Manual` add-ons are left to `addon enable` /
//! `disable`.
//! It then rolls the add-on's configs out ([`super::rollout`]) and writes the progress.
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use crate::api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnTemplate,
    ClusterManagementAddOn, ConfigSpecHash, LIFECYCLE_ADDON_MANAGER, LIFECYCLE_ANNOTATION,
    ManagedClusterAddOn, ManagedClusterAddOnSpec, PlacementStrategy,
};
use crate::api::cluster::{ManagedCluster, PLACEMENT_LABEL, PlacementDecision};
use crate::hub::addon::rollout;
use crate::hub::informers::{Feed, Informers};
use crate::runtime::{Shutdown, report, shutdown};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "add-on install controller";
const RETRY: Duration = Duration::from_secs(5);

struct Context {
    client: Client,
    clusters: Store<ManagedCluster>,
    addons: Store<ManagedClusterAddOn>,
    decisions: Store<PlacementDecision>,
    templates: Store<AddOnTemplate>,
    configs: Store<AddOnDeploymentConfig>,
}

/// Whether the hub's add-on manager installs `cma` (not an add-on with its own manager).
#[must_use]
pub fn managed_by_hub(cma: &ClusterManagementAddOn) -> bool {
    cma.annotations()
        .get(LIFECYCLE_ANNOTATION)
        .is_none_or(|v| v.is_empty() || v == LIFECYCLE_ADDON_MANAGER)
}

/// Whether decision `d` is one of placement `p`'s.
fn made_for(d: &PlacementDecision, p: &PlacementStrategy) -> bool {
    d.namespace().as_deref() == Some(p.namespace.as_str())
        && d.labels().get(PLACEMENT_LABEL) == Some(&p.name)
}

/// The clusters `cma`'s placements decide, from the decisions in `decisions`.
#[must_use]
pub fn decided(
    cma: &ClusterManagementAddOn,
    decisions: &[Arc<PlacementDecision>],
) -> BTreeSet<String> {
    let Some(strategy) = &cma.spec.install_strategy else {
        return BTreeSet::new();
    };
    strategy
        .placements
        .iter()
        .flat_map(|p| decisions.iter().filter(move |d| made_for(d, p)))
        .filter_map(|d| d.status.as_ref())
        .flat_map(|s| s.decisions.iter().map(|c| c.cluster_name.clone()))
        .filter(|c| !c.is_empty())
        .collect()
}

/// The controller over `informers`' ClusterManagementAddOns, add-ons, PlacementDecisions,
/// templates and configs, running until `shutdown` is cancelled.
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
    (decisions, decision_events): Feed<PlacementDecision>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let ctx = Arc::new(Context {
        client: hub,
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
    crate::runtime::queue_depth::track(
        CONTROLLER,
        cmas.clone(),
        crate::runtime::queue_depth::Wakes::OnAnyChange,
    );
    let run = Controller::for_shared_stream(cma_events, cmas.clone())
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
        .watches_shared_stream(config_events, move |_| rolled_out(&for_configs))
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(
            reconcile,
            |_, e: &kube::Error, _| {
                tracing::warn!("add-on install: {e}; retrying in {RETRY:?}");
                Action::requeue(RETRY)
            },
            ctx,
        )
        .for_each(|result| async move {
            report::controller_result(CONTROLLER, &result);
        });
    let run = async {
        let _ = tokio::join!(
            clusters.wait_until_ready(),
            addons.wait_until_ready(),
            cmas.wait_until_ready(),
            decisions.wait_until_ready(),
            templates.wait_until_ready(),
            configs.wait_until_ready()
        );
        run.await;
    };
    tokio::select! {
        () = run => {}
        () = shutdown.cancelled() => {}
    }
    Ok(())
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
    let wanted = decided(&cma, &ctx.decisions.state());
    let existing: BTreeSet<String> = ctx
        .addons
        .state()
        .iter()
        .filter(|a| a.name_any() == name)
        .filter_map(|a| a.namespace())
        .collect();
    // A decided cluster not yet in the store is installed on later, as upstream fails the
    // reconcile then: its add-on must start with the cluster's annotations.
    let mut unseen = false;
    for cluster in wanted.difference(&existing) {
        let Some(managed_cluster) = ctx.clusters.get(&ObjectRef::new(cluster)) else {
            tracing::debug!(addon = %name, %cluster, "decided cluster not known yet");
            unseen = true;
            continue;
        };
        let annotations = super::annotation::cluster_annotations(&managed_cluster);
        let mca = ManagedClusterAddOn {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(cluster.clone()),
                owner_references: Some(vec![super::deploy::owner_reference(&*cma, true)]),
                annotations: (!annotations.is_empty()).then_some(annotations),
                ..ObjectMeta::default()
            },
            spec: ManagedClusterAddOnSpec::default(),
            status: None,
        };
        match Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), cluster)
            .create(&PostParams::default(), &mca)
            .await
        {
            Ok(_) => tracing::info!(addon = %name, %cluster, "installed by placement"),
            // Exists already (not yet in the store), or the cluster namespace is gone.
            Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    for cluster in existing.difference(&wanted) {
        match Api::<ManagedClusterAddOn>::namespaced(ctx.client.clone(), cluster)
            .delete(&name, &DeleteParams::default())
            .await
        {
            Ok(_) => tracing::info!(addon = %name, %cluster, "removed: no longer decided"),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let action = roll_out(&cma, &ctx).await?;
    Ok(if unseen {
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
                groups: crate::hub::replicaset::decide::groups(&mine),
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
        super::manager::write_status(&ctx.client, mca, status).await?;
    }
    if cma.status.as_ref() != Some(&outcome.status) {
        Api::<ClusterManagementAddOn>::all(ctx.client.clone())
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"status": outcome.status})),
            )
            .await?;
    }
    Ok(outcome
        .recheck_after
        .map_or_else(Action::await_change, Action::requeue))
}
