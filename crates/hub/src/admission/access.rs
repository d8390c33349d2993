//! What the webhooks ask the API server: whether the requesting user may do something (a
//! SubjectAccessReview, answered by the API server's own authorizer), and whether a namespace is
//! terminating. A trait, so the rules are tested without a cluster.
use std::collections::BTreeMap;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::PostParams;
use serde_json::Value;

use super::{Denied, Request};

/// The lookups the admission rules make.
pub trait Lookup: Send + Sync {
    /// Whether `user` (a request's `userInfo`) may do `attributes`.
    fn allowed(
        &self,
        user: &Value,
        attributes: ResourceAttributes,
    ) -> impl Future<Output = Result<bool, kube::Error>> + Send;

    /// Whether namespace `name` exists and is terminating.
    fn terminating(&self, name: &str) -> impl Future<Output = Result<bool, kube::Error>> + Send;
}

/// The lookups made of the hub's API server.
#[derive(Clone)]
pub struct Api {
    client: Client,
}

impl Api {
    pub(super) fn new(client: Client) -> Self {
        Self { client }
    }
}

/// The SubjectAccessReview spec asking whether `user` may do `attributes`.
fn review_for(user: &Value, attributes: ResourceAttributes) -> SubjectAccessReviewSpec {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let extra: BTreeMap<String, Vec<String>> = user["extra"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
        .unwrap_or_default();
    SubjectAccessReviewSpec {
        user: user["username"].as_str().map(str::to_owned),
        uid: user["uid"].as_str().map(str::to_owned),
        groups: Some(strings(&user["groups"])),
        extra: (!extra.is_empty()).then_some(extra),
        resource_attributes: Some(attributes),
        ..Default::default()
    }
}

impl Lookup for Api {
    async fn allowed(
        &self,
        user: &Value,
        attributes: ResourceAttributes,
    ) -> Result<bool, kube::Error> {
        let reviews: kube::Api<SubjectAccessReview> = kube::Api::all(self.client.clone());
        let review = SubjectAccessReview {
            spec: review_for(user, attributes),
            ..Default::default()
        };
        let answered = reviews.create(&PostParams::default(), &review).await?;
        Ok(answered.status.is_some_and(|s| s.allowed))
    }

    async fn terminating(&self, name: &str) -> Result<bool, kube::Error> {
        let namespaces: kube::Api<Namespace> = kube::Api::all(self.client.clone());
        Ok(namespaces
            .get_opt(name)
            .await?
            .and_then(|ns| ns.status?.phase)
            .is_some_and(|phase| phase == "Terminating"))
    }
}

/// `verb` on `resource` (with `subresource`) of `group`, for object `name`.
#[must_use]
pub fn attributes(
    verb: &str,
    group: &str,
    resource: &str,
    subresource: Option<&str>,
    name: &str,
) -> ResourceAttributes {
    ResourceAttributes {
        verb: Some(verb.to_owned()),
        group: Some(group.to_owned()),
        resource: Some(resource.to_owned()),
        subresource: subresource.map(str::to_owned),
        name: Some(name.to_owned()),
        ..Default::default()
    }
}

/// `Ok` when the requesting user may do `asked`; otherwise upstream's `403 Forbidden` on
/// `resource` (as `resource.group`) `name`, saying `why` (or the lookup's failure).
pub(super) async fn require(
    lookup: &impl Lookup,
    request: &Request,
    asked: ResourceAttributes,
    (resource, name): (&str, &str),
    why: impl FnOnce() -> String,
) -> Result<(), Denied> {
    match lookup.allowed(&request.user, asked).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Denied::forbidden(resource, name, why())),
        Err(e) => Err(Denied::forbidden(resource, name, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_review_asks_as_the_requesting_user_with_their_groups_and_extra() {
        let user = json!({"username": "alice", "uid": "u", "groups": ["g1", "system:authenticated"], "extra": {"scopes": ["a"]}});
        let spec = review_for(&user, attributes("create", "g", "r", Some("join"), "n"));
        assert_eq!(spec.user.as_deref(), Some("alice"));
        assert_eq!(spec.groups.unwrap(), ["g1", "system:authenticated"]);
        assert_eq!(spec.extra.unwrap()["scopes"], ["a"]);
        let attrs = spec.resource_attributes.unwrap();
        assert_eq!(attrs.subresource.as_deref(), Some("join"));
        assert_eq!(attrs.name.as_deref(), Some("n"));
    }
}
