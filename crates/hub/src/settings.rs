//! What the hub controllers read of the ClusterManager: whether it asks for webhook admission
//! (its admission annotation), the gates that change an admission rule (`DefaultClusterSet`,
//! `NilExecutorValidating`), and who is approved without `accept` (`ManagedClusterAutoApproval`,
//! read by the registration controller). One watch of the one ClusterManager keeps them current.
use std::time::Duration;

use futures::StreamExt as _;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use tokio::sync::watch;

use ocm_api::names::ADMISSION_ANNOTATION;
use ocm_api::operator::{Admission, CLUSTER_MANAGER_NAME, ClusterManager, FeatureGate};
use ocm_runtime::Shutdown;

/// How long a review waits for the ClusterManager's first read before it is refused.
const FIRST_READ: Duration = Duration::from_secs(5);

/// The ClusterManager's settings the admission rules follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// A ClusterManager exists and asks for admission by webhooks (not by policies).
    pub webhooks: bool,
    /// Upstream's `DefaultClusterSet` gate (registration; on unless switched off).
    pub default_cluster_set: bool,
    /// Upstream's `NilExecutorValidating` gate (work; off unless switched on).
    pub nil_executor_validating: bool,
    /// With upstream's `ManagedClusterAutoApproval` gate on (registration; off unless switched
    /// on): the users whose clusters are accepted and bootstrap CSRs approved without `accept`.
    pub auto_approve: Option<Vec<String>>,
    /// Upstream's `ClusterProfile` gate (registration; off unless switched on): the hub writes
    /// the ClusterInventory's ClusterProfiles ([`crate::cluster_profiles`]).
    pub cluster_profile: bool,
    /// Upstream's `CleanUpCompletedManifestWork` gate (work; off unless switched on): completed
    /// works with a TTL are deleted ([`crate::completed_works`]).
    pub clean_up_completed_works: bool,
    /// Upstream's `ResourceCleanup` gate (registration; on unless switched off): a deleted
    /// cluster's works and add-ons are deleted with it ([`crate::registration`]).
    pub resource_cleanup: bool,
    /// Upstream's `ManifestWorkReplicaSet` gate (work; off unless switched on): replica sets are
    /// reconciled ([`crate::replicaset`]).
    pub manifest_work_replica_set: bool,
    /// Upstream's `AddonManagement` gate (add-on manager; on unless switched off): the add-on
    /// manager's controllers act ([`crate::addon`]).
    pub addon_management: bool,
    /// The ClusterManager names one image for registration, work and placement: our image, whose
    /// hub pods run every hub controller (upstream ships one image per component).
    pub one_image: bool,
    /// The hub is hosted (`deployOption.mode: Hosted`): its controllers run on a management
    /// cluster, where this ClusterManager is, and act on another.
    pub hosted: bool,
}

impl Settings {
    /// The settings of `cm`, or of no ClusterManager.
    #[must_use]
    pub fn of(cm: Option<&ClusterManager>) -> Self {
        let Some(cm) = cm else {
            return Self {
                webhooks: false,
                default_cluster_set: true,
                nil_executor_validating: false,
                auto_approve: None,
                cluster_profile: false,
                clean_up_completed_works: false,
                resource_cleanup: true,
                manifest_work_replica_set: false,
                addon_management: true,
                one_image: false,
                hosted: false,
            };
        };
        // An annotation naming no mode is the operator's to report: webhooks meanwhile.
        let policies = cm
            .annotations()
            .get(ADMISSION_ANNOTATION)
            .and_then(|value| Admission::parse(value))
            == Some(Admission::Policies);
        let registration = cm
            .spec
            .registration_configuration
            .as_ref()
            .map(|c| c.feature_gates.as_slice())
            .unwrap_or_default();
        let addon = cm
            .spec
            .add_on_manager_configuration
            .as_ref()
            .map(|c| c.feature_gates.as_slice())
            .unwrap_or_default();
        let work = cm
            .spec
            .work_configuration
            .as_ref()
            .map(|c| c.feature_gates.as_slice())
            .unwrap_or_default();
        let gate = FeatureGate::setting;
        Self {
            webhooks: !policies,
            default_cluster_set: gate(registration, "DefaultClusterSet").unwrap_or(true),
            nil_executor_validating: gate(work, "NilExecutorValidating").unwrap_or(false),
            auto_approve: gate(registration, "ManagedClusterAutoApproval")
                .unwrap_or(false)
                .then(|| auto_approved_users(cm)),
            cluster_profile: gate(registration, "ClusterProfile").unwrap_or(false),
            clean_up_completed_works: gate(work, "CleanUpCompletedManifestWork").unwrap_or(false),
            resource_cleanup: gate(registration, "ResourceCleanup").unwrap_or(true),
            manifest_work_replica_set: gate(work, "ManifestWorkReplicaSet").unwrap_or(false),
            addon_management: gate(addon, "AddonManagement").unwrap_or(true),
            one_image: one_image(cm),
            hosted: cm
                .spec
                .deploy_option
                .as_ref()
                .is_some_and(|d| d.mode == ocm_api::operator::HubInstallMode::Hosted),
        }
    }
}

/// Whether the ClusterManager names one image, set, for registration, work and placement.
fn one_image(cm: &ClusterManager) -> bool {
    let spec = &cm.spec;
    let registration = spec
        .registration_image_pull_spec
        .as_deref()
        .unwrap_or_default();
    !registration.is_empty()
        && spec.work_image_pull_spec.as_deref() == Some(registration)
        && spec.placement_image_pull_spec.as_deref() == Some(registration)
}

/// Who is approved automatically, as upstream's registration controller reads it: the CSR
/// driver's `autoApprovedIdentities` when given, else `autoApproveUsers`.
fn auto_approved_users(cm: &ClusterManager) -> Vec<String> {
    let Some(registration) = cm.spec.registration_configuration.as_ref() else {
        return Vec::new();
    };
    let driver = registration
        .registration_drivers
        .iter()
        .filter_map(|d| d.csr.as_ref())
        .flat_map(|c| c.auto_approved_identities.iter().cloned())
        .collect::<Vec<_>>();
    if driver.is_empty() {
        registration.auto_approve_users.clone()
    } else {
        driver
    }
}

/// The settings as last watched: `None` until the ClusterManager has been read once.
#[derive(Clone, Debug)]
pub struct Watched(watch::Receiver<Option<Settings>>);

impl Watched {
    /// The current settings, waiting up to `FIRST_READ` for the first read.
    pub async fn current(&self) -> Option<Settings> {
        let mut rx = self.0.clone();
        let first = tokio::time::timeout(FIRST_READ, rx.wait_for(Option::is_some)).await;
        first.ok()?.ok().and_then(|s| s.clone())
    }

    /// Waits for the settings to change; `None` once nothing watches any more.
    pub async fn changed(&mut self) -> Option<Option<Settings>> {
        self.0.changed().await.ok()?;
        Some(self.0.borrow_and_update().clone())
    }

    /// The settings now, without waiting.
    #[must_use]
    pub fn now(&mut self) -> Option<Settings> {
        self.0.borrow_and_update().clone()
    }

    /// The settings now, without waiting or marking them seen.
    #[must_use]
    pub fn peek(&self) -> Option<Settings> {
        self.0.borrow().clone()
    }

    /// Each time the settings change (the first read included): what a controller following a
    /// setting reconciles everything on. Every change, not only its setting's: the watch folds
    /// quick changes into one, so an off-and-on again could otherwise pass unseen, and settings
    /// change rarely.
    pub fn changes(&self) -> impl futures::Stream<Item = ()> + Send + 'static {
        let rx = self.0.clone();
        futures::stream::unfold(rx, |mut rx| async move {
            loop {
                rx.changed().await.ok()?;
                if rx.borrow_and_update().is_some() {
                    return Some(((), rx));
                }
            }
        })
    }

    /// Whether the settings, once read, have `gate` on (off until the first read).
    #[must_use]
    pub fn on(&self, gate: fn(&Settings) -> bool) -> bool {
        self.peek().as_ref().is_some_and(gate)
    }

    /// `gate` of these settings, for a controller to follow ([`ocm_runtime::controller::Runner::gated`]).
    #[must_use]
    pub fn gate(&self, gate: fn(&Settings) -> bool) -> ocm_runtime::controller::Gate {
        let settings = self.clone();
        ocm_runtime::controller::Gate {
            on: std::sync::Arc::new(move || settings.on(gate)),
            flips: Box::pin(self.changes()),
        }
    }

    /// Settings that never change, for tests.
    #[must_use]
    pub fn fixed(settings: Settings) -> Self {
        let (tx, rx) = watch::channel(Some(settings));
        // Kept open so `changed` waits rather than ends.
        std::mem::forget(tx);
        Self(rx)
    }
}

/// The settings of the ClusterManager in `informers`' store, published on each change of it,
/// until `shutdown`: the hub controllers share this one watch.
#[must_use]
pub fn from_informers(
    informers: &ocm_runtime::informers::Informers,
    shutdown: Shutdown,
) -> Watched {
    use kube::runtime::reflector::ObjectRef;
    let (store, mut updates) = informers.feed::<ClusterManager>();
    let mut deletions = informers.deletions::<ClusterManager>();
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let current = || Settings::of(store.get(&ObjectRef::new(CLUSTER_MANAGER_NAME)).as_deref());
        tokio::select! {
            () = shutdown.cancelled() => return,
            ready = ocm_runtime::ready::until_ready(&store) => if ready.is_err() { return },
        }
        publish(&tx, current());
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                update = updates.next() => if update.is_none() { return },
                deletion = deletions.next() => if deletion.is_none() { return },
            }
            publish(&tx, current());
        }
    });
    Watched(rx)
}

/// Publishes `settings` when they differ from the last published.
fn publish(tx: &watch::Sender<Option<Settings>>, settings: Settings) {
    tx.send_if_modified(|s| {
        let differs = s.as_ref() != Some(&settings);
        *s = Some(settings);
        differs
    });
}

/// Watches the ClusterManager until `shutdown`, publishing its settings.
#[must_use]
pub fn watch(client: Client, shutdown: Shutdown) -> Watched {
    let (tx, rx) = watch::channel(None);
    let api: kube::Api<ClusterManager> = kube::Api::all(client);
    let config =
        watcher::Config::default().fields(&format!("metadata.name={CLUSTER_MANAGER_NAME}"));
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, config).default_backoff());
        let mut listing: Option<ClusterManager> = None;
        loop {
            let event = tokio::select! {
                () = shutdown.cancelled() => return,
                e = events.next() => e,
            };
            let published = match event {
                None => return,
                Some(Err(e)) => {
                    tracing::debug!("watching the ClusterManager for admission: {e}");
                    continue;
                }
                Some(Ok(watcher::Event::Init)) => {
                    listing = None;
                    continue;
                }
                Some(Ok(watcher::Event::InitApply(cm))) => {
                    listing = Some(cm);
                    continue;
                }
                Some(Ok(watcher::Event::InitDone)) => Settings::of(listing.take().as_ref()),
                Some(Ok(watcher::Event::Apply(cm))) => Settings::of(Some(&cm)),
                Some(Ok(watcher::Event::Delete(_))) => Settings::of(None),
            };
            publish(&tx, published);
        }
    });
    Watched(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(yaml: &str) -> ClusterManager {
        ocm_api::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn gates_and_the_admission_annotation_are_read_with_upstreams_defaults() {
        assert!(!Settings::of(None).webhooks);
        let plain = Settings::of(Some(&cm(
            "apiVersion: operator.open-cluster-management.io/v1\nkind: ClusterManager\nmetadata: {name: cluster-manager}\nspec: {}\n",
        )));
        assert_eq!(
            plain,
            Settings {
                webhooks: true,
                default_cluster_set: true,
                nil_executor_validating: false,
                auto_approve: None,
                cluster_profile: false,
                clean_up_completed_works: false,
                resource_cleanup: true,
                manifest_work_replica_set: false,
                addon_management: true,
                one_image: false,
                hosted: false,
            }
        );
        let gated = Settings::of(Some(&cm(
            "apiVersion: operator.open-cluster-management.io/v1\nkind: ClusterManager\nmetadata:\n  name: cluster-manager\n  annotations: {clusteradm.open-cluster-management.io/admission: policies}\nspec:\n  registrationConfiguration: {featureGates: [{feature: DefaultClusterSet, mode: Disable}]}\n  workConfiguration: {featureGates: [{feature: NilExecutorValidating, mode: Enable}]}\n",
        )));
        assert!(!gated.webhooks && !gated.default_cluster_set && gated.nil_executor_validating);
    }

    #[test]
    fn the_csr_drivers_identities_are_approved_over_auto_approve_users() {
        let both = cm(
            "apiVersion: operator.open-cluster-management.io/v1\nkind: ClusterManager\nmetadata: {name: cluster-manager}\nspec:\n  registrationConfiguration:\n    featureGates: [{feature: ManagedClusterAutoApproval, mode: Enable}]\n    autoApproveUsers: [old]\n    registrationDrivers: [{authType: csr, csr: {autoApprovedIdentities: [new]}}]\n",
        );
        assert_eq!(
            Settings::of(Some(&both)).auto_approve,
            Some(vec!["new".to_owned()])
        );
        let legacy = cm(
            "apiVersion: operator.open-cluster-management.io/v1\nkind: ClusterManager\nmetadata: {name: cluster-manager}\nspec:\n  registrationConfiguration:\n    featureGates: [{feature: ManagedClusterAutoApproval, mode: Enable}]\n    autoApproveUsers: [old]\n",
        );
        assert_eq!(
            Settings::of(Some(&legacy)).auto_approve,
            Some(vec!["old".to_owned()])
        );
    }
}
