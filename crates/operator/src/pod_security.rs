//! What every pod the operators and `init`/`join` deploy is held to: Pod Security's `restricted`
//! profile (non-root, no privilege escalation, no capabilities, the runtime's default seccomp
//! profile), and the namespace labels that make the API server enforce it.
//!
//! A namespace is enforced only where every pod in it is one we render (the operators', the hub's,
//! the agents' in Default and Singleton modes, the example add-on's). Where pods of others run —
//! add-on agents from other projects, which upstream's images do not harden either, and the Hosted
//! agents' namespace, which also holds hosted add-ons — a violation is warned and audited only,
//! so an add-on that worked before still starts.
use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Pod Security's label for the profile the API server enforces.
pub const ENFORCE: &str = "pod-security.kubernetes.io/enforce";
/// Pod Security's labels that warn (the client) and audit (the log) on a violation.
pub const WARN_AND_AUDIT: [&str; 2] = [
    "pod-security.kubernetes.io/warn",
    "pod-security.kubernetes.io/audit",
];
/// The profile every pod we render meets.
pub const RESTRICTED: &str = "restricted";

/// The namespace labels for `restricted`: enforced (and warned and audited) when `enforce`, else
/// only warned and audited.
#[must_use]
pub fn labels(enforce: bool) -> BTreeMap<String, String> {
    let enforced = enforce.then_some(ENFORCE);
    WARN_AND_AUDIT
        .into_iter()
        .chain(enforced)
        .map(|k| (k.to_owned(), RESTRICTED.to_owned()))
        .collect()
}

/// A container's `securityContext` under `restricted`, with a read-only root filesystem.
#[must_use]
pub fn container() -> Value {
    json!({
        "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]},
        "privileged": false,
        "runAsNonRoot": true,
        "readOnlyRootFilesystem": true,
        "seccompProfile": {"type": "RuntimeDefault"},
    })
}

/// A pod's `securityContext` under `restricted`.
#[must_use]
pub fn pod() -> Value {
    json!({
        "runAsNonRoot": true,
        "seccompProfile": {"type": "RuntimeDefault"},
    })
}

/// Whether `pod_spec` (a Deployment's template spec, as JSON) meets what `restricted` checks of
/// the fields we set: for the unit tests of every renderer. (The API server is the judge: the
/// pod tests run in enforced namespaces.)
#[must_use]
pub fn is_restricted(pod_spec: &Value) -> bool {
    let seccomp = |ctx: &Value| ctx["seccompProfile"]["type"] == "RuntimeDefault";
    let pod_seccomp = seccomp(&pod_spec["securityContext"]);
    let pod_non_root = pod_spec["securityContext"]["runAsNonRoot"] == true;
    let no_host = pod_spec["hostNetwork"] != true
        && pod_spec["volumes"]
            .as_array()
            .is_none_or(|v| v.iter().all(|v| v.get("hostPath").is_none()));
    let containers = pod_spec["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    no_host
        && !containers.is_empty()
        && containers.iter().all(|c| {
            let ctx = &c["securityContext"];
            ctx["allowPrivilegeEscalation"] == false
                && ctx["capabilities"]["drop"] == json!(["ALL"])
                && (pod_non_root || ctx["runAsNonRoot"] == true)
                && (pod_seccomp || seccomp(ctx))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_with_both_contexts_is_restricted() {
        let spec = json!({
            "securityContext": pod(),
            "containers": [{"securityContext": container()}],
        });
        assert!(is_restricted(&spec));
        let mut escalating = spec.clone();
        escalating["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = json!(true);
        assert!(!is_restricted(&escalating));
        let mut host = spec;
        host["hostNetwork"] = json!(true);
        assert!(!is_restricted(&host));
    }

    #[test]
    fn enforcing_also_warns_and_audits() {
        let enforced = labels(true);
        assert_eq!(enforced[ENFORCE], RESTRICTED);
        assert_eq!(enforced.len(), 3);
        assert!(!labels(false).contains_key(ENFORCE));
    }
}
