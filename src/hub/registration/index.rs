//! The hub controller's in-memory index: what it has seen of every ManagedCluster, pending CSR
//! and lease, and the actions that follow. Pure and synchronous (linkerd's index/writer split):
//! events go in, [`Action`]s come out, the writer reports back with [`Index::done`]. Each action
//! is in flight at most once per cluster; a failed one is retried by re-deciding from the latest
//! state, so nothing stale is ever replayed.
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use tokio::time::Instant;

use crate::api::cluster::{
    CLUSTER_CLEANUP_FINALIZER, HUB_ACCEPTED_MANAGED_CLUSTER, MANAGED_CLUSTER_CONDITION_AVAILABLE,
    ManagedCluster,
};
use crate::api::conditions;
use crate::identity::CsrFacts;

/// A lease is stale after this many lease durations without renewal (upstream's).
pub const GRACE_FACTOR: u32 = 5;
/// Lease duration when the ManagedCluster names none.
pub const DEFAULT_LEASE_SECONDS: i32 = 60;

/// Something the writer must do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Namespace, RBAC, finalizer and `HubAcceptedManagedCluster=True`.
    Accept(String),
    /// Revoke the RBAC; `HubAcceptedManagedCluster=False`, `HubDeniedManagedCluster=True`.
    Deny(String),
    /// The cluster is being deleted: remove namespace and RBAC, then the finalizer.
    Cleanup(String),
    /// Approve a renewal CSR `(csr, cluster)`.
    Approve(String, String),
    /// `ManagedClusterConditionAvailable=Unknown`: the lease is stale.
    MarkLeaseStale(String),
}

impl Action {
    /// The cluster the action is about.
    #[must_use]
    pub fn cluster(&self) -> &str {
        match self {
            Self::Accept(c)
            | Self::Deny(c)
            | Self::Cleanup(c)
            | Self::MarkLeaseStale(c)
            | Self::Approve(_, c) => c,
        }
    }
}

/// What the index keeps of one ManagedCluster.
#[derive(Debug, Clone, PartialEq)]
struct Cluster {
    accepts: bool,
    deleting: bool,
    has_finalizer: bool,
    accepted_condition: Option<bool>,
    available_unknown: bool,
    lease_seconds: i32,
    /// The writer granted access in this process (so RBAC is known to exist).
    granted: bool,
    /// When the cluster was first seen accepted: the lease clock starts here if it has none.
    accepted_since: Option<Instant>,
}

/// The index.
#[derive(Debug, Default)]
pub struct Index {
    clusters: HashMap<String, Cluster>,
    /// Pending CSRs by name.
    csrs: HashMap<String, CsrFacts>,
    /// Per cluster: the last renewTime seen and when it was seen to change.
    leases: HashMap<String, (Option<String>, Instant)>,
    in_flight: BTreeSet<Action>,
}

impl Index {
    /// An empty index.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Names of the known clusters, CSRs and lease namespaces (for relists).
    #[must_use]
    pub fn cluster_names(&self) -> Vec<String> {
        self.clusters.keys().cloned().collect()
    }

    /// Names of the known pending CSRs.
    #[must_use]
    pub fn csr_names(&self) -> Vec<String> {
        self.csrs.keys().cloned().collect()
    }

    /// Namespaces of the known leases.
    #[must_use]
    pub fn lease_names(&self) -> Vec<String> {
        self.leases.keys().cloned().collect()
    }

    /// A ManagedCluster was added or changed.
    pub fn apply_cluster(&mut self, mc: &ManagedCluster, now: Instant) -> Vec<Action> {
        let Some(name) = mc.metadata.name.clone() else {
            return vec![];
        };
        let conditions = mc
            .status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or_default();
        let previous = self.clusters.get(&name);
        let entry = Cluster {
            accepts: mc.spec.hub_accepts_client,
            deleting: mc.metadata.deletion_timestamp.is_some(),
            has_finalizer: mc
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == CLUSTER_CLEANUP_FINALIZER),
            accepted_condition: conditions::find(conditions, HUB_ACCEPTED_MANAGED_CLUSTER)
                .map(|c| c.status == conditions::TRUE),
            available_unknown: conditions::find(conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE)
                .is_some_and(|c| c.status == conditions::UNKNOWN),
            lease_seconds: mc
                .spec
                .lease_duration_seconds
                .filter(|s| *s > 0)
                .unwrap_or(DEFAULT_LEASE_SECONDS),
            granted: previous.is_some_and(|p| p.granted),
            accepted_since: if mc.spec.hub_accepts_client {
                previous.and_then(|p| p.accepted_since).or(Some(now))
            } else {
                None
            },
        };
        self.clusters.insert(name.clone(), entry);
        self.decide(&name)
    }

    /// A ManagedCluster is gone (its finalizer was removed, or it never had one).
    pub fn delete_cluster(&mut self, name: &str) -> Vec<Action> {
        self.clusters.remove(name);
        vec![]
    }

    /// A CSR was added or changed.
    pub fn apply_csr(&mut self, csr: &CertificateSigningRequest) -> Vec<Action> {
        let facts = CsrFacts::of(csr);
        let Some(cluster) = facts.cluster.clone() else {
            return vec![];
        };
        if facts.pending {
            self.csrs.insert(facts.name.clone(), facts);
        } else {
            self.csrs.remove(&facts.name);
        }
        self.decide(&cluster)
    }

    /// A CSR is gone.
    pub fn delete_csr(&mut self, name: &str) -> Vec<Action> {
        self.csrs.remove(name);
        vec![]
    }

    /// A lease in namespace `cluster` was added or changed; a new renewTime restarts its clock.
    pub fn apply_lease(&mut self, cluster: &str, lease: &Lease, now: Instant) -> Vec<Action> {
        let renew = lease
            .spec
            .as_ref()
            .and_then(|s| s.renew_time.as_ref())
            .map(|t| t.0.to_string());
        match self.leases.get_mut(cluster) {
            Some((seen, _)) if *seen == renew => {}
            _ => {
                self.leases.insert(cluster.to_string(), (renew, now));
            }
        }
        vec![]
    }

    /// A lease is gone: its clock keeps running from the last renewal seen.
    pub fn delete_lease(&mut self, cluster: &str) -> Vec<Action> {
        if let Some((seen, _)) = self.leases.get_mut(cluster) {
            *seen = None;
        }
        vec![]
    }

    /// When the lease of `cluster` goes stale, for accepted clusters.
    #[must_use]
    pub fn deadline(&self, cluster: &str) -> Option<Instant> {
        let c = self
            .clusters
            .get(cluster)
            .filter(|c| c.accepts && !c.deleting)?;
        let since = self
            .leases
            .get(cluster)
            .map(|(_, at)| *at)
            .or(c.accepted_since)?;
        let grace =
            Duration::from_secs(u64::try_from(c.lease_seconds).unwrap_or(60)) * GRACE_FACTOR;
        Some(since + grace)
    }

    /// The timer of `cluster` fired (or its deadline is already past).
    pub fn lease_expired(&mut self, cluster: &str, now: Instant) -> Vec<Action> {
        let stale = self.deadline(cluster).is_some_and(|d| d <= now)
            && self
                .clusters
                .get(cluster)
                .is_some_and(|c| !c.available_unknown);
        if stale {
            self.start(Action::MarkLeaseStale(cluster.to_string()))
        } else {
            vec![]
        }
    }

    /// The writer finished `action`; on failure the caller retries with [`Index::retry`].
    pub fn done(&mut self, action: &Action, ok: bool) {
        self.in_flight.remove(action);
        if !ok {
            return;
        }
        let Some(c) = self.clusters.get_mut(action.cluster()) else {
            return;
        };
        match action {
            Action::Accept(_) => {
                c.granted = true;
                c.has_finalizer = true;
                c.accepted_condition = Some(true);
            }
            Action::Deny(_) => {
                c.granted = false;
                c.accepted_condition = Some(false);
            }
            Action::Cleanup(_) => c.has_finalizer = false,
            Action::MarkLeaseStale(_) => c.available_unknown = true,
            Action::Approve(csr, _) => {
                self.csrs.remove(csr);
            }
        }
    }

    /// Decides again for `cluster` (after a failed action, or a timer).
    pub fn retry(&mut self, cluster: &str, now: Instant) -> Vec<Action> {
        let mut actions = self.decide(cluster);
        actions.extend(self.lease_expired(cluster, now));
        actions
    }

    fn start(&mut self, action: Action) -> Vec<Action> {
        if self.in_flight.insert(action.clone()) {
            vec![action]
        } else {
            vec![]
        }
    }

    /// What `cluster` needs now.
    fn decide(&mut self, cluster: &str) -> Vec<Action> {
        let Some(c) = self.clusters.get(cluster).cloned() else {
            return vec![];
        };
        let name = cluster.to_string();
        if c.deleting {
            return if c.has_finalizer {
                self.start(Action::Cleanup(name))
            } else {
                vec![]
            };
        }
        if !c.accepts {
            let revoke = c.granted || c.accepted_condition == Some(true);
            return if revoke {
                self.start(Action::Deny(name))
            } else {
                vec![]
            };
        }
        let mut actions = vec![];
        if !c.granted || !c.has_finalizer || c.accepted_condition != Some(true) {
            actions.extend(self.start(Action::Accept(name.clone())));
        }
        let mut renewals: Vec<String> = vec![];
        for facts in self
            .csrs
            .values()
            .filter(|f| f.cluster.as_deref() == Some(cluster))
        {
            match facts.check_renewal(cluster) {
                Ok(()) => renewals.push(facts.name.clone()),
                Err(why) => tracing::debug!(csr = %facts.name, "not auto-approving: {why}"),
            }
        }
        renewals.sort();
        for csr in renewals {
            actions.extend(self.start(Action::Approve(csr, name.clone())));
        }
        actions
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
