//! A coordination Lease held by this process: liveness (`clean` and `unjoin` ask whether an
//! operator is running before they wait on its finalizer) and leader election (two `operator
//! hub` processes must not both reconcile). One lease does both: the leader is the process that
//! runs, and a fresh lease means somebody does.
//!
//! Taking the lease is a compare-and-swap on its resourceVersion: a process takes it when it is
//! absent, released (no holder) or expired, renews it while it holds it, and clears the holder
//! on the way out so the next process need not wait for it to expire. Only get, create and
//! update are used.
//!
//! Whether another holder's lease has expired is judged as client-go's leader election judges
//! it: from when *this* process saw the lease last change, on its own monotonic clock, never
//! from the holder's `renewTime` against the local wall clock (a holder whose clock runs a
//! minute behind would look expired while it renews, and two processes would lead). A leader
//! that loses the lease stops its work within `WORK_STOP`, well inside the lease duration a
//! successor waits out.
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

use super::Shutdown;

/// How long a renewal counts. Long enough that the holder rides out an API server outage of
/// half a minute (a restart, an upgrade) instead of stopping every loop it runs.
pub const DURATION: Duration = Duration::from_secs(60);
/// How often the holder renews.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// The holder stops when it could not renew for this long: before the Lease expires, so another
/// process can never take over while this one still reconciles.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(45);
/// How often a waiting process tries to take the lease.
pub const RETRY_EVERY: Duration = Duration::from_secs(2);

/// This process, as a Lease holder: `<hostname>_<random UUID>`, as client-go's
/// `hostname_<uuid>`. Not the PID: two containers of one pod (or two pods with one host name)
/// both run as PID 1, and two holders with one identity would each think they lead.
#[must_use]
pub fn identity() -> String {
    let host =
        hostname::get().map_or_else(|_| "unknown".into(), |h| h.to_string_lossy().into_owned());
    format!("{host}_{}", random_uuid())
}

/// A version 4 UUID (lower-case hex: also a DNS-1123 label) from the system's secure random
/// source; should that ever fail, the time and PID still tell processes apart better than the PID
/// alone.
#[must_use]
pub fn random_uuid() -> String {
    use ring::rand::{SecureRandom as _, SystemRandom};
    let mut b = [0u8; 16];
    if SystemRandom::new().fill(&mut b).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = (nanos ^ (u128::from(std::process::id()) << 96)).to_be_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let n = u128::from_be_bytes(b);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        n >> 96,
        (n >> 80) & 0xffff,
        (n >> 64) & 0xffff,
        (n >> 48) & 0xffff,
        n & 0xffff_ffff_ffff
    )
}

/// Whether `lease` has a holder that renewed it within its duration, at `now`.
#[must_use]
pub fn is_fresh(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = &lease.spec else {
        return false;
    };
    if spec
        .holder_identity
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return false;
    }
    let (Some(MicroTime(renewed)), Some(secs)) = (&spec.renew_time, spec.lease_duration_seconds)
    else {
        return false;
    };
    renewed
        .saturating_add(SignedDuration::from_secs(i64::from(secs)))
        .is_ok_and(|until| until > now)
}

/// Whether somebody holds the Lease `namespace/name` now. Errors (a 403 included) are errors:
/// "cannot tell" must never read as "nobody runs".
pub async fn is_held(client: &Client, namespace: &str, name: &str) -> Result<bool, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    Ok(api
        .get_opt(name)
        .await?
        .is_some_and(|l| is_fresh(&l, Timestamp::now())))
}

/// The holder of the Lease `namespace/name`, if it is fresh.
pub async fn holder(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<String>, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    Ok(api
        .get_opt(name)
        .await?
        .filter(|l| is_fresh(l, Timestamp::now()))
        .and_then(|l| l.spec?.holder_identity))
}

/// One Lease, held (or wanted) by this process.
#[derive(Clone)]
pub struct LeaseLock {
    api: Api<Lease>,
    namespace: String,
    name: String,
    holder: String,
    /// The other holder's record as last seen, and when this process saw it change.
    observed: Arc<Mutex<Option<Observed>>>,
}

/// A lease record of another holder, as this process saw it.
struct Observed {
    /// Its holder and resourceVersion: every renewal changes the latter.
    record: (String, Option<String>),
    /// When this process first saw that record (its own monotonic clock).
    at: tokio::time::Instant,
}

impl LeaseLock {
    /// The Lease `namespace/name`, held as [`identity`].
    #[must_use]
    pub fn new(client: Client, namespace: &str, name: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.into(),
            name: name.into(),
            holder: identity(),
            observed: Arc::default(),
        }
    }

    /// Whether `lease` is held by another process that renewed it, as this process saw it,
    /// within its duration: the record changed less than a lease duration ago on this process's
    /// clock (a record seen for the first time counts from now, as client-go's).
    fn held_elsewhere(&self, lease: &Lease) -> bool {
        let Some(spec) = &lease.spec else {
            return false;
        };
        let holder = spec.holder_identity.clone().unwrap_or_default();
        if holder.is_empty() || holder == self.holder {
            return false;
        }
        let record = (holder, lease.metadata.resource_version.clone());
        let now = tokio::time::Instant::now();
        let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
        let since = match observed.as_ref() {
            Some(o) if o.record == record => o.at,
            _ => {
                *observed = Some(Observed { record, at: now });
                now
            }
        };
        let duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(DURATION, Duration::from_secs);
        now.duration_since(since) < duration
    }

    /// `namespace/name`, for messages.
    #[must_use]
    pub fn path(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Takes the Lease if it is free (absent, released or expired) or renews it if it is ours.
    /// `Ok(false)` when another process holds it, or won a race for it.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = MicroTime(Timestamp::now());
        let seconds = i32::try_from(DURATION.as_secs()).unwrap_or(60);
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.holder.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return conflict_is_false(self.api.create(&PostParams::default(), &lease).await);
        };
        let spec = current.spec.clone().unwrap_or_default();
        let ours = spec.holder_identity.as_deref() == Some(self.holder.as_str());
        if self.held_elsewhere(&current) {
            return Ok(false);
        }
        let mut next = current;
        next.spec = Some(next_spec(spec, &self.holder, seconds, now, ours));
        // The resourceVersion read above makes this a compare-and-swap.
        conflict_is_false(
            self.api
                .replace(&self.name, &PostParams::default(), &next)
                .await,
        )
    }

    /// Clears the holder if it is still this process, so the next one need not wait.
    pub async fn release(&self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.holder.as_str()) {
            return Ok(()); // another process took over: its Lease, not ours
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The spec this process writes when it takes (`ours` false) or renews `spec` at `now`.
fn next_spec(spec: LeaseSpec, holder: &str, seconds: i32, now: MicroTime, ours: bool) -> LeaseSpec {
    // Saturating: the count is informational, and the API server refuses a negative one, so a
    // wrapped count would make every later take-over fail (an overflow would panic in debug).
    let transitions = spec
        .lease_transitions
        .unwrap_or(0)
        .saturating_add(i32::from(!ours));
    LeaseSpec {
        holder_identity: Some(holder.to_string()),
        lease_duration_seconds: Some(seconds),
        acquire_time: if ours {
            spec.acquire_time.clone()
        } else {
            Some(now.clone())
        },
        renew_time: Some(now),
        lease_transitions: Some(transitions),
        ..spec
    }
}

fn conflict_is_false(result: Result<Lease, kube::Error>) -> Result<bool, kube::Error> {
    match result {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Why leading ended without a shutdown.
#[derive(Debug, thiserror::Error)]
#[error(
    "lost the lease {lease}: another process took over, or it could not be renewed for {RENEW_DEADLINE:?}"
)]
pub struct LostLease {
    /// `namespace/name`.
    pub lease: String,
}

/// Leader election: waits until this process holds `lock`, then runs `work` with a child of
/// `shutdown`, renewing the Lease meanwhile. Returns `work`'s result when it ends or `shutdown` is
/// cancelled (then the Lease is released); cancels `work` and returns [`LostLease`] when the Lease
/// was taken by another process or could not be renewed for [`RENEW_DEADLINE`].
/// `waiting` is called once with the current holder when the Lease is taken by someone else.
pub async fn lead<W, F>(
    lock: LeaseLock,
    shutdown: Shutdown,
    waiting: impl FnOnce(&str),
    work: W,
) -> anyhow::Result<()>
where
    W: FnOnce(Shutdown) -> F,
    F: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let mut waiting = Some(waiting);
    loop {
        match lock.try_acquire_or_renew().await {
            Ok(true) => break,
            Ok(false) => {
                if let Some(say) = waiting.take() {
                    let current =
                        holder(&lock.api.clone().into_client(), &lock.namespace, &lock.name)
                            .await
                            .ok()
                            .flatten()
                            .unwrap_or_else(|| "another process".into());
                    say(&current);
                }
            }
            Err(e) => tracing::warn!("taking the lease {}: {e}", lock.path()),
        }
        tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            () = tokio::time::sleep(RETRY_EVERY) => {}
        }
    }
    tracing::info!(holder = %lock.holder, "holding the lease {}", lock.path());
    let child = shutdown.child_token();
    let mut task = tokio::spawn(work(child.clone()));
    let mut renewed = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval(RENEW_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await; // the first tick is now: just acquired
    let outcome = loop {
        tokio::select! {
            result = &mut task => break flatten(result),
            // Asked to stop: the work has a moment to finish its step, then is aborted, so the
            // Lease is released within the process's stop deadline and a successor (or
            // `clean`) need not wait for it to expire.
            () = shutdown.cancelled() => {
                if let Ok(result) = tokio::time::timeout(WORK_STOP, &mut task).await {
                    break flatten(result);
                }
                tracing::warn!("still stopping after {WORK_STOP:?}: aborting");
                task.abort();
                let _ = (&mut task).await;
                break Ok(());
            }
            _ = ticks.tick() => match lock.try_acquire_or_renew().await {
                Ok(true) => renewed = tokio::time::Instant::now(),
                Ok(false) => {
                    stop_within(&child, &mut task, WORK_STOP).await;
                    return Err(LostLease { lease: lock.path() }.into());
                }
                Err(e) => {
                    tracing::warn!("renewing the lease {}: {e}", lock.path());
                    if renewed.elapsed() >= RENEW_DEADLINE {
                        stop_within(&child, &mut task, WORK_STOP).await;
                        return Err(LostLease { lease: lock.path() }.into());
                    }
                }
            },
        }
    };
    match tokio::time::timeout(RELEASE_WITHIN, lock.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("releasing the lease {}: {e}", lock.path()),
        Err(_) => tracing::warn!("releasing the lease {}: no answer", lock.path()),
    }
    outcome
}

/// Cancels the leader's work and waits for it at most `within`, then aborts it: a leader that
/// lost its lease stops in bounded time, long before a successor's term can start.
async fn stop_within(
    token: &Shutdown,
    task: &mut tokio::task::JoinHandle<anyhow::Result<()>>,
    within: Duration,
) {
    token.cancel();
    if tokio::time::timeout(within, &mut *task).await.is_err() {
        tracing::warn!("the lost leader's work still runs after {within:?}: aborting");
        task.abort();
        let _ = task.await;
    }
}

/// How long stopping work may take before it is aborted; with [`RELEASE_WITHIN`], within
/// [`crate::shutdown::STOP_DEADLINE`].
const WORK_STOP: Duration = Duration::from_secs(2);
/// How long releasing the Lease may take when stopping.
const RELEASE_WITHIN: Duration = Duration::from_secs(1);

fn flatten(result: Result<anyhow::Result<()>, tokio::task::JoinError>) -> anyhow::Result<()> {
    match result {
        Ok(r) => r,
        Err(e) if e.is_panic() => Err(anyhow::anyhow!("a loop panicked: {e}")),
        Err(e) => Err(anyhow::anyhow!("a loop was cancelled: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: Option<&str>, renewed: i64) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                lease_duration_seconds: Some(30),
                renew_time: Some(MicroTime(Timestamp::from_second(renewed).unwrap())),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_lease_is_fresh_within_its_duration_and_only_with_a_holder() {
        let now = Timestamp::from_second(1_000).unwrap();
        assert!(is_fresh(&lease(Some("h_1"), 990), now));
        assert!(!is_fresh(&lease(Some("h_1"), 960), now));
        assert!(!is_fresh(&lease(None, 999), now));
        assert!(!is_fresh(&Lease::default(), now));
    }

    #[test]
    fn identities_made_in_one_process_differ() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        let host = hostname::get().unwrap().to_string_lossy().into_owned();
        let uuid = a.strip_prefix(&format!("{host}_")).unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "4");
    }

    #[test]
    fn taking_a_lease_at_i32_max_transitions_saturates() {
        let spec = LeaseSpec {
            holder_identity: Some("other".into()),
            lease_transitions: Some(i32::MAX),
            ..Default::default()
        };
        let now = MicroTime(Timestamp::from_second(1_000).unwrap());
        let next = next_spec(spec, "me", 60, now, false);
        assert_eq!(next.lease_transitions, Some(i32::MAX));
        assert_eq!(next.holder_identity.as_deref(), Some("me"));
        let renewed = next_spec(
            next,
            "me",
            60,
            MicroTime(Timestamp::from_second(1_010).unwrap()),
            true,
        );
        assert_eq!(renewed.lease_transitions, Some(i32::MAX));
    }
}
