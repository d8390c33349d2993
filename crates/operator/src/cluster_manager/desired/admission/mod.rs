//! The hub's admission rules as ValidatingAdmissionPolicies (`init --admission policies`):
//! enforced by the API server itself (CEL, with `authorizer` checks), with no webhook server, they
//! refuse what upstream's validating webhooks refuse (`pkg/registration/webhook/`,
//! `pkg/work/webhook/` in open-cluster-management-io/ocm), with 422 Invalid and their own
//! messages where the webhooks ([`ocm_hub::admission`]) answer upstream's. Upstream's mutating
//! webhook's defaults (the `default` cluster-set label, taint times) are the hub registration
//! controller's job in this mode (`ocm_hub::registration`).
//!
//! One policy per kind, each with its own binding of the same name. Every message says what was
//! refused and, where a permission would allow it, which one.
mod cluster_set_binding;
mod managed_cluster;
mod manifest_work;

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub use cluster_set_binding::POLICY as CLUSTER_SET_BINDING_POLICY;
pub use managed_cluster::POLICY as MANAGED_CLUSTER_POLICY;
pub use manifest_work::{NIL_EXECUTOR_USER, POLICY as MANIFEST_WORK_POLICY};

/// The hub's feature gates the policies depend on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gates {
    /// Upstream's work gate `NilExecutorValidating`: a work without an executor is checked as
    /// the work agent's own account.
    pub nil_executor_validating: bool,
}

impl Gates {
    /// The gates as the work webhook's `--feature-gates=Name=bool` flags set them.
    #[must_use]
    pub fn from_work_flags(flags: &[String]) -> Self {
        Self {
            nil_executor_validating: flags
                .iter()
                .any(|f| f == "--feature-gates=NilExecutorValidating=true"),
        }
    }
}

/// The policies of the hub, with every gate off (their names do not depend on gates).
#[must_use]
pub fn policies() -> Vec<ValidatingAdmissionPolicy> {
    policies_with(Gates::default())
}

/// The policies of the hub with `gates`.
#[must_use]
pub fn policies_with(gates: Gates) -> Vec<ValidatingAdmissionPolicy> {
    vec![
        managed_cluster::policy(),
        cluster_set_binding::policy(),
        manifest_work::policy(gates.nil_executor_validating),
        manifest_work::replica_set_policy(),
    ]
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

/// What a policy is made of; [`Policy::build`] fills in the rest.
struct Policy {
    name: &'static str,
    group: &'static str,
    resource: &'static str,
    operations: &'static [&'static str],
    match_conditions: Vec<MatchCondition>,
    variables: Vec<Variable>,
    validations: Vec<Validation>,
}

impl Policy {
    fn build(self) -> ValidatingAdmissionPolicy {
        ValidatingAdmissionPolicy {
            metadata: ObjectMeta {
                name: Some(self.name.into()),
                ..Default::default()
            },
            spec: Some(ValidatingAdmissionPolicySpec {
                // A policy that cannot be evaluated refuses: the rules are the double opt-in.
                failure_policy: Some("Fail".into()),
                match_constraints: Some(MatchResources {
                    resource_rules: Some(vec![NamedRuleWithOperations {
                        api_groups: Some(vec![self.group.into()]),
                        api_versions: Some(vec!["*".into()]),
                        operations: Some(self.operations.iter().map(|o| (*o).into()).collect()),
                        resources: Some(vec![self.resource.into()]),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                match_conditions: (!self.match_conditions.is_empty())
                    .then_some(self.match_conditions),
                variables: (!self.variables.is_empty()).then_some(self.variables),
                validations: Some(self.validations),
                ..Default::default()
            }),
            status: None,
        }
    }
}

fn variable(name: &str, expression: impl Into<String>) -> Variable {
    Variable {
        name: name.into(),
        expression: expression.into(),
    }
}

/// A rule refused for want of a permission (`403 Forbidden`).
fn forbidden(expression: impl Into<String>, message: impl Into<String>) -> Validation {
    Validation {
        expression: expression.into(),
        message_expression: Some(message.into()),
        reason: Some("Forbidden".into()),
        ..Default::default()
    }
}

/// A rule about the object's shape (`422 Invalid`).
fn invalid(expression: impl Into<String>, message: impl Into<String>) -> Validation {
    Validation {
        expression: expression.into(),
        message_expression: Some(message.into()),
        reason: Some("Invalid".into()),
        ..Default::default()
    }
}

/// A CEL string literal (single-quoted, escaped).
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Whether the requester may `verb` the `subresource` of `group`/`resource` named by the CEL
/// expression `name` (in the namespace `namespace`, a CEL expression, when given) — a
/// SubjectAccessReview the API server makes itself, as upstream's webhooks make theirs.
fn may(
    verb: &str,
    group: &str,
    resource: &str,
    subresource: Option<&str>,
    namespace: Option<&str>,
    name: &str,
) -> String {
    let mut steps = vec![
        "authorizer".to_string(),
        format!("group({})", literal(group)),
        format!("resource({})", literal(resource)),
    ];
    steps.extend(namespace.map(|ns| format!("namespace({ns})")));
    steps.extend(subresource.map(|sub| format!("subresource({})", literal(sub))));
    steps.push(format!("name({name})"));
    steps.push(format!("check({})", literal(verb)));
    steps.push("allowed()".into());
    steps.join(".")
}

/// `object.<path>` when every step of it is set, else `fallback` (CEL has no `?.` for objects
/// typed by a CRD schema).
fn or_default(root: &str, path: &[&str], fallback: &str) -> String {
    let mut guards = vec![format!("{root} != null")];
    let mut at = root.to_string();
    for step in path {
        guards.push(format!("has({at}.{step})"));
        at = format!("{at}.{step}");
    }
    format!("({} ? {at} : {fallback})", guards.join(" && "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_has_its_binding_and_every_rule_a_message() {
        let policies = policies();
        let bindings = bindings();
        assert_eq!(policies.len(), bindings.len());
        for (p, b) in policies.iter().zip(&bindings) {
            assert_eq!(p.metadata.name, b.metadata.name);
            assert_eq!(Some(&b.spec.policy_name), p.metadata.name.as_ref());
            let spec = p.spec.as_ref().unwrap();
            assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
            for v in spec.validations.iter().flatten() {
                assert!(v.message_expression.is_some(), "{}", v.expression);
                assert!(matches!(v.reason.as_deref(), Some("Forbidden" | "Invalid")));
            }
        }
    }

    #[test]
    fn literals_are_escaped() {
        assert_eq!(literal("a'b\\c"), r"'a\'b\\c'");
    }

    #[test]
    fn authorizer_checks_name_the_subresource_and_namespace() {
        assert_eq!(
            may("create", "g", "r", Some("join"), None, "x"),
            "authorizer.group('g').resource('r').subresource('join').name(x).check('create').allowed()"
        );
        assert_eq!(
            may("execute-as", "g", "r", None, Some("ns"), "x"),
            "authorizer.group('g').resource('r').namespace(ns).name(x).check('execute-as').allowed()"
        );
    }

    #[test]
    fn optional_paths_are_guarded_step_by_step() {
        assert_eq!(
            or_default("oldObject", &["spec", "taints"], "[]"),
            "(oldObject != null && has(oldObject.spec) && has(oldObject.spec.taints) ? oldObject.spec.taints : [])"
        );
    }
}
