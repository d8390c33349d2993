//! One way to run a controller, written once for every hub controller, operator and agent loop
//! ([`Runner`]): it waits until the stores it decides from have listed (deciding from a store
//! that has not would undo what is there), reconciles with kube-runtime's scheduler (one
//! reconcile per object at a time, repeated wake-ups folded), retries a failed object on a
//! jittered backoff of its own that a success resets, logs each failure once with the object's
//! name and the next try, counts reconciles and queue depth for `/metrics`, hands objects that
//! are gone to a clean-up of the caller's, and stops when `shutdown` is cancelled.
//!
//! A controller's error says how it is retried ([`Failure`]): on the backoff, after a fixed wait
//! (it waits on something, it did not fail), or not before the object changes.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use kube::Resource;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};

use crate::queue_depth::{self, Wakes};
use crate::{Backoff, Shutdown, report, shutdown};

/// The first retry of a failed object, and the cap its backoff grows to.
const FLOOR: Duration = Duration::from_millis(500);
const CAP: Duration = Duration::from_secs(30);
/// How long reconciles running at shutdown may take to finish, by default.
const GRACE: Duration = Duration::from_secs(5);

/// What to do after a failed reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Again after the object's next backoff delay.
    Backoff,
    /// Again after this long, the backoff untouched: the object waits on something.
    After(Duration),
    /// Not before the object changes: only its author can fix it (an invalid spec).
    OnChange,
}

/// A reconcile's error, and how the object is retried after it.
pub trait Failure: std::error::Error + Send + Sync + 'static {
    /// The backoff, unless the error says otherwise.
    fn retry(&self) -> Retry {
        Retry::Backoff
    }

    /// Whether the failure is no news (a write that lost a race and is decided again): logged
    /// at debug, not as a warning.
    fn expected(&self) -> bool {
        false
    }
}

impl Failure for kube::Error {}

impl<E: Failure> Failure for kube::runtime::finalizer::Error<E> {
    fn retry(&self) -> Retry {
        use kube::runtime::finalizer::Error;
        match self {
            Error::ApplyFailed(e) | Error::CleanupFailed(e) => e.retry(),
            _ => Retry::Backoff,
        }
    }
}

/// A clean-up for an object that is gone (woken by its deletion, not found in the store).
type Gone<K> = Box<dyn Fn(ObjectRef<K>) -> BoxFuture<'static, ()> + Send + Sync>;

/// A switch a controller follows (a feature gate): while off it reconciles nothing; each time it
/// may have flipped, everything is reconciled again.
pub struct Gate {
    /// Whether the controller may act now.
    pub on: Arc<dyn Fn() -> bool + Send + Sync>,
    /// Ticks whenever `on` may have changed.
    pub flips: futures::stream::BoxStream<'static, ()>,
}

/// A kube-runtime [`Controller`] and how to run it; see the module docs.
pub struct Runner<K: Resource<DynamicType = ()> + Clone + std::fmt::Debug + Send + Sync + 'static> {
    name: &'static str,
    controller: Controller<K>,
    wakes: Wakes,
    config: controller::Config,
    ready: Vec<BoxFuture<'static, ()>>,
    floor: Duration,
    cap: Duration,
    grace: Duration,
    gone: Option<Gone<K>>,
    gate: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

impl<K> Runner<K>
where
    K: Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    /// `controller` (its triggers already set), reporting under `name`.
    #[must_use]
    pub fn new(name: &'static str, controller: Controller<K>) -> Self {
        Self {
            name,
            controller,
            wakes: Wakes::OnAnyChange,
            config: controller::Config::default(),
            ready: Vec::new(),
            floor: FLOOR,
            cap: CAP,
            grace: GRACE,
            gone: None,
            gate: None,
        }
    }

    /// Reconciles nothing but deletions while `gate` is off, and everything again each time it
    /// flips.
    #[must_use]
    pub fn gated(mut self, gate: Gate) -> Self {
        self.controller = self.controller.reconcile_all_on(gate.flips);
        self.gate = Some(gate.on);
        self
    }

    /// Which changes of its own kind wake it, for its queue depth.
    #[must_use]
    pub fn wakes(mut self, wakes: Wakes) -> Self {
        self.wakes = wakes;
        self
    }

    /// How many objects are reconciled at once (unbounded by default).
    #[must_use]
    pub fn concurrency(mut self, n: u16) -> Self {
        self.config = self.config.concurrency(n);
        self
    }

    /// How long a burst of wake-ups is folded into one reconcile.
    #[must_use]
    pub fn debounce(mut self, wait: Duration) -> Self {
        self.config = self.config.debounce(wait);
        self
    }

    /// Reconciles nothing before `store` has listed. Only for stores filled by a watch that runs
    /// without this controller (shared informers): the controller's own fills only once it runs.
    #[must_use]
    pub fn after<S>(mut self, store: &Store<S>) -> Self
    where
        S: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let store = store.clone();
        self.ready.push(Box::pin(async move {
            let _ = crate::ready::until_ready(&store).await;
        }));
        self
    }

    /// The retry backoff of a failed object: from `floor`, doubling, up to `cap`.
    #[must_use]
    pub fn backoff(mut self, floor: Duration, cap: Duration) -> Self {
        self.floor = floor;
        self.cap = cap;
        self
    }

    /// How long reconciles running at shutdown may take to finish before they are dropped.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Runs `clean_up` for each object woken but gone from the store (a deletion the controller
    /// watches for).
    #[must_use]
    pub fn on_gone<F, Fut>(mut self, clean_up: F) -> Self
    where
        F: Fn(ObjectRef<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.gone = Some(Box::new(move |object| Box::pin(clean_up(object))));
        self
    }

    /// The controller's run with `reconcile` over `ctx`, until `shutdown` is cancelled, once the
    /// returned future is polled.
    pub fn run<Ctx, E, F, Fut>(
        self,
        mut reconcile: F,
        ctx: Arc<Ctx>,
        shutdown: Shutdown,
    ) -> impl Future<Output = ()> + Send + 'static
    where
        Ctx: Send + Sync + 'static,
        E: Failure,
        F: FnMut(Arc<K>, Arc<Ctx>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let name = self.name;
        queue_depth::track(name, self.controller.store(), self.wakes);
        let failures = Arc::new(Failures::new(self.floor, self.cap));
        let reconcile = {
            let failures = failures.clone();
            let gate = self.gate;
            move |object: Arc<K>, ctx: Arc<Ctx>| {
                let key = ObjectRef::from_obj(&*object);
                // Switched off, a controller still lets go of what it is deleting (its
                // finalizers): else nothing would, and the deletion would hang.
                let deleting = object.meta().deletion_timestamp.is_some();
                let off = !deleting && gate.as_ref().is_some_and(|on| !on());
                let reconciled = (!off).then(|| reconcile(object, ctx));
                let failures = failures.clone();
                async move {
                    // Switched off: left as it is until the gate flips.
                    let Some(reconciled) = reconciled else {
                        return Ok(Action::await_change());
                    };
                    let result = reconciled.await;
                    if result.is_ok() {
                        failures.forget(&key);
                    }
                    result
                }
            }
        };
        let forgotten = failures.clone();
        let error_policy = move |object: Arc<K>, error: &E, _: Arc<Ctx>| {
            let key = ObjectRef::from_obj(&*object);
            let (action, next) = match error.retry() {
                Retry::Backoff => {
                    let delay = failures.next_delay(&key);
                    (Action::requeue(delay), format!("retrying in {delay:?}"))
                }
                Retry::After(wait) => (Action::requeue(wait), format!("looking again in {wait:?}")),
                Retry::OnChange => (Action::await_change(), "waiting for a change".to_string()),
            };
            if error.expected() {
                tracing::debug!(object = %key, "{name}: {}; {next}", report::chain(error));
            } else {
                tracing::warn!(object = %key, "{name}: {}; {next}", report::chain(error));
            }
            action
        };
        let gone = self.gone.map(Arc::new);
        let results = self
            .controller
            .with_config(self.config)
            .graceful_shutdown_on(shutdown::cancelled(&shutdown))
            .run(reconcile, error_policy, ctx)
            .for_each(move |result| {
                report::record(name, &result);
                let gone = gone.clone();
                let failures = forgotten.clone();
                async move {
                    use kube::runtime::controller::Error;
                    match result {
                        Ok(_) | Err(Error::ReconcilerFailed(..)) => {}
                        Err(Error::ObjectNotFound(object)) => {
                            let mut key = ObjectRef::<K>::new(&object.name);
                            key.namespace = object.namespace;
                            // A deleted object's backoff would otherwise be kept for good.
                            failures.forget(&key);
                            if let Some(gone) = gone {
                                gone(key).await;
                            }
                        }
                        Err(e) => tracing::warn!("{name}: {}", report::chain(&e)),
                    }
                }
            });
        let ready = futures::future::join_all(self.ready);
        let grace = self.grace;
        async move {
            tokio::select! {
                _ = ready => {}
                () = shutdown.cancelled() => return,
            }
            tracing::info!("{name} started");
            tokio::select! {
                () = results => {}
                () = async { shutdown.cancelled().await; tokio::time::sleep(grace).await } => {
                    tracing::warn!("{name}: reconciles did not finish within {grace:?} of shutdown; stopping anyway");
                }
            }
            tracing::info!("{name} stopped");
        }
    }
}

/// Each failing object's backoff, forgotten on its first success.
struct Failures<K: Resource<DynamicType = ()>> {
    floor: Duration,
    cap: Duration,
    backoffs: Mutex<HashMap<ObjectRef<K>, Backoff>>,
}

impl<K: Resource<DynamicType = ()>> Failures<K> {
    fn new(floor: Duration, cap: Duration) -> Self {
        Self {
            floor,
            cap,
            backoffs: Mutex::default(),
        }
    }

    fn next_delay(&self, key: &ObjectRef<K>) -> Duration {
        self.lock()
            .entry(key.clone())
            .or_insert_with(|| Backoff::new(self.floor, self.cap))
            .next_delay()
    }

    fn forget(&self, key: &ObjectRef<K>) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectRef<K>, Backoff>> {
        self.backoffs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn a_failing_object_backs_off_alone_and_a_success_resets_it() {
        let failures =
            Failures::<ConfigMap>::new(Duration::from_millis(100), Duration::from_secs(2));
        let (a, b) = (ObjectRef::new("a"), ObjectRef::new("b"));
        let first = failures.next_delay(&a);
        let mut later = first;
        for _ in 0..8 {
            later = failures.next_delay(&a);
        }
        assert!(first <= Duration::from_millis(200), "{first:?}");
        assert!(later >= Duration::from_secs(1), "{later:?}");
        assert!(failures.next_delay(&b) <= Duration::from_millis(200));
        failures.forget(&a);
        assert!(failures.next_delay(&a) <= Duration::from_millis(200));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("invalid")]
    struct Invalid;
    impl Failure for Invalid {
        fn retry(&self) -> Retry {
            Retry::OnChange
        }
    }

    #[test]
    fn a_finalizer_error_is_retried_as_its_cause_says() {
        use kube::runtime::finalizer::Error;
        assert_eq!(Error::ApplyFailed(Invalid).retry(), Retry::OnChange);
        assert_eq!(Error::<Invalid>::UnnamedObject.retry(), Retry::Backoff);
    }
}
