//! ManifestWork and ManifestWorkReplicaSet admission, as upstream's
//! `manifestwork_validating.go`, `manifestworkreplicaset_validating.go` and
//! `common/validator.go`: manifests present, each named, none twice, within 500 KiB; an executor
//! needs `execute-as` on it when it changes (and, with `NilExecutorValidating`, no executor is the
//! work agent's own account). Every refusal is a `400 BadRequest`, as upstream's.
use std::collections::HashSet;

use serde_json::Value;

use super::access::{Lookup, attributes};
use super::{Denied, Request, Settings};
use ocm_api::work::MAX_MANIFESTS_BYTES as MAX_BYTES;

const WORK: &str = "work.open-cluster-management.io";
/// The account a work without an executor is checked as under `NilExecutorValidating`
/// (upstream's, namespace left empty).
const AGENT_ACCOUNT: (&str, &str) = ("", "klusterlet-work-sa");

/// Upstream's `ValidateManifests`.
fn manifests_valid(manifests: &[Value]) -> Result<(), String> {
    if manifests.is_empty() {
        return Err("Workload manifests should not be empty".into());
    }
    let size: usize = manifests
        .iter()
        .map(|m| serde_json::to_vec(m).map_or(0, |b| b.len()))
        .sum();
    if size > MAX_BYTES {
        return Err(format!(
            "the size of manifests is {size} bytes which exceeds the {MAX_BYTES} limit"
        ));
    }
    let mut seen = HashSet::new();
    for m in manifests {
        let text = |path: &[&str]| {
            path.iter()
                .fold(m, |v, k| &v[*k])
                .as_str()
                .unwrap_or_default()
        };
        if text(&["kind"]).is_empty() {
            return Err(format!("Object 'Kind' is missing in '{m}'"));
        }
        if text(&["metadata", "name"]).is_empty() {
            return Err("name must be set in manifest".into());
        }
        if !text(&["metadata", "generateName"]).is_empty() {
            return Err("generateName must not be set in manifest".into());
        }
        let (api_version, kind) = (text(&["apiVersion"]), text(&["kind"]));
        let (namespace, name) = (
            text(&["metadata", "namespace"]),
            text(&["metadata", "name"]),
        );
        if !seen.insert(format!("{api_version}/{kind}/{namespace}/{name}")) {
            return Err(format!(
                "duplicate manifest for resource {namespace}/{name} with resource type {api_version}.{kind}"
            ));
        }
    }
    Ok(())
}

fn manifests_at<'a>(object: &'a Value, path: &[&str]) -> &'a [Value] {
    path.iter()
        .fold(object, |v, k| &v[*k])
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// The ManifestWork webhook.
pub(super) async fn validate(
    request: &Request,
    settings: Settings,
    lookup: &impl Lookup,
) -> Result<(), Denied> {
    let work = &request.object;
    let manifests = manifests_at(work, &["spec", "workload", "manifests"]);
    if manifests.is_empty() {
        return Err(Denied::bad_request("manifests should not be empty"));
    }
    manifests_valid(manifests).map_err(Denied::bad_request)?;
    options_valid(work).map_err(Denied::bad_request)?;
    let executor = &work["spec"]["executor"];
    if request
        .old_object
        .as_ref()
        .is_some_and(|old| old["spec"]["executor"] == *executor)
    {
        return Ok(());
    }
    if executor.is_null() && !settings.nil_executor_validating {
        return Ok(());
    }
    let (namespace, name) = if executor.is_null() {
        AGENT_ACCOUNT
    } else {
        let subject = &executor["subject"];
        let account = &subject["serviceAccount"];
        if subject["type"] == "ServiceAccount" && account.is_null() {
            return Err(Denied::bad_request(
                "executor service account can not be nil",
            ));
        }
        (
            account["namespace"].as_str().unwrap_or_default(),
            account["name"].as_str().unwrap_or_default(),
        )
    };
    let work_namespace = work["metadata"]["namespace"].as_str().unwrap_or_default();
    let mut asked = attributes(
        "execute-as",
        WORK,
        "manifestworks",
        None,
        &format!("system:serviceaccount:{namespace}:{name}"),
    );
    asked.namespace = Some(work_namespace.to_owned());
    let allowed = lookup
        .allowed(&request.user, asked)
        .await
        .map_err(|e| Denied::bad_request(e.to_string()))?;
    if allowed {
        return Ok(());
    }
    Err(Denied::bad_request(format!(
        "user {} cannot manipulate the Manifestwork with executor {namespace}/{name} in namespace {work_namespace}",
        request.username()
    )))
}

/// Beyond upstream (as the admission policies): delete and update options that could never
/// match or mean anything.
fn options_valid(work: &Value) -> Result<(), String> {
    let delete = &work["spec"]["deleteOption"];
    if delete["ttlSecondsAfterFinished"]
        .as_i64()
        .is_some_and(|t| t < 0)
    {
        return Err("spec.deleteOption.ttlSecondsAfterFinished is negative".into());
    }
    let identifies = |r: &Value| {
        r["resource"].as_str().is_some_and(|s| !s.is_empty())
            && r["name"].as_str().is_some_and(|s| !s.is_empty())
    };
    let rules = manifests_at(delete, &["selectivelyOrphans", "orphaningRules"]);
    if !rules.iter().all(identifies) {
        return Err(
            "each of spec.deleteOption.selectivelyOrphans.orphaningRules needs a resource and a name"
                .into(),
        );
    }
    let configs = manifests_at(work, &["spec", "manifestConfigs"]);
    if !configs.iter().all(|c| identifies(&c["resourceIdentifier"])) {
        return Err(
            "each of spec.manifestConfigs needs resourceIdentifier.resource and resourceIdentifier.name"
                .into(),
        );
    }
    Ok(())
}

/// The ManifestWorkReplicaSet webhook: its template's manifests, by the same rules.
pub(super) fn validate_replica_set(request: &Request) -> Result<(), Denied> {
    let manifests = manifests_at(
        &request.object,
        &["spec", "manifestWorkTemplate", "workload", "manifests"],
    );
    manifests_valid(manifests).map_err(Denied::bad_request)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fake, SETTINGS, request};
    use super::*;
    use serde_json::json;

    fn cm(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    }

    fn work(manifests: &[Value], executor: Option<Value>) -> Value {
        let mut w = json!({"metadata": {"name": "w", "namespace": "c1"}, "spec": {"workload": {"manifests": manifests}}});
        if let Some(e) = executor {
            w["spec"]["executor"] = e;
        }
        w
    }

    async fn check(w: Value, settings: Settings, lookup: &Fake) -> Result<(), Denied> {
        validate(&request("CREATE", w, None), settings, lookup).await
    }

    #[tokio::test]
    async fn manifests_must_be_present_named_unique_and_small() {
        let none = Fake::default();
        assert_eq!(
            check(work(&[], None), SETTINGS, &none)
                .await
                .unwrap_err()
                .message,
            "manifests should not be empty"
        );
        assert_eq!(
            check(work(&[cm("")], None), SETTINGS, &none)
                .await
                .unwrap_err()
                .message,
            "name must be set in manifest"
        );
        let twice = check(work(&[cm("a"), cm("a")], None), SETTINGS, &none)
            .await
            .unwrap_err();
        assert_eq!(
            twice.message,
            "duplicate manifest for resource default/a with resource type v1.ConfigMap"
        );
        let mut big = cm("big");
        big["data"] = json!({"x": "y".repeat(MAX_BYTES)});
        assert!(
            check(work(&[big], None), SETTINGS, &none)
                .await
                .unwrap_err()
                .message
                .contains("exceeds the 512000 limit")
        );
        assert_eq!(check(work(&[cm("a")], None), SETTINGS, &none).await, Ok(()));
    }

    #[tokio::test]
    async fn an_executor_needs_execute_as_and_no_executor_too_under_the_gate() {
        let executor = json!({"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "ns", "name": "sa"}}});
        let none = Fake::default();
        let denied = check(work(&[cm("a")], Some(executor.clone())), SETTINGS, &none)
            .await
            .unwrap_err();
        assert_eq!(
            (denied.code, denied.message.as_str()),
            (
                400,
                "user alice cannot manipulate the Manifestwork with executor ns/sa in namespace c1"
            )
        );
        let may = Fake {
            allow: vec!["execute-as/manifestworks".into()],
            ..Fake::default()
        };
        assert_eq!(
            check(work(&[cm("a")], Some(executor)), SETTINGS, &may).await,
            Ok(())
        );
        let gated = Settings {
            nil_executor_validating: true,
            ..SETTINGS
        };
        let denied = check(work(&[cm("a")], None), gated, &none)
            .await
            .unwrap_err();
        assert!(
            denied.message.contains("executor /klusterlet-work-sa"),
            "{}",
            denied.message
        );
        let nil_account = json!({"subject": {"type": "ServiceAccount"}});
        assert_eq!(
            check(work(&[cm("a")], Some(nil_account)), SETTINGS, &may)
                .await
                .unwrap_err()
                .message,
            "executor service account can not be nil"
        );
    }

    #[tokio::test]
    async fn an_unchanged_executor_is_not_checked_again() {
        let executor = json!({"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "ns", "name": "sa"}}});
        let old = work(&[cm("a")], Some(executor.clone()));
        let new = work(&[cm("a"), cm("b")], Some(executor));
        assert_eq!(
            validate(
                &request("UPDATE", new, Some(old)),
                SETTINGS,
                &Fake::default()
            )
            .await,
            Ok(())
        );
    }
}
