//! What the hub registration controller does for one ManagedCluster, decided from what the stores
//! hold — pure and synchronous, so every rule is tested without a cluster. The reconciler carries
//! the [`Action`]s out in order with the [`super::writer`] and comes back at `recheck_in`.
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::api::cluster::{
    CLUSTER_CLEANUP_FINALIZER, HUB_ACCEPTED_MANAGED_CLUSTER, MANAGED_CLUSTER_CONDITION_AVAILABLE,
    ManagedCluster,
};
use crate::api::conditions;
use crate::api::names::DEFAULT_LEASE_SECONDS;
use crate::identity::CsrFacts;

/// A lease is stale after this many lease durations without renewal (upstream's).
pub const GRACE_FACTOR: i64 = 5;
/// The longest lease duration honoured; a larger one (or an overflowing one) is capped here so a
/// deadline is always a representable time.
pub const MAX_LEASE_SECONDS: i64 = 24 * 3600;

/// Something the writer must do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Namespace, RBAC, finalizer and `HubAcceptedManagedCluster=True`.
    Accept(String),
    /// Revoke the RBAC; `HubAcceptedManagedCluster=False`.
    Deny(String),
    /// The cluster is being deleted: remove namespace and RBAC, then the finalizer.
    Cleanup(String),
    /// Approve a renewal CSR `(csr, cluster)`.
    Approve(String, String),
    /// Create `managed-cluster-lease` in the cluster namespace: the hub owns it, agents only
    /// update it (upstream's contract).
    CreateLease(String),
    /// `ManagedClusterConditionAvailable=Unknown`: the lease is stale.
    MarkLeaseStale(String),
    /// Fill in what upstream's mutating webhook would have ([`super::defaults`]).
    FillDefaults(String),
}

impl Action {
    /// The cluster the action is about.
    #[must_use]
    pub fn cluster(&self) -> &str {
        match self {
            Self::Accept(c)
            | Self::Deny(c)
            | Self::Cleanup(c)
            | Self::CreateLease(c)
            | Self::MarkLeaseStale(c)
            | Self::FillDefaults(c)
            | Self::Approve(_, c) => c,
        }
    }
}

/// What the stores hold about one cluster.
#[derive(Debug)]
pub struct Observed<'a> {
    /// The ManagedCluster.
    pub cluster: &'a ManagedCluster,
    /// CSRs labelled with its name that are neither approved nor denied.
    pub pending_csrs: Vec<CsrFacts>,
    /// Its `managed-cluster-lease`.
    pub lease: Option<&'a Lease>,
    /// This process applied its namespace and RBAC since it started.
    pub granted: bool,
}

/// The decision: actions in order, and when to look again (the lease deadline).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// Look again after this long even if nothing changes.
    pub recheck_in: Option<Duration>,
}

/// Decides what `observed` needs at `now`.
#[must_use]
pub fn decide(observed: &Observed<'_>, now: Timestamp) -> Decision {
    let mc = observed.cluster;
    let Some(name) = mc.metadata.name.clone() else {
        return Decision::default();
    };
    let has_finalizer = mc
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == CLUSTER_CLEANUP_FINALIZER);
    let conditions = mc
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let accepted_condition = conditions::find(conditions, HUB_ACCEPTED_MANAGED_CLUSTER);
    let accepted_true = accepted_condition.is_some_and(|c| c.status == conditions::TRUE);

    if mc.metadata.deletion_timestamp.is_some() {
        let actions = if has_finalizer {
            vec![Action::Cleanup(name)]
        } else {
            vec![]
        };
        return Decision {
            actions,
            recheck_in: None,
        };
    }
    let mut actions = vec![];
    if super::defaults::needed(mc) {
        actions.push(Action::FillDefaults(name.clone()));
    }
    if !mc.spec.hub_accepts_client {
        if observed.granted || accepted_true {
            actions.push(Action::Deny(name));
        }
        return Decision {
            actions,
            recheck_in: None,
        };
    }

    if !observed.granted || !has_finalizer || !accepted_true {
        actions.push(Action::Accept(name.clone()));
    }
    let mut renewals: Vec<&CsrFacts> = observed
        .pending_csrs
        .iter()
        .filter(|f| match f.check_renewal(&name) {
            Ok(()) => true,
            Err(why) => {
                tracing::debug!(csr = %f.name, "not auto-approving: {why}");
                false
            }
        })
        .collect();
    renewals.sort_by(|a, b| a.name.cmp(&b.name));
    actions.extend(
        renewals
            .into_iter()
            .map(|f| Action::Approve(f.name.clone(), name.clone())),
    );

    let grace = grace_period(mc.spec.lease_duration_seconds);
    let renewed = observed
        .lease
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0);
    let Some(renewed) = renewed else {
        if observed.lease.is_none() {
            actions.push(Action::CreateLease(name));
        }
        // A new lease is due now; look again one grace period later in any case.
        return Decision {
            actions,
            recheck_in: Some(grace.unsigned_abs()),
        };
    };
    let deadline = renewed.checked_add(grace).unwrap_or(Timestamp::MAX);
    let recheck_in = if now >= deadline {
        let already_unknown = conditions::find(conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE)
            .is_some_and(|c| c.status == conditions::UNKNOWN);
        if !already_unknown {
            actions.push(Action::MarkLeaseStale(name));
        }
        grace
    } else {
        deadline.duration_since(now)
    };
    Decision {
        actions,
        recheck_in: Some(recheck_in.unsigned_abs()),
    }
}

/// How long a lease may go unrenewed: five lease durations, the default when unset or not
/// positive, capped at [`MAX_LEASE_SECONDS`].
#[must_use]
pub fn grace_period(lease_duration_seconds: Option<i32>) -> SignedDuration {
    let seconds = lease_duration_seconds
        .map(i64::from)
        .filter(|s| *s > 0)
        .unwrap_or(i64::from(DEFAULT_LEASE_SECONDS))
        .min(MAX_LEASE_SECONDS);
    SignedDuration::from_secs(seconds * GRACE_FACTOR)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
