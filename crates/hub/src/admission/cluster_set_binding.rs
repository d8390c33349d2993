//! ManagedClusterSetBinding admission, as upstream's `managedclustersetbinding_validating.go`: a
//! binding is named after its set, and creating one needs `bind` on that set.
use super::access::{Lookup, attributes, require};
use super::{Denied, Request};

const CLUSTER: &str = "cluster.open-cluster-management.io";

/// The validating webhook.
pub(super) async fn validate(request: &Request, lookup: &impl Lookup) -> Result<(), Denied> {
    let object = &request.object;
    let set = object["spec"]["clusterSet"].as_str().unwrap_or_default();
    if object["metadata"]["name"].as_str() != Some(set) {
        return Err(Denied::bad_request(
            "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet",
        ));
    }
    if !request.is_create() {
        return Ok(());
    }
    // Upstream names the resource of the wrong group (`apps`); the right one here.
    let resource = format!("managedclustersets/bind.{CLUSTER}");
    require(
        lookup,
        request,
        attributes("create", CLUSTER, "managedclustersets", Some("bind"), set),
        (&resource, set),
        || {
            format!(
                "user \"{}\" is not allowed to bind cluster set \"{set}\"",
                request.username()
            )
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fake, request};
    use super::*;
    use serde_json::json;

    fn binding(name: &str, set: &str) -> serde_json::Value {
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"clusterSet": set}})
    }

    #[tokio::test]
    async fn a_binding_is_named_after_its_set_and_needs_bind_to_be_created() {
        let denied = validate(
            &request("CREATE", binding("a", "b"), None),
            &Fake::default(),
        )
        .await
        .unwrap_err();
        assert_eq!(denied.code, 400);
        let denied = validate(
            &request("CREATE", binding("a", "a"), None),
            &Fake::default(),
        )
        .await
        .unwrap_err();
        assert_eq!(denied.code, 403);
        let may = Fake {
            allow: vec!["create/managedclustersets/bind".into()],
            ..Fake::default()
        };
        assert_eq!(
            validate(&request("CREATE", binding("a", "a"), None), &may).await,
            Ok(())
        );
        // An update needs no bind, but the name still must match.
        let old = binding("a", "a");
        assert_eq!(
            validate(
                &request("UPDATE", binding("a", "a"), Some(old.clone())),
                &Fake::default()
            )
            .await,
            Ok(())
        );
        assert_eq!(
            validate(
                &request("UPDATE", binding("a", "c"), Some(old)),
                &Fake::default()
            )
            .await
            .unwrap_err()
            .code,
            400
        );
    }
}
