//! The ManagedCluster as the agent keeps it: created when absent (`hubAcceptsClient: false`,
//! `managedClusterClientConfigs`), and its status — `ManagedClusterJoined`,
//! `ManagedClusterConditionAvailable` (the managed apiserver's `/livez`, else `/healthz`),
//! `version.kubernetes`, node capacity and allocatable — patched only when it changed, with the
//! resourceVersion as precondition so the hub's own conditions are never overwritten blindly.
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

use super::capacity;
use super::{AgentOptions, Error};
use crate::api::cluster::{
    ClusterClaim, MANAGED_CLUSTER_CONDITION_AVAILABLE, MANAGED_CLUSTER_JOINED, ManagedCluster,
    ManagedClusterClaim, ManagedClusterSpec, ManagedClusterStatus, ManagedClusterVersion,
};
use crate::api::conditions::{self, Condition};

/// Creates the ManagedCluster when it does not exist (the bootstrap credential may create and get).
pub async fn ensure_cluster(hub: &kube::Client, opts: &AgentOptions) -> Result<(), Error> {
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let what = || format!("creating ManagedCluster {} on the hub", opts.cluster_name);
    if api
        .get_opt(&opts.cluster_name)
        .await
        .map_err(|e| Error::kube(what(), e))?
        .is_some()
    {
        return Ok(());
    }
    let mc = ManagedCluster {
        metadata: ObjectMeta {
            name: Some(opts.cluster_name.clone()),
            ..Default::default()
        },
        spec: ManagedClusterSpec {
            managed_cluster_client_configs: opts.client_config.clone().into_iter().collect(),
            hub_accepts_client: false,
            lease_duration_seconds: opts.lease_duration_seconds,
            taints: vec![],
        },
        status: None,
    };
    match api.create(&PostParams::default(), &mc).await {
        Ok(_) => {
            tracing::info!(cluster = %opts.cluster_name, "created ManagedCluster on the hub");
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(what(), e)),
    }
}

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
/// How many custom (not reserved) claims are reported (upstream's default).
pub const MAX_CUSTOM_CLAIMS: usize = 20;
/// A ClusterClaim with this label stays on the managed cluster (upstream's).
pub const SPOKE_ONLY_LABEL: &str = "open-cluster-management.io/spoke-only";

/// `status.clusterClaims` from the cluster's ClusterClaims, as upstream's agent reports them:
/// none labelled spoke-only; the reserved ones sorted by name, then at most
/// [`MAX_CUSTOM_CLAIMS`] others, sorted by name.
#[must_use]
pub fn claims_of(list: &[ClusterClaim]) -> Vec<ManagedClusterClaim> {
    let mut reserved = Vec::new();
    let mut custom = Vec::new();
    for c in list {
        if c.labels().contains_key(SPOKE_ONLY_LABEL) {
            continue;
        }
        let claim = ManagedClusterClaim {
            name: Some(c.name_any()),
            value: c.spec.value.clone(),
        };
        if RESERVED_CLAIMS.contains(&c.name_any().as_str()) {
            reserved.push(claim);
        } else {
            custom.push(claim);
        }
    }
    reserved.sort_by(|a, b| a.name.cmp(&b.name));
    custom.sort_by(|a, b| a.name.cmp(&b.name));
    custom.truncate(MAX_CUSTOM_CLAIMS);
    reserved.extend(custom);
    reserved
}

/// Probes the managed cluster: health, version and nodes, concurrently.
pub async fn observe(managed: &kube::Client) -> Observed {
    let nodes: Api<Node> = Api::all(managed.clone());
    let list = ListParams::default();
    let claims: Api<ClusterClaim> = Api::all(managed.clone());
    let (health, version, nodes, claims) = tokio::join!(
        probe(managed),
        managed.apiserver_version(),
        nodes.list(&list),
        claims.list(&list)
    );
    Observed {
        health,
        version: version.ok().map(|v| v.git_version),
        resources: nodes.ok().map(|list| capacity::of_nodes(&list.items)),
        claims: claims.ok().map(|list| claims_of(&list.items)),
    }
}

async fn probe(managed: &kube::Client) -> Result<(), String> {
    let get = |path: &str| {
        let request = http::Request::get(path)
            .body(Vec::new())
            .expect("a static request");
        managed.request_text(request)
    };
    match get("/livez").await {
        Ok(body) if body.trim() == "ok" => Ok(()),
        Ok(body) => Err(format!("/livez answered {:?}", body.trim())),
        // Older or locked-down apiservers serve only /healthz.
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => match get("/healthz").await {
            Ok(body) if body.trim() == "ok" => Ok(()),
            Ok(body) => Err(format!("/healthz answered {:?}", body.trim())),
            Err(e) => Err(format!("/healthz: {e}")),
        },
        Err(e) => Err(format!("/livez: {e}")),
    }
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

/// How many times a status write that lost a race with another writer (the hub controller adds
/// its own conditions right after accept) is re-read and retried within one beat: leaving it to
/// the next beat would keep a freshly accepted cluster from being Available for a lease duration.
const CONFLICT_RETRIES: usize = 3;

/// Brings the ManagedCluster status up to date, re-reading it after a conflict.
pub async fn update(
    hub: &kube::Client,
    mc: &ManagedCluster,
    observed: &Observed,
) -> Result<(), Error> {
    let name = mc.metadata.name.clone().unwrap_or_default();
    let what = || format!("updating the status of ManagedCluster {name}");
    let api: Api<ManagedCluster> = Api::all(hub.clone());
    let mut mc = std::borrow::Cow::Borrowed(mc);
    for attempt in 1..=CONFLICT_RETRIES {
        let current = mc.status.clone().unwrap_or_default();
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let wanted = desired(&current, observed, &now);
        let Some(body) = patch(&current, &wanted, mc.metadata.resource_version.as_deref()) else {
            return Ok(());
        };
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < CONFLICT_RETRIES => {
                tracing::debug!(cluster = %name, "status changed meanwhile; reading it again");
                mc = std::borrow::Cow::Owned(
                    api.get(&name).await.map_err(|e| Error::kube(what(), e))?,
                );
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                tracing::debug!(cluster = %name, "status keeps changing; updating on the next beat");
                return Ok(());
            }
            Err(e) => return Err(Error::kube(what(), e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cluster::HUB_ACCEPTED_MANAGED_CLUSTER;

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
                crate::api::cluster::ClusterClaimSpec {
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
        let names: Vec<String> = claims_of(&list)
            .into_iter()
            .filter_map(|c| c.name)
            .collect();
        assert_eq!(names.len(), 2 + MAX_CUSTOM_CLAIMS);
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
        // Reported through the status patch.
        let mut observed = healthy();
        observed.claims = Some(claims_of(&list[..1]));
        let want = desired(&ManagedClusterStatus::default(), &observed, &now(1));
        let body = patch(&ManagedClusterStatus::default(), &want, None).unwrap();
        assert_eq!(
            body["status"]["clusterClaims"][0]["value"],
            "custom-00-value"
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
