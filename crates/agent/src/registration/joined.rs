//! The joined phase: heartbeats every lease duration (lease, then status), certificate rotation
//! and the managed namespaces in the background, and a watch on the bootstrap secret so a
//! kubeconfig naming another hub sends the agent back to bootstrap. Rotation never blocks heartbeats, and each has its own
//! backoff: a failing heartbeat does not hurry a denied renewal, nor the other way round. With a
//! list of hubs (`MultipleHubs`), the agent also leaves a hub that stops accepting the cluster (a
//! watch on its ManagedCluster) or that no heartbeat has reached for the connection timeout.
use std::pin::{Pin, pin};
use std::time::Duration;

use futures::{Future, Stream, StreamExt as _};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::time::{Instant, sleep_until};

use super::bootstrap::{Bootstrap, KUBECONFIG_KEY};
use super::secret::{self, HubCredential};
use super::{AgentOptions, Error, csr, hubs, lease, namespaces, observe, rotate, writer};
use ocm_api::cluster::ManagedCluster;
use ocm_api::names::DEFAULT_LEASE_SECONDS;
use ocm_runtime::{Backoff, Shutdown};

/// How the joined phase ended.
#[derive(Debug)]
pub enum Exit {
    /// Asked to stop.
    Shutdown,
    /// Bootstrap again, for the given reason.
    Rebootstrap(String),
    /// Select a hub again (`MultipleHubs`), for the given reason.
    LeaveHub(String),
}

/// Longest wait between two attempts to renew a refused or failed certificate rotation.
const MAX_ROTATION_BACKOFF: Duration = Duration::from_secs(300);

/// Until its first heartbeat succeeds, a just-accepted cluster waits for the hub to grant its
/// RBAC (403s for seconds, for as long as a minute when a thousand clusters are accepted at
/// once): retries stay at most this far apart, so the cluster is Available soon after its grant
/// rather than up to `max_backoff` later.
const FIRST_BEAT_MAX_BACKOFF: Duration = Duration::from_secs(8);

type Rotation = Pin<Box<dyn Future<Output = Result<HubCredential, Error>> + Send>>;
type Background = Pin<Box<dyn Future<Output = ()> + Send>>;
type Clusters = Pin<Box<dyn Stream<Item = ManagedCluster> + Send>>;

/// Stays joined with `credential` until shutdown, a 401, or a reason to bootstrap again.
pub async fn run(
    opts: &AgentOptions,
    mut credential: HubCredential,
    cancel: &Shutdown,
) -> Result<Exit, Error> {
    let mut backoff = Backoff::capped(FIRST_BEAT_MAX_BACKOFF.min(opts.max_backoff));
    let mut first_beat = true;
    let mut rotation_backoff = Backoff::new(rotate::MIN_ROTATION_INTERVAL, MAX_ROTATION_BACKOFF);
    let mut hub = credential.client().await?;
    let secrets: Api<Secret> = Api::namespaced(opts.management.clone(), &opts.namespace);
    let bootstrap_events = watcher(
        secrets,
        watcher::Config::default().fields(&format!("metadata.name={}", opts.bootstrap_secret)),
    )
    .default_backoff()
    .applied_objects();
    let mut bootstrap_events = pin!(bootstrap_events);
    let mut next_beat = Instant::now();
    let mut rotate_at = rotation_instant(&credential, opts.rotation_threshold);
    let mut rotation: Option<Rotation> = None;
    // Started by the first heartbeat that succeeds: until then the hub may not have granted the
    // cluster's RBAC, and its watch would only be refused.
    let mut namespaces: Background = Box::pin(std::future::pending());
    let joined_at = Instant::now();
    let mut leave_at = opts
        .hubs
        .as_ref()
        .map(|h| joined_at + h.timeout.max(hubs::GRACE));
    let mut own_cluster = watch_own_cluster(opts, &hub);
    let mut accepted = false;
    tracing::info!(cluster = %opts.cluster_name, "joined the hub as {}", ocm_runtime::identity::common_name(&opts.cluster_name, &credential.agent));
    loop {
        tokio::select! {
            () = cancel.cancelled() => return Ok(Exit::Shutdown),
            () = &mut namespaces => {}
            () = sleep_until(next_beat) => {
                let Some(beat) = beat_until(opts, &hub, leave_at).await else {
                    return Ok(unreachable(opts, &credential));
                };
                next_beat = match beat {
                    Ok(period) => {
                        if std::mem::take(&mut first_beat) {
                            backoff = Backoff::capped(opts.max_backoff);
                            namespaces = keep_namespaces(opts, &hub, &credential);
                        }
                        backoff.reset();
                        if let Some(hubs) = &opts.hubs {
                            leave_at = Some((Instant::now() + hubs.timeout).max(joined_at + hubs::GRACE));
                        }
                        Instant::now() + period
                    }
                    Err(Error::Unauthorized) => return Err(Error::Unauthorized),
                    Err(e @ Error::ClusterMissing { .. }) => return Ok(Exit::Rebootstrap(e.to_string())),
                    Err(e) => {
                        let delay = backoff.next_delay();
                        tracing::warn!(cluster = %opts.cluster_name, "heartbeat failed: {:#}; retrying in {delay:?}", anyhow::Error::from(e));
                        Instant::now() + delay
                    }
                };
            }
            () = sleep_until(rotate_at), if rotation.is_none() => {
                tracing::info!(cluster = %opts.cluster_name, "rotating the hub client certificate");
                rotation = Some(Box::pin(rotate(opts.clone(), hub.clone(), credential.clone(), cancel.clone())));
            }
            result = async { rotation.as_mut().expect("guarded").await }, if rotation.is_some() => {
                rotation = None;
                match result {
                    Ok(new) => {
                        writer::store_credential(opts, &new).await?;
                        hub = new.client().await?;
                        own_cluster = watch_own_cluster(opts, &hub);
                        credential = new;
                        if !first_beat {
                            namespaces = keep_namespaces(opts, &hub, &credential);
                        }
                        rotate_at = rotation_instant(&credential, opts.rotation_threshold);
                        rotation_backoff.reset();
                        tracing::info!(cluster = %opts.cluster_name, "hub client certificate rotated");
                    }
                    Err(Error::Unauthorized) => return Err(Error::Unauthorized),
                    Err(e) => {
                        tracing::warn!(cluster = %opts.cluster_name, "certificate rotation failed: {:#}", anyhow::Error::from(e));
                        rotate_at = Instant::now() + rotation_backoff.next_delay();
                    }
                }
            }
            Some(event) = bootstrap_events.next() => {
                if let Some(reason) = event.ok().and_then(|s| other_hub(&s, &credential)) {
                    return Ok(Exit::Rebootstrap(reason));
                }
            }
            () = sleep_until(leave_at.unwrap_or_else(Instant::now)), if leave_at.is_some() => {
                return Ok(unreachable(opts, &credential));
            }
            Some(mc) = own_cluster.next() => {
                // Only a refusal after an acceptance: `accept` approves the CSR before it sets
                // `hubAcceptsClient`, so a just-joined agent may see it false for a moment.
                if mc.spec.hub_accepts_client {
                    accepted = true;
                } else if accepted || !first_beat {
                    return Ok(Exit::LeaveHub(format!("hub {} no longer accepts the cluster", credential.server)));
                }
            }
        }
    }
}

/// A heartbeat, given up at `leave_at` when there is one (`None` then): a hub that stops
/// answering must not hold the agent past its connection timeout.
async fn beat_until(
    opts: &AgentOptions,
    hub: &kube::Client,
    leave_at: Option<Instant>,
) -> Option<Result<Duration, Error>> {
    match leave_at {
        Some(at) => tokio::time::timeout_at(at, heartbeat(opts, hub)).await.ok(),
        None => Some(heartbeat(opts, hub).await),
    }
}

/// Leaving a hub no heartbeat has reached for the connection timeout.
fn unreachable(opts: &AgentOptions, credential: &HubCredential) -> Exit {
    let timeout = opts.hubs.as_ref().map_or(0, |h| h.timeout.as_secs());
    Exit::LeaveHub(format!(
        "no heartbeat has reached hub {} for {timeout} s",
        credential.server
    ))
}

/// With a list of hubs, the cluster's ManagedCluster as `hub` changes it: a hub that stops
/// accepting the cluster is left at once, as upstream's agent does. Without, nothing.
fn watch_own_cluster(opts: &AgentOptions, hub: &kube::Client) -> Clusters {
    if opts.hubs.is_none() {
        return Box::pin(futures::stream::pending());
    }
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let config = watcher::Config::default().fields(&format!("metadata.name={}", opts.cluster_name));
    Box::pin(
        watcher(api, config)
            .default_backoff()
            .applied_objects()
            .filter_map(|event| std::future::ready(event.ok())),
    )
}

/// The managed namespaces, kept with `hub` (so restarted with each new certificate) for as long
/// as the joined phase lasts.
fn keep_namespaces(
    opts: &AgentOptions,
    hub: &kube::Client,
    credential: &HubCredential,
) -> Background {
    let run = namespaces::run(
        opts.managed.clone(),
        hub.clone(),
        &opts.cluster_name,
        &credential.server,
        // Stopped by being dropped with the phase.
        ocm_runtime::Shutdown::new(),
    );
    Box::pin(async move {
        run.await;
        std::future::pending::<()>().await;
    })
}

/// Why a (changed) bootstrap secret means bootstrapping again: it names another hub.
fn other_hub(bootstrap_secret: &Secret, credential: &HubCredential) -> Option<String> {
    let boot = Bootstrap::parse(secret::field(bootstrap_secret, KUBECONFIG_KEY)?).ok()?;
    (boot.server != credential.server || boot.ca_data != credential.ca_data)
        .then(|| format!("the bootstrap kubeconfig now names hub {}", boot.server))
}

fn rotation_instant(credential: &HubCredential, threshold: f64) -> Instant {
    match rotate::validity(credential.cert_pem.as_bytes()) {
        Ok(v) => {
            Instant::now() + rotate::rotation_delay(v, threshold, ocm_runtime::pki::now_seconds())
        }
        Err(e) => {
            tracing::warn!("cannot read the hub client certificate ({e}); rotating it now");
            Instant::now()
        }
    }
}

/// One beat: read the ManagedCluster, renew the lease, update the status. Returns the period.
async fn heartbeat(opts: &AgentOptions, hub: &kube::Client) -> Result<Duration, Error> {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let mc = api
        .get_opt(&opts.cluster_name)
        .await
        .map_err(|e| Error::kube(format!("reading ManagedCluster {}", opts.cluster_name), e))?
        .ok_or_else(|| Error::ClusterMissing {
            name: opts.cluster_name.clone(),
        })?;
    let seconds = mc
        .spec
        .lease_duration_seconds
        .filter(|s| *s > 0)
        .unwrap_or(DEFAULT_LEASE_SECONDS);
    if writer::renew_lease(hub, &opts.cluster_name).await? == lease::Renewal::Missing {
        tracing::info!(
            cluster = %opts.cluster_name,
            "the hub has not created managed-cluster-lease yet; renewing it on the next beat"
        );
    }
    let observed = observe::observe(&opts.managed, opts.gates, &opts.settings.claims).await;
    writer::update_status(hub, &mc, &observed).await?;
    Ok(Duration::from_secs(u64::try_from(seconds).unwrap_or(60)))
}

/// A new certificate for the same identity, requested with the current one.
async fn rotate(
    opts: AgentOptions,
    hub: kube::Client,
    credential: HubCredential,
    cancel: Shutdown,
) -> Result<HubCredential, Error> {
    let (cert_pem, key_pem) = csr::issue(&hub, &opts, &credential.agent, &cancel).await?;
    Ok(HubCredential {
        cert_pem,
        key_pem,
        ..credential
    })
}
