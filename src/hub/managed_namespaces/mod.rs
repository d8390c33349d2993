//! The hub's managed-namespace controller, as upstream's registration hub always runs it
//! (`ManagedNamespaceController`): each ManagedCluster's `status.managedNamespaces` lists the
//! `spec.managedNamespaces` of every ManagedClusterSet it belongs to, each entry naming its set.
//! The registration agent then creates those namespaces on the managed cluster and reports a
//! `NamespaceAvailable` condition per entry ([`crate::agent::registration::namespaces`]).
//!
//! It reads the hub's shared ManagedCluster and cluster-set watches ([`crate::hub::informers`],
//! set deletions too), so it opens no watch of its own. A
//! cluster is looked at when it changes, and when a set it belongs to, or still lists, changes.
pub mod decide;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt as _};
use serde_json::json;

use crate::api::cluster::{ClusterSetManagedNamespace, ManagedCluster, ManagedClusterSet};
use crate::hub::informers::Informers;
use crate::runtime::{Shutdown, report, shutdown};

/// The name this controller reports its results and metrics under.
const CONTROLLER: &str = "managed-namespace controller";
/// How often a cluster is looked at again without a change: a set deleted while the set watch
/// was down (relisted, not reported deleted) leaves its namespaces in no other cluster event.
const RESYNC: Duration = Duration::from_secs(600);
/// Retry after a failed status write (a conflict with the agent or the registration
/// controller: the cluster's next change wakes it sooner).
const RETRY: Duration = Duration::from_secs(5);

/// Why a cluster's managed namespaces could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The status patch failed.
    #[error("updating status.managedNamespaces of ManagedCluster {cluster}")]
    Write {
        /// The cluster.
        cluster: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

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
    crate::runtime::queue_depth::track(
        CONTROLLER,
        clusters.clone(),
        crate::runtime::queue_depth::Wakes::OnAnyChange,
    );
    let run = Controller::for_shared_stream(cluster_events, clusters.clone())
        .watches_shared_stream(set_events, move |set| {
            decide::clusters_of_set(&set, &members.state())
                .into_iter()
                .map(|name| ObjectRef::new(&name))
                .collect::<Vec<_>>()
        })
        .graceful_shutdown_on(shutdown::cancelled(&shutdown))
        .run(
            reconcile,
            |_, e: &Error, _| {
                tracing::debug!(
                    "managed namespaces: {}; retrying in {RETRY:?}",
                    report::chain(e)
                );
                Action::requeue(RETRY)
            },
            Arc::new(Context {
                client: hub,
                sets: sets.clone(),
            }),
        )
        .for_each(|result| async move {
            report::controller_result(CONTROLLER, &result);
        });
    async move {
        // Judged only with both caches filled: else a cluster would lose its list for a moment.
        let _ = tokio::join!(clusters.wait_until_ready(), sets.wait_until_ready());
        run.await;
    }
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
        match write(&ctx.client, &cluster, &wanted).await {
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

/// Replaces `status.managedNamespaces` (dropped when empty), guarded by the resourceVersion so
/// conditions the agent just wrote are never lost: a conflict is decided again.
async fn write(
    client: &Client,
    cluster: &ManagedCluster,
    wanted: &[ClusterSetManagedNamespace],
) -> Result<(), Error> {
    let list = if wanted.is_empty() {
        serde_json::Value::Null
    } else {
        json!(wanted)
    };
    let patch = json!({
        "metadata": {"resourceVersion": cluster.metadata.resource_version},
        "status": {"managedNamespaces": list},
    });
    Api::<ManagedCluster>::all(client.clone())
        .patch_status(
            &cluster.name_any(),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await
        .map(drop)
        .map_err(|source| Error::Write {
            cluster: cluster.name_any(),
            source,
        })
}
