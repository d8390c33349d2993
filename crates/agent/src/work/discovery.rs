//! Kind → resource on the managed cluster for the work agent: one cached discovery
//! ([`ocm_runtime::apply::Resolver`]), replaced by a fresh one when a manifest names a kind it does not
//! know (a CRD installed since), at most once per [`MIN_REFRESH`] so a manifest of a kind that
//! really does not exist cannot turn every reconcile into a discovery.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

use ocm_runtime::apply::{ObjectErrorKind, Resolver};

/// The shortest time between two discoveries triggered by unknown kinds.
pub const MIN_REFRESH: Duration = Duration::from_secs(2);

/// A refreshable resolver.
pub struct Discovery {
    client: Client,
    current: Mutex<(Arc<Resolver>, Instant)>,
}

impl Discovery {
    /// A discovery that asks the server on first need.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            current: Mutex::new((Arc::new(Resolver::new(client.clone())), Instant::now())),
            client,
        }
    }

    fn current(&self) -> (Arc<Resolver>, Instant) {
        let guard = self.current.lock().expect("discovery lock");
        (guard.0.clone(), guard.1)
    }

    /// Replaces `stale` with a fresh resolver, unless another caller already did.
    fn refresh(&self, stale: &Arc<Resolver>) -> Arc<Resolver> {
        let mut guard = self.current.lock().expect("discovery lock");
        if Arc::ptr_eq(&guard.0, stale) {
            *guard = (Arc::new(Resolver::new(self.client.clone())), Instant::now());
        }
        guard.0.clone()
    }

    /// Resource and whether it is namespaced; an unknown kind triggers one fresh discovery.
    pub async fn resolve(
        &self,
        gvk: &GroupVersionKind,
    ) -> Result<(ApiResource, bool), ObjectErrorKind> {
        let (resolver, since) = self.current();
        match resolver.resolve(gvk).await {
            Err(ObjectErrorKind::UnknownKind { .. }) if since.elapsed() >= MIN_REFRESH => {
                tracing::debug!(kind = %gvk.kind, "unknown kind, refreshing discovery");
                self.refresh(&resolver).resolve(gvk).await
            }
            other => other,
        }
    }

    /// A dynamic API for the resource, namespaced when it is (`namespace` then required).
    pub fn api(
        &self,
        resource: &ApiResource,
        namespaced: bool,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        match (namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, resource),
            _ => Api::all_with(self.client.clone(), resource),
        }
    }

    /// Records the kinds a just-applied CRD serves.
    pub fn learn_crd(&self, crd: &DynamicObject) {
        self.current().0.learn_crd(crd);
    }
}
