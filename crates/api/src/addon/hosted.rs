//! Hosted template add-ons, as upstream's addon-framework deploys an add-on whose
//! ManagedClusterAddOn names a hosting cluster ([`HOSTING_CLUSTER_ANNOTATION`]): the manifests
//! marked `hosting` ([`HOSTED_MANIFEST_LOCATION_KEY`], annotation or label) go to that cluster, in
//! the work `addon-<name>-deploy-hosting-<cluster>-0` in its namespace (labelled with the add-on's
//! cluster, and not owned by the add-on, which lives in another namespace); those marked `managed`
//! or not marked stay in the add-on's own deploy work; `none` go nowhere. While a hosting work may
//! exist the add-on holds [`HOSTING_MANIFEST_FINALIZER`], and the add-on manager removes the work
//! before it lets the add-on go, or when the add-on is no longer Hosted.
//!
//! Upstream deploys this way only add-ons whose manager enables hosted mode, which its template
//! add-ons do not; here a template enables it by marking at least one manifest with a location,
//! so a template that marks none deploys as upstream's does.
//!
//! [`HOSTING_CLUSTER_ANNOTATION`]: crate::addon::HOSTING_CLUSTER_ANNOTATION
//! [`HOSTING_MANIFEST_FINALIZER`]: crate::addon::HOSTING_MANIFEST_FINALIZER
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;
use serde_json::Value;

use crate::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, HOSTED_MANIFEST_LOCATION_KEY,
    HOSTING_CLUSTER_VALIDITY, HOSTING_MANIFEST_APPLIED,
};
use crate::conditions::{self, Condition, FALSE, TRUE};
use crate::work::{ManifestConfigOption, ManifestWork};

/// The deploy work's name on the hosting cluster, as upstream's.
#[must_use]
pub fn work_name(addon: &str, cluster: &str) -> String {
    format!("addon-{addon}-deploy-hosting-{cluster}-0")
}

/// Whether `work` is a hosting work of add-on `addon` of `cluster` (by its labels).
#[must_use]
pub fn is_work_of(work: &ManifestWork, addon: &str, cluster: &str) -> bool {
    let labels = work.labels();
    labels.get(ADDON_NAME_LABEL).map(String::as_str) == Some(addon)
        && labels.get(ADDON_NAMESPACE_LABEL).map(String::as_str) == Some(cluster)
}

/// Where a manifest goes in Hosted mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Location {
    Managed,
    Hosting,
    Nowhere,
}

/// The location a manifest is marked with (annotation first, then label, as upstream reads it).
fn location(manifest: &Value) -> Result<Option<Location>, String> {
    let metadata = &manifest["metadata"];
    let marked = |field: &str| metadata[field][HOSTED_MANIFEST_LOCATION_KEY].as_str();
    let value = marked("annotations")
        .filter(|v| !v.is_empty())
        .or_else(|| marked("labels"));
    match value {
        None | Some("") => Ok(None),
        Some("managed") => Ok(Some(Location::Managed)),
        Some("hosting") => Ok(Some(Location::Hosting)),
        Some("none") => Ok(Some(Location::Nowhere)),
        Some(other) => Err(format!(
            "not supported manifest location: {other} (in {HOSTED_MANIFEST_LOCATION_KEY} of {} {})",
            manifest["kind"].as_str().unwrap_or("an object"),
            metadata["name"].as_str().unwrap_or_default()
        )),
    }
}

/// Whether a template's manifests enable Hosted mode: one of them says where it goes.
#[must_use]
pub fn enabled(manifests: &[Value]) -> bool {
    manifests.iter().any(|m| !matches!(location(m), Ok(None)))
}

/// Splits the manifests of a Hosted add-on: those for the managed cluster, those for the hosting
/// cluster. A location upstream does not know is an error, as upstream's.
pub fn split(manifests: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>), String> {
    let mut managed = Vec::new();
    let mut hosting = Vec::new();
    for manifest in manifests {
        match location(&manifest)? {
            None | Some(Location::Managed) => managed.push(manifest),
            Some(Location::Hosting) => hosting.push(manifest),
            Some(Location::Nowhere) => {}
        }
    }
    Ok((managed, hosting))
}

/// The manifests by cluster: for the managed cluster, and `Some` for the hosting cluster when the
/// add-on is Hosted (`hosted`) and its template enables it ([`enabled`]).
pub fn by_cluster(
    manifests: Vec<Value>,
    hosted: bool,
) -> Result<(Vec<Value>, Option<Vec<Value>>), String> {
    if !hosted || !enabled(&manifests) {
        return Ok((manifests, None));
    }
    let (managed, hosting) = split(manifests)?;
    Ok((managed, Some(hosting)))
}

/// The status feedback options that concern `manifests` (each work asks for its own objects').
#[must_use]
pub fn configs_for(
    manifests: &[Value],
    configs: &[ManifestConfigOption],
) -> Vec<ManifestConfigOption> {
    configs
        .iter()
        .filter(|c| {
            let id = &c.resource_identifier;
            manifests.iter().any(|m| {
                let group = m["apiVersion"]
                    .as_str()
                    .and_then(|v| v.rsplit_once('/'))
                    .map_or("", |(g, _)| g);
                group == id.group.as_deref().unwrap_or_default()
                    && m["metadata"]["name"].as_str() == Some(id.name.as_str())
                    && m["metadata"]["namespace"].as_str().unwrap_or_default()
                        == id.namespace.as_deref().unwrap_or_default()
            })
        })
        .cloned()
        .collect()
}

/// `HostingClusterValidity`, with upstream's reasons and messages.
#[must_use]
pub fn validity(hosting: &str, valid: bool, now: &Time) -> Condition {
    if valid {
        conditions::new(
            HOSTING_CLUSTER_VALIDITY,
            TRUE,
            "HostingClusterValid",
            format!("hosting cluster {hosting} is a managed cluster of the hub"),
            now,
        )
    } else {
        conditions::new(
            HOSTING_CLUSTER_VALIDITY,
            FALSE,
            "HostingClusterInvalid",
            format!("hosting cluster {hosting} is not a managed cluster of the hub"),
            now,
        )
    }
}

/// Drops the conditions only a Hosted add-on has.
pub fn forget_conditions(conditions: &mut Vec<Condition>) {
    conditions
        .retain(|c| c.type_ != HOSTING_CLUSTER_VALIDITY && c.type_ != HOSTING_MANIFEST_APPLIED);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::ResourceIdentifier;
    use serde_json::json;

    fn manifest(kind: &str, name: &str, location: Option<&str>, as_label: bool) -> Value {
        let mut m = json!({"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "ns"}});
        if let Some(l) = location {
            let field = if as_label { "labels" } else { "annotations" };
            m["metadata"][field] = json!({HOSTED_MANIFEST_LOCATION_KEY: l});
        }
        m
    }

    #[test]
    fn manifests_go_where_they_are_marked_unmarked_ones_to_the_managed_cluster() {
        let all = vec![
            manifest("Deployment", "agent", Some("hosting"), false),
            manifest("Namespace", "plain", None, false),
            manifest("Role", "managed", Some("managed"), true),
            manifest("ClusterRoleBinding", "nowhere", Some("none"), false),
            manifest("Secret", "labelled", Some("hosting"), true),
        ];
        assert!(enabled(&all));
        let (managed, hosting) = split(all).unwrap();
        let names = |v: &[Value]| {
            v.iter()
                .map(|m| m["metadata"]["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&managed), ["plain", "managed"]);
        assert_eq!(names(&hosting), ["agent", "labelled"]);
    }

    #[test]
    fn no_marked_manifest_leaves_hosted_mode_off_and_an_unknown_location_is_an_error() {
        assert!(!enabled(&[manifest("Deployment", "a", None, false)]));
        let plain = vec![manifest("Deployment", "a", None, false)];
        assert_eq!(by_cluster(plain.clone(), true).unwrap(), (plain, None));
        let marked = vec![manifest("Deployment", "a", Some("hosting"), false)];
        assert_eq!(
            by_cluster(marked.clone(), false).unwrap(),
            (marked.clone(), None)
        );
        assert_eq!(
            by_cluster(marked.clone(), true).unwrap(),
            (vec![], Some(marked))
        );
        let err = split(vec![manifest("Deployment", "a", Some("elsewhere"), false)]).unwrap_err();
        assert!(
            err.contains("not supported manifest location: elsewhere"),
            "{err}"
        );
        assert!(enabled(&[manifest(
            "Deployment",
            "a",
            Some("elsewhere"),
            false
        )]));
    }

    #[test]
    fn each_work_asks_feedback_of_its_own_objects() {
        let option = |name: &str| ManifestConfigOption {
            resource_identifier: ResourceIdentifier {
                group: Some("apps".into()),
                resource: "deployments".into(),
                name: name.into(),
                namespace: Some("ns".into()),
            },
            ..ManifestConfigOption::default()
        };
        let configs = [option("agent"), option("other")];
        let got = configs_for(&[manifest("Deployment", "agent", None, false)], &configs);
        assert_eq!(got, [option("agent")]);
    }

    #[test]
    fn names_and_validity_are_upstreams() {
        assert_eq!(work_name("hello", "c1"), "addon-hello-deploy-hosting-c1-0");
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let c = validity("h1", false, &now);
        assert_eq!(
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
            ("HostingClusterValidity", "False", "HostingClusterInvalid")
        );
        assert_eq!(
            c.message,
            "hosting cluster h1 is not a managed cluster of the hub"
        );
    }
}
