//! What an accepted cluster's agents may do on the hub, as objects: the cluster namespace, a
//! ClusterRole + ClusterRoleBinding `open-cluster-management:managedcluster:<c>` (its own
//! ManagedCluster and status, CSRs, certificate renewal) and, in the cluster namespace, a Role +
//! RoleBinding each for the registration agent (lease, events) and the work agent (read and
//! update ManifestWorks and their status — never create or delete them). Bound to the groups
//! `system:open-cluster-management:<c>` and `open-cluster-management:<c>`. Pure builders.
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::api::ObjectMeta;

use crate::api::cluster::CLUSTER_NAME_LABEL;
use crate::identity;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Name of the cluster-scoped role and binding.
#[must_use]
pub fn cluster_role_name(cluster: &str) -> String {
    format!("open-cluster-management:managedcluster:{cluster}")
}

/// Name of the registration agent's Role and RoleBinding in the cluster namespace.
#[must_use]
pub fn registration_name(cluster: &str) -> String {
    format!("{}:registration", cluster_role_name(cluster))
}

/// Name of the work agent's Role and RoleBinding in the cluster namespace.
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

fn subjects(cluster: &str) -> Vec<Subject> {
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

/// Everything an accepted cluster gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    /// The cluster namespace.
    pub namespace: Namespace,
    /// Cluster-scoped rights.
    pub cluster_role: ClusterRole,
    /// Binds them to the cluster's groups.
    pub cluster_role_binding: ClusterRoleBinding,
    /// Registration and work agent roles in the cluster namespace.
    pub roles: Vec<Role>,
    /// Their bindings.
    pub role_bindings: Vec<RoleBinding>,
}

/// The grant of `cluster`.
#[must_use]
pub fn grant(cluster: &str) -> Grant {
    let name = cluster_role_name(cluster);
    let cluster_role_binding = ClusterRoleBinding {
        metadata: meta(name.clone(), None, cluster),
        role_ref: RoleRef {
            api_group: Some(RBAC_GROUP.into()),
            kind: "ClusterRole".into(),
            name,
        },
        subjects: Some(subjects(cluster)),
    };
    let roles = roles(cluster);
    let role_bindings = roles
        .iter()
        .map(|r| {
            let name = r.metadata.name.clone().unwrap_or_default();
            RoleBinding {
                metadata: meta(name.clone(), Some(cluster), cluster),
                role_ref: RoleRef {
                    api_group: Some(RBAC_GROUP.into()),
                    kind: "Role".into(),
                    name,
                },
                subjects: Some(subjects(cluster)),
            }
        })
        .collect();
    Grant {
        namespace: Namespace {
            metadata: meta(cluster.to_string(), None, cluster),
            ..Default::default()
        },
        cluster_role: cluster_role(cluster),
        cluster_role_binding,
        roles,
        role_bindings,
    }
}

/// Cluster-scoped rights: its own ManagedCluster and status, CSRs, certificate renewal.
fn cluster_role(cluster: &str) -> ClusterRole {
    ClusterRole {
        metadata: meta(cluster_role_name(cluster), None, cluster),
        rules: Some(vec![
            rule(
                &["cluster.open-cluster-management.io"],
                &["managedclusters"],
                &[cluster],
                &["get", "list", "watch"],
            ),
            rule(
                &["cluster.open-cluster-management.io"],
                &["managedclusters/status"],
                &[cluster],
                &["patch", "update"],
            ),
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
        ]),
        aggregation_rule: None,
    }
}

/// The registration and work agents' roles in the cluster namespace.
fn roles(cluster: &str) -> Vec<Role> {
    let events = rule(
        &["", "events.k8s.io"],
        &["events"],
        &[],
        &["create", "patch", "update"],
    );
    let role = |name: String, rules: Vec<PolicyRule>| Role {
        metadata: meta(name, Some(cluster), cluster),
        rules: Some(rules),
    };
    vec![
        role(
            registration_name(cluster),
            vec![
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &[],
                    &["get", "list", "watch", "create", "update", "patch"],
                ),
                events.clone(),
            ],
        ),
        role(
            work_name(cluster),
            vec![
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
                    &["update", "patch"],
                ),
                events,
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
        let names: Vec<_> = g
            .role_bindings
            .iter()
            .map(|r| r.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "open-cluster-management:managedcluster:c1:registration",
                "open-cluster-management:managedcluster:c1:work"
            ]
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
        let rules = grant("c1").cluster_role.rules.unwrap();
        for r in rules.iter().filter(|r| {
            r.resources.as_ref().unwrap()[0].starts_with("managedclusters/status")
                || r.resources.as_ref().unwrap()[0] == "managedclusters"
        }) {
            assert_eq!(r.resource_names.as_deref(), Some(&["c1".to_string()][..]));
        }
        assert!(
            rules
                .iter()
                .all(|r| !r.verbs.contains(&"delete".to_string()))
        );
    }

    #[test]
    fn the_work_agent_cannot_create_or_delete_works() {
        let g = grant("c1");
        let work = &g.roles[1];
        assert_eq!(work.metadata.namespace.as_deref(), Some("c1"));
        for r in work.rules.as_ref().unwrap() {
            assert!(
                !r.verbs
                    .iter()
                    .any(|v| v == "create" && r.resources.as_ref().unwrap()[0] != "events")
            );
            assert!(!r.verbs.contains(&"delete".to_string()));
        }
    }
}
