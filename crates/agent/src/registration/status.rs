//! The ManagedCluster status the agent wants, pure: `ManagedClusterJoined`,
//! `ManagedClusterConditionAvailable` (from the managed API server's health, [`super::observe`]),
//! `version.kubernetes`, node capacity and allocatable and the cluster's claims, and the patch
//! that gets there (none when nothing changed, with the resourceVersion as precondition so the
//! hub's own conditions are never overwritten blindly). [`super::writer`] sends it.
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;
use serde_json::json;

use ocm_api::about::ClusterProperty;
use ocm_api::cluster::{
    ClusterClaim, MANAGED_CLUSTER_CONDITION_AVAILABLE, MANAGED_CLUSTER_JOINED, ManagedClusterClaim,
    ManagedClusterStatus, ManagedClusterVersion,
};
use ocm_api::conditions::{self, Condition};

/// What the agent saw of its own cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// `Ok` when `/livez` (or `/healthz`) answered ok; the failure otherwise.
    pub health: Result<(), String>,
    /// The apiserver's git version.
    pub version: Option<String>,
    /// Summed node capacity and allocatable, when nodes could be listed.
    pub resources: Option<(BTreeMap<String, Quantity>, BTreeMap<String, Quantity>)>,
    /// The cluster's ClusterClaims as `status.clusterClaims`, when they could be listed.
    pub claims: Option<Vec<ManagedClusterClaim>>,
}

/// Claim names upstream reserves: always reported, ahead of the custom ones.
pub const RESERVED_CLAIMS: &[&str] = &[
    "id.k8s.io",
    "kubeversion.open-cluster-management.io",
    "platform.open-cluster-management.io",
    "product.open-cluster-management.io",
];
/// A ClusterClaim with this label stays on the managed cluster (upstream's).
pub const SPOKE_ONLY_LABEL: &str = "open-cluster-management.io/spoke-only";

/// `status.clusterClaims` from the cluster's ClusterClaims and (with the `ClusterProperty` gate)
/// its ClusterProperties, as upstream's agent reports them: none labelled spoke-only; a property
/// over a claim of the same name; the reserved ones (by name, or by one of the `limits`'
/// suffixes) sorted by name, then at most `limits.max_custom` others, sorted by name.
#[must_use]
pub fn claims_of(
    claims: &[ClusterClaim],
    properties: &[ClusterProperty],
    limits: &super::settings::ClaimLimits,
) -> Vec<ManagedClusterClaim> {
    let home = |labels: &BTreeMap<String, String>| labels.contains_key(SPOKE_ONLY_LABEL);
    let mut by_name: BTreeMap<String, Option<String>> = BTreeMap::new();
    for p in properties.iter().filter(|p| !home(p.labels())) {
        by_name.insert(p.name_any(), Some(p.spec.value.clone()));
    }
    for c in claims.iter().filter(|c| !home(c.labels())) {
        by_name
            .entry(c.name_any())
            .or_insert_with(|| c.spec.value.clone());
    }
    let (mut reserved, mut custom): (Vec<_>, Vec<_>) = by_name
        .into_iter()
        .map(|(name, value)| ManagedClusterClaim {
            name: Some(name),
            value,
        })
        .partition(|c| {
            let name = c.name.as_deref().unwrap_or_default();
            RESERVED_CLAIMS.contains(&name)
                || limits
                    .reserved_suffixes
                    .iter()
                    .any(|suffix| name.ends_with(suffix.as_str()))
        });
    // Sorted by name already (the map's order).
    if custom.len() > limits.max_custom {
        tracing::warn!(
            "{} custom cluster claims: only the first {} by name are reported",
            custom.len(),
            limits.max_custom
        );
        custom.truncate(limits.max_custom);
    }
    reserved.extend(custom);
    reserved
}

fn condition(type_: &str, ok: bool, reason: &str, message: String, now: &Time) -> Condition {
    let status = if ok {
        conditions::TRUE
    } else {
        conditions::FALSE
    };
    conditions::new(type_, status, reason, message, now)
}

/// The status the agent wants, from the current one and what it observed.
#[must_use]
pub fn desired(
    current: &ManagedClusterStatus,
    observed: &Observed,
    now: &Time,
) -> ManagedClusterStatus {
    let mut status = current.clone();
    conditions::set(
        &mut status.conditions,
        condition(
            MANAGED_CLUSTER_JOINED,
            true,
            "ManagedClusterJoined",
            "Managed cluster joined".into(),
            now,
        ),
    );
    let available = match &observed.health {
        Ok(()) => condition(
            MANAGED_CLUSTER_CONDITION_AVAILABLE,
            true,
            "ManagedClusterAvailable",
            "Managed cluster is available".into(),
            now,
        ),
        Err(why) => condition(
            MANAGED_CLUSTER_CONDITION_AVAILABLE,
            false,
            "ManagedClusterKubeAPIServerUnavailable",
            format!("The kube-apiserver is not healthy: {why}"),
            now,
        ),
    };
    conditions::set(&mut status.conditions, available);
    if let Some(v) = &observed.version {
        status.version = Some(ManagedClusterVersion {
            kubernetes: Some(v.clone()),
        });
    }
    if let Some((capacity, allocatable)) = &observed.resources {
        status.capacity.clone_from(capacity);
        status.allocatable.clone_from(allocatable);
    }
    if let Some(claims) = &observed.claims {
        status.cluster_claims.clone_from(claims);
    }
    status
}

/// The status merge patch from `current` to `desired` (`None` when equal), guarded by `rv`.
#[must_use]
pub fn patch(
    current: &ManagedClusterStatus,
    desired: &ManagedClusterStatus,
    rv: Option<&str>,
) -> Option<serde_json::Value> {
    if current == desired {
        return None;
    }
    // A merge patch merges maps key by key: a resource that disappeared must be nulled.
    let map = |new: &BTreeMap<String, Quantity>, old: &BTreeMap<String, Quantity>| {
        let mut m = serde_json::Map::new();
        for k in old.keys().filter(|k| !new.contains_key(*k)) {
            m.insert(k.clone(), serde_json::Value::Null);
        }
        for (k, v) in new {
            m.insert(k.clone(), json!(v));
        }
        m
    };
    Some(json!({
        "metadata": {"resourceVersion": rv},
        "status": {
            "conditions": desired.conditions,
            "version": desired.version,
            "capacity": map(&desired.capacity, &current.capacity),
            "allocatable": map(&desired.allocatable, &current.allocatable),
            "clusterClaims": desired.cluster_claims,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registration::settings::ClaimLimits;
    use ocm_api::cluster::HUB_ACCEPTED_MANAGED_CLUSTER;

    fn now(s: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(s).unwrap())
    }

    fn healthy() -> Observed {
        Observed {
            health: Ok(()),
            version: Some("v1.36.2".into()),
            resources: Some((BTreeMap::new(), BTreeMap::new())),
            claims: Some(vec![]),
        }
    }

    #[test]
    fn claims_are_reported_reserved_first_custom_capped_and_spoke_only_kept_home() {
        let claim = |name: &str, spoke_only: bool| {
            let mut c = ClusterClaim::new(
                name,
                ocm_api::cluster::ClusterClaimSpec {
                    value: Some(format!("{name}-value")),
                },
            );
            if spoke_only {
                c.labels_mut()
                    .insert(SPOKE_ONLY_LABEL.into(), String::new());
            }
            c
        };
        let mut list: Vec<ClusterClaim> = (0..25)
            .map(|i| claim(&format!("custom-{i:02}"), false))
            .collect();
        list.push(claim("secret", true));
        list.push(claim("platform.open-cluster-management.io", false));
        list.push(claim("id.k8s.io", false));
        let limits = ClaimLimits::default();
        let names_of = |limits: &ClaimLimits| -> Vec<String> {
            claims_of(&list, &[], limits)
                .into_iter()
                .filter_map(|c| c.name)
                .collect()
        };
        let names = names_of(&limits);
        assert_eq!(names.len(), 2 + limits.max_custom);
        assert_eq!(
            names[..3],
            [
                "id.k8s.io",
                "platform.open-cluster-management.io",
                "custom-00"
            ]
        );
        assert!(
            !names.contains(&"secret".to_string()) && !names.contains(&"custom-20".to_string())
        );
        // The Klusterlet's clusterClaimConfiguration: fewer custom claims, and a suffix that
        // makes a claim reserved (reported ahead, never cut).
        let configured = ClaimLimits {
            max_custom: 2,
            reserved_suffixes: vec!["-24".into()],
        };
        let names = names_of(&configured);
        assert_eq!(
            names,
            [
                "custom-24",
                "id.k8s.io",
                "platform.open-cluster-management.io",
                "custom-00",
                "custom-01"
            ]
        );
        // Reported through the status patch.
        let mut observed = healthy();
        observed.claims = Some(claims_of(&list[..1], &[], &limits));
        let want = desired(&ManagedClusterStatus::default(), &observed, &now(1));
        let body = patch(&ManagedClusterStatus::default(), &want, None).unwrap();
        assert_eq!(
            body["status"]["clusterClaims"][0]["value"],
            "custom-00-value"
        );
    }

    #[test]
    fn a_property_is_reported_over_a_claim_of_its_name() {
        let claim = |name: &str, value: &str| {
            ClusterClaim::new(
                name,
                ocm_api::cluster::ClusterClaimSpec {
                    value: Some(value.into()),
                },
            )
        };
        let property = |name: &str, value: &str| {
            ClusterProperty::new(
                name,
                ocm_api::about::ClusterPropertySpec {
                    value: value.into(),
                },
            )
        };
        let mut home = property("kept-home", "x");
        home.labels_mut()
            .insert(SPOKE_ONLY_LABEL.into(), String::new());
        let reported = claims_of(
            &[claim("id.k8s.io", "from-claim"), claim("region", "eu")],
            &[
                property("id.k8s.io", "from-property"),
                property("zone", "a"),
                home,
            ],
            &ClaimLimits::default(),
        );
        let pairs: Vec<(String, String)> = reported
            .into_iter()
            .map(|c| (c.name.unwrap(), c.value.unwrap()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("id.k8s.io".to_string(), "from-property".to_string()),
                ("region".to_string(), "eu".to_string()),
                ("zone".to_string(), "a".to_string()),
            ]
        );
    }

    #[test]
    fn joined_and_available_keep_the_hubs_conditions() {
        let mut current = ManagedClusterStatus::default();
        conditions::set(
            &mut current.conditions,
            condition(
                HUB_ACCEPTED_MANAGED_CLUSTER,
                true,
                "HubClusterAdminAccepted",
                "ok".into(),
                &now(1),
            ),
        );
        let want = desired(&current, &healthy(), &now(2));
        assert!(conditions::is_true(
            &want.conditions,
            HUB_ACCEPTED_MANAGED_CLUSTER
        ));
        assert!(conditions::is_true(
            &want.conditions,
            MANAGED_CLUSTER_JOINED
        ));
        assert!(conditions::is_true(
            &want.conditions,
            MANAGED_CLUSTER_CONDITION_AVAILABLE
        ));
        assert_eq!(
            want.version.as_ref().unwrap().kubernetes.as_deref(),
            Some("v1.36.2")
        );
        let body = patch(&current, &want, Some("42")).unwrap();
        assert_eq!(body["metadata"]["resourceVersion"], "42");
        assert_eq!(body["status"]["conditions"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn nothing_to_patch_when_nothing_changed() {
        let first = desired(&ManagedClusterStatus::default(), &healthy(), &now(1));
        let again = desired(&first, &healthy(), &now(99));
        assert_eq!(patch(&first, &again, Some("1")), None);
    }

    #[test]
    fn unhealthy_apiserver_is_not_available() {
        let observed = Observed {
            health: Err("/livez: connection refused".into()),
            ..healthy()
        };
        let want = desired(&ManagedClusterStatus::default(), &observed, &now(1));
        let c = conditions::find(&want.conditions, MANAGED_CLUSTER_CONDITION_AVAILABLE).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "ManagedClusterKubeAPIServerUnavailable")
        );
    }

    #[test]
    fn vanished_resources_are_nulled() {
        let mut current = desired(&ManagedClusterStatus::default(), &healthy(), &now(1));
        current.capacity.insert("cpu".into(), Quantity("2".into()));
        let want = desired(&current, &healthy(), &now(1));
        let body = patch(&current, &want, None).unwrap();
        assert_eq!(body["status"]["capacity"]["cpu"], serde_json::Value::Null);
    }
}
