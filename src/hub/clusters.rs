//! One watch of ManagedClusters for every hub controller: one store and a [`Fanout`] of changes
//! that each controller subscribes to, so registration, placement and add-ons read the same
//! cache instead of each listing and watching the fleet.
use std::sync::Arc;

use futures::Stream;
use kube::Client;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;

use crate::api::cluster::ManagedCluster;
use crate::hub::watch::{self, Fanout};
use crate::runtime::Shutdown;

/// The shared ManagedCluster watch: subscribe every controller, then [`SharedClusters::run`].
pub struct SharedClusters {
    store: Store<ManagedCluster>,
    writer: reflector::store::Writer<ManagedCluster>,
    changes: Arc<Fanout<ManagedCluster>>,
    deletions: Arc<Fanout<ManagedCluster>>,
}

impl Default for SharedClusters {
    fn default() -> Self {
        let (store, writer) = reflector::store();
        Self {
            store,
            writer,
            changes: Arc::default(),
            deletions: Arc::default(),
        }
    }
}

impl SharedClusters {
    /// A watch not yet running.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The store and a stream of every changed ManagedCluster, for one controller.
    pub fn subscribe(
        &self,
    ) -> (
        Store<ManagedCluster>,
        impl Stream<Item = Arc<ManagedCluster>> + Send + 'static,
    ) {
        (self.store.clone(), self.changes.subscribe())
    }

    /// The store alone, for a controller that reads clusters but is not woken by them.
    #[must_use]
    pub fn store(&self) -> Store<ManagedCluster> {
        self.store.clone()
    }

    /// Every deleted ManagedCluster (the subscription of [`Self::subscribe`] carries only
    /// changes).
    pub fn deletions(&self) -> impl Stream<Item = Arc<ManagedCluster>> + Send + 'static {
        self.deletions.subscribe()
    }

    /// Watches ManagedClusters into the store until `shutdown` is cancelled.
    pub async fn run(self, client: Client, shutdown: Shutdown) {
        let deletions = self.deletions;
        let watch = watch::publishing(
            &client,
            watcher::Config::default(),
            self.writer,
            self.changes,
            move |event| {
                if let watcher::Event::Delete(mc) = event {
                    deletions.publish(&Arc::new(mc.clone()));
                }
            },
        );
        tokio::select! {
            () = watch => {}
            () = shutdown.cancelled() => {}
        }
    }
}
