//! What the hub registration controller does for one ManagedCluster, decided from what the stores
//! hold — pure and synchronous, so every rule is tested without a cluster. The reconciler carries
//! the [`Action`]s out in order with the [`super::writer`] and comes back at `recheck_in`.
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use ocm_api::cluster::{
    CLUSTER_CLEANUP_FINALIZER, HUB_ACCEPTED_MANAGED_CLUSTER, MANAGED_CLUSTER_CONDITION_AVAILABLE,
    MANAGED_CLUSTER_CONDITION_CLOCK_SYNCED, ManagedCluster,
};
use ocm_api::conditions;
use ocm_api::names::DEFAULT_LEASE_SECONDS;
use ocm_runtime::identity::CsrFacts;

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
    /// The cluster is being deleted with `ResourceCleanup` off: remove its RBAC, then, once its
    /// ManifestWorks are gone, the finalizer; its works, add-ons and namespace stay.
    Unregister(String),
    /// Approve a renewal CSR `(csr, cluster)`.
    Approve(String, String),
    /// Approve a bootstrap CSR `(csr, cluster)` whose requester the ClusterManager approves
    /// automatically (`ManagedClusterAutoApproval`).
    AutoApprove(String, String),
    /// Accept the cluster (and mark it accepted automatically, once: a later deny sticks), as
    /// `ManagedClusterAutoApproval` does.
    AutoAccept(String),
    /// Create `managed-cluster-lease` in the cluster namespace: the hub owns it, agents only
    /// update it (upstream's contract).
    CreateLease(String),
    /// `ManagedClusterConditionAvailable=Unknown`: the lease is stale.
    MarkLeaseStale(String),
    /// Fill in what upstream's mutating webhook would have ([`super::defaults`]).
    FillDefaults(String, bool),
    /// `ManagedClusterConditionClockSynced` to this: whether the agent's clock agreed with the
    /// hub's at its latest renewal.
    SetClockSynced(String, bool),
}

impl Action {
    /// The cluster the action is about.
    #[must_use]
    pub fn cluster(&self) -> &str {
        match self {
            Self::Accept(c)
            | Self::Deny(c)
            | Self::Cleanup(c)
            | Self::Unregister(c)
            | Self::CreateLease(c)
            | Self::MarkLeaseStale(c)
            | Self::FillDefaults(c, _)
            | Self::SetClockSynced(c, _)
            | Self::AutoAccept(c)
            | Self::AutoApprove(_, c)
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
    /// With `ManagedClusterAutoApproval` on: the users approved without `accept`.
    pub auto_approve: Option<&'a [String]>,
    /// `ResourceCleanup` (on unless switched off): a deleted cluster's works and add-ons are
    /// deleted with it.
    pub resource_cleanup: bool,
    /// `DefaultClusterSet` (on unless switched off): a cluster in no set goes into `default`.
    pub default_cluster_set: bool,
    /// The lease shows a renewal not judged yet: the agent renewed it just now, so its renew
    /// time (the agent's clock) is compared with the hub's, as upstream's clock sync controller
    /// does on each renewal.
    pub new_renewal: bool,
}

/// The decision: actions in order, and when to look again (the lease deadline).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// Look again after this long even if nothing changes.
    pub recheck_in: Option<Duration>,
}

/// A deleted cluster: cleaned up (or with `ResourceCleanup` off unregistered) while it holds
/// the hub's finalizer, else nothing.
fn deleting(name: String, has_finalizer: bool, resource_cleanup: bool) -> Decision {
    let actions = match (has_finalizer, resource_cleanup) {
        (true, true) => vec![Action::Cleanup(name)],
        (true, false) => vec![Action::Unregister(name)],
        (false, _) => vec![],
    };
    Decision {
        actions,
        recheck_in: None,
    }
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
        return deleting(name, has_finalizer, observed.resource_cleanup);
    }
    let mut actions = vec![];
    if super::defaults::needed(mc, observed.default_cluster_set) {
        actions.push(Action::FillDefaults(
            name.clone(),
            observed.default_cluster_set,
        ));
    }
    if let Some(users) = observed.auto_approve {
        auto_approval(mc, &name, users, &observed.pending_csrs, &mut actions);
        if actions.iter().any(|a| matches!(a, Action::AutoAccept(_))) {
            // The acceptance wakes this cluster again; the rest is decided then.
            return Decision {
                actions,
                recheck_in: None,
            };
        }
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

    let recheck_in = lease_actions(observed, &name, now, &mut actions);
    Decision {
        actions,
        recheck_in: Some(recheck_in),
    }
}

/// What an accepted cluster's lease needs: created when missing, its renewal's clock judged,
/// the cluster marked unknown when it went stale; returns when to look again (the deadline).
fn lease_actions(
    observed: &Observed<'_>,
    name: &str,
    now: Timestamp,
    actions: &mut Vec<Action>,
) -> Duration {
    let mc = observed.cluster;
    let conditions = mc
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let grace = grace_period(mc.spec.lease_duration_seconds);
    let renewed = observed
        .lease
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0);
    let Some(renewed) = renewed else {
        if observed.lease.is_none() {
            actions.push(Action::CreateLease(name.to_owned()));
        }
        // A new lease is due now; look again one grace period later in any case.
        return grace.unsigned_abs();
    };
    if observed.new_renewal {
        let synced = clock_synced(mc, renewed, now, grace);
        let shown = conditions::find(conditions, MANAGED_CLUSTER_CONDITION_CLOCK_SYNCED)
            .map(|c| c.status == conditions::TRUE);
        if shown != Some(synced) {
            actions.push(Action::SetClockSynced(name.to_owned(), synced));
        }
    }
    let deadline = renewed.checked_add(grace).unwrap_or(Timestamp::MAX);
    let recheck_in = if now >= deadline {
        let already_unknown = conditions::find(conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE)
            .is_some_and(|c| c.status == conditions::UNKNOWN);
        if !already_unknown {
            actions.push(Action::MarkLeaseStale(name.to_owned()));
        }
        grace
    } else {
        deadline.duration_since(now)
    };
    recheck_in.unsigned_abs()
}

/// Upstream's `ManagedClusterAutoApproval`, for the `users` it names: their clusters' bootstrap
/// CSRs are approved, and a cluster is accepted once, marked with
/// [`AUTO_ACCEPTED_ANNOTATION`], so that a later deny sticks. Stricter than upstream, which
/// accepts every new cluster while the gate is on: here only a cluster one of `users` asks a
/// certificate for.
fn auto_approval(
    mc: &ManagedCluster,
    name: &str,
    users: &[String],
    pending: &[CsrFacts],
    actions: &mut Vec<Action>,
) {
    let mut approved: Vec<&CsrFacts> = pending
        .iter()
        .filter(|f| users.contains(&f.username) && f.check_request(name).is_ok())
        .collect();
    approved.sort_by(|a, b| a.name.cmp(&b.name));
    let marked = mc
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(AUTO_ACCEPTED_ANNOTATION));
    actions.extend(
        approved
            .iter()
            .map(|f| Action::AutoApprove(f.name.clone(), name.to_owned())),
    );
    if !marked && (mc.spec.hub_accepts_client || !approved.is_empty()) {
        actions.push(Action::AutoAccept(name.to_owned()));
    }
}

/// Upstream's annotation that exempts a cluster from the clock check (its clock is known to
/// differ): its clock always counts as synced.
pub const SKIP_CLOCK_SYNC_ANNOTATION: &str =
    "registration.open-cluster-management.io/skip-clock-sync-check";

/// Whether a renewal stamped `renewed` by the agent, seen by the hub at `now`, shows the two
/// clocks within `grace` (five lease durations) of each other, as upstream judges it.
fn clock_synced(
    mc: &ManagedCluster,
    renewed: Timestamp,
    now: Timestamp,
    grace: SignedDuration,
) -> bool {
    let skipped = mc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SKIP_CLOCK_SYNC_ANNOTATION))
        .is_some_and(|v| v == "true");
    let apart = now.duration_since(renewed).abs();
    skipped || apart < grace
}

/// Upstream's mark of a cluster accepted by `ManagedClusterAutoApproval`, with the time.
pub const AUTO_ACCEPTED_ANNOTATION: &str = "open-cluster-management.io/automatically-accepted-on";

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
mod tests {
    //! Decisions of the hub registration controller, from minimal objects; no cluster.
    use std::time::Duration;

    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    use super::{Action, Decision, Observed};

    /// [`super::decide`] without the defaults, which have their own tests (here and in
    /// `defaults.rs`): these fixtures report no availability, so every one would want a hub taint.
    fn decide(observed: &Observed<'_>, now: Timestamp) -> Decision {
        let mut d = super::decide(observed, now);
        d.actions.retain(|a| !matches!(a, Action::FillDefaults(..)));
        d
    }
    use ocm_api::cluster::{CLUSTER_SET_LABEL, ManagedCluster};
    use ocm_runtime::identity::{MANAGED_CLUSTERS_GROUP, common_name};

    fn mc(value: serde_json::Value) -> ManagedCluster {
        // In a set already: the defaults have their own test.
        let mut v = json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                       "metadata": {"labels": {CLUSTER_SET_LABEL: "default"}}, "spec": {}});
        merge(&mut v, value);
        serde_json::from_value(v).unwrap()
    }

    fn merge(a: &mut serde_json::Value, b: serde_json::Value) {
        match (a, b) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    merge(a.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (a, b) => *a = b,
        }
    }

    fn pending(name: &str) -> ManagedCluster {
        mc(json!({"metadata": {"name": name}}))
    }

    fn accepted(name: &str) -> ManagedCluster {
        mc(
            json!({"metadata": {"name": name}, "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 5}}),
        )
    }

    fn csr(
        name: &str,
        cluster: &str,
        user: &str,
        groups: &[&str],
        subject_cluster: &str,
    ) -> CertificateSigningRequest {
        let key = rcgen::KeyPair::generate().unwrap();
        let request =
            ocm_runtime::identity::request::cluster_agent(subject_cluster, "ab12c", &key).unwrap();
        serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"open-cluster-management.io/cluster-name": cluster}},
        "spec": {"request": base64(&request), "signerName": "kubernetes.io/kube-apiserver-client",
                 "usages": ["client auth"], "username": user, "groups": groups},
    }))
    .unwrap()
    }

    fn base64(s: &str) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn renewal(name: &str, cluster: &str) -> CertificateSigningRequest {
        let user = common_name(cluster, "ab12c");
        csr(
            name,
            cluster,
            &user,
            &[
                &format!("system:open-cluster-management:{cluster}"),
                MANAGED_CLUSTERS_GROUP,
            ],
            cluster,
        )
    }

    const FINALIZER: &str = "cluster.open-cluster-management.io/api-resource-cleanup";

    /// Accepted, with finalizer and `HubAcceptedManagedCluster=True` (as after the writer's Accept).
    fn settled(name: &str) -> ManagedCluster {
        mc(
            json!({"metadata": {"name": name, "finalizers": [FINALIZER]},
        "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 5},
        "status": {"conditions": [{"type": "HubAcceptedManagedCluster", "status": "True",
            "reason": "HubClusterAdminAccepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
        )
    }

    fn lease(cluster: &str, renewed: &str) -> Lease {
        serde_json::from_value(
            json!({"metadata": {"name": "managed-cluster-lease", "namespace": cluster},
        "spec": {"renewTime": renewed}}),
        )
        .unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn run(
        cluster: &ManagedCluster,
        csrs: &[CertificateSigningRequest],
        lease: Option<&Lease>,
        granted: bool,
        now: Timestamp,
    ) -> Decision {
        let observed = Observed {
            cluster,
            pending_csrs: csrs
                .iter()
                .map(ocm_runtime::identity::CsrFacts::of)
                .collect(),
            lease,
            granted,
            auto_approve: None,
            resource_cleanup: true,
            default_cluster_set: true,
            new_renewal: false,
        };
        decide(&observed, now)
    }

    fn actions(d: Decision) -> Vec<Action> {
        d.actions
    }

    const T0: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn a_pending_cluster_needs_nothing() {
        assert_eq!(
            run(&pending("c1"), &[], None, false, at(T0)),
            Decision::default()
        );
    }

    #[test]
    fn accepting_grants_and_creates_the_lease_then_nothing_more() {
        assert_eq!(
            actions(run(&accepted("c1"), &[], None, false, at(T0))),
            [
                Action::Accept("c1".into()),
                Action::CreateLease("c1".into())
            ]
        );
        let l = lease("c1", "2026-01-01T00:00:00.000000Z");
        // Granted in this process, finalizer and condition in place, lease fresh: nothing to do.
        let d = run(&settled("c1"), &[], Some(&l), true, at(T0));
        assert!(d.actions.is_empty());
        assert_eq!(d.recheck_in, Some(Duration::from_secs(25)));
        // After a restart the grant is not known: applied again (idempotent server-side apply).
        assert_eq!(
            actions(run(&settled("c1"), &[], Some(&l), false, at(T0))),
            [Action::Accept("c1".into())]
        );
    }

    #[test]
    fn auto_approval_accepts_once_and_approves_only_the_listed_requesters() {
        let listed = "system:serviceaccount:open-cluster-management:agent-registration-bootstrap";
        let users = [listed.to_owned()];
        let decide_for = |cluster: &ManagedCluster, csrs: &[CertificateSigningRequest]| {
            let observed = Observed {
                cluster,
                pending_csrs: csrs
                    .iter()
                    .map(ocm_runtime::identity::CsrFacts::of)
                    .collect(),
                lease: None,
                granted: false,
                auto_approve: Some(&users),
                resource_cleanup: true,
                default_cluster_set: true,
                new_renewal: false,
            };
            actions(decide(&observed, at(T0)))
        };
        // A listed requester's bootstrap CSR: approved, and the cluster accepted.
        let from_listed = csr("c1-b", "c1", listed, &[], "c1");
        assert_eq!(
            decide_for(&pending("c1"), std::slice::from_ref(&from_listed)),
            [
                Action::AutoApprove("c1-b".into(), "c1".into()),
                Action::AutoAccept("c1".into())
            ]
        );
        // Anyone else's: neither (upstream would still accept the cluster).
        let other = csr("c1-o", "c1", "system:bootstrap:abcdef", &[], "c1");
        assert!(decide_for(&pending("c1"), &[other]).is_empty());
        // A CSR labelled c1 asking for c2's identity, even from a listed requester: never.
        let forged = csr("c1-f", "c1", listed, &[], "c2");
        assert!(decide_for(&pending("c1"), &[forged]).is_empty());
        // Accepted automatically once, then denied by an admin: the deny sticks.
        let denied = mc(json!({"metadata": {"name": "c1",
            "annotations": {super::AUTO_ACCEPTED_ANNOTATION: "2026-01-01T00:00:00Z"}}}));
        assert_eq!(
            decide_for(&denied, std::slice::from_ref(&from_listed)),
            [Action::AutoApprove("c1-b".into(), "c1".into())]
        );
        // Without the gate: nothing of this.
        assert!(actions(run(&pending("c1"), &[from_listed], None, false, at(T0))).is_empty());
    }

    #[test]
    fn unaccepting_denies_and_deleting_cleans_up() {
        let withdrawn = mc(
            json!({"metadata": {"name": "c1", "finalizers": [FINALIZER]},
        "status": {"conditions": [{"type": "HubAcceptedManagedCluster", "status": "True",
            "reason": "HubClusterAdminAccepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
        );
        assert_eq!(
            actions(run(&withdrawn, &[], None, false, at(T0))),
            [Action::Deny("c1".into())]
        );
        assert_eq!(
            actions(run(&pending("c1"), &[], None, true, at(T0))),
            [Action::Deny("c1".into())]
        );
        assert!(actions(run(&pending("c1"), &[], None, false, at(T0))).is_empty());
        let deleting = mc(
            json!({"metadata": {"name": "c1", "deletionTimestamp": "2026-01-01T00:00:00Z",
        "finalizers": [FINALIZER]}, "spec": {"hubAcceptsClient": true}}),
        );
        assert_eq!(
            actions(run(&deleting, &[], None, true, at(T0))),
            [Action::Cleanup("c1".into())]
        );
        let without_cleanup = Observed {
            cluster: &deleting,
            pending_csrs: vec![],
            lease: None,
            granted: true,
            auto_approve: None,
            resource_cleanup: false,
            default_cluster_set: true,
            new_renewal: false,
        };
        assert_eq!(
            actions(decide(&without_cleanup, at(T0))),
            [Action::Unregister("c1".into())]
        );
        let gone = mc(
            json!({"metadata": {"name": "c1", "deletionTimestamp": "2026-01-01T00:00:00Z",
        "finalizers": ["other"]}}),
        );
        assert!(actions(run(&gone, &[], None, true, at(T0))).is_empty());
    }

    #[test]
    fn renewals_of_accepted_clusters_are_approved_and_others_are_not() {
        let l = lease("c1", "2026-01-01T00:00:00.000000Z");
        // Before acceptance: not approved.
        assert!(
            actions(run(
                &pending("c1"),
                &[renewal("c1-r1", "c1")],
                None,
                false,
                at(T0)
            ))
            .is_empty()
        );
        // A bootstrap CSR, and a CSR labelled c1 asking for c2's identity: never auto-approved.
        let bootstrap = csr("c1-b", "c1", "system:bootstrap:abcdef", &[], "c1");
        let forged = csr(
            "c1-f",
            "c1",
            &common_name("c2", "ab12c"),
            &["system:open-cluster-management:c2"],
            "c2",
        );
        assert_eq!(
            actions(run(
                &settled("c1"),
                &[
                    renewal("c1-r2", "c1"),
                    bootstrap,
                    forged,
                    renewal("c1-r1", "c1")
                ],
                Some(&l),
                true,
                at(T0)
            )),
            [
                Action::Approve("c1-r1".into(), "c1".into()),
                Action::Approve("c1-r2".into(), "c1".into())
            ]
        );
    }

    #[test]
    fn each_renewal_judges_the_agents_clock_against_the_hubs() {
        let renewed = |cluster: &ManagedCluster, stamp: &str, now: &str| {
            let l = lease("c1", stamp);
            let observed = Observed {
                cluster,
                pending_csrs: vec![],
                lease: Some(&l),
                granted: true,
                auto_approve: None,
                resource_cleanup: true,
                default_cluster_set: false,
                new_renewal: true,
            };
            decide(&observed, at(now)).actions
        };
        let c1 = settled("c1");
        // Lease of 5 s: clocks within 25 s of each other agree, either way.
        assert_eq!(
            renewed(&c1, "2026-01-01T00:00:00Z", "2026-01-01T00:00:20Z"),
            [Action::SetClockSynced("c1".into(), true)]
        );
        assert_eq!(
            renewed(&c1, "2026-01-01T00:01:00Z", "2026-01-01T00:00:00Z"),
            [Action::SetClockSynced("c1".into(), false)]
        );
        // Already shown: nothing to write.
        let mut shown = c1.clone();
        shown.status.as_mut().unwrap().conditions.push(serde_json::from_value(json!({
            "type": "ManagedClusterConditionClockSynced", "status": "True", "reason": "ManagedClusterClockSynced",
            "message": "", "lastTransitionTime": T0})).unwrap());
        assert!(renewed(&shown, T0, T0).is_empty());
        // Skipped by upstream's annotation: always synced.
        let mut skipped = c1;
        skipped.metadata.annotations = Some(
            [(
                super::SKIP_CLOCK_SYNC_ANNOTATION.to_owned(),
                "true".to_owned(),
            )]
            .into(),
        );
        assert_eq!(
            renewed(&skipped, "2026-01-01T01:00:00Z", T0),
            [Action::SetClockSynced("c1".into(), true)]
        );
    }

    #[test]
    fn a_stale_lease_marks_the_cluster_unknown_once() {
        let l = lease("c1", "2026-01-01T00:00:00.000000Z");
        let before = run(
            &settled("c1"),
            &[],
            Some(&l),
            true,
            at("2026-01-01T00:00:24Z"),
        );
        assert!(before.actions.is_empty());
        assert_eq!(before.recheck_in, Some(Duration::from_secs(1)));
        let late = run(
            &settled("c1"),
            &[],
            Some(&l),
            true,
            at("2026-01-01T00:00:25Z"),
        );
        assert_eq!(late.actions, [Action::MarkLeaseStale("c1".into())]);
        assert_eq!(late.recheck_in, Some(Duration::from_secs(25)));
        let mut unknown = settled("c1");
        unknown.status.as_mut().unwrap().conditions.push(serde_json::from_value(json!({
        "type": "ManagedClusterConditionAvailable", "status": "Unknown", "reason": "ManagedClusterLeaseUpdateStopped",
        "message": "", "lastTransitionTime": "2026-01-01T00:00:25Z"})).unwrap());
        assert!(
            actions(run(
                &unknown,
                &[],
                Some(&l),
                true,
                at("2026-01-01T00:01:00Z")
            ))
            .is_empty()
        );
    }

    #[test]
    fn lease_durations_are_bounded() {
        assert_eq!(super::grace_period(None).as_secs(), 300);
        assert_eq!(super::grace_period(Some(0)).as_secs(), 300);
        assert_eq!(super::grace_period(Some(-7)).as_secs(), 300);
        assert_eq!(super::grace_period(Some(i32::MAX)).as_secs(), 5 * 24 * 3600);
        let mut huge = settled("c1");
        huge.spec.lease_duration_seconds = Some(i32::MAX);
        let l = lease("c1", "2026-01-01T00:00:00.000000Z");
        let d = run(&huge, &[], Some(&l), true, at(T0));
        assert!(d.actions.is_empty());
        assert_eq!(d.recheck_in, Some(Duration::from_secs(5 * 24 * 3600)));
    }

    #[test]
    fn defaults_are_filled_in_first_but_not_while_deleting() {
        fn observe(cluster: &ManagedCluster) -> Observed<'_> {
            Observed {
                cluster,
                pending_csrs: vec![],
                lease: None,
                granted: false,
                auto_approve: None,
                resource_cleanup: true,
                default_cluster_set: true,
                new_renewal: false,
            }
        }
        let now = Timestamp::UNIX_EPOCH;
        let mut cluster = pending("c1");
        cluster.metadata.labels = None;
        assert_eq!(
            super::decide(&observe(&cluster), now).actions,
            vec![Action::FillDefaults("c1".into(), true)]
        );
        let mut taken = accepted("c1");
        taken.spec.taints =
            serde_json::from_value(json!([{"key": "k", "effect": "NoSelect"}])).unwrap();
        assert_eq!(
            super::decide(&observe(&taken), now).actions.first(),
            Some(&Action::FillDefaults("c1".into(), true))
        );
        cluster.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now));
        assert!(super::decide(&observe(&cluster), now).actions.is_empty());
    }
}
