//! The webhook's connection table: at most a fixed number of connections open, and when a new
//! one arrives at the cap, the one that has gone longest without progress is closed to make room.
//!
//! Refusing the newest connection instead would let anyone who can reach the port lock the API
//! server out by holding the cap's worth of idle sockets (renewing each before its timeout).
//! Evicting the longest idle one means an attacker must open connections faster than the API
//! server completes a handshake and a request (milliseconds) to starve it, while the number of
//! sockets, and so file descriptors, stays bounded either way.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The open connections, by when each last made progress.
pub(super) struct Slots {
    cap: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Ids and stamps come from one counter, so a larger stamp is a later activity.
    next: u64,
    /// stamp → (id, cancelled when the connection is evicted); the first entry is the stalest.
    by_stamp: BTreeMap<u64, (u64, CancellationToken)>,
    /// id → its current stamp.
    stamp_of: HashMap<u64, u64>,
}

impl Inner {
    fn stamp(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

/// One admitted connection; dropping it frees its place.
pub(super) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    evicted: CancellationToken,
}

impl Slots {
    /// A table of at most `cap` connections (at least one).
    pub(super) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap: cap.max(1),
            inner: Mutex::new(Inner::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every critical section leaves the maps consistent: a panic elsewhere cannot poison them.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection, evicting the stalest one first when the table is full.
    pub(super) fn admit(self: &Arc<Self>) -> Slot {
        let mut inner = self.lock();
        while inner.stamp_of.len() >= self.cap {
            let Some((_, (id, evicted))) = inner.by_stamp.pop_first() else {
                break;
            };
            inner.stamp_of.remove(&id);
            evicted.cancel();
        }
        let id = inner.stamp();
        let evicted = CancellationToken::new();
        inner.by_stamp.insert(id, (id, evicted.clone()));
        inner.stamp_of.insert(id, id);
        Slot {
            slots: Arc::clone(self),
            id,
            evicted,
        }
    }

    /// How many connections are open.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().stamp_of.len()
    }
}

impl Slot {
    /// Records progress: this connection becomes the last to be evicted.
    pub(super) fn touch(&self) {
        let mut inner = self.slots.lock();
        let Some(old) = inner.stamp_of.get(&self.id).copied() else {
            return; // evicted already
        };
        let Some(entry) = inner.by_stamp.remove(&old) else {
            return;
        };
        let stamp = inner.stamp();
        inner.by_stamp.insert(stamp, entry);
        inner.stamp_of.insert(self.id, stamp);
    }

    /// Completes when this connection was evicted to make room for a newer one.
    pub(super) async fn evicted(&self) {
        self.evicted.cancelled().await;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.slots.lock();
        if let Some(stamp) = inner.stamp_of.remove(&self.id) {
            inner.by_stamp.remove(&stamp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_evicts_the_connection_idle_longest() {
        let slots = Slots::new(3);
        let (a, b, c) = (slots.admit(), slots.admit(), slots.admit());
        a.touch(); // a made progress: b is now the stalest
        let d = slots.admit();
        assert!(b.evicted.is_cancelled());
        assert!(!a.evicted.is_cancelled() && !c.evicted.is_cancelled());
        assert_eq!(slots.len(), 3);
        let _e = slots.admit();
        assert!(c.evicted.is_cancelled());
        assert!(!d.evicted.is_cancelled());
    }

    #[test]
    fn a_dropped_connection_frees_its_place() {
        let slots = Slots::new(2);
        let a = slots.admit();
        let b = slots.admit();
        drop(a);
        assert_eq!(slots.len(), 1);
        let _c = slots.admit();
        assert!(!b.evicted.is_cancelled());
        // Dropping an evicted connection, or touching it, changes nothing.
        let _d = slots.admit();
        assert!(b.evicted.is_cancelled());
        b.touch();
        drop(b);
        assert_eq!(slots.len(), 2);
    }
}
