//! ManagedClusterSetBinding rules, as upstream's
//! `pkg/registration/webhook/v1beta2/managedclustersetbinding_validating.go`.
use super::{Policy, forbidden, invalid, may};

/// Name of the ManagedClusterSetBinding policy and its binding.
pub const POLICY: &str = "managedclustersetbindings.admission.open-cluster-management.io";

const CLUSTER: &str = "cluster.open-cluster-management.io";

pub(super) fn policy() -> k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy {
    let set = "object.spec.clusterSet";
    let whom =
        "'ManagedClusterSetBinding ' + object.metadata.namespace + '/' + object.metadata.name";
    Policy {
        name: POLICY,
        group: CLUSTER,
        resource: "managedclustersetbindings",
        operations: &["CREATE", "UPDATE"],
        match_conditions: Vec::new(),
        variables: Vec::new(),
        validations: vec![
            invalid(
                format!("object.metadata.name == {set}"),
                format!(
                    "{whom} + ' is refused: its name must be the name of the set it binds (spec.clusterSet is \"' + {set} + '\")'"
                ),
            ),
            // Upstream checks on create only; with the rule above the set cannot change after.
            forbidden(
                format!(
                    "(request.operation == 'UPDATE' && oldObject.spec.clusterSet == {set}) || {}",
                    may("create", CLUSTER, "managedclustersets", Some("bind"), None, set)
                ),
                format!(
                    "{whom} + ' is refused: binding ManagedClusterSet ' + {set} + ' needs create on managedclustersets/bind ({CLUSTER}) for ' + {set}"
                ),
            ),
        ],
    }
    .build()
}
