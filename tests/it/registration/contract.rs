//! The wire contract with upstream OCM v1.3: an accepted cluster's agent credential may do
//! exactly what upstream's hub grants it (open-cluster-management-io/ocm
//! `pkg/registration/hub/manifests/rbac/`), no less — upstream agents need all of it — and no
//! more. Asked of the real authorizer with SelfSubjectAccessReviews made with the agent's own
//! certificate.
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use super::fixture::{self, cert_client};
use crate::common;

/// `(verb, group, resource, namespace, name)`; "{c}" is the cluster's name.
type Attr = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// What upstream grants an accepted cluster's agents.
#[rustfmt::skip]
const ALLOWED: &[Attr] = &[
    // Per-cluster ClusterRole.
    ("create", "certificates.k8s.io", "certificatesigningrequests", "", ""),
    ("get", "certificates.k8s.io", "certificatesigningrequests", "", ""),
    ("list", "certificates.k8s.io", "certificatesigningrequests", "", ""),
    ("watch", "certificates.k8s.io", "certificatesigningrequests", "", ""),
    ("renew", "register.open-cluster-management.io", "managedclusters/clientcertificates", "", ""),
    ("get", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("list", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("watch", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("update", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("patch", "cluster.open-cluster-management.io", "managedclusters/status", "", "{c}"),
    ("update", "cluster.open-cluster-management.io", "managedclusters/status", "", "{c}"),
    // open-cluster-management:managedcluster:registration, in the cluster namespace.
    ("get", "coordination.k8s.io", "leases", "{c}", ""),
    ("list", "coordination.k8s.io", "leases", "{c}", ""),
    ("watch", "coordination.k8s.io", "leases", "{c}", ""),
    ("update", "coordination.k8s.io", "leases", "{c}", ""),
    ("get", "addon.open-cluster-management.io", "managedclusteraddons", "{c}", ""),
    ("list", "addon.open-cluster-management.io", "managedclusteraddons", "{c}", ""),
    ("watch", "addon.open-cluster-management.io", "managedclusteraddons", "{c}", ""),
    ("patch", "addon.open-cluster-management.io", "managedclusteraddons/status", "{c}", ""),
    ("update", "addon.open-cluster-management.io", "managedclusteraddons/status", "{c}", ""),
    ("create", "events.k8s.io", "events", "{c}", ""),
    // open-cluster-management:managedcluster:work, in the cluster namespace.
    ("create", "", "events", "{c}", ""),
    ("patch", "", "events", "{c}", ""),
    ("get", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("list", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("watch", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("update", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("patch", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("patch", "work.open-cluster-management.io", "manifestworks/status", "{c}", ""),
    ("update", "work.open-cluster-management.io", "manifestworks/status", "{c}", ""),
];

/// What upstream does not grant: the nearest neighbours of the rules above.
#[rustfmt::skip]
const DENIED: &[Attr] = &[
    ("create", "coordination.k8s.io", "leases", "{c}", ""),
    ("patch", "coordination.k8s.io", "leases", "{c}", ""),
    ("delete", "coordination.k8s.io", "leases", "{c}", ""),
    ("update", "coordination.k8s.io", "leases", "kube-node-lease", ""),
    ("create", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("delete", "work.open-cluster-management.io", "manifestworks", "{c}", ""),
    ("list", "work.open-cluster-management.io", "manifestworks", "default", ""),
    ("create", "addon.open-cluster-management.io", "managedclusteraddons", "{c}", ""),
    ("delete", "addon.open-cluster-management.io", "managedclusteraddons", "{c}", ""),
    ("patch", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("delete", "cluster.open-cluster-management.io", "managedclusters", "", "{c}"),
    ("get", "cluster.open-cluster-management.io", "managedclusters", "", "another-cluster"),
    ("update", "cluster.open-cluster-management.io", "managedclusters/status", "", "another-cluster"),
    ("update", "register.open-cluster-management.io", "managedclusters/accept", "", "{c}"),
    ("update", "certificates.k8s.io", "certificatesigningrequests/approval", "", ""),
    ("get", "", "secrets", "{c}", ""),
    ("list", "", "secrets", "", ""),
    ("create", "", "namespaces", "", ""),
    ("create", "cluster.open-cluster-management.io", "managedclustersets/join", "", "default"),
];

fn attributes(attr: &Attr, cluster: &str) -> ResourceAttributes {
    let fill = |s: &str| s.replace("{c}", cluster);
    let (verb, group, resource, namespace, name) = *attr;
    let (resource, subresource) = match resource.split_once('/') {
        Some((r, s)) => (r, Some(s.to_string())),
        None => (resource, None),
    };
    ResourceAttributes {
        verb: Some(verb.into()),
        group: Some(group.into()),
        resource: Some(resource.into()),
        subresource,
        namespace: (!namespace.is_empty()).then(|| fill(namespace)),
        name: (!name.is_empty()).then(|| fill(name)),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_agent_may_do_exactly_what_upstream_grants() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-contract")).await;
    let c = agent.cluster().to_string();
    let me = cert_client(&agent.hub_secret().await).await;
    let reviews: Api<SelfSubjectAccessReview> = Api::all(me);
    let mut wrong = vec![];
    for (expected, attrs) in [(true, ALLOWED), (false, DENIED)] {
        for attr in attrs {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(attributes(attr, &c)),
                    ..Default::default()
                },
                ..Default::default()
            };
            let answer = reviews
                .create(&PostParams::default(), &review)
                .await
                .unwrap();
            if answer.status.map(|s| s.allowed) != Some(expected) {
                wrong.push(format!("{attr:?}: expected allowed={expected}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "not upstream's contract:\n{}",
        wrong.join("\n")
    );
    agent.remove().await;
}

/// Upstream's rules (`pkg/registration/hub/manifests/rbac/*.yaml` at v1.3.1), as data.
const UPSTREAM_RULES: &str = r#"
open-cluster-management:managedcluster:registration:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, watch, update]}
- {apiGroups: [addon.open-cluster-management.io], resources: [managedclusteraddons], verbs: [get, list, watch]}
- {apiGroups: [addon.open-cluster-management.io], resources: [managedclusteraddons/status], verbs: [patch, update]}
- {apiGroups: [events.k8s.io], resources: [events], verbs: [create]}
open-cluster-management:managedcluster:work:
- {apiGroups: ["", events.k8s.io], resources: [events], verbs: [create, patch, update]}
- {apiGroups: [work.open-cluster-management.io], resources: [manifestworks], verbs: [get, list, watch, update, patch]}
- {apiGroups: [work.open-cluster-management.io], resources: [manifestworks/status], verbs: [patch, update]}
open-cluster-management:managedcluster:{c}:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [create, get, list, watch]}
- {apiGroups: [register.open-cluster-management.io], resources: [managedclusters/clientcertificates], verbs: [renew]}
- {apiGroups: [cluster.open-cluster-management.io], resources: [managedclusters], resourceNames: ["{c}"], verbs: [get, list, update, watch]}
- {apiGroups: [cluster.open-cluster-management.io], resources: [managedclusters/status], resourceNames: ["{c}"], verbs: [patch, update]}
"#;

/// The ClusterRoles on the hub hold upstream's rules, as sets (order aside).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hubs_cluster_roles_are_upstreams() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
    let agent = fixture::joined(fixture::options(common::managed().await, "it-rules")).await;
    let c = agent.cluster().to_string();
    let expected: std::collections::BTreeMap<String, Vec<PolicyRule>> =
        serde_yaml::from_str(&UPSTREAM_RULES.replace("{c}", &c)).unwrap();
    let normal = |rules: Vec<PolicyRule>| {
        let mut v: Vec<String> = rules
            .into_iter()
            .map(|mut r| {
                r.verbs.sort();
                serde_json::to_string(&r).unwrap()
            })
            .collect();
        v.sort();
        v
    };
    let roles: Api<ClusterRole> = Api::all(common::hub().await);
    for (name, rules) in expected {
        let on_hub = roles.get(&name).await.unwrap().rules.unwrap_or_default();
        assert_eq!(normal(on_hub), normal(rules), "ClusterRole {name}");
    }
    agent.remove().await;
}
