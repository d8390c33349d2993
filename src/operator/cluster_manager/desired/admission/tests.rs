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
