//! Install strategies, as upstream's addon-management controller applies them: for a
//! ClusterManagementAddOn with `installStrategy.type: Placements` that the add-on manager manages
//! (no lifecycle annotation, or `addon-manager`), a ManagedClusterAddOn on every cluster its
//! placements decide and on no other: created with the add-on as controlling owner, deleted when
//! the cluster is no longer decided. `Manual` add-ons are left to `addon enable` / `disable`.
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt as _};

use crate::api::addon::{
    ClusterManagementAddOn, InstallStrategyType, LIFECYCLE_ADDON_MANAGER, LIFECYCLE_ANNOTATION,
    ManagedClusterAddOn, ManagedClusterAddOnSpec,
};
use crate::api::cluster::{PLACEMENT_LABEL, PlacementDecision};
use crate::hub::watch;
use crate::runtime::{Shutdown, report, shutdown};

const RETRY: Duration = Duration::from_secs(5);

struct Context {
    client: Client,
    addons: Store<ManagedClusterAddOn>,
    decisions: Store<PlacementDecision>,
}

/// Whether the hub's add-on manager installs `cma` (not an add-on with its own manager).
#[must_use]
pub fn managed_by_hub(cma: &ClusterManagementAddOn) -> bool {
    cma.annotations()
        .get(LIFECYCLE_ANNOTATION)
        .is_none_or(|v| v.is_empty() || v == LIFECYCLE_ADDON_MANAGER)
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
        .flat_map(|p| {
            decisions.iter().filter(move |d| {
                d.namespace().as_deref() == Some(p.namespace.as_str())
                    && d.labels().get(PLACEMENT_LABEL) == Some(&p.name)
            })
        })
        .filter_map(|d| d.status.as_ref())
        .flat_map(|s| s.decisions.iter().map(|c| c.cluster_name.clone()))
        .filter(|c| !c.is_empty())
        .collect()
}

/// Runs until `shutdown` is cancelled.
pub async fn run_with(
    hub: Client,
    addons: Store<ManagedClusterAddOn>,
    addon_events: impl Stream<Item = Arc<ManagedClusterAddOn>> + Send + 'static,
    cmas: Store<ClusterManagementAddOn>,
    cma_events: impl Stream<Item = Arc<ClusterManagementAddOn>> + Send + 'static,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let (decisions, decision_events, decision_watch) = watch::shared::<PlacementDecision>(
        &hub,
        watcher::Config::default().labels(PLACEMENT_LABEL),
    );
    let ctx = Arc::new(Context {
        client: hub,
        addons: addons.clone(),
        decisions: decisions.clone(),
    });
    let for_decisions = cmas.clone();
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
            report::controller_result("add-on install controller", &result);
        });
    let run = async {
        let _ = tokio::join!(
            addons.wait_until_ready(),
            cmas.wait_until_ready(),
            decisions.wait_until_ready()
        );
        run.await;
    };
    tokio::select! {
        () = run => {}
        () = decision_watch => {}
        () = shutdown.cancelled() => {}
    }
    Ok(())
}

async fn reconcile(
    cma: Arc<ClusterManagementAddOn>,
    ctx: Arc<Context>,
) -> Result<Action, kube::Error> {
    let placements = cma
        .spec
        .install_strategy
        .as_ref()
        .is_some_and(|s| s.type_ == Some(InstallStrategyType::Placements));
    if !placements || !managed_by_hub(&cma) || cma.metadata.deletion_timestamp.is_some() {
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
    for cluster in wanted.difference(&existing) {
        let mca = ManagedClusterAddOn {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(cluster.clone()),
                owner_references: Some(vec![super::deploy::owner_reference(&*cma, true)]),
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
    Ok(Action::await_change())
}
