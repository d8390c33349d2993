//! Upstream v1.3.1's feature gates (`open-cluster-management.io/api/feature`) and what each does
//! when this project's own components run it (`--in-process`, or our image). With upstream's
//! images a gate goes to upstream's component, which implements it, so nothing here applies.
//!
//! `init`/`join` refuse a gate setting our components would not honour ([`refusal`]); the README's
//! gate table is generated from [`GATES`] ([`table`]).

/// The component whose `featureGates` list a gate belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// The ClusterManager's `registrationConfiguration`.
    HubRegistration,
    /// The ClusterManager's `workConfiguration`.
    HubWork,
    /// The ClusterManager's `addOnManagerConfiguration`.
    HubAddOnManager,
    /// The ClusterManager's `placementConfiguration`.
    HubPlacement,
    /// The Klusterlet's `registrationConfiguration`.
    SpokeRegistration,
    /// The Klusterlet's `workConfiguration`.
    SpokeWork,
}

impl Component {
    fn label(self) -> &'static str {
        match self {
            Self::HubRegistration => "hub registration",
            Self::HubWork => "hub work",
            Self::HubAddOnManager => "hub add-on manager",
            Self::HubPlacement => "hub placement",
            Self::SpokeRegistration => "klusterlet registration",
            Self::SpokeWork => "klusterlet work",
        }
    }
}

/// What our components do with a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Here {
    /// On and off both do what upstream's do.
    Works,
    /// Nothing to do on any Kubernetes this runs on (as upstream's, there).
    Inert,
    /// Not implemented: switching it on is refused.
    NotImplemented,
}

/// One gate.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    /// Its name.
    pub name: &'static str,
    /// Where it is set.
    pub component: Component,
    /// Upstream's default.
    pub default: bool,
    /// What our components do with it.
    pub here: Here,
    /// What that means, for the README and the refusal.
    pub note: &'static str,
}

const fn gate(
    name: &'static str,
    component: Component,
    default: bool,
    here: Here,
    note: &'static str,
) -> Gate {
    Gate {
        name,
        component,
        default,
        here,
        note,
    }
}

use std::fmt::Write as _;

use Component::{
    HubAddOnManager, HubPlacement, HubRegistration, HubWork, SpokeRegistration, SpokeWork,
};
use Here::{Inert, NotImplemented, Works};

/// Every gate upstream v1.3.1 defines for the hub and the klusterlet.
pub const GATES: &[Gate] = &[
    gate(
        "DefaultClusterSet",
        HubRegistration,
        true,
        Works,
        "on: a cluster in no set goes into `default` (the mutating webhook, or the hub for a cluster written without it) and the hub keeps the `default` and `global` sets (made when missing, their selectors restored); off: neither (tests/lifecycle/operator_hub/default_cluster_set.rs). With admission by policies, removing a set label is still checked as a move into `default`",
    ),
    gate(
        "V1beta1CSRAPICompatibility",
        HubRegistration,
        false,
        Inert,
        "the v1beta1 CSR API is gone since Kubernetes 1.22; upstream's gate changes nothing there either",
    ),
    gate(
        "ManagedClusterAutoApproval",
        HubRegistration,
        false,
        Works,
        "clusters of the listed bootstrap users are accepted and their CSRs approved without `accept` (tests/lifecycle/operator_hub/auto_approval.rs)",
    ),
    gate(
        "ResourceCleanup",
        HubRegistration,
        true,
        Works,
        "on: a deleted cluster's add-ons, then its ManifestWorks, are deleted with it, then its RBAC and namespace (upstream v1.3.1 leaves the namespace); off: only its RBAC is removed, its works, add-ons and namespace stay, and the ManagedCluster stays deleting until its works are deleted by someone, as upstream's (tests/lifecycle/operator_hub/resource_cleanup.rs)",
    ),
    gate(
        "ClusterProfile",
        HubRegistration,
        false,
        Works,
        "on: the ClusterInventory CRD is installed and each namespace with a bound set holds a ClusterProfile per cluster, mirroring it; off: the hub stops writing them and leaves them (tests/lifecycle/operator_hub/cluster_profile.rs)",
    ),
    gate(
        "ClusterImporter",
        HubRegistration,
        false,
        NotImplemented,
        "importing clusters from Cluster API is out of scope (it needs Cluster API on the hub)",
    ),
    gate(
        "NilExecutorValidating",
        HubWork,
        false,
        Works,
        "a work without an executor is checked as upstream's default executor (tests/it/admission.rs)",
    ),
    gate(
        "ManifestWorkReplicaSet",
        HubWork,
        false,
        Works,
        "on: ManifestWorkReplicaSets are reconciled (tests/it/replicaset.rs); off (upstream's default, as upstream's `clusteradm init`): a set is left alone, only its deletion is let go (tests/lifecycle/operator_hub/replica_set_gate.rs)",
    ),
    gate(
        "CloudEventsDrivers",
        HubWork,
        false,
        NotImplemented,
        "works travel through the Kubernetes API only; the MQTT/gRPC cloud-events drivers are not implemented",
    ),
    gate(
        "CleanUpCompletedManifestWork",
        HubWork,
        false,
        Works,
        "on: a work with `deleteOption.ttlSecondsAfterFinished` is deleted that long after its `Complete` condition turned True (the agent evaluates condition rules, `WellKnownConditions` and `CEL`); off: kept (tests/lifecycle/operator_hub/completed_works.rs)",
    ),
    gate(
        "AddonManagement",
        HubAddOnManager,
        true,
        Works,
        "on: the add-on manager's controllers run (tests/it/addon.rs); off: they leave add-ons alone (ownership, template deployment, install strategies, rollout, annotations, add-on CSR approval), deletions excepted; the add-on health and cluster labels (upstream's registration controller's) go on (tests/lifecycle/operator_hub/addon_gate.rs)",
    ),
    gate(
        "ClusterClaim",
        SpokeRegistration,
        true,
        Works,
        "on: the agent reports the cluster's ClusterClaims in `status.clusterClaims`; off: it reports none (only ClusterProperties, with their gate), as upstream's (tests/it/cluster_property.rs)",
    ),
    gate(
        "ClusterProperty",
        SpokeRegistration,
        false,
        Works,
        "on: the operator installs the About API's ClusterProperty CRD (kept when switched off or unjoined) and the agent reports the cluster's ClusterProperties in `status.clusterClaims` (a property over a claim of its name); off: claims only (tests/it/cluster_property.rs)",
    ),
    gate(
        "AddonManagement",
        SpokeRegistration,
        true,
        Works,
        "on: the agent registers the cluster's add-ons (their leases and certificates); off: none (tests/it/addon.rs)",
    ),
    gate(
        "V1beta1CSRAPICompatibility",
        SpokeRegistration,
        false,
        Inert,
        "the v1beta1 CSR API is gone since Kubernetes 1.22; upstream's gate changes nothing there either",
    ),
    gate(
        "MultipleHubs",
        SpokeRegistration,
        false,
        Works,
        "on: the Klusterlet's `bootstrapKubeConfigs` (`LocalSecrets`, at least two secrets) lists the hubs; the agent stays with its credential's hub while that is valid, else joins the first valid one (its bootstrap identity may register there and its ManagedCluster, if any, accepts the cluster), and selects again when its hub stops accepting the cluster or no heartbeat has reached it for `hubConnectionTimeoutSeconds`; off: the one `bootstrap-hub-kubeconfig` (tests/lifecycle/multiple_hubs.rs)",
    ),
    gate(
        "ExecutorValidatingCaches",
        SpokeWork,
        false,
        Works,
        "on: executor access reviews are cached and forgotten on RBAC changes (crates/agent/src/work/executor_cache.rs); off: every apply asks again, as upstream's (tests/it/work/executor.rs)",
    ),
    gate(
        "PlacementDebugServer",
        HubPlacement,
        false,
        Works,
        "on: our hub pods serve upstream's placement debug endpoint (`GET /debug/placements/<namespace>/<name>`, or `POST` a Placement; upstream's `DebugResult`: the filter pipeline's clusters, each prioritizer's scores, the totals) behind upstream's Service `cluster-manager-placement` on 9443, over HTTPS to callers whose token the API server takes and who may `get`/`post` the URL and `create` placements in the namespace, as upstream's; off: no Service, nothing served (tests/it/placement_debug.rs; on nodes, tests/pods). Not in process, where there is no Service: `--in-process` refuses it, and `clusteradm get placements NAME --explain` answers the same question. Upstream's component images under our operator get no sidecar: named in `ValidFeatureGates`' message",
    ),
    gate(
        "RawFeedbackJsonString",
        SpokeWork,
        false,
        Works,
        "on: status feedback reports objects, lists, floats and several matches as JSON text (`jsonRaw`, at most 1,024 bytes, as upstream's default); off: integers, strings and booleans, the first match (tests/it/work/feedback.rs)",
    ),
];

/// Why our components would not honour `name=on` set for `component`, if they would not.
#[must_use]
pub fn refusal(component: Component, name: &str, on: bool) -> Option<String> {
    let gate = GATES
        .iter()
        .find(|g| g.component == component && g.name == name)?;
    let refused = match gate.here {
        NotImplemented => on,
        Works | Inert => false,
    };
    refused.then(|| {
        format!(
            "{name}={on} is not honoured by this project's {}: {}",
            component.label(),
            gate.note
        )
    })
}

/// Why `PlacementDebugServer=true` is not honoured where the hub controllers run in process
/// (or as upstream's component images under our operator): the endpoint is our hub pods'.
pub const PLACEMENT_DEBUG_NOT_SERVED: &str = "PlacementDebugServer=true is not honoured by this project's hub placement in process: the endpoint is served by our hub pods (init --image) behind upstream's Service; `clusteradm get placements NAME --explain` answers the same question";

/// [`PLACEMENT_DEBUG_NOT_SERVED`], when the last setting of the gate in `gates` is on.
#[must_use]
pub fn placement_debug_refusal(gates: &[(String, bool)]) -> Option<String> {
    let on = gates
        .iter()
        .rev()
        .find(|(name, _)| name == "PlacementDebugServer")
        .is_some_and(|(_, on)| *on);
    on.then(|| PLACEMENT_DEBUG_NOT_SERVED.to_owned())
}

/// Gates the hub registration controller and webhook know (upstream `DefaultHubRegistrationFeatureGates`).
pub const REGISTRATION_GATES: &[&str] = &[
    "DefaultClusterSet",
    "V1beta1CSRAPICompatibility",
    "ManagedClusterAutoApproval",
    "ResourceCleanup",
    "ClusterProfile",
    "ClusterImporter",
];
/// Gates the hub work webhook knows (upstream `DefaultHubWorkFeatureGates`).
pub const WORK_GATES: &[&str] = &[
    "NilExecutorValidating",
    "ManifestWorkReplicaSet",
    "CloudEventsDrivers",
    "CleanUpCompletedManifestWork",
];
/// Gates the add-on manager knows (upstream `DefaultHubAddonManagerFeatureGates`).
pub const ADDON_GATES: &[&str] = &["AddonManagement"];
/// Upstream defines no placement gates.
pub const PLACEMENT_GATES: &[&str] = &["PlacementDebugServer"];

/// The first of `gates` (`Name`, on) our hub would not honour, routed to components as `init`
/// routes them.
#[must_use]
pub fn hub_refusal(gates: &[(String, bool)]) -> Option<String> {
    gates
        .iter()
        .find_map(|(name, on)| refusal(hub_component(name), name, *on))
}

/// The ClusterManager component a hub gate named `name` is set on: the one that knows it, else
/// registration (where the operator reports an unknown gate rather than dropping it).
#[must_use]
pub fn hub_component(name: &str) -> Component {
    if WORK_GATES.contains(&name) {
        HubWork
    } else if ADDON_GATES.contains(&name) {
        HubAddOnManager
    } else if PLACEMENT_GATES.contains(&name) {
        HubPlacement
    } else {
        HubRegistration
    }
}

/// The first of `gates` our klusterlet would not honour (`join` sets each on both agents).
#[must_use]
pub fn klusterlet_refusal(gates: &[(String, bool)]) -> Option<String> {
    gates.iter().find_map(|(name, on)| {
        refusal(SpokeRegistration, name, *on).or_else(|| refusal(SpokeWork, name, *on))
    })
}

/// Which CR's gate lists a name belongs to: the ClusterManager's or the Klusterlet's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `init`'s `--feature-gates`, the ClusterManager's lists.
    Hub,
    /// `join`'s `--feature-gates`, the Klusterlet's lists.
    Klusterlet,
}

impl Side {
    fn has(self, component: Component) -> bool {
        let hub = matches!(
            component,
            HubRegistration | HubWork | HubAddOnManager | HubPlacement
        );
        hub == (self == Self::Hub)
    }
}

/// The first of `gates` upstream v1.3.1 does not define for `side`, as upstream's CLI refuses it
/// ("unrecognized feature gate"), with the names it does define.
#[must_use]
pub fn unrecognized(side: Side, gates: &[(String, bool)]) -> Option<String> {
    let known = || {
        GATES
            .iter()
            .filter(|g| side.has(g.component))
            .map(|g| g.name)
    };
    let (name, _) = gates.iter().find(|(name, _)| !known().any(|k| k == name))?;
    let mut names: Vec<&str> = known().collect();
    names.sort_unstable();
    names.dedup();
    Some(format!(
        "unrecognized feature gate: {name} (upstream v1.3.1's {} gates: {})",
        match side {
            Side::Hub => "hub",
            Side::Klusterlet => "klusterlet",
        },
        names.join(", ")
    ))
}

/// The README's gate table.
#[must_use]
pub fn table() -> String {
    let mut out = String::from(
        "| gate | set on | upstream's default | with our components (`--in-process`, `--image`) |\n| --- | --- | --- | --- |\n",
    );
    for g in GATES {
        let status = match g.here {
            Works => "✅ on and off",
            Inert => "✅ accepted, nothing to do",
            NotImplemented => "❌ `=true` refused",
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {status}: {} |",
            g.name,
            g.component.label(),
            g.default,
            g.note
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_honoured_is_refused_and_the_rest_passes() {
        assert!(refusal(HubRegistration, "ClusterImporter", true).is_some());
        assert!(refusal(HubRegistration, "ClusterImporter", false).is_none());
        assert!(refusal(HubPlacement, "PlacementDebugServer", true).is_none());
        assert!(placement_debug_refusal(&[("PlacementDebugServer".into(), true)]).is_some());
        assert!(
            placement_debug_refusal(&[
                ("PlacementDebugServer".into(), true),
                ("PlacementDebugServer".into(), false)
            ])
            .is_none()
        );
        assert!(refusal(HubRegistration, "ClusterProfile", true).is_none());
        assert!(refusal(HubRegistration, "ResourceCleanup", false).is_none());
        assert!(refusal(HubRegistration, "ManagedClusterAutoApproval", true).is_none());
        assert!(refusal(SpokeRegistration, "MultipleHubs", true).is_none());
        // Unknown gates are the operator's to report (ValidFeatureGates), not refused here.
        assert!(refusal(HubWork, "NoSuchGate", true).is_none());
    }

    #[test]
    fn a_name_upstream_does_not_define_is_unrecognized_on_its_side() {
        let g = |n: &str| vec![(n.to_owned(), true)];
        assert!(unrecognized(Side::Hub, &g("ManifestWorkReplicaSet")).is_none());
        assert!(unrecognized(Side::Klusterlet, &g("MultipleHubs")).is_none());
        let why = unrecognized(Side::Hub, &g("NoSuchGate")).unwrap();
        assert!(
            why.starts_with("unrecognized feature gate: NoSuchGate"),
            "{why}"
        );
        assert!(why.contains("ResourceCleanup"), "{why}");
        // Each side knows only its own gates.
        assert!(unrecognized(Side::Hub, &g("MultipleHubs")).is_some());
        assert!(unrecognized(Side::Klusterlet, &g("ManifestWorkReplicaSet")).is_some());
    }

    #[test]
    fn the_table_has_every_gate_once_per_component() {
        let table = table();
        assert_eq!(table.lines().count(), GATES.len() + 2);
        for g in GATES {
            assert_eq!(
                GATES
                    .iter()
                    .filter(|o| o.name == g.name && o.component == g.component)
                    .count(),
                1,
                "{}",
                g.name
            );
        }
    }

    /// The lists of known gates are upstream's, and this table has each.
    #[test]
    fn every_gate_the_operator_knows_is_in_the_table() {
        for (component, known) in [
            (HubRegistration, REGISTRATION_GATES),
            (HubWork, WORK_GATES),
            (HubAddOnManager, ADDON_GATES),
            (HubPlacement, PLACEMENT_GATES),
        ] {
            for name in known {
                assert!(
                    GATES
                        .iter()
                        .any(|g| g.component == component && g.name == *name),
                    "{name}"
                );
            }
        }
    }
}
