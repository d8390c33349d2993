//! `MultipleHubs`: a list of bootstrap kubeconfig secrets, one per hub, and which hub to join.
//!
//! As upstream's agent (`pkg/registration/spoke/bootstrapkubeconfigs.go`): the hub of the stored
//! credential while it is still valid, else the first valid hub of the list. Valid means the
//! bootstrap identity may register there (the same self subject access reviews as upstream's) and
//! the hub has not refused the cluster (its ManagedCluster, if there is one, accepts it). Once
//! joined (`joined`) the agent leaves a hub that stops accepting the cluster or that no
//! heartbeat has reached for the connection timeout, and selects again.
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use super::bootstrap::{self, Bootstrap, KUBECONFIG_KEY};
use super::{AgentOptions, Error, secret};
use ocm_api::cluster::ManagedCluster;

/// Upstream's default `hubConnectionTimeoutSeconds`.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 600;

/// After (re)joining, no timeout is declared this soon: upstream's grace for a hub whose stale
/// lease from an earlier stay has not been renewed yet.
pub const GRACE: Duration = Duration::from_secs(10);

/// The hubs an agent may join (the Klusterlet's `bootstrapKubeConfigs`, `MultipleHubs` on).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HubList {
    /// Bootstrap kubeconfig secrets in the agent namespace, in order of preference.
    pub secrets: Vec<String>,
    /// How long without a heartbeat reaching the hub before the agent selects again.
    pub timeout: Duration,
}

/// The hub selected: its bootstrap secret and kubeconfig.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The bootstrap secret's name.
    pub secret: String,
    /// Its kubeconfig.
    pub boot: Bootstrap,
}

/// The hub to join: the stored credential's (same server) while valid, else the first valid.
pub async fn select(opts: &AgentOptions, hubs: &HubList) -> Result<Selected, Error> {
    let candidates = read_all(opts, hubs).await?;
    let stored = secret::load(opts).await.ok().flatten();
    let mut refusals = Vec::new();
    let mut refused_current = None;
    if let Some(current) = stored.as_ref().and_then(|c| {
        candidates
            .iter()
            .find(|s| s.boot.server == c.server)
            .cloned()
    }) {
        match check(opts, &current).await {
            Ok(()) => return Ok(current),
            Err(why) => {
                tracing::info!(cluster = %opts.cluster_name, hub = %current.boot.server, "leaving the current hub: {why}");
                refusals.push(format!(
                    "{} ({}): {why}",
                    current.secret, current.boot.server
                ));
                refused_current = Some(current.secret);
            }
        }
    }
    // The current hub, just refused, is not asked twice.
    for candidate in candidates
        .into_iter()
        .filter(|c| Some(&c.secret) != refused_current.as_ref())
    {
        match check(opts, &candidate).await {
            Ok(()) => {
                tracing::info!(cluster = %opts.cluster_name, secret = %candidate.secret, hub = %candidate.boot.server, "selected the hub");
                return Ok(candidate);
            }
            Err(why) => refusals.push(format!(
                "{} ({}): {why}",
                candidate.secret, candidate.boot.server
            )),
        }
    }
    Err(Error::Other(format!(
        "no bootstrap kubeconfig of {} is usable for cluster {}{}",
        hubs.secrets.join(", "),
        opts.cluster_name,
        if refusals.is_empty() {
            String::new()
        } else {
            format!(": {}", refusals.join("; "))
        }
    )))
}

/// The secrets of the list that exist and hold a kubeconfig, in order.
async fn read_all(opts: &AgentOptions, hubs: &HubList) -> Result<Vec<Selected>, Error> {
    let api = secret::api(opts);
    let mut out = Vec::new();
    for name in &hubs.secrets {
        let found = api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("reading secret {}/{name}", opts.namespace), e))?;
        let Some(text) = found
            .as_ref()
            .and_then(|s| secret::field(s, KUBECONFIG_KEY))
        else {
            tracing::warn!(cluster = %opts.cluster_name, "bootstrap secret {}/{name} is missing or has no kubeconfig", opts.namespace);
            continue;
        };
        match Bootstrap::parse(text) {
            Ok(boot) => out.push(Selected {
                secret: name.clone(),
                boot,
            }),
            Err(why) => {
                tracing::warn!(cluster = %opts.cluster_name, "bootstrap secret {}/{name}: {why}", opts.namespace);
            }
        }
    }
    Ok(out)
}

/// Why the hub of `candidate` cannot be joined now, if it cannot.
async fn check(opts: &AgentOptions, candidate: &Selected) -> Result<(), String> {
    let hub = bootstrap::client(&candidate.boot.kubeconfig, &candidate.secret)
        .await
        .map_err(|e| e.to_string())?;
    for (group, resource, verb) in BOOTSTRAP_ACCESS {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    group: Some((*group).into()),
                    resource: Some((*resource).into()),
                    verb: Some((*verb).into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<SelfSubjectAccessReview>::all(hub.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| format!("cannot reach the hub: {e}"))?;
        if !answer.status.is_some_and(|s| s.allowed) {
            return Err(format!("the bootstrap identity may not {verb} {resource}"));
        }
    }
    let cluster = Api::<ManagedCluster>::all(hub)
        .get_opt(&opts.cluster_name)
        .await
        .map_err(|e| format!("reading ManagedCluster {}: {e}", opts.cluster_name))?;
    match cluster {
        Some(mc) if !mc.spec.hub_accepts_client => {
            Err("the hub does not accept the cluster (hubAcceptsClient is false)".into())
        }
        _ => Ok(()),
    }
}

/// What a bootstrap identity must be allowed (upstream's `GetBootstrapSSARs`).
const BOOTSTRAP_ACCESS: &[(&str, &str, &str)] = &[
    (
        "cluster.open-cluster-management.io",
        "managedclusters",
        "create",
    ),
    (
        "cluster.open-cluster-management.io",
        "managedclusters",
        "get",
    ),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "create",
    ),
    ("certificates.k8s.io", "certificatesigningrequests", "get"),
    ("certificates.k8s.io", "certificatesigningrequests", "list"),
    ("certificates.k8s.io", "certificatesigningrequests", "watch"),
];
