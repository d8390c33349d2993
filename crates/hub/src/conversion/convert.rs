//! Conversion between `v1alpha1` and `v1beta1` of the add-on kinds, as upstream's webhook does it
//! (ocm `pkg/addon/webhook`, api `addon/v1beta1/conversion.go`), on the objects as JSON so that
//! fields neither version names pass through untouched:
//! - ManagedClusterAddOn: `spec.installNamespace` ↔ annotation
//!   `addon.open-cluster-management.io/v1alpha1-install-namespace`; each registration's
//!   `signerName` + `subject` ↔ `type` with `kubeClient` (its `driver` from
//!   `status.kubeClientDriver`) or `customSigner`; a config reference's own `namespace`/`name` ↔
//!   only in `desiredConfig`;
//! - ClusterManagementAddOn: `spec.supportedConfigs` (each with an optional `defaultConfig`) ↔
//!   `spec.defaultConfigs` (flat, `__reserved_no_default__` for none); `status.defaultconfigReferences`
//!   ↔ `status.defaultConfigReferences`.
use serde_json::{Map, Value, json};

use ocm_api::addon::v1beta1::{INSTALL_NAMESPACE_ANNOTATION, NO_DEFAULT_CONFIG};
use ocm_api::names::CLIENT_SIGNER;

const V1ALPHA1: &str = "addon.open-cluster-management.io/v1alpha1";
const V1BETA1: &str = "addon.open-cluster-management.io/v1beta1";

/// `object` in `desired` (an apiVersion of the add-on group).
pub fn convert(mut object: Value, desired: &str) -> Result<Value, String> {
    let from = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if from == desired {
        return Ok(object);
    }
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    match (kind.as_str(), from.as_str(), desired) {
        ("ManagedClusterAddOn", V1ALPHA1, V1BETA1) => addon_to_beta(&mut object),
        ("ManagedClusterAddOn", V1BETA1, V1ALPHA1) => addon_to_alpha(&mut object),
        ("ClusterManagementAddOn", V1ALPHA1, V1BETA1) => cma_to_beta(&mut object),
        ("ClusterManagementAddOn", V1BETA1, V1ALPHA1) => cma_to_alpha(&mut object),
        _ => return Err(format!("cannot convert {kind} from {from} to {desired}")),
    }
    object["apiVersion"] = json!(desired);
    Ok(object)
}

fn map(value: &mut Value) -> Option<&mut Map<String, Value>> {
    value.as_object_mut()
}

fn addon_to_beta(object: &mut Value) {
    let install = map(&mut object["spec"]).and_then(|s| s.remove("installNamespace"));
    if let Some(ns) = install.filter(|n| n.as_str().is_some_and(|n| !n.is_empty())) {
        if !object["metadata"]["annotations"].is_object() {
            object["metadata"]["annotations"] = json!({});
        }
        object["metadata"]["annotations"][INSTALL_NAMESPACE_ANNOTATION] = ns;
    }
    let Some(status) = map(&mut object["status"]) else {
        return;
    };
    let driver = status.remove("kubeClientDriver");
    status.remove("addOnConfiguration");
    if let Some(registrations) = status
        .get_mut("registrations")
        .and_then(Value::as_array_mut)
    {
        for r in registrations.iter_mut() {
            let signer = r["signerName"].as_str().unwrap_or_default().to_string();
            let subject = r["subject"].clone();
            *r = if signer == CLIENT_SIGNER {
                let mut client =
                    json!({"subject": {"user": subject["user"], "groups": subject["groups"]}});
                if let Some(d) = &driver {
                    client["driver"] = d.clone();
                }
                json!({"type": "kubeClient", "kubeClient": prune(client)})
            } else {
                let subject = json!({
                    "user": subject["user"], "groups": subject["groups"],
                    "organizationUnits": subject["organizationUnit"],
                });
                json!({"type": "customSigner", "customSigner": prune(json!({"signerName": signer, "subject": subject}))})
            };
        }
    }
    if let Some(references) = status
        .get_mut("configReferences")
        .and_then(Value::as_array_mut)
    {
        for r in references.iter_mut().filter_map(map) {
            r.remove("namespace");
            r.remove("name");
        }
    }
}

fn addon_to_alpha(object: &mut Value) {
    let install = map(&mut object["metadata"]["annotations"])
        .and_then(|a| a.remove(INSTALL_NAMESPACE_ANNOTATION));
    if let Some(ns) = install {
        if !object["spec"].is_object() {
            object["spec"] = json!({});
        }
        object["spec"]["installNamespace"] = ns;
    }
    let Some(status) = map(&mut object["status"]) else {
        return;
    };
    let mut driver = None;
    if let Some(registrations) = status
        .get_mut("registrations")
        .and_then(Value::as_array_mut)
    {
        for r in registrations.iter_mut() {
            *r = if r["type"] == "kubeClient" {
                let client = &r["kubeClient"];
                if driver.is_none() && client["driver"].is_string() {
                    driver = Some(client["driver"].clone());
                }
                prune(
                    json!({"signerName": CLIENT_SIGNER, "subject": {"user": client["subject"]["user"], "groups": client["subject"]["groups"]}}),
                )
            } else {
                let signer = &r["customSigner"];
                let subject = &signer["subject"];
                prune(json!({
                    "signerName": signer["signerName"],
                    "subject": {"user": subject["user"], "groups": subject["groups"], "organizationUnit": subject["organizationUnits"]},
                }))
            };
        }
    }
    if let Some(d) = driver {
        status.insert("kubeClientDriver".into(), d);
    }
    if let Some(references) = status
        .get_mut("configReferences")
        .and_then(Value::as_array_mut)
    {
        for r in references.iter_mut() {
            let desired = r["desiredConfig"].clone();
            if let Some(r) = map(r) {
                for key in ["namespace", "name"] {
                    if let Some(v) = desired.get(key).filter(|v| !v.is_null()) {
                        r.insert(key.into(), v.clone());
                    }
                }
            }
        }
    }
}

fn cma_to_beta(object: &mut Value) {
    if let Some(spec) = map(&mut object["spec"]) {
        spec.remove("addOnConfiguration");
        if let Some(Value::Array(supported)) = spec.remove("supportedConfigs") {
            let flat: Vec<Value> = supported
                .iter()
                .map(|c| {
                    let default = &c["defaultConfig"];
                    let name = default["name"].as_str().filter(|n| !n.is_empty()).unwrap_or(NO_DEFAULT_CONFIG);
                    prune(json!({"group": c["group"], "resource": c["resource"], "namespace": default["namespace"], "name": name}))
                })
                .collect();
            spec.insert("defaultConfigs".into(), Value::Array(flat));
        }
    }
    rename(
        &mut object["status"],
        "defaultconfigReferences",
        "defaultConfigReferences",
    );
}

fn cma_to_alpha(object: &mut Value) {
    if let Some(spec) = map(&mut object["spec"])
        && let Some(Value::Array(defaults)) = spec.remove("defaultConfigs")
    {
        let supported: Vec<Value> = defaults
            .iter()
            .map(|c| {
                let mut meta = json!({"group": c["group"], "resource": c["resource"]});
                if c["name"]
                    .as_str()
                    .is_some_and(|n| !n.is_empty() && n != NO_DEFAULT_CONFIG)
                {
                    meta["defaultConfig"] = json!({"namespace": c["namespace"], "name": c["name"]});
                }
                prune(meta)
            })
            .collect();
        spec.insert("supportedConfigs".into(), Value::Array(supported));
    }
    rename(
        &mut object["status"],
        "defaultConfigReferences",
        "defaultconfigReferences",
    );
}

fn rename(object: &mut Value, from: &str, to: &str) {
    if let Some(o) = map(object)
        && let Some(v) = o.remove(from)
    {
        o.insert(to.into(), v);
    }
}

/// Drops nulls and empty lists/objects left by absent source fields.
fn prune(value: Value) -> Value {
    match value {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, prune(v)))
                .filter(|(_, v)| {
                    !v.is_null()
                        && v.as_array().is_none_or(|a| !a.is_empty())
                        && v.as_object().is_none_or(|o| !o.is_empty())
                })
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alpha_addon() -> Value {
        json!({
            "apiVersion": V1ALPHA1, "kind": "ManagedClusterAddOn",
            "metadata": {"name": "hello", "namespace": "c1"},
            "spec": {"installNamespace": "hello-ns", "configs": [{"group": "g", "resource": "r", "name": "n"}]},
            "status": {
                "kubeClientDriver": "csr",
                "registrations": [
                    {"signerName": CLIENT_SIGNER, "subject": {"user": "u", "groups": ["g1"]}},
                    {"signerName": "example.com/signer", "subject": {"user": "v", "organizationUnit": ["ou"]}},
                ],
                "configReferences": [{"group": "g", "resource": "r", "name": "n", "desiredConfig": {"name": "n", "specHash": "h"}}],
            },
        })
    }

    #[test]
    fn an_addon_converts_to_beta_and_back_unchanged() {
        let beta = convert(alpha_addon(), V1BETA1).unwrap();
        assert_eq!(
            beta["metadata"]["annotations"][INSTALL_NAMESPACE_ANNOTATION],
            "hello-ns"
        );
        assert!(beta["spec"].get("installNamespace").is_none());
        assert_eq!(
            beta["status"]["registrations"],
            json!([
                {"type": "kubeClient", "kubeClient": {"driver": "csr", "subject": {"user": "u", "groups": ["g1"]}}},
                {"type": "customSigner", "customSigner": {"signerName": "example.com/signer", "subject": {"user": "v", "organizationUnits": ["ou"]}}},
            ])
        );
        assert!(beta["status"]["configReferences"][0].get("name").is_none());
        let mut back = convert(beta, V1ALPHA1).unwrap();
        back["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
        assert_eq!(back, alpha_addon());
    }

    #[test]
    fn an_addon_managements_configs_flatten_and_come_back() {
        let alpha = json!({
            "apiVersion": V1ALPHA1, "kind": "ClusterManagementAddOn", "metadata": {"name": "hello"},
            "spec": {"supportedConfigs": [
                {"group": "addon.open-cluster-management.io", "resource": "addontemplates", "defaultConfig": {"name": "hello-0.0.1"}},
                {"group": "", "resource": "configmaps"},
            ]},
            "status": {"defaultconfigReferences": [{"group": "", "resource": "configmaps"}]},
        });
        let beta = convert(alpha.clone(), V1BETA1).unwrap();
        assert_eq!(
            beta["spec"]["defaultConfigs"],
            json!([
                {"group": "addon.open-cluster-management.io", "resource": "addontemplates", "name": "hello-0.0.1"},
                {"group": "", "resource": "configmaps", "name": NO_DEFAULT_CONFIG},
            ])
        );
        assert!(beta["status"]["defaultConfigReferences"].is_array());
        assert_eq!(convert(beta, V1ALPHA1).unwrap(), alpha);
    }

    #[test]
    fn other_kinds_are_refused() {
        let work = json!({"apiVersion": V1ALPHA1, "kind": "ManifestWork"});
        assert!(convert(work, V1BETA1).is_err());
    }
}
