//! The hub's managed-namespace controller, as upstream's registration hub always runs it
//! (`ManagedNamespaceController`): each ManagedCluster's `status.managedNamespaces` lists the
//! `spec.managedNamespaces` of every ManagedClusterSet it belongs to, each entry naming its set.
//! The registration agent then creates those namespaces on the managed cluster and reports a
//! `NamespaceAvailable` condition per entry (the registration agent's `namespaces`).
//!
//! It reads the hub's shared ManagedCluster and cluster-set watches ([`ocm_runtime::informers`],
//! set deletions too), so it opens no watch of its own. A
//! cluster is looked at when it changes, and when a set it belongs to, or still lists, changes.
//! The reconcile reads the stores, [`decide`] lists the namespaces and the [`writer`] writes them.
pub mod decide;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};

use ocm_api::cluster::{ManagedCluster, ManagedClusterSet};
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::informers::Informers;
use writer::Error;

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "managed-namespace controller";
/// How often a cluster is looked at again without a change: a set deleted while the set watch
/// was down (relisted, not reported deleted) leaves its namespaces in no other cluster event.
const RESYNC: Duration = Duration::from_secs(600);
/// Retry after a failed status write (a conflict with the agent or the registration
/// controller: the cluster's next change wakes it sooner).
const RETRY: Duration = Duration::from_secs(5);

struct Context {
    client: Client,
    sets: Store<ManagedClusterSet>,
}

/// The controller over `informers`' clusters and sets (deleted sets too), running until
/// `shutdown` is cancelled once the returned future is polled.
#[allow(clippy::needless_pass_by_value)] // the signature every hub controller has
pub fn run_with(
    hub: Client,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = ()> + Send + 'static {
    let (clusters, cluster_events) = informers.feed::<ManagedCluster>();
    let sets = informers.store::<ManagedClusterSet>();
    // A deleted set's namespaces leave its members.
    let set_events = futures::stream::select(
        informers.changes::<ManagedClusterSet>(),
        informers.deletions::<ManagedClusterSet>(),
    );
    let members = clusters.clone();
    let controller = Controller::for_shared_stream(cluster_events, clusters.clone())
        .watches_shared_stream(set_events, move |set| {
            decide::clusters_of_set(&set, &members.state())
                .into_iter()
                .map(|name| ObjectRef::new(&name))
                .collect::<Vec<_>>()
        });
    // Judged only with both caches filled: else a cluster would lose its list for a moment.
    Runner::new(CONTROLLER, controller)
        .after(&clusters)
        .after(&sets)
        .run(
            reconcile,
            Arc::new(Context {
                client: hub,
                sets: sets.clone(),
            }),
            shutdown,
        )
}

async fn reconcile(cluster: Arc<ManagedCluster>, ctx: Arc<Context>) -> Result<Action, Error> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let wanted = match decide::managed_namespaces(&cluster, &ctx.sets.state()) {
        Ok(wanted) => wanted,
        Err(why) => {
            tracing::warn!(cluster = %cluster.name_any(), "managed namespaces: {why}");
            return Ok(Action::requeue(RESYNC));
        }
    };
    let current = cluster
        .status
        .as_ref()
        .map(|s| s.managed_namespaces.as_slice())
        .unwrap_or_default();
    if current != wanted.as_slice() {
        match writer::write(&ctx.client, &cluster, &wanted).await {
            // The agent or the registration controller wrote first: that write wakes this
            // cluster again, decided from the newer object.
            Err(Error::Write {
                source: kube::Error::Api(s),
                ..
            }) if s.code == 409 => return Ok(Action::requeue(RETRY)),
            result => result?,
        }
        tracing::debug!(cluster = %cluster.name_any(), count = wanted.len(), "updated managed namespaces");
    }
    Ok(Action::requeue(RESYNC))
}
