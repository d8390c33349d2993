//! The hub's admission rules as ValidatingAdmissionPolicies: enforced by the API server itself
//! (CEL, with `authorizer` checks), so a hub whose webhooks are not deployed — `init
//! --in-process` — still refuses what upstream's webhooks refuse. So far the ManagedCluster rules
//! of upstream's registration webhook (`pkg/registration/webhook/v1/managedcluster_validating.go`):
//! accepting a cluster needs `update` on `managedclusters/accept`, and moving a cluster into or
//! out of a cluster set needs `create` on `managedclustersets/join` for each set.
use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Name of the ManagedCluster policy and its binding.
pub const MANAGED_CLUSTER_POLICY: &str = "managedclusters.admission.open-cluster-management.io";
/// The label that puts a cluster in a cluster set.
const CLUSTER_SET_LABEL: &str = "cluster.open-cluster-management.io/clusterset";

/// The value of the cluster-set label of `object` (`object` or `oldObject`), or `''`.
fn cluster_set_of(object: &str) -> String {
    format!(
        "{object} != null && has({object}.metadata.labels) && '{CLUSTER_SET_LABEL}' in {object}.metadata.labels ? {object}.metadata.labels['{CLUSTER_SET_LABEL}'] : ''"
    )
}

/// `create` on `managedclustersets/join` for the set named by CEL expression `set`.
fn may_join(set: &str) -> String {
    format!(
        "authorizer.group('cluster.open-cluster-management.io').resource('managedclustersets').subresource('join').name({set}).check('create').allowed()"
    )
}

fn variable(name: &str, expression: String) -> Variable {
    Variable {
        name: name.into(),
        expression,
    }
}

fn validation(expression: String, message: String) -> Validation {
    Validation {
        expression,
        message_expression: Some(message),
        reason: Some("Forbidden".into()),
        ..Default::default()
    }
}

/// The policies of the hub.
#[must_use]
pub fn policies() -> Vec<ValidatingAdmissionPolicy> {
    let accepts = "has(object.spec.hubAcceptsClient) && object.spec.hubAcceptsClient";
    let was_accepted = "oldObject != null && has(oldObject.spec.hubAcceptsClient) && oldObject.spec.hubAcceptsClient";
    vec![ValidatingAdmissionPolicy {
        metadata: ObjectMeta {
            name: Some(MANAGED_CLUSTER_POLICY.into()),
            ..Default::default()
        },
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![NamedRuleWithOperations {
                    api_groups: Some(vec!["cluster.open-cluster-management.io".into()]),
                    api_versions: Some(vec!["*".into()]),
                    operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
                    resources: Some(vec!["managedclusters".into()]),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            variables: Some(vec![
                variable("newSet", cluster_set_of("object")),
                variable("oldSet", cluster_set_of("oldObject")),
            ]),
            validations: Some(vec![
                validation(
                    format!(
                        "!({accepts}) || ({was_accepted}) || authorizer.group('register.open-cluster-management.io').resource('managedclusters').subresource('accept').name(object.metadata.name).check('update').allowed()"
                    ),
                    "'setting spec.hubAcceptsClient to true on ManagedCluster ' + object.metadata.name + ' is refused: it needs update on managedclusters/accept (register.open-cluster-management.io) for ' + object.metadata.name".into(),
                ),
                validation(
                    format!(
                        "variables.newSet == variables.oldSet || ((variables.newSet == '' || {}) && (variables.oldSet == '' || {}))",
                        may_join("variables.newSet"),
                        may_join("variables.oldSet")
                    ),
                    format!(
                        "'changing label {CLUSTER_SET_LABEL} of ManagedCluster ' + object.metadata.name + ' from \"' + variables.oldSet + '\" to \"' + variables.newSet + '\" is refused: it needs create on managedclustersets/join (cluster.open-cluster-management.io) for each of them'"
                    ),
                ),
            ]),
            ..Default::default()
        }),
        status: None,
    }]
}

/// One binding per policy, denying what it refuses, for every namespace and object.
#[must_use]
pub fn bindings() -> Vec<ValidatingAdmissionPolicyBinding> {
    policies()
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .map(|name| ValidatingAdmissionPolicyBinding {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..Default::default()
            },
            spec: ValidatingAdmissionPolicyBindingSpec {
                policy_name: name,
                validation_actions: vec!["Deny".into()],
                ..Default::default()
            },
        })
        .collect()
}
