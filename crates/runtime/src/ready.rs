//! Waiting for a store to have listed, from any number of tasks at once.
//!
//! kube-runtime's `Store::wait_until_ready` keeps only the waker of the task that polled it last
//! (one oneshot receiver behind a mutex): when two tasks wait on the same store before it is
//! ready — a controller and the work agent's sweeper, or two controllers held back by one
//! shared store — the first one is never woken, and it waits for ever. [`until_ready`] polls it
//! again at a short interval, so each waiter sees readiness within that interval of the first
//! one that was woken (the store remembers it once observed).
use std::time::Duration;

use kube::runtime::reflector::Store;
use kube::runtime::reflector::store::WriterDropped;

/// How often a waiter looks again when it was not woken.
const LOOK_AGAIN: Duration = Duration::from_millis(100);

/// Resolves once `store` has listed; `Err` when its writer is gone first.
pub async fn until_ready<K>(store: &Store<K>) -> Result<(), WriterDropped>
where
    K: kube::Resource + Clone + 'static,
    K::DynamicType: std::hash::Hash + Eq + Clone,
{
    loop {
        if let Ok(ready) = tokio::time::timeout(LOOK_AGAIN, store.wait_until_ready()).await {
            return ready;
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    use super::*;

    #[tokio::test]
    async fn every_waiter_sees_the_store_ready() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { until_ready(&store).await })
            })
            .collect();
        // Let every waiter register before the store lists.
        tokio::task::yield_now().await;
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitDone);
        for waiter in waiters {
            tokio::time::timeout(Duration::from_secs(5), waiter)
                .await
                .expect("a waiter was never woken")
                .unwrap()
                .unwrap();
        }
    }
}
