//! ManagedCluster admission, as upstream's `managedcluster_mutating.go` (the `default` set label,
//! taint times) and `managedcluster_validating.go` (name and URLs, accepting, joining sets).
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::access::{Lookup, attributes, require};
use super::{Denied, Request, Settings};
use ocm_api::cluster::{CLUSTER_SET_LABEL, DEFAULT_CLUSTER_SET};

const CLUSTER: &str = "cluster.open-cluster-management.io";
const REGISTER: &str = "register.open-cluster-management.io";

/// What Kubernetes says of a name that is not a DNS-1123 label (upstream reports it the same way,
/// through `ValidateNamespaceName`).
const LABEL_RULE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn cluster_set_of(object: Option<&Value>) -> &str {
    object
        .and_then(|o| o["metadata"]["labels"][CLUSTER_SET_LABEL].as_str())
        .unwrap_or_default()
}

fn taints_of(object: Option<&Value>) -> &[Value] {
    object
        .and_then(|o| o["spec"]["taints"].as_array())
        .map_or(&[], Vec::as_slice)
}

/// A taint's `timeAdded`, `None` when unset or null (Go writes its zero time as `null`).
fn time_added(taint: &Value) -> Option<&str> {
    taint["timeAdded"].as_str().filter(|t| !t.is_empty())
}

/// A JSON Pointer token: `~` and `/` escaped.
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The mutating webhook: each taint's time filled in when it is added or changed (refused when a
/// user sets one), and, with `DefaultClusterSet`, the `default` set label when there is none.
/// Returns the JSON patch, if any.
pub(super) async fn default(
    request: &Request,
    settings: Settings,
    lookup: &impl Lookup,
) -> Result<Option<Value>, Denied> {
    let mut patch = taint_times(
        request,
        &Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        lookup,
    )
    .await?;
    if settings.default_cluster_set && cluster_set_of(Some(&request.object)).is_empty() {
        patch.push(if request.object["metadata"]["labels"].is_object() {
            json!({"op": "add", "path": format!("/metadata/labels/{}", token(CLUSTER_SET_LABEL)), "value": DEFAULT_CLUSTER_SET})
        } else {
            json!({"op": "add", "path": "/metadata/labels", "value": {CLUSTER_SET_LABEL: DEFAULT_CLUSTER_SET}})
        });
    }
    Ok(if patch.is_empty() {
        None
    } else {
        Some(Value::Array(patch))
    })
}

/// Upstream's `processTaints`: a taint new on a create, or new or changed (value or effect) on an
/// update, gets `now`; an unchanged one keeps its time. Setting a time yourself is refused, except
/// by who may update `managedclusters/status` (the hub's own taint controller writes times).
async fn taint_times(
    request: &Request,
    now: &str,
    lookup: &impl Lookup,
) -> Result<Vec<Value>, Denied> {
    let old = request.old_object.as_ref();
    let old_taints = taints_of(old);
    let mut patch = Vec::new();
    let mut invalid = Vec::new();
    for (i, taint) in taints_of(Some(&request.object)).iter().enumerate() {
        let original = old_taints.iter().find(|o| o["key"] == taint["key"]);
        let unchanged = original
            .is_some_and(|o| o["value"] == taint["value"] && o["effect"] == taint["effect"]);
        let set_now =
            json!({"op": "add", "path": format!("/spec/taints/{i}/timeAdded"), "value": now});
        match (old, original) {
            (None, _) => patch.push(set_now),
            (Some(_), Some(o)) if unchanged => {
                if time_added(o) != time_added(taint) {
                    invalid.push(taint["key"].as_str().unwrap_or_default().to_owned());
                }
            }
            _ if time_added(taint).is_some() => {
                invalid.push(taint["key"].as_str().unwrap_or_default().to_owned());
            }
            _ => patch.push(set_now),
        }
    }
    if invalid.is_empty() {
        return Ok(patch);
    }
    let name = name_of(&request.object);
    let may_write_status = lookup
        .allowed(
            &request.user,
            attributes("update", CLUSTER, "managedclusters", Some("status"), name),
        )
        .await
        .map_err(|e| Denied::bad_request(e.to_string()))?;
    if may_write_status {
        // Their times stand; the others' are still filled in.
        return Ok(patch);
    }
    Err(Denied::bad_request(format!(
        "It is not allowed to set TimeAdded of Taint \"{}\".",
        invalid.join(",")
    )))
}

/// Upstream's `IsValidHTTPSURL`: an `https` URL.
fn is_https_url(url: &str) -> bool {
    url.parse::<http::Uri>()
        .is_ok_and(|u| u.scheme_str() == Some("https"))
}

/// The validating webhook.
pub(super) async fn validate(request: &Request, lookup: &impl Lookup) -> Result<(), Denied> {
    let object = &request.object;
    let name = name_of(object);
    shape(object)?;
    let accepts = |o: Option<&Value>| {
        o.and_then(|o| o["spec"]["hubAcceptsClient"].as_bool())
            .unwrap_or(false)
    };
    let newly_accepted = if request.is_create() {
        accepts(Some(object))
    } else {
        accepts(Some(object)) && !accepts(request.old_object.as_ref())
    };
    if newly_accepted {
        let resource = format!("managedclusters/accept.{CLUSTER}");
        let forbidden = |cause: String| Denied::forbidden(&resource, name, cause);
        if lookup
            .terminating(name)
            .await
            .map_err(|e| forbidden(e.to_string()))?
        {
            return Err(forbidden(format!(
                "cluster namespace \"{name}\" is terminating"
            )));
        }
        require(
            lookup,
            request,
            attributes("update", REGISTER, "managedclusters", Some("accept"), name),
            (&resource, name),
            || {
                format!(
                    "user \"{}\" cannot update the HubAcceptsClient field",
                    request.username()
                )
            },
        )
        .await?;
    }
    let (from, to) = (
        cluster_set_of(request.old_object.as_ref()),
        cluster_set_of(Some(object)),
    );
    if from != to {
        for set in [from, to].into_iter().filter(|s| !s.is_empty()) {
            may_join(request, set, lookup).await?;
        }
    }
    Ok(())
}

/// The name and client URLs, refused with one `BadRequest` naming every fault.
fn shape(object: &Value) -> Result<(), Denied> {
    let name = name_of(object);
    let mut faults = Vec::new();
    if !ocm_api::names::is_dns_label(name) {
        faults.push(format!("metadata.name format is not correct: {LABEL_RULE}"));
    }
    for config in object["spec"]["managedClusterClientConfigs"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
    {
        let url = config["url"].as_str().unwrap_or_default();
        if !is_https_url(url) {
            faults.push(format!("url \"{url}\" is invalid in client configs"));
        }
    }
    match faults.len() {
        0 => Ok(()),
        1 => Err(Denied::bad_request(faults.remove(0))),
        _ => Err(Denied::bad_request(format!("[{}]", faults.join(", ")))),
    }
}

/// `create` on `managedclustersets/join` for `set`, or upstream's refusal.
async fn may_join(request: &Request, set: &str, lookup: &impl Lookup) -> Result<(), Denied> {
    require(
        lookup,
        request,
        attributes("create", CLUSTER, "managedclustersets", Some("join"), set),
        (&format!("managedclustersets/join.{CLUSTER}"), set),
        || {
            format!(
                "user \"{}\" cannot add/remove a ManagedCluster to/from ManagedClusterSet \"{set}\"",
                request.username()
            )
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fake, SETTINGS, request};
    use super::*;

    fn cluster(name: &str, extra: &Value) -> Value {
        let mut c = json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster", "metadata": {"name": name}, "spec": {}});
        json_patch_merge(&mut c, extra);
        c
    }

    fn json_patch_merge(target: &mut Value, patch: &Value) {
        if let (Some(t), Some(p)) = (target.as_object_mut(), patch.as_object()) {
            for (k, v) in p {
                if v.is_object() && t.get(k).is_some_and(Value::is_object) {
                    json_patch_merge(t.get_mut(k).unwrap(), v);
                } else {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
    }

    #[tokio::test]
    async fn a_new_cluster_gets_the_default_set_and_its_taints_a_time() {
        let c = cluster(
            "c1",
            &json!({"metadata": {"labels": {"a": "b"}}, "spec": {"taints": [{"key": "k", "effect": "NoSelect"}]}}),
        );
        let patch = default(&request("CREATE", c, None), SETTINGS, &Fake::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(patch[0]["path"], "/spec/taints/0/timeAdded");
        assert_eq!(
            patch[1],
            json!({"op": "add", "path": "/metadata/labels/cluster.open-cluster-management.io~1clusterset", "value": "default"})
        );
        let bare = cluster("c2", &json!({}));
        let patch = default(&request("CREATE", bare, None), SETTINGS, &Fake::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(patch[0]["path"], "/metadata/labels");
        let off = Settings {
            default_cluster_set: false,
            ..SETTINGS
        };
        let bare = cluster("c3", &json!({}));
        assert_eq!(
            default(&request("CREATE", bare, None), off, &Fake::default()).await,
            Ok(None)
        );
    }

    #[tokio::test]
    async fn a_user_may_not_set_a_taint_time_but_the_hub_may() {
        let old = cluster(
            "c1",
            &json!({"spec": {"taints": [{"key": "k", "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}]}}),
        );
        let forged = cluster(
            "c1",
            &json!({"metadata": {"labels": {CLUSTER_SET_LABEL: "default"}}, "spec": {"taints": [{"key": "k", "effect": "NoSelect", "timeAdded": "2020-01-01T00:00:00Z"}]}}),
        );
        let denied = default(
            &request("UPDATE", forged.clone(), Some(old.clone())),
            SETTINGS,
            &Fake::default(),
        )
        .await
        .unwrap_err();
        assert_eq!(denied.code, 400);
        assert_eq!(
            denied.message,
            "It is not allowed to set TimeAdded of Taint \"k\"."
        );
        let hub = Fake {
            allow: vec!["update/managedclusters/status".into()],
            ..Fake::default()
        };
        assert_eq!(
            default(
                &request("UPDATE", forged, Some(old.clone())),
                SETTINGS,
                &hub
            )
            .await,
            Ok(None)
        );
        // A changed effect without a time gets a new one.
        let changed = cluster(
            "c1",
            &json!({"metadata": {"labels": {CLUSTER_SET_LABEL: "default"}}, "spec": {"taints": [{"key": "k", "effect": "NoSelectIfNew"}]}}),
        );
        let patch = default(
            &request("UPDATE", changed, Some(old)),
            SETTINGS,
            &Fake::default(),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(patch[0]["path"], "/spec/taints/0/timeAdded");
    }

    #[tokio::test]
    async fn names_and_urls_are_bad_requests_with_upstreams_message() {
        let bad_url = cluster(
            "c1",
            &json!({"spec": {"managedClusterClientConfigs": [{"url": "http://x"}]}}),
        );
        let denied = validate(&request("CREATE", bad_url, None), &Fake::default())
            .await
            .unwrap_err();
        assert_eq!(
            (denied.code, denied.message.as_str()),
            (400, "url \"http://x\" is invalid in client configs")
        );
        let bad_name = cluster("a.b", &json!({}));
        let denied = validate(&request("CREATE", bad_name, None), &Fake::default())
            .await
            .unwrap_err();
        assert!(
            denied
                .message
                .starts_with("metadata.name format is not correct"),
            "{}",
            denied.message
        );
    }

    #[tokio::test]
    async fn accepting_needs_accept_and_a_namespace_not_terminating() {
        let accepted = cluster("c1", &json!({"spec": {"hubAcceptsClient": true}}));
        let denied = validate(&request("CREATE", accepted.clone(), None), &Fake::default())
            .await
            .unwrap_err();
        assert_eq!(denied.code, 403);
        assert!(
            denied
                .message
                .contains("cannot update the HubAcceptsClient field"),
            "{}",
            denied.message
        );
        let may = Fake {
            allow: vec!["update/managedclusters/accept".into()],
            ..Fake::default()
        };
        assert_eq!(
            validate(&request("CREATE", accepted.clone(), None), &may).await,
            Ok(())
        );
        let ending = Fake {
            terminating: true,
            ..may
        };
        let denied = validate(&request("CREATE", accepted, None), &ending)
            .await
            .unwrap_err();
        assert_eq!(
            denied.message,
            "managedclusters/accept.cluster.open-cluster-management.io \"c1\" is forbidden: cluster namespace \"c1\" is terminating"
        );
    }

    #[tokio::test]
    async fn moving_between_sets_needs_join_on_both() {
        let old = cluster(
            "c1",
            &json!({"metadata": {"labels": {CLUSTER_SET_LABEL: "s1"}}}),
        );
        let new = cluster(
            "c1",
            &json!({"metadata": {"labels": {CLUSTER_SET_LABEL: "s2"}}}),
        );
        let denied = validate(
            &request("UPDATE", new.clone(), Some(old.clone())),
            &Fake::default(),
        )
        .await
        .unwrap_err();
        assert!(
            denied.message.contains("ManagedClusterSet \"s1\""),
            "{}",
            denied.message
        );
        let may = Fake {
            allow: vec!["create/managedclustersets/join".into()],
            ..Fake::default()
        };
        assert_eq!(
            validate(&request("UPDATE", new, Some(old)), &may).await,
            Ok(())
        );
    }
}
