//! The one skeleton of the add-on controllers that look after a ManagedCluster's add-ons
//! ([`super::annotation`], [`super::discovery`], [`super::healthcheck`]): a [`Runner`] over the
//! shared ManagedCluster store — what wakes it, its gate and the other stores it decides from are
//! each controller's — whose reconcile reads the cluster's ManagedClusterAddOns from the shared
//! add-on store and hands both to the controller ([`PerCluster::reconcile`]), once the cluster
//! and add-on stores have listed. Everything else (the scheduler, retries, metrics, shutdown) is
//! the [`Runner`]'s.
use std::sync::Arc;

use kube::ResourceExt as _;
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;

use ocm_api::addon::ManagedClusterAddOn;
use ocm_api::cluster::ManagedCluster;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::{Failure, Runner};

/// What one of these controllers does for a cluster.
pub(super) trait PerCluster: Send + Sync + 'static {
    /// Why a reconcile failed.
    type Error: Failure;

    /// Reconciles `cluster`, whose add-ons the store shows as `addons`: reads what else it
    /// needs, decides, and has its writer write.
    fn reconcile(
        &self,
        cluster: &ManagedCluster,
        addons: Vec<Arc<ManagedClusterAddOn>>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;
}

/// Runs `controller` on `runner` (its triggers, gate and other stores set) over the clusters of
/// `clusters` and the add-ons of `addons`, until `shutdown` is cancelled, once the returned future
/// is polled.
pub(super) fn run<C: PerCluster>(
    runner: Runner<ManagedCluster>,
    clusters: &Store<ManagedCluster>,
    addons: Store<ManagedClusterAddOn>,
    controller: C,
    shutdown: Shutdown,
) -> impl Future<Output = anyhow::Result<()>> + Send + use<C> {
    // Decide only from complete stores.
    let runner = runner.after(clusters).after(&addons);
    let reconcile = |cluster: Arc<ManagedCluster>, ctx: Arc<(Store<ManagedClusterAddOn>, C)>| async move {
        let (addons, controller) = &*ctx;
        let name = cluster.name_any();
        let mine = addons
            .state()
            .into_iter()
            .filter(|a| a.namespace().as_deref() == Some(name.as_str()))
            .collect();
        controller.reconcile(&cluster, mine).await
    };
    let run = runner.run(reconcile, Arc::new((addons, controller)), shutdown);
    async move {
        run.await;
        Ok(())
    }
}
