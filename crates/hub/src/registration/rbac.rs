//! What a cluster's agents may do on the hub, as objects — upstream's contract
//! (open-cluster-management-io/ocm `pkg/registration/hub/manifests/rbac/`), so upstream agents
//! work on this hub and ours on theirs:
//! - per cluster, ClusterRole + ClusterRoleBinding `open-cluster-management:managedcluster:<c>`:
//!   when accepted, its own ManagedCluster (get/list/watch/update) and status (patch/update),
//!   CSRs and certificate renewal; when denied, only reading its own ManagedCluster;
//! - two ClusterRoles shared by every cluster, `open-cluster-management:managedcluster:registration`
//!   (leases get/list/watch/update — never create or patch; add-ons; events) and
//!   `...:work` (read, update and patch ManifestWorks and their status — never create or delete them),
//!   bound in the cluster namespace by RoleBindings `...:<c>:registration` and `...:<c>:work`; the
//!   work binding carries a finalizer so the work agent keeps its access until the works are gone.
//!
//! Everything is bound to the groups `system:open-cluster-management:<c>` and
//! `open-cluster-management:<c>`. Pure builders.
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject,
};
use kube::api::ObjectMeta;

use ocm_api::cluster::CLUSTER_NAME_LABEL;
use ocm_runtime::identity;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
/// The ClusterRole every cluster's registration agent is bound to in its namespace.
pub const REGISTRATION_ROLE: &str = "open-cluster-management:managedcluster:registration";
/// The ClusterRole every cluster's work agent is bound to in its namespace.
pub const WORK_ROLE: &str = "open-cluster-management:managedcluster:work";
/// Keeps the work RoleBinding (and so the work agent's access) until the cluster's works are
/// gone; upstream's name.
pub const WORK_BINDING_FINALIZER: &str = "cluster.open-cluster-management.io/manifest-work-cleanup";

/// Name of the cluster-scoped role and binding.
#[must_use]
pub fn cluster_role_name(cluster: &str) -> String {
    format!("open-cluster-management:managedcluster:{cluster}")
}

/// Name of the registration agent's RoleBinding in the cluster namespace.
#[must_use]
pub fn registration_name(cluster: &str) -> String {
    format!("{}:registration", cluster_role_name(cluster))
}

/// Name of the work agent's RoleBinding in the cluster namespace.
#[must_use]
pub fn work_name(cluster: &str) -> String {
    format!("{}:work", cluster_role_name(cluster))
}

fn rule(groups: &[&str], resources: &[&str], names: &[&str], verbs: &[&str]) -> PolicyRule {
    let strings = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        resource_names: (!names.is_empty()).then(|| strings(names)),
        verbs: strings(verbs),
        non_resource_urls: None,
    }
}

fn meta(name: String, namespace: Option<&str>, cluster: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: namespace.map(Into::into),
        labels: Some(BTreeMap::from([(
            CLUSTER_NAME_LABEL.to_string(),
            cluster.to_string(),
        )])),
        ..Default::default()
    }
}

/// The groups of a cluster's agents as RBAC subjects: the certificate's group and upstream's
/// second, as upstream binds both.
#[must_use]
pub fn subjects(cluster: &str) -> Vec<Subject> {
    [
        identity::cluster_group(cluster),
        format!("open-cluster-management:{cluster}"),
    ]
    .into_iter()
    .map(|name| Subject {
        kind: "Group".into(),
        api_group: Some(RBAC_GROUP.into()),
        name,
        namespace: None,
    })
    .collect()
}

fn role_ref(kind: &str, name: String) -> RoleRef {
    RoleRef {
        api_group: Some(RBAC_GROUP.into()),
        kind: kind.into(),
        name,
    }
}

/// The objects of one cluster's access.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    /// The cluster namespace.
    pub namespace: Namespace,
    /// `open-cluster-management:managedcluster:<c>`.
    pub cluster_role: ClusterRole,
    /// Binds it to the cluster's groups.
    pub cluster_role_binding: ClusterRoleBinding,
    /// Registration and work bindings to the shared ClusterRoles, in the cluster namespace.
    pub role_bindings: Vec<RoleBinding>,
}

/// What an accepted cluster's agents get.
#[must_use]
pub fn grant(cluster: &str) -> Grant {
    let name = cluster_role_name(cluster);
    let mut work = role_binding(cluster, work_name(cluster), WORK_ROLE);
    work.metadata.finalizers = Some(vec![WORK_BINDING_FINALIZER.into()]);
    Grant {
        namespace: Namespace {
            metadata: meta(cluster.to_string(), None, cluster),
            ..Default::default()
        },
        cluster_role: cluster_role(cluster, true),
        cluster_role_binding: ClusterRoleBinding {
            metadata: meta(name.clone(), None, cluster),
            role_ref: role_ref("ClusterRole", name),
            subjects: Some(subjects(cluster)),
        },
        role_bindings: vec![
            role_binding(cluster, registration_name(cluster), REGISTRATION_ROLE),
            work,
        ],
    }
}

fn role_binding(cluster: &str, name: String, role: &str) -> RoleBinding {
    RoleBinding {
        metadata: meta(name, Some(cluster), cluster),
        role_ref: role_ref("ClusterRole", role.into()),
        subjects: Some(subjects(cluster)),
    }
}

/// The per-cluster ClusterRole: full when accepted, reading its own ManagedCluster when denied
/// (so a denied agent can see that it is denied).
#[must_use]
pub fn cluster_role(cluster: &str, accepted: bool) -> ClusterRole {
    let own = |resource: &str, verbs: &[&str]| {
        rule(
            &["cluster.open-cluster-management.io"],
            &[resource],
            &[cluster],
            verbs,
        )
    };
    let rules = if accepted {
        vec![
            rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests"],
                &[],
                &["create", "get", "list", "watch"],
            ),
            rule(
                &["register.open-cluster-management.io"],
                &["managedclusters/clientcertificates"],
                &[],
                &["renew"],
            ),
            own("managedclusters", &["get", "list", "update", "watch"]),
            own("managedclusters/status", &["patch", "update"]),
        ]
    } else {
        vec![own("managedclusters", &["get", "list", "watch"])]
    };
    ClusterRole {
        metadata: meta(cluster_role_name(cluster), None, cluster),
        rules: Some(rules),
        aggregation_rule: None,
    }
}

/// The two ClusterRoles every cluster's RoleBindings refer to.
#[must_use]
pub fn shared_cluster_roles() -> [ClusterRole; 2] {
    let shared = |name: &str, rules: Vec<PolicyRule>| ClusterRole {
        metadata: meta(name.into(), None, ""),
        rules: Some(rules),
        aggregation_rule: None,
    };
    [
        shared(
            REGISTRATION_ROLE,
            vec![
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &[],
                    &["get", "list", "watch", "update"],
                ),
                rule(
                    &["addon.open-cluster-management.io"],
                    &["managedclusteraddons"],
                    &[],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["addon.open-cluster-management.io"],
                    &["managedclusteraddons/status"],
                    &[],
                    &["patch", "update"],
                ),
                rule(&["events.k8s.io"], &["events"], &[], &["create"]),
            ],
        ),
        shared(
            WORK_ROLE,
            vec![
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &[],
                    &["create", "patch", "update"],
                ),
                rule(
                    &["work.open-cluster-management.io"],
                    &["manifestworks"],
                    &[],
                    &["get", "list", "watch", "update", "patch"],
                ),
                rule(
                    &["work.open-cluster-management.io"],
                    &["manifestworks/status"],
                    &[],
                    &["patch", "update"],
                ),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_upstream() {
        let g = grant("c1");
        assert_eq!(
            g.cluster_role.metadata.name.as_deref(),
            Some("open-cluster-management:managedcluster:c1")
        );
        let bindings: Vec<_> = g
            .role_bindings
            .iter()
            .map(|r| (r.metadata.name.clone().unwrap(), r.role_ref.name.clone()))
            .collect();
        assert_eq!(
            bindings,
            [
                (
                    "open-cluster-management:managedcluster:c1:registration".to_string(),
                    REGISTRATION_ROLE.to_string()
                ),
                (
                    "open-cluster-management:managedcluster:c1:work".to_string(),
                    WORK_ROLE.to_string()
                )
            ]
        );
        assert_eq!(
            g.role_bindings[1].metadata.finalizers.as_deref(),
            Some(&[WORK_BINDING_FINALIZER.to_string()][..])
        );
        assert_eq!(
            g.namespace.metadata.labels.unwrap()[CLUSTER_NAME_LABEL],
            "c1"
        );
        let groups: Vec<_> = g
            .cluster_role_binding
            .subjects
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            groups,
            [
                "system:open-cluster-management:c1",
                "open-cluster-management:c1"
            ]
        );
    }

    #[test]
    fn the_cluster_role_covers_only_its_own_managed_cluster() {
        for accepted in [true, false] {
            let rules = cluster_role("c1", accepted).rules.unwrap();
            for r in rules
                .iter()
                .filter(|r| r.resources.as_ref().unwrap()[0].starts_with("managedclusters"))
                .filter(|r| {
                    r.api_groups.as_ref().unwrap()[0] == "cluster.open-cluster-management.io"
                })
            {
                assert_eq!(r.resource_names.as_deref(), Some(&["c1".to_string()][..]));
            }
            assert!(
                rules
                    .iter()
                    .all(|r| !r.verbs.contains(&"delete".to_string()))
            );
        }
        // Denied: read only.
        let denied = cluster_role("c1", false).rules.unwrap();
        assert!(denied.iter().all(|r| r.verbs == ["get", "list", "watch"]));
    }

    #[test]
    fn agents_never_create_or_delete_leases_or_works_nor_patch_leases() {
        for role in shared_cluster_roles() {
            for r in role.rules.unwrap() {
                let resource = r.resources.as_ref().unwrap()[0].as_str();
                if matches!(resource, "leases" | "manifestworks") {
                    assert!(!r.verbs.iter().any(|v| v == "create" || v == "delete"));
                }
                if resource == "leases" {
                    assert!(!r.verbs.iter().any(|v| v == "patch"));
                }
            }
        }
    }
}
