//! One watch of ManagedClusters for every hub controller: a shared reflector store that each
//! controller subscribes to, so registration, placement and add-ons read the same cache instead
//! of each listing and watching the fleet.
use std::sync::Arc;

use futures::{Stream, StreamExt as _, TryStreamExt as _};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};

use crate::api::cluster::ManagedCluster;
use crate::runtime::Shutdown;

/// Events buffered per subscriber before the watch waits for the slowest one.
const BUFFER: usize = 1024;

/// The shared ManagedCluster watch: subscribe every controller, then [`SharedClusters::run`].
pub struct SharedClusters {
    store: Store<ManagedCluster>,
    writer: reflector::store::Writer<ManagedCluster>,
    deletions: std::sync::Mutex<Vec<futures::channel::mpsc::UnboundedSender<Arc<ManagedCluster>>>>,
}

impl Default for SharedClusters {
    fn default() -> Self {
        let (store, writer) = reflector::store_shared(BUFFER);
        Self {
            store,
            writer,
            deletions: std::sync::Mutex::default(),
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
        let events = self
            .writer
            .subscribe()
            .expect("a shared store always has a dispatcher");
        (self.store.clone(), events)
    }

    /// Every deleted ManagedCluster (the subscription of [`Self::subscribe`] carries only
    /// clusters that exist).
    pub fn deletions(&self) -> impl Stream<Item = Arc<ManagedCluster>> + Send + 'static {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        self.deletions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(tx);
        rx
    }

    /// Watches ManagedClusters into the store until `shutdown` is cancelled.
    pub async fn run(self, client: Client, shutdown: Shutdown) {
        let deletions = self
            .deletions
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let watch = watcher(
            Api::<ManagedCluster>::all(client),
            watcher::Config::default(),
        )
        .default_backoff()
        .inspect_ok(move |event| {
            if let watcher::Event::Delete(mc) = event {
                let mc = Arc::new(mc.clone());
                for tx in &deletions {
                    let _ = tx.unbounded_send(mc.clone());
                }
            }
        })
        .reflect_shared(self.writer)
        .for_each(|event| async move {
            if let Err(e) = event {
                tracing::warn!("ManagedCluster watch: {e}");
            }
        });
        tokio::select! {
            () = watch => {}
            () = shutdown.cancelled() => {}
        }
    }
}
