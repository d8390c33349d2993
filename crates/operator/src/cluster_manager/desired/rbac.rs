//! Identity and rights of each deployed component: a ServiceAccount in the hub namespace, a
//! ClusterRole with only what the component does, and a ClusterRoleBinding between them.
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Component;
use ocm_api::names::HUB_NAMESPACE;

const READ: &[&str] = &["get", "list", "watch"];
const MANAGE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];
/// Every verb of a collection but `*`.
pub(super) const EVERY: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];
const STATUS: &[&str] = &["update", "patch"];
const EVENTS: &[&str] = &["create", "patch", "update"];

pub(super) fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(owned(groups)),
        resources: Some(owned(resources)),
        verbs: owned(verbs),
        ..Default::default()
    }
}

const CLUSTER: &str = "cluster.open-cluster-management.io";
const WORK: &str = "work.open-cluster-management.io";
const ADDON: &str = "addon.open-cluster-management.io";
const RBAC: &str = "rbac.authorization.k8s.io";

/// The rules of one component (none for the add-on webhook, which only converts what the API
/// server sends it). Each block says why the component needs it.
#[must_use]
pub fn rules(c: Component) -> Vec<PolicyRule> {
    match c {
        Component::RegistrationController => registration_controller(),
        Component::RegistrationWebhook | Component::WorkWebhook => webhook(),
        Component::PlacementController => placement_controller(),
        Component::AddonManager => addon_manager(),
        Component::WorkController => work_controller(),
        Component::AddonWebhook => Vec::new(),
    }
}

fn registration_controller() -> Vec<PolicyRule> {
    vec![
        // Approves and watches the agents' client-certificate CSRs (kube-controller-manager signs).
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests"],
            &["get", "list", "watch", "create"],
        ),
        rule(
            &["certificates.k8s.io"],
            &[
                "certificatesigningrequests/approval",
                "certificatesigningrequests/status",
            ],
            &["update"],
        ),
        PolicyRule {
            resource_names: Some(vec!["kubernetes.io/kube-apiserver-client".into()]),
            ..rule(&["certificates.k8s.io"], &["signers"], &["approve"])
        },
        // Creates and removes each accepted cluster's namespace; configmaps for leader election.
        rule(
            &[""],
            &["namespaces", "configmaps"],
            &["get", "list", "watch", "create", "update", "delete"],
        ),
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
        // Per-cluster RBAC for the agents. RBAC forbids granting what one does not hold, so the
        // rules below also cover everything those roles grant (leases, works, addons, CSRs).
        rule(
            &[RBAC],
            &[
                "clusterroles",
                "clusterrolebindings",
                "roles",
                "rolebindings",
            ],
            MANAGE,
        ),
        // Agents' heartbeat leases in the cluster namespaces, and leader election.
        rule(&["coordination.k8s.io"], &["leases"], MANAGE),
        rule(
            &[CLUSTER],
            &["managedclusters"],
            &["get", "list", "watch", "update", "patch"],
        ),
        rule(
            &[CLUSTER],
            &[
                "managedclusters/status",
                "managedclustersets/status",
                "managedclustersetbindings/status",
            ],
            STATUS,
        ),
        // Maintains the default and global cluster sets.
        rule(&[CLUSTER], &["managedclustersets"], MANAGE),
        rule(&[CLUSTER], &["managedclustersetbindings"], READ),
        // Removes a deleted cluster's works; grants agents work access (see above).
        rule(&[WORK], &["manifestworks"], EVERY),
        rule(&[WORK], &["manifestworks/status"], STATUS),
        rule(
            &["addon.open-cluster-management.io"],
            &["managedclusteraddons"],
            &["get", "list", "watch", "delete"],
        ),
        rule(
            &["addon.open-cluster-management.io"],
            &["managedclusteraddons/status"],
            STATUS,
        ),
        // Renewal and accept permission checks, and authn/authz of its metrics endpoint.
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["create"],
        ),
        rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
        rule(
            &["register.open-cluster-management.io"],
            &["managedclusters/clientcertificates"],
            &["renew"],
        ),
        rule(
            &["register.open-cluster-management.io"],
            &["managedclusters/accept"],
            &["update"],
        ),
    ]
}

fn webhook() -> Vec<PolicyRule> {
    vec![
        // Delegated authentication reads kube-system/extension-apiserver-authentication.
        rule(&[""], &["configmaps"], READ),
        // Checks whether the requester may accept a cluster / join a set / execute as a user.
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["create"],
        ),
        // API priority and fairness of the embedded server.
        rule(
            &["flowcontrol.apiserver.k8s.io"],
            &["prioritylevelconfigurations", "flowschemas"],
            READ,
        ),
    ]
}

fn placement_controller() -> Vec<PolicyRule> {
    vec![
        // Leader election (configmaps and leases) and events.
        rule(
            &[""],
            &["configmaps"],
            &["get", "list", "watch", "create", "update", "delete"],
        ),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "create", "update"],
        ),
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
        // Reads what it schedules over; writes only decisions and placement status.
        rule(
            &[CLUSTER],
            &[
                "managedclusters",
                "managedclustersets",
                "managedclustersetbindings",
                "addonplacementscores",
                "placements",
            ],
            READ,
        ),
        rule(&[CLUSTER], &["placementdecisions"], MANAGE),
        rule(
            &[CLUSTER],
            &["placements/status", "placementdecisions/status"],
            STATUS,
        ),
        rule(&[CLUSTER], &["placements/finalizers"], &["update"]),
    ]
}

/// Upstream's add-on manager: upstream's rules, since its binary is what runs.
fn addon_manager() -> Vec<PolicyRule> {
    vec![
        // Leader election, events, and finding its own pod and ReplicaSet for the events.
        rule(&[""], &["configmaps", "events"], EVERY),
        rule(&[""], &["pods"], &["get"]),
        rule(&["apps"], &["replicasets"], &["get"]),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "list", "watch", "create", "update", "patch"],
        ),
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["get", "create"],
        ),
        // Installs add-ons on the clusters placements choose.
        rule(
            &[CLUSTER],
            &["managedclusters", "placements", "placementdecisions"],
            READ,
        ),
        rule(
            &[ADDON],
            &[
                "managedclusteraddons/finalizers",
                "clustermanagementaddons/finalizers",
            ],
            &["update"],
        ),
        rule(&[ADDON], &["clustermanagementaddons/status"], STATUS),
        rule(
            &[ADDON],
            &["clustermanagementaddons"],
            &["patch", "get", "list", "watch"],
        ),
        rule(
            &[ADDON],
            &["managedclusteraddons"],
            &["get", "list", "watch", "create", "update", "delete"],
        ),
        rule(&[ADDON], &["managedclusteraddons/status"], STATUS),
        rule(
            &[ADDON],
            &["addontemplates", "addondeploymentconfigs"],
            READ,
        ),
        // Deploys each add-on's agent as a ManifestWork.
        rule(
            &[WORK],
            &["manifestworks"],
            &[
                "get", "list", "watch", "create", "update", "delete", "patch",
            ],
        ),
        // Template add-ons: approves and signs their CSRs, binds their hub permissions, and
        // makes their token identities.
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests"],
            &["create", "get", "list", "watch"],
        ),
        rule(
            &["certificates.k8s.io"],
            &[
                "certificatesigningrequests/approval",
                "certificatesigningrequests/status",
            ],
            &["update"],
        ),
        rule(&["certificates.k8s.io"], &["signers"], &["approve", "sign"]),
        rule(
            &[RBAC],
            &["rolebindings", "roles"],
            &["get", "list", "watch", "create", "update", "delete"],
        ),
        rule(
            &[""],
            &["serviceaccounts"],
            &["get", "list", "watch", "create", "update", "delete"],
        ),
        rule(&[""], &["serviceaccounts/token"], &["create", "subscribe"]),
    ]
}

/// Upstream's work controller (ManifestWorkReplicaSets): upstream's rules.
fn work_controller() -> Vec<PolicyRule> {
    vec![
        rule(&[""], &["configmaps"], READ),
        rule(&[""], &["pods"], &["get"]),
        rule(&["apps"], &["replicasets"], &["get"]),
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["create"],
        ),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["create", "get", "list", "update", "watch", "patch"],
        ),
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
        // Writes one ManifestWork per chosen cluster, as whichever executor the set names.
        rule(&[WORK], &["manifestworks"], EVERY),
        rule(&[WORK], &["manifestworks"], &["execute-as"]),
        rule(
            &[WORK],
            &["manifestworkreplicasets"],
            &["get", "list", "watch", "update", "patch"],
        ),
        rule(&[WORK], &["manifestworkreplicasets/status"], STATUS),
        rule(
            &[WORK],
            &["manifestworkreplicasets/finalizers"],
            &["update"],
        ),
        rule(&[CLUSTER], &["placements", "placementdecisions"], READ),
        // Upstream's binary asks whether it runs on OpenShift.
        rule(&["config.openshift.io"], &["infrastructures"], &["get"]),
    ]
}

/// The ClusterRole upstream's add-on manager is bound to besides its own: `execute-as` the
/// work agent's default identity, which the work webhook asks of a work without an executor
/// under `NilExecutorValidating`.
#[must_use]
pub fn work_executor_admin() -> (ClusterRole, ClusterRoleBinding) {
    let role = "open-cluster-management:cluster-manager-work-executor-admin:webhook";
    let cluster_role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(role.into()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            resource_names: Some(vec!["system:serviceaccount::klusterlet-work-sa".into()]),
            ..rule(&[WORK], &["manifestworks"], &["execute-as"])
        }]),
        ..Default::default()
    };
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(
                "open-cluster-management:cluster-manager-addon-manager-work-executor:controller"
                    .into(),
            ),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some(RBAC.into()),
            kind: "ClusterRole".into(),
            name: role.into(),
        },
        subjects: Some(vec![service_account_subject(Component::AddonManager)]),
    };
    (cluster_role, binding)
}

fn service_account_subject(c: Component) -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        name: c.service_account().into(),
        namespace: Some(HUB_NAMESPACE.into()),
        ..Default::default()
    }
}

/// The component's ServiceAccount.
#[must_use]
pub fn service_account(c: Component) -> ServiceAccount {
    ServiceAccount {
        metadata: ObjectMeta {
            name: Some(c.service_account().into()),
            namespace: Some(HUB_NAMESPACE.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The component's ClusterRole.
#[must_use]
pub fn cluster_role(c: Component) -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(c.cluster_role().into()),
            ..Default::default()
        },
        rules: Some(rules(c)),
        ..Default::default()
    }
}

/// What the registration controller needs with the `ClusterProfile` gate on: it writes a
/// ClusterProfile per cluster and namespace, and their status (upstream's same two rules).
#[must_use]
pub fn cluster_profile_rules() -> Vec<PolicyRule> {
    let group = ocm_api::inventory::GROUP;
    vec![
        rule(&[group], &["clusterprofiles"], MANAGE),
        rule(&[group], &["clusterprofiles/status"], STATUS),
    ]
}

/// Binds the component's ClusterRole to its ServiceAccount.
#[must_use]
pub fn cluster_role_binding(c: Component) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(c.cluster_role().into()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some(RBAC.into()),
            kind: "ClusterRole".into(),
            name: c.cluster_role().into(),
        },
        subjects: Some(vec![service_account_subject(c)]),
    }
}
