//! Which ClusterProfiles should exist and what they say, as upstream's lifecycle and status
//! controllers (`pkg/registration/hub/clusterprofile` at v1.3.1) decide it: pure, so membership,
//! mirroring and what is left alone are tested without a cluster.
//!
//! A namespace gets a profile per cluster of every set bound there (`Bound` binding); a profile
//! this hub wrote (its cluster-manager label) whose cluster left goes. Each profile of ours
//! mirrors its ManagedCluster: Kubernetes version, ClusterClaims as properties, `Available` as
//! `ControlPlaneHealthy` and `ManagedClusterJoined` as `Joined`, and carries the cluster-set label.
//! Beyond upstream, `accessProviders` says where the cluster's API server is and how an exec
//! plugin (`clusteradm get credentials`) is told which cluster it is asked for; where
//! cluster-proxy's controller named its user server there instead, that stays, and other
//! providers' entries are left as they are.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kube::ResourceExt as _;
use serde_json::json;

use crate::clustersets::decide::Membership;
use ocm_api::cluster::{
    CLUSTER_NAME_LABEL, CLUSTER_SET_BOUND, CLUSTER_SET_LABEL, MANAGED_CLUSTER_CONDITION_AVAILABLE,
    MANAGED_CLUSTER_JOINED, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding,
};
use ocm_api::conditions;
use ocm_api::inventory::{
    AccessProvider, CONTROL_PLANE_HEALTHY, ClusterManager, ClusterProfile, ClusterProfileSpec,
    ClusterProfileStatus, EXEC_EXTENSION, JOINED, KubeconfigCluster, LABEL_CLUSTER_MANAGER,
    LABEL_CLUSTER_SET, NamedExtension, OCM_CLUSTER_MANAGER, Property, cluster_proxy_user_server,
};

/// What the hub's caches hold.
pub struct World<'a> {
    /// Every ManagedCluster.
    pub clusters: &'a [Arc<ManagedCluster>],
    /// Every ManagedClusterSet.
    pub sets: &'a [Arc<ManagedClusterSet>],
    /// Every ManagedClusterSetBinding.
    pub bindings: &'a [Arc<ManagedClusterSetBinding>],
    /// The ClusterProfiles this hub wrote (its cluster-manager label).
    pub profiles: &'a [Arc<ClusterProfile>],
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A new profile, labels and spec (its status follows on the next pass).
    Create(Box<ClusterProfile>),
    /// A profile whose cluster is no longer bound to its namespace.
    Delete {
        /// Its namespace.
        namespace: String,
        /// Its name (the cluster's).
        name: String,
    },
    /// A profile's new status.
    Status {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The whole status.
        status: ClusterProfileStatus,
    },
    /// A profile's labels, when one of ours is missing or stale.
    Labels {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The labels to set.
        labels: BTreeMap<String, String>,
    },
}

/// Every write that brings the profiles in line with `world`.
#[must_use]
pub fn plan(world: &World) -> Vec<Action> {
    let wanted = wanted(world);
    let mut actions = Vec::new();
    let mut existing = BTreeSet::new();
    for profile in world.profiles {
        let (namespace, name) = (profile.namespace().unwrap_or_default(), profile.name_any());
        existing.insert((namespace.clone(), name.clone()));
        if profile.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(cluster) = wanted.get(&(namespace.clone(), name.clone())) else {
            actions.push(Action::Delete { namespace, name });
            continue;
        };
        if profile.spec.cluster_manager.name != OCM_CLUSTER_MANAGER {
            continue;
        }
        let current = profile.status.clone().unwrap_or_default();
        let status = mirrored_status(&current, cluster);
        if status != current {
            actions.push(Action::Status {
                namespace: namespace.clone(),
                name: name.clone(),
                status,
            });
        }
        let wanted_labels = labels(cluster);
        let mut merged = profile.labels().clone();
        merged.extend(wanted_labels.clone());
        if merged != *profile.labels() {
            actions.push(Action::Labels {
                namespace,
                name,
                labels: wanted_labels,
            });
        }
    }
    for ((namespace, _), cluster) in wanted.iter().filter(|(key, _)| !existing.contains(*key)) {
        actions.push(Action::Create(Box::new(new_profile(namespace, cluster))));
    }
    actions
}

/// Every profile that should exist, by `(namespace, cluster name)`, with its cluster: the
/// clusters (not being deleted) of each set bound to a namespace.
fn wanted<'a>(world: &World<'a>) -> BTreeMap<(String, String), &'a ManagedCluster> {
    let mut wanted = BTreeMap::new();
    for binding in world.bindings {
        let bound = binding
            .status
            .as_ref()
            .is_some_and(|s| conditions::is_true(&s.conditions, CLUSTER_SET_BOUND));
        if !bound {
            continue;
        }
        let Some(set) = world
            .sets
            .iter()
            .find(|s| s.name_any() == binding.spec.cluster_set)
        else {
            continue;
        };
        // A set whose selector does not parse holds no cluster (its `ClusterSetEmpty` says why).
        let Ok(membership) = Membership::of(set) else {
            continue;
        };
        let namespace = binding.namespace().unwrap_or_default();
        for cluster in world.clusters {
            if cluster.metadata.deletion_timestamp.is_none()
                && membership.contains(cluster.labels())
            {
                wanted.insert((namespace.clone(), cluster.name_any()), &**cluster);
            }
        }
    }
    wanted
}

/// The labels of a profile of `cluster`: ours, its cluster's name and its cluster set.
fn labels(cluster: &ManagedCluster) -> BTreeMap<String, String> {
    let set = cluster
        .labels()
        .get(CLUSTER_SET_LABEL)
        .cloned()
        .unwrap_or_default();
    BTreeMap::from([
        (
            LABEL_CLUSTER_MANAGER.to_string(),
            OCM_CLUSTER_MANAGER.to_string(),
        ),
        (LABEL_CLUSTER_SET.to_string(), set),
        (CLUSTER_NAME_LABEL.to_string(), cluster.name_any()),
    ])
}

/// A new profile of `cluster` in `namespace`: labels and spec (its status follows).
fn new_profile(namespace: &str, cluster: &ManagedCluster) -> ClusterProfile {
    let name = cluster.name_any();
    let mut profile = ClusterProfile::new(
        &name,
        ClusterProfileSpec {
            display_name: name.clone(),
            cluster_manager: ClusterManager {
                name: OCM_CLUSTER_MANAGER.to_string(),
            },
        },
    );
    profile.metadata.namespace = Some(namespace.to_string());
    profile.metadata.labels = Some(labels(cluster));
    profile
}

/// `current` with what `cluster` reports mirrored in; conditions keep their transition time
/// while their status holds.
#[must_use]
pub fn mirrored_status(
    current: &ClusterProfileStatus,
    cluster: &ManagedCluster,
) -> ClusterProfileStatus {
    let mut status = current.clone();
    let reported = cluster.status.clone().unwrap_or_default();
    status.version.kubernetes = reported
        .version
        .and_then(|v| v.kubernetes)
        .unwrap_or_default();
    // A property needs a name and a value (the CRD's minLength): a claim without is left out.
    status.properties = reported
        .cluster_claims
        .iter()
        .filter_map(|c| match (c.name.as_deref(), c.value.as_deref()) {
            (Some(name), Some(value)) if !name.is_empty() && !value.is_empty() => Some(Property {
                name: name.to_string(),
                value: value.to_string(),
                last_observed_time: None,
            }),
            _ => None,
        })
        .collect();
    for (from, to) in [
        (MANAGED_CLUSTER_CONDITION_AVAILABLE, CONTROL_PLANE_HEALTHY),
        (MANAGED_CLUSTER_JOINED, JOINED),
    ] {
        if let Some(c) = conditions::find(&reported.conditions, from) {
            conditions::set(
                &mut status.conditions,
                conditions::new(
                    to,
                    &c.status,
                    &c.reason,
                    c.message.clone(),
                    &c.last_transition_time,
                ),
            );
        }
    }
    status.access_providers = access_providers(&current.access_providers, cluster);
    status
}

/// The profile's access providers: every other provider's entry as it is, and ours, unless
/// cluster-proxy's ClusterProfile controller wrote ours as its user server for this cluster (the
/// cluster's API server through the add-on's tunnel, for consumers that cannot reach it): that
/// one stays, so the two controllers do not take turns.
fn access_providers(current: &[AccessProvider], cluster: &ManagedCluster) -> Vec<AccessProvider> {
    let name = cluster.name_any();
    let proxied = current.iter().find(|p| {
        p.name == OCM_CLUSTER_MANAGER
            && cluster_proxy_user_server(&p.cluster.server).is_some_and(|(_, c)| c == name)
    });
    let mut ours = proxied.cloned().or_else(|| access_provider(cluster));
    let mut providers = Vec::with_capacity(current.len() + 1);
    for provider in current {
        if provider.name != OCM_CLUSTER_MANAGER {
            providers.push(provider.clone());
        } else if let Some(ours) = ours.take() {
            // In its place.
            providers.push(ours);
        }
    }
    providers.extend(ours);
    providers
}

/// Where the cluster's API server is (its agent's first client config) and the extension that
/// tells an exec plugin which cluster it is asked for.
fn access_provider(cluster: &ManagedCluster) -> Option<AccessProvider> {
    let config = cluster
        .spec
        .managed_cluster_client_configs
        .iter()
        .find(|c| !c.url.is_empty())?;
    Some(AccessProvider {
        name: OCM_CLUSTER_MANAGER.to_string(),
        cluster: KubeconfigCluster {
            server: config.url.clone(),
            certificate_authority_data: config.ca_bundle.clone(),
            extensions: vec![NamedExtension {
                name: EXEC_EXTENSION.to_string(),
                extension: json!({"clusterName": cluster.name_any()}),
            }],
            ..KubeconfigCluster::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(yaml: &str) -> Arc<ManagedCluster> {
        Arc::new(ocm_api::yaml::from_str(yaml).unwrap())
    }

    fn c1() -> Arc<ManagedCluster> {
        cluster(
            r"
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: c1, labels: {cluster.open-cluster-management.io/clusterset: default}}
spec:
  hubAcceptsClient: true
  managedClusterClientConfigs: [{url: 'https://10.0.0.1:6443', caBundle: aGVsbG8=}]
status:
  version: {kubernetes: v1.36.2}
  clusterClaims: [{name: id.k8s.io, value: abc}, {name: empty, value: ''}]
  conditions:
  - {type: ManagedClusterConditionAvailable, status: 'True', reason: ManagedClusterAvailable, message: ok, lastTransitionTime: '2026-01-02T03:04:05Z'}
  - {type: ManagedClusterJoined, status: 'True', reason: ManagedClusterJoined, message: joined, lastTransitionTime: '2026-01-02T03:04:00Z'}
",
        )
    }

    fn set(name: &str, yaml_spec: &str) -> Arc<ManagedClusterSet> {
        Arc::new(
            ocm_api::yaml::from_str(&format!(
                "apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSet\nmetadata: {{name: {name}}}\nspec: {yaml_spec}\n"
            ))
            .unwrap(),
        )
    }

    fn binding(namespace: &str, set: &str, bound: bool) -> Arc<ManagedClusterSetBinding> {
        let status = if bound { "True" } else { "False" };
        Arc::new(
            ocm_api::yaml::from_str(&format!(
                "apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\nmetadata: {{name: {set}, namespace: {namespace}}}\nspec: {{clusterSet: {set}}}\nstatus: {{conditions: [{{type: Bound, status: '{status}', reason: r, message: m, lastTransitionTime: '2026-01-01T00:00:00Z'}}]}}\n"
            ))
            .unwrap(),
        )
    }

    fn created(actions: &[Action]) -> Vec<(String, String)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Create(p) => Some((p.namespace().unwrap(), p.name_any())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_bound_set_gives_each_member_a_profile_and_an_unbound_one_none() {
        let clusters = [c1()];
        let sets = [set(
            "default",
            "{clusterSelector: {selectorType: ExclusiveClusterSetLabel}}",
        )];
        let bindings = [
            binding("kueue", "default", true),
            binding("argo", "default", false),
        ];
        let world = World {
            clusters: &clusters,
            sets: &sets,
            bindings: &bindings,
            profiles: &[],
        };
        let actions = plan(&world);
        assert_eq!(created(&actions), [("kueue".to_string(), "c1".to_string())]);
        let Action::Create(profile) = &actions[0] else {
            unreachable!()
        };
        assert_eq!(profile.spec.cluster_manager.name, "open-cluster-management");
        assert_eq!(profile.spec.display_name, "c1");
        assert_eq!(profile.labels()[LABEL_CLUSTER_SET], "default");
        assert_eq!(
            profile.labels()[LABEL_CLUSTER_MANAGER],
            "open-cluster-management"
        );
        assert_eq!(profile.labels()[CLUSTER_NAME_LABEL], "c1");
    }

    #[test]
    fn a_profile_mirrors_its_cluster_and_is_left_alone_once_it_does() {
        let clusters = [c1()];
        let sets = [set(
            "default",
            "{clusterSelector: {selectorType: ExclusiveClusterSetLabel}}",
        )];
        let bindings = [binding("kueue", "default", true)];
        let Action::Create(mut profile) = plan(&World {
            clusters: &clusters,
            sets: &sets,
            bindings: &bindings,
            profiles: &[],
        })
        .remove(0) else {
            unreachable!()
        };
        let status = mirrored_status(&ClusterProfileStatus::default(), &clusters[0]);
        assert_eq!(status.version.kubernetes, "v1.36.2");
        assert_eq!(status.properties.len(), 1, "the empty claim is left out");
        assert_eq!(status.properties[0].name, "id.k8s.io");
        let healthy = conditions::find(&status.conditions, CONTROL_PLANE_HEALTHY).unwrap();
        assert_eq!(
            (healthy.status.as_str(), healthy.reason.as_str()),
            ("True", "ManagedClusterAvailable")
        );
        assert!(conditions::is_true(&status.conditions, JOINED));
        let access = &status.access_providers[0];
        assert_eq!(access.name, "open-cluster-management");
        assert_eq!(access.cluster.server, "https://10.0.0.1:6443");
        assert_eq!(
            access
                .cluster
                .certificate_authority_data
                .as_ref()
                .unwrap()
                .0,
            b"hello"
        );
        assert_eq!(access.cluster.extensions[0].extension["clusterName"], "c1");
        // Once mirrored, nothing more to write.
        profile.status = Some(status);
        let profiles = [Arc::new(*profile)];
        let world = World {
            clusters: &clusters,
            sets: &sets,
            bindings: &bindings,
            profiles: &profiles,
        };
        assert_eq!(plan(&world), []);
    }

    #[test]
    fn cluster_proxys_provider_and_other_providers_stay() {
        let cluster = c1();
        let provider = |name: &str, server: &str| AccessProvider {
            name: name.into(),
            cluster: KubeconfigCluster {
                server: server.into(),
                ..KubeconfigCluster::default()
            },
        };
        let proxied = provider(
            OCM_CLUSTER_MANAGER,
            "https://cluster-proxy-addon-user.proxy:9092/c1",
        );
        let other = provider("someone-else", "https://elsewhere:6443");
        let current = ClusterProfileStatus {
            access_providers: vec![other.clone(), proxied.clone()],
            ..ClusterProfileStatus::default()
        };
        let status = mirrored_status(&current, &cluster);
        assert_eq!(status.access_providers, vec![other.clone(), proxied]);
        // cluster-proxy's URL for another cluster is not this one's: ours replaces it, in place.
        let current = ClusterProfileStatus {
            access_providers: vec![
                provider(
                    OCM_CLUSTER_MANAGER,
                    "https://cluster-proxy-addon-user.proxy:9092/c2",
                ),
                other.clone(),
            ],
            ..ClusterProfileStatus::default()
        };
        let status = mirrored_status(&current, &cluster);
        assert_eq!(
            status.access_providers[0].cluster.server,
            "https://10.0.0.1:6443"
        );
        assert_eq!(status.access_providers[1], other);
        assert_eq!(status.access_providers.len(), 2);
    }

    #[test]
    fn a_profile_whose_cluster_left_the_bound_sets_goes() {
        let clusters = [c1()];
        let sets = [set(
            "default",
            "{clusterSelector: {selectorType: ExclusiveClusterSetLabel}}",
        )];
        let mut profile = ClusterProfile::new("c1", ClusterProfileSpec::default());
        profile.metadata.namespace = Some("kueue".into());
        let profiles = [Arc::new(profile)];
        let actions = plan(&World {
            clusters: &clusters,
            sets: &sets,
            bindings: &[],
            profiles: &profiles,
        });
        assert_eq!(
            actions,
            [Action::Delete {
                namespace: "kueue".into(),
                name: "c1".into()
            }]
        );
    }

    #[test]
    fn a_stale_cluster_set_label_is_rewritten() {
        let clusters = [c1()];
        let sets = [set(
            "default",
            "{clusterSelector: {selectorType: ExclusiveClusterSetLabel}}",
        )];
        let bindings = [binding("kueue", "default", true)];
        let mut profile = new_profile("kueue", &clusters[0]);
        profile.status = Some(mirrored_status(
            &ClusterProfileStatus::default(),
            &clusters[0],
        ));
        profile
            .labels_mut()
            .insert(LABEL_CLUSTER_SET.into(), "old".into());
        let profiles = [Arc::new(profile)];
        let actions = plan(&World {
            clusters: &clusters,
            sets: &sets,
            bindings: &bindings,
            profiles: &profiles,
        });
        let [Action::Labels { labels, .. }] = actions.as_slice() else {
            panic!("{actions:?}")
        };
        assert_eq!(labels[LABEL_CLUSTER_SET], "default");
    }
}
