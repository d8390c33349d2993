//! Rust types of the OCM APIs, one module per API group, and the CRDs generated from them.
//!
//! `clusteradm generate` writes [`all_crds`] to `templates/crds/`; the `compat` test checks every
//! kind against the upstream CRDs in `../shared/reference/ocm-api/` (field paths, types, required
//! lists, list/map merge semantics, validation keywords, scope, status subresource), so upstream
//! agents and hubs read what we write and the other way round.

// Doc comments here double as the CRD descriptions `kubectl explain` shows, where kind names are
// plain words (ManagedCluster, ManifestWork); backticks around each would only add noise there.
#![allow(clippy::doc_markdown)]
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube::CustomResourceExt;

pub mod about;
pub mod addon;
pub mod cluster;
pub mod conditions;
pub mod fields;
pub mod gates;
pub mod image;
pub mod inventory;
pub mod names;
pub mod operator;
pub mod quantity;
pub mod rollout;
pub mod work;
pub mod yaml;

#[cfg(test)]
mod compat;
mod schema;
pub use schema::{EKS_ARN, go_duration};

/// Every CRD this tool generates, in install order: operator CRDs, then hub, then managed-cluster.
#[must_use]
pub fn all_crds() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![operator_crd_cluster_manager(), operator_crd_klusterlet()];
    crds.extend(hub_crds());
    crds.extend(managed_crds());
    crds.push(cluster_profile_crd());
    crds.push(cluster_property_crd());
    crds
}

/// The About API's ClusterProperty CRD, installed on a managed cluster with the klusterlet's
/// `ClusterProperty` gate on and, as upstream, never removed.
#[must_use]
pub fn cluster_property_crd() -> CustomResourceDefinition {
    let mut crd = finish(about::ClusterProperty::crd(), false, &[]);
    // `*.k8s.io` groups are the Kubernetes project's: the API server takes a CRD there only
    // with the approval of its API review (KEP-2149's).
    crd.metadata.annotations = Some(std::collections::BTreeMap::from([(
        "api-approved.kubernetes.io".to_string(),
        about::API_APPROVAL.to_string(),
    )]));
    crd
}

/// The ClusterInventory's ClusterProfile CRD, installed on the hub with the `ClusterProfile`
/// gate on and, as upstream, never removed (other projects may use it).
#[must_use]
pub fn cluster_profile_crd() -> CustomResourceDefinition {
    finish(inventory::ClusterProfile::crd(), true, &[])
}

/// The ClusterManager CRD (installed on the hub before the hub operator runs).
#[must_use]
pub fn operator_crd_cluster_manager() -> CustomResourceDefinition {
    finish(operator::ClusterManager::crd(), false, &[])
}

/// The Klusterlet CRD (installed on a managed cluster before the klusterlet operator runs).
#[must_use]
pub fn operator_crd_klusterlet() -> CustomResourceDefinition {
    finish(operator::Klusterlet::crd(), false, &[])
}

/// The CRDs the hub serves, in install order (clusters and sets before what refers to them).
#[must_use]
pub fn hub_crds() -> Vec<CustomResourceDefinition> {
    vec![
        finish(
            cluster::ManagedCluster::crd(),
            false,
            &["spec.taints[].timeAdded"],
        ),
        finish(cluster::ManagedClusterSet::crd(), false, &[]),
        finish(cluster::ManagedClusterSetBinding::crd(), false, &[]),
        finish(cluster::Placement::crd(), true, &[]),
        finish(cluster::PlacementDecision::crd(), false, &[]),
        finish(cluster::AddOnPlacementScore::crd(), false, &[]),
        finish(work::ManifestWork::crd(), false, &[]),
        finish(work::ManifestWorkReplicaSet::crd(), false, &[]),
        also_serving(
            finish(addon::ClusterManagementAddOn::crd(), true, &[]),
            finish(addon::v1beta1::ClusterManagementAddOn::crd(), true, &[]),
        ),
        also_serving(
            finish(addon::ManagedClusterAddOn::crd(), true, &[]),
            finish(addon::v1beta1::ManagedClusterAddOn::crd(), true, &[]),
        ),
        finish(addon::AddOnTemplate::crd(), true, &[]),
        also_serving_as(
            finish(addon::AddOnDeploymentConfig::crd(), true, &[]),
            "v1beta1",
        ),
    ]
}

/// The CRDs a managed cluster serves for the agents.
#[must_use]
pub fn managed_crds() -> Vec<CustomResourceDefinition> {
    vec![
        finish(work::AppliedManifestWork::crd(), false, &[]),
        finish(cluster::ClusterClaim::crd(), false, &[]),
    ]
}

/// `stored`, also serving the versions of `other` (same kind), which are not stored: the API
/// server converts them to and from the stored version.
fn also_serving(
    mut stored: CustomResourceDefinition,
    other: CustomResourceDefinition,
) -> CustomResourceDefinition {
    for mut version in other.spec.versions {
        version.storage = false;
        stored.spec.versions.push(version);
    }
    stored
}

/// `stored`, also serving its one version's schema as `version` (the API server converts between
/// versions of one schema by the name alone).
fn also_serving_as(
    mut stored: CustomResourceDefinition,
    version: &str,
) -> CustomResourceDefinition {
    let mut other = stored.spec.versions[0].clone();
    other.name = version.to_string();
    other.storage = false;
    stored.spec.versions.push(other);
    stored
}

/// Completes a derived CRD like upstream's: declares the implicit `apiVersion`, `kind` and
/// `metadata` fields, requires `spec` only where upstream does (kube-derive always requires it;
/// Go clients always send it, but an object applied without one must still be accepted), and
/// marks only the `nullable` paths as nullable. kube-derive marks every `Option` nullable, which
/// would store an explicit null where upstream prunes it and applies the default.
fn finish(
    mut crd: CustomResourceDefinition,
    spec_required: bool,
    nullable: &[&str],
) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        strip_nullable(root);
        for path in nullable {
            let node = node_at(root, path)
                .unwrap_or_else(|| panic!("{path} not in the {} schema", crd.spec.names.kind));
            node.nullable = Some(true);
        }
        let props = root.properties.get_or_insert_with(Default::default);
        let typed = |type_: &str| JSONSchemaProps {
            type_: Some(type_.into()),
            ..Default::default()
        };
        props.insert("apiVersion".into(), typed("string"));
        props.insert("kind".into(), typed("string"));
        props.insert("metadata".into(), typed("object"));
        root.required = spec_required.then(|| vec!["spec".to_owned()]);
        root.title = None;
    }
    crd
}

/// Clears `nullable` on `node` and everything below it.
fn strip_nullable(node: &mut JSONSchemaProps) {
    node.nullable = None;
    node.properties
        .iter_mut()
        .flat_map(|props| props.values_mut())
        .for_each(strip_nullable);
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = node.items.as_mut() {
        strip_nullable(items);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = node.additional_properties.as_mut() {
        strip_nullable(values);
    }
}

/// The schema node at a dotted path below `root`; `name[]` steps into a list's items.
fn node_at<'a>(root: &'a mut JSONSchemaProps, path: &str) -> Option<&'a mut JSONSchemaProps> {
    path.split('.').try_fold(root, |node, step| {
        let (name, list) = step
            .strip_suffix("[]")
            .map_or((step, false), |name| (name, true));
        let child = node.properties.as_mut()?.get_mut(name)?;
        if !list {
            return Some(child);
        }
        match child.items.as_mut()? {
            JSONSchemaPropsOrArray::Schema(items) => Some(&mut **items),
            JSONSchemaPropsOrArray::Schemas(_) => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{cluster, conditions, operator, work};

    /// Parses `yaml` as `K`, prints it back and checks nothing was lost or added.
    fn round_trip<K: serde::de::DeserializeOwned + serde::Serialize>(yaml: &str) -> K {
        let object: K = crate::yaml::from_str(yaml).unwrap();
        let input: Value = crate::yaml::from_str(yaml).unwrap();
        assert_eq!(serde_json::to_value(&object).unwrap(), input);
        object
    }

    #[test]
    fn managed_cluster_as_the_agent_writes_it() {
        let mc: cluster::ManagedCluster = round_trip(
            r"
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: c1, labels: {cluster.open-cluster-management.io/clusterset: default}}
spec:
  hubAcceptsClient: true
  leaseDurationSeconds: 60
  managedClusterClientConfigs: [{url: 'https://10.0.0.1:6443', caBundle: aGVsbG8=}]
status:
  capacity: {cpu: '4', memory: 8Gi}
  version: {kubernetes: v1.36.0}
  conditions:
  - {type: HubAcceptedManagedCluster, status: 'True', reason: HubClusterAdminAccepted, message: accepted, lastTransitionTime: '2026-01-02T03:04:05Z'}
",
        );
        assert!(mc.spec.hub_accepts_client);
        assert_eq!(
            mc.spec.managed_cluster_client_configs[0]
                .ca_bundle
                .as_ref()
                .unwrap()
                .0,
            b"hello"
        );
        let status = mc.status.unwrap();
        assert!(conditions::is_true(
            &status.conditions,
            cluster::HUB_ACCEPTED_MANAGED_CLUSTER
        ));
        assert_eq!(status.capacity["memory"].0, "8Gi");
    }

    #[test]
    fn manifest_work_keeps_manifests_verbatim() {
        let mw: work::ManifestWork = round_trip(
            r"
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: w1, namespace: c1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: b}}
  deleteOption: {propagationPolicy: SelectivelyOrphan, selectivelyOrphans: {orphaningRules: [{resource: configmaps, name: cm, namespace: default}]}}
  manifestConfigs:
  - resourceIdentifier: {group: apps, resource: deployments, name: d, namespace: default}
    feedbackRules: [{type: JSONPaths, jsonPaths: [{name: replicas, path: .status.replicas}]}]
    updateStrategy: {type: ServerSideApply, serverSideApply: {force: true}}
status:
  resourceStatus:
    manifests:
    - resourceMeta: {ordinal: 0, version: v1, kind: ConfigMap, resource: configmaps, name: cm, namespace: default}
      statusFeedback: {values: [{name: replicas, fieldValue: {type: Integer, integer: 2}}]}
      conditions: []
",
        );
        assert_eq!(mw.spec.workload.manifests[0]["data"], json!({"a": "b"}));
        assert_eq!(
            mw.spec.delete_option.unwrap().propagation_policy,
            Some(work::PropagationPolicy::SelectivelyOrphan)
        );
        assert_eq!(
            mw.spec.manifest_configs[0].feedback_rules[0].type_,
            work::FeedbackType::JsonPaths
        );
    }

    #[test]
    fn placement_decision_has_no_spec() {
        let pd: cluster::PlacementDecision = round_trip(
            r"
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata: {name: p1-decision-1, namespace: default, labels: {cluster.open-cluster-management.io/placement: p1}}
status:
  decisions: [{clusterName: c1, reason: ''}]
",
        );
        assert_eq!(pd.status.unwrap().decisions[0].cluster_name, "c1");
    }

    #[test]
    fn a_new_cluster_manager_serializes_minimally() {
        let cm = operator::ClusterManager::new(
            operator::CLUSTER_MANAGER_NAME,
            operator::ClusterManagerSpec::default(),
        );
        assert_eq!(
            serde_json::to_value(&cm).unwrap(),
            json!({"apiVersion": "operator.open-cluster-management.io/v1", "kind": "ClusterManager",
                   "metadata": {"name": "cluster-manager"}, "spec": {}})
        );
    }
}
