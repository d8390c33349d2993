//! The agents' RBAC, least privilege, with upstream's names (`<k>` is the Klusterlet's name):
//! on the managed cluster ClusterRoles `open-cluster-management:<k>-registration:agent`,
//! `open-cluster-management:<k>-work:agent` and `open-cluster-management:<k>-work:execution`
//! (plus `…-work:execution-admin` binding the built-in `admin`, and `…-work:aggregate`, which
//! aggregates every ClusterRole labelled [`AGGREGATE_TO_WORK`]); where the agents run, Roles
//! `open-cluster-management:management:<k>-{registration,work}:agent` in the agent namespace, and
//! the ClusterRole `open-cluster-management:management:<k>-registration:addon-management` (add-on
//! secrets and leases in any namespace).
use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef,
    Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::meta;
use super::service_account::{Workload, name as sa_name};
use crate::klusterlet::validate::Validated;

/// The label that aggregates a ClusterRole into the work agent's (upstream's).
pub const AGGREGATE_TO_WORK: &str = "open-cluster-management.io/aggregate-to-work";

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let owned = |s: &[&str]| Some(s.iter().map(ToString::to_string).collect());
    PolicyRule {
        api_groups: owned(groups),
        resources: owned(resources),
        verbs: verbs.iter().map(ToString::to_string).collect(),
        ..Default::default()
    }
}

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];
const EVENTS: &[&str] = &["create", "patch", "update"];

/// Rules of the registration agent on the managed cluster.
#[must_use]
pub fn registration_cluster_role() -> Vec<PolicyRule> {
    vec![
        // Report capacity and allocatable of the nodes in the ManagedCluster status.
        rule(&[""], &["nodes"], READ),
        // Create and label the namespaces the cluster's sets manage (upstream's verbs).
        rule(
            &[""],
            &["namespaces"],
            &["create", "get", "list", "update", "watch", "patch"],
        ),
        // Report ClusterClaims (and, with the ClusterProperty gate, ClusterProperties) to the
        // hub; upstream grants the second whatever the gate.
        rule(
            &["cluster.open-cluster-management.io"],
            &["clusterclaims"],
            READ,
        ),
        rule(&["about.k8s.io"], &["clusterproperties"], READ),
        // Judge add-on health by the leases add-on agents renew in their namespaces.
        rule(&["coordination.k8s.io"], &["leases"], READ),
        // Record what it does.
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
    ]
}

/// Rules of the work agent itself on the managed cluster (not what it applies).
#[must_use]
pub fn work_cluster_role() -> Vec<PolicyRule> {
    vec![
        // Its record of what each ManifestWork applied, so it can be removed later.
        rule(
            &["work.open-cluster-management.io"],
            &["appliedmanifestworks"],
            WRITE,
        ),
        rule(
            &["work.open-cluster-management.io"],
            &[
                "appliedmanifestworks/status",
                "appliedmanifestworks/finalizers",
            ],
            &["update", "patch"],
        ),
        // Check an executor's permissions before applying a ManifestWork on its behalf.
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["create"],
        ),
        // Record what it does.
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
    ]
}

/// What the work agent may apply beyond the built-in `admin` role (bound separately): the
/// cluster-scoped kinds ManifestWorks commonly carry.
#[must_use]
pub fn work_execution_cluster_role() -> Vec<PolicyRule> {
    vec![
        // ManifestWorks that create the namespaces their workloads go into.
        rule(&[""], &["namespaces"], WRITE),
        // ManifestWorks that install CRDs (operators, add-ons).
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            WRITE,
        ),
        // ManifestWorks that carry RBAC; bind/escalate so they may grant more than `admin` holds.
        rule(
            &["rbac.authorization.k8s.io"],
            &[
                "clusterroles",
                "clusterrolebindings",
                "roles",
                "rolebindings",
            ],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete", "bind", "escalate",
            ],
        ),
    ]
}

/// Rules of the registration agent in its own namespace.
fn registration_role() -> Vec<PolicyRule> {
    vec![
        // Read the bootstrap kubeconfig; write the hub kubeconfig once its certificate is signed.
        rule(
            &[""],
            &["secrets"],
            &["get", "list", "watch", "create", "update", "patch"],
        ),
        // Leader election.
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "create", "update"],
        ),
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
    ]
}

/// Rules of the work agent in its own namespace.
fn work_role() -> Vec<PolicyRule> {
    vec![
        // Read the hub kubeconfig the registration agent writes.
        rule(&[""], &["secrets"], READ),
        // Leader election.
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "create", "update"],
        ),
        rule(&["", "events.k8s.io"], &["events"], EVENTS),
    ]
}

fn subject(v: &Validated, agent: Workload, namespace: &str) -> Subject {
    let w = if v.singleton {
        Workload::Singleton
    } else {
        agent
    };
    Subject {
        kind: "ServiceAccount".into(),
        name: sa_name(v, w),
        namespace: Some(namespace.into()),
        ..Default::default()
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
    }
}

/// ClusterRoles and bindings on the managed cluster; bindings name ServiceAccounts in
/// `namespace`.
/// Whether our agent serves `/metrics` to authenticated callers: our image, where its pod runs
/// on the cluster it manages (in Hosted modes its ServiceAccount there is not the pod's).
#[must_use]
pub fn serves_metrics(v: &Validated) -> bool {
    v.ours && !v.hosted
}

pub(super) fn managed(
    v: &Validated,
    namespace: &str,
) -> (Vec<ClusterRole>, Vec<ClusterRoleBinding>) {
    let k = &v.name;
    let mut registration = registration_cluster_role();
    let mut work = work_cluster_role();
    if serves_metrics(v) {
        // Authenticate the callers of /metrics (it authorises them with the work role's
        // SubjectAccessReviews), as upstream's hub components do; upstream's agents serve no
        // authenticated metrics and hold no such right. Each of the Default-mode pair serves its
        // own, so each holds both.
        let authenticate = rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]);
        registration.push(authenticate.clone());
        if !v.singleton {
            work.push(authenticate);
            registration.push(rule(
                &["authorization.k8s.io"],
                &["subjectaccessreviews"],
                &["create"],
            ));
        }
    }
    let roles = [
        (
            format!("open-cluster-management:{k}-registration:agent"),
            registration,
            Workload::Registration,
        ),
        (
            format!("open-cluster-management:{k}-work:agent"),
            work,
            Workload::Work,
        ),
        (
            format!("open-cluster-management:{k}-work:execution"),
            work_execution_cluster_role(),
            Workload::Work,
        ),
    ];
    let mut cluster_roles = Vec::new();
    let mut bindings = Vec::new();
    for (name, rules, agent) in roles {
        bindings.push(ClusterRoleBinding {
            metadata: meta(v, &name, None),
            role_ref: role_ref("ClusterRole", &name),
            subjects: Some(vec![subject(v, agent, namespace)]),
        });
        let mut metadata = meta(v, &name, None);
        if name.ends_with("-work:execution") {
            metadata
                .labels
                .get_or_insert_default()
                .insert(AGGREGATE_TO_WORK.into(), "true".into());
        }
        cluster_roles.push(ClusterRole {
            metadata,
            rules: Some(rules),
            ..Default::default()
        });
    }
    // What the work agent may apply beyond that, as upstream: every ClusterRole labelled
    // `open-cluster-management.io/aggregate-to-work=true` (the execution role above, and any a
    // cluster admin adds), aggregated into one role by kube-controller-manager. Its `rules` are
    // left out so that applying it never takes them from the aggregation controller.
    let aggregate = format!("open-cluster-management:{k}-work:aggregate");
    cluster_roles.push(ClusterRole {
        metadata: meta(v, &aggregate, None),
        aggregation_rule: Some(AggregationRule {
            cluster_role_selectors: Some(vec![LabelSelector {
                match_labels: Some([(AGGREGATE_TO_WORK.to_string(), "true".to_string())].into()),
                ..Default::default()
            }]),
        }),
        rules: None,
    });
    bindings.push(ClusterRoleBinding {
        metadata: meta(v, &aggregate, None),
        role_ref: role_ref("ClusterRole", &aggregate),
        subjects: Some(vec![subject(v, Workload::Work, namespace)]),
    });
    // Namespaced workloads of any ManifestWork, in any namespace (upstream binds `admin`).
    bindings.push(ClusterRoleBinding {
        metadata: meta(
            v,
            &format!("open-cluster-management:{k}-work:execution-admin"),
            None,
        ),
        role_ref: role_ref("ClusterRole", "admin"),
        subjects: Some(vec![subject(v, Workload::Work, namespace)]),
    });
    (cluster_roles, bindings)
}

/// Rules of the registration agent where the agents run, for add-ons: each add-on's hub
/// credential is a secret in the add-on's install namespace (any namespace the hub names), and
/// its health the Lease its agent renews there. Upstream's verbs for secrets (its agent keeps them
/// through an informer); leases are only read.
#[must_use]
pub fn addon_management_cluster_role() -> Vec<PolicyRule> {
    vec![
        rule(&[""], &["secrets"], WRITE),
        rule(&["coordination.k8s.io"], &["leases"], READ),
    ]
}

/// The ClusterRole and binding of [`addon_management_cluster_role`] for the registration agent:
/// where it runs (Hosted add-ons' agents run there too), upstream's
/// `open-cluster-management:management:<k>-registration:addon-management`, bound to its account
/// in `namespace` there; or on the managed cluster of a Hosted Klusterlet, where the other
/// add-ons' agents run, upstream's `open-cluster-management:<k>-registration:addon-management`,
/// bound to its account there. (Upstream applies the managed one in every mode; where the agents
/// run on the managed cluster, it grants the same account the same rights twice, so only Hosted
/// modes have it here.)
pub(super) fn addon_management(
    v: &Validated,
    side: &str,
    namespace: &str,
) -> (ClusterRole, ClusterRoleBinding) {
    let name = format!(
        "open-cluster-management:{side}{}-registration:addon-management",
        v.name
    );
    let binding = ClusterRoleBinding {
        metadata: meta(v, &name, None),
        role_ref: role_ref("ClusterRole", &name),
        subjects: Some(vec![subject(v, Workload::Registration, namespace)]),
    };
    let role = ClusterRole {
        metadata: meta(v, &name, None),
        rules: Some(addon_management_cluster_role()),
        ..Default::default()
    };
    (role, binding)
}

/// Roles and bindings in the agent namespace, where the agents run.
pub(super) fn management(v: &Validated) -> (Vec<Role>, Vec<RoleBinding>) {
    let ns = v.agent_namespace.as_str();
    let k = &v.name;
    let mut roles = Vec::new();
    let mut bindings = Vec::new();
    for (name, rules, agent) in [
        (
            format!("open-cluster-management:management:{k}-registration:agent"),
            registration_role(),
            Workload::Registration,
        ),
        (
            format!("open-cluster-management:management:{k}-work:agent"),
            work_role(),
            Workload::Work,
        ),
    ] {
        bindings.push(RoleBinding {
            metadata: meta(v, &name, Some(ns)),
            role_ref: role_ref("Role", &name),
            subjects: Some(vec![subject(v, agent, ns)]),
        });
        roles.push(Role {
            metadata: meta(v, &name, Some(ns)),
            rules: Some(rules),
        });
    }
    (roles, bindings)
}
