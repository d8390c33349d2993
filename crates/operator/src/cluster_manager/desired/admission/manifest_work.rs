//! ManifestWork rules, as upstream's `pkg/work/webhook/v1/manifestwork_validating.go` and
//! `pkg/work/webhook/common/validator.go`, plus the delete and update options the schema alone
//! cannot check.
use k8s_openapi::api::admissionregistration::v1::Validation;

use super::{Policy, forbidden, invalid, may, or_default, variable};
use ocm_api::work::MAX_MANIFESTS_BYTES as MAX_BYTES;

/// Name of the ManifestWork policy and its binding.
pub const POLICY: &str = "manifestworks.admission.open-cluster-management.io";
/// Name of the ManifestWorkReplicaSet policy and its binding.
pub const REPLICA_SET_POLICY: &str = "manifestworkreplicasets.admission.open-cluster-management.io";

const WORK: &str = "work.open-cluster-management.io";

/// A manifest has what the agent needs to apply it: apiVersion, kind and a fixed name.
fn well_formed(m: &str) -> String {
    format!(
        "has({m}.apiVersion) && {m}.apiVersion != '' && has({m}.kind) && {m}.kind != '' && has({m}.metadata) && has({m}.metadata.name) && {m}.metadata.name != '' && !(has({m}.metadata.generateName) && {m}.metadata.generateName != '')"
    )
}

/// Upstream's duplicate key of a manifest: `apiVersion/kind/namespace/name`.
fn key(m: &str) -> String {
    let field = |path: &[&str]| or_default(m, path, "''");
    format!(
        "string({}) + '/' + string({}) + '/' + string({}) + '/' + string({})",
        field(&["apiVersion"]),
        field(&["kind"]),
        field(&["metadata", "namespace"]),
        field(&["metadata", "name"]),
    )
}

/// A resource identifier (in `manifestConfigs` or orphaning rules) that can match something.
fn identifies(r: &str) -> String {
    format!("has({r}.resource) && {r}.resource != '' && has({r}.name) && {r}.name != ''")
}

const WHOM: &str = "'ManifestWork ' + object.metadata.namespace + '/' + object.metadata.name";
const REPLICA_SET: &str =
    "'ManifestWorkReplicaSet ' + object.metadata.namespace + '/' + object.metadata.name";

/// The variables [`manifest_rules`] read: the manifests at `path` below the object, their
/// duplicate keys and their size.
fn manifest_variables(path: &[&str]) -> Vec<k8s_openapi::api::admissionregistration::v1::Variable> {
    vec![
        variable("manifests", or_default("object", path, "[]")),
        variable("keys", format!("variables.manifests.map(m, {})", key("m"))),
        // CEL renders the manifests as JSON with a space after each comma: within a few
        // bytes per field of upstream's measure (the JSON bytes).
        variable("size", "'%s'.format([variables.manifests]).size()"),
    ]
}

/// Upstream's manifest rules: some, each well formed, no two alike, within the size limit;
/// `whom` names the object in messages and `field` the manifests.
fn manifest_rules(whom: &str, field: &str) -> Vec<Validation> {
    let limit = MAX_BYTES;
    let kib = MAX_BYTES / 1024;
    vec![
        invalid(
            "size(variables.manifests) > 0",
            format!("{whom} + ' is refused: {field} is empty; a work needs at least one object'"),
        ),
        invalid(
            format!("variables.manifests.all(m, {})", well_formed("m")),
            format!(
                "{whom} + ' is refused: ' + string(size(variables.manifests.filter(m, !({}))))  + ' of its manifests lack apiVersion, kind or metadata.name, or set metadata.generateName (the agent applies objects by name)'",
                well_formed("m")
            ),
        ),
        invalid(
            "variables.keys.all(k, variables.keys.indexOf(k) == variables.keys.lastIndexOf(k))",
            format!(
                "{whom} + ' is refused: manifest ' + variables.keys.filter(k, variables.keys.indexOf(k) != variables.keys.lastIndexOf(k))[0] + ' (apiVersion/kind/namespace/name) appears more than once'"
            ),
        ),
        invalid(
            format!("variables.size <= {limit}"),
            format!(
                "{whom} + ' is refused: its manifests take ' + string(variables.size / 1024) + ' KiB, over the {kib} KiB a ManifestWork may hold; split them over several works'"
            ),
        ),
    ]
}

/// The executor a work without one runs as when `NilExecutorValidating` is on: upstream's
/// webhook checks `execute-as` on `system:serviceaccount::klusterlet-work-sa` (the work agent's
/// service account, with the empty namespace upstream gives it).
pub const NIL_EXECUTOR_USER: &str = "system:serviceaccount::klusterlet-work-sa";

/// Upstream's executor rules: a service account, and `execute-as` it when it changes. With
/// `nil_executor_validating` (upstream's gate) a work without an executor is checked as
/// [`NIL_EXECUTOR_USER`], so removing an executor, or creating a work with none, needs
/// `execute-as` on the agent's own account.
fn executor_rules(nil_executor_validating: bool) -> Vec<Validation> {
    let executor = "object.spec.executor";
    let sa = "object.spec.executor.subject.serviceAccount";
    let named = format!("'system:serviceaccount:' + {sa}.namespace + ':' + {sa}.name");
    let user = if nil_executor_validating {
        format!("(has({executor}) ? {named} : '{NIL_EXECUTOR_USER}')")
    } else {
        named
    };
    let checked = if nil_executor_validating {
        // Malformed executors are the rule above's to refuse.
        format!("(has({executor}) && (!has({executor}.subject) || !has({sa})))")
    } else {
        format!("!has({executor}.subject) || !has({sa})")
    };
    vec![
        invalid(
            format!(
                "!has({executor}) || (has({executor}.subject) && {executor}.subject.type == 'ServiceAccount' && has({sa}))"
            ),
            format!(
                "{WHOM} + ' is refused: spec.executor needs subject.type ServiceAccount and subject.serviceAccount'"
            ),
        ),
        forbidden(
            format!(
                "!variables.executorChanged || {checked} || {}",
                may(
                    "execute-as",
                    WORK,
                    "manifestworks",
                    None,
                    Some("object.metadata.namespace"),
                    &user
                )
            ),
            format!(
                "{WHOM} + ' is refused: applying it as ' + {user} + ' needs execute-as on manifestworks ({WORK}) in namespace ' + object.metadata.namespace + ' for ' + {user}"
            ),
        ),
    ]
}

/// Whether the executor changed: with `nil_executor_validating`, also when there is none (a
/// create without one, or an update that removes it).
fn executor_changed(nil_executor_validating: bool) -> String {
    let (new, old) = ("object.spec.executor", "oldObject.spec.executor");
    let same = format!(
        "oldObject != null && ((has({old}) && has({new}) && {old} == {new}) || (!has({old}) && !has({new})))"
    );
    if nil_executor_validating {
        format!("!({same})")
    } else {
        format!("has({new}) && !({same})")
    }
}

/// Delete and update options the schema cannot check: no negative TTL, and identifiers that
/// can match an object.
fn option_rules() -> Vec<Validation> {
    let delete = "object.spec.deleteOption";
    let rules = "object.spec.deleteOption.selectivelyOrphans.orphaningRules";
    let configs = "object.spec.manifestConfigs";
    vec![
        invalid(
            format!(
                "!has({delete}) || !has({delete}.ttlSecondsAfterFinished) || {delete}.ttlSecondsAfterFinished >= 0"
            ),
            format!(
                "{WHOM} + ' is refused: spec.deleteOption.ttlSecondsAfterFinished is negative'"
            ),
        ),
        invalid(
            format!(
                "!has({delete}) || !has({delete}.selectivelyOrphans) || !has({rules}) || {rules}.all(r, {})",
                identifies("r")
            ),
            format!(
                "{WHOM} + ' is refused: each of spec.deleteOption.selectivelyOrphans.orphaningRules needs a resource and a name'"
            ),
        ),
        invalid(
            format!(
                "!has({configs}) || {configs}.all(c, {})",
                identifies("c.resourceIdentifier")
            ),
            format!(
                "{WHOM} + ' is refused: each of spec.manifestConfigs needs resourceIdentifier.resource and resourceIdentifier.name'"
            ),
        ),
    ]
}

/// The ManifestWork policy; `nil_executor_validating` is upstream's work gate of that name.
pub(super) fn policy(
    nil_executor_validating: bool,
) -> k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy {
    Policy {
        name: POLICY,
        group: WORK,
        resource: "manifestworks",
        operations: &["CREATE", "UPDATE"],
        match_conditions: Vec::new(),
        variables: [
            manifest_variables(&["spec", "workload", "manifests"]),
            vec![variable(
                "executorChanged",
                executor_changed(nil_executor_validating),
            )],
        ]
        .concat(),
        validations: [
            manifest_rules(WHOM, "spec.workload.manifests"),
            executor_rules(nil_executor_validating),
            option_rules(),
        ]
        .concat(),
    }
    .build()
}

/// ManifestWorkReplicaSets: upstream's webhook checks the template's manifests only, by the
/// ManifestWork rules (and no standard install routes requests to it; here they are enforced).
pub(super) fn replica_set_policy()
-> k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy {
    Policy {
        name: REPLICA_SET_POLICY,
        group: WORK,
        resource: "manifestworkreplicasets",
        operations: &["CREATE", "UPDATE"],
        match_conditions: Vec::new(),
        variables: manifest_variables(&["spec", "manifestWorkTemplate", "workload", "manifests"]),
        validations: manifest_rules(REPLICA_SET, "spec.manifestWorkTemplate.workload.manifests"),
    }
    .build()
}
