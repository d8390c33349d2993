//! ManagedCluster rules, as upstream's `pkg/registration/webhook/v1/managedcluster_validating.go`
//! and the validating half of `managedcluster_mutating.go` (taint times).
use super::{Policy, forbidden, invalid, literal, may, or_default, variable};
use ocm_api::cluster::{CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET};

/// Name of the ManagedCluster policy and its binding.
pub const POLICY: &str = "managedclusters.admission.open-cluster-management.io";

const CLUSTER: &str = "cluster.open-cluster-management.io";
const REGISTER: &str = "register.open-cluster-management.io";

/// The value of the cluster-set label of `object` (`object` or `oldObject`), or `''`.
fn cluster_set_of(object: &str) -> String {
    let label = literal(CLUSTER_SET_LABEL);
    format!(
        "{object} != null && has({object}.metadata.labels) && {label} in {object}.metadata.labels ? {object}.metadata.labels[{label}] : ''"
    )
}

/// `create` on `managedclustersets/join` for the set named by CEL expression `set`.
fn may_join(set: &str) -> String {
    may(
        "create",
        CLUSTER,
        "managedclustersets",
        Some("join"),
        None,
        set,
    )
}

/// Whether client config `c` has an https URL with a host (upstream's `IsValidHTTPSURL`, which
/// also lets `https://` with no host through: a URL nothing can reach).
fn https_url(c: &str) -> String {
    format!(
        "has({c}.url) && isURL({c}.url) && url({c}.url).getScheme() == 'https' && url({c}.url).getHostname() != ''"
    )
}

/// A taint's identity for its time: same key, value and effect.
fn same_taint(a: &str, b: &str) -> String {
    format!(
        "{a}.key == {b}.key && (has({a}.value) ? {a}.value : '') == (has({b}.value) ? {b}.value : '') && {a}.effect == {b}.effect"
    )
}

/// A taint's `timeAdded` as a string, `''` when unset (Go clients write `null`).
fn time_added(t: &str) -> String {
    format!("(has({t}.timeAdded) && {t}.timeAdded != null ? string({t}.timeAdded) : '')")
}

/// Taint `t` keeps the time it had, or is new (or changed) without a time: the hub sets it.
fn taint_time_untouched(t: &str) -> String {
    format!(
        "variables.oldTaints.exists(o, {same} && {old} == {new}) || (!variables.oldTaints.exists(o, {same}) && {new} == '')",
        same = same_taint("o", t),
        old = time_added("o"),
        new = time_added(t),
    )
}

pub(super) fn policy() -> k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy {
    let name = "object.metadata.name";
    let accepts = "has(object.spec.hubAcceptsClient) && object.spec.hubAcceptsClient";
    let was_accepted = "oldObject != null && has(oldObject.spec.hubAcceptsClient) && oldObject.spec.hubAcceptsClient";
    let configs = "object.spec.managedClusterClientConfigs";
    let taints = "object.spec.taints";
    Policy {
        name: POLICY,
        group: CLUSTER,
        resource: "managedclusters",
        operations: &["CREATE", "UPDATE"],
        match_conditions: Vec::new(),
        variables: vec![
            variable("oldSet", cluster_set_of("oldObject")),
            // A removed label is a move into `default`: the hub fills it in right after, as
            // upstream's mutating webhook does before its validation (which runs as the user).
            variable(
                "newSet",
                format!(
                    "({new}) == '' && variables.oldSet != '' ? {default} : ({new})",
                    new = cluster_set_of("object"),
                    default = literal(DEFAULT_CLUSTER_SET),
                ),
            ),
            variable("oldTaints", or_default("oldObject", &["spec", "taints"], "[]")),
        ],
        validations: vec![
            // The cluster's namespace is named after it.
            invalid(
                format!(
                    "request.operation != 'CREATE' || (size({name}) <= 63 && {name}.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))"
                ),
                format!(
                    "'ManagedCluster name \"' + {name} + '\" is refused: it names the cluster namespace, so it must be a DNS-1123 label (at most 63 lower-case letters, digits and \"-\", starting and ending with a letter or digit)'"
                ),
            ),
            invalid(
                format!("!has({configs}) || {configs}.all(c, {})", https_url("c")),
                format!(
                    "'spec.managedClusterClientConfigs of ManagedCluster ' + {name} + ' is refused: ' + {configs}.filter(c, !({})).map(c, has(c.url) ? '\"' + c.url + '\"' : 'an empty url').join(', ') + ' is not an https URL with a host'",
                    https_url("c")
                ),
            ),
            forbidden(
                format!(
                    "!has({taints}) || {taints}.all(t, {}) || {}",
                    taint_time_untouched("t"),
                    may("update", CLUSTER, "managedclusters", Some("status"), None, name)
                ),
                format!(
                    "'setting timeAdded of taint ' + {taints}.filter(t, !({})).map(t, t.key).join(', ') + ' on ManagedCluster ' + {name} + ' is refused: the hub sets it when a taint is added or changed; writing it needs update on managedclusters/status ({CLUSTER}) for ' + {name}",
                    taint_time_untouched("t")
                ),
            ),
            forbidden(
                format!(
                    "!({accepts}) || ({was_accepted}) || {}",
                    may("update", REGISTER, "managedclusters", Some("accept"), None, name)
                ),
                format!(
                    "'setting spec.hubAcceptsClient to true on ManagedCluster ' + {name} + ' is refused: it needs update on managedclusters/accept ({REGISTER}) for ' + {name}"
                ),
            ),
            forbidden(
                format!(
                    "variables.newSet == variables.oldSet || ((variables.newSet == '' || {}) && (variables.oldSet == '' || {}))",
                    may_join("variables.newSet"),
                    may_join("variables.oldSet")
                ),
                format!(
                    "'changing label {CLUSTER_SET_LABEL} of ManagedCluster ' + {name} + ' from \"' + variables.oldSet + '\" to \"' + variables.newSet + '\" is refused: it needs create on managedclustersets/join ({CLUSTER}) for each of them'"
                ),
            ),
        ],
    }
    .build()
}
