//! Who may call the gRPC server, decided by the hub's API server as upstream's server does: a
//! bearer token is reviewed (`TokenReview`), else the client certificate the TLS handshake
//! verified names the user (CN) and groups (O); each publication and subscription is then
//! checked with a `SubjectAccessReview` of the Kubernetes request it stands for.
use cloudevents_grpc::broker::{Access, Authenticator, Authorizer, Identity};
use cloudevents_grpc::event_type::{Action, SubResource};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;
use tonic::{Request, Status};

/// Authenticates and authorises by the hub's API server.
#[derive(Clone)]
pub struct KubeAuth {
    client: kube::Client,
}

impl KubeAuth {
    /// Reviews with `client` (which needs `tokenreviews` and `subjectaccessreviews` create).
    #[must_use]
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }

    async fn review_token(&self, token: &str) -> Result<Identity, Status> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Status::unavailable(format!("reviewing the token: {e}")))?;
        let status = reviewed.status.unwrap_or_default();
        let user = status.user.unwrap_or_default();
        match (status.authenticated, user.username) {
            (Some(true), Some(name)) => Ok(Identity {
                user: name,
                groups: user.groups.unwrap_or_default(),
            }),
            _ => Err(Status::unauthenticated("token not authenticated")),
        }
    }
}

#[tonic::async_trait]
impl Authenticator for KubeAuth {
    async fn authenticate<T: Send + Sync>(&self, request: &Request<T>) -> Result<Identity, Status> {
        if let Some(header) = request.metadata().get("authorization") {
            let header = header
                .to_str()
                .map_err(|_| Status::unauthenticated("the authorization header is not text"))?;
            let token = header.strip_prefix("Bearer ").unwrap_or(header);
            return self.review_token(token).await;
        }
        // The TLS layer verified the chain against the client CA: only read the subject.
        let certs = request
            .peer_certs()
            .ok_or_else(|| Status::unauthenticated("no bearer token and no client certificate"))?;
        let leaf = certs
            .first()
            .ok_or_else(|| Status::unauthenticated("no client certificate"))?;
        identity_of(leaf.as_ref())
    }
}

/// The user (CN) and groups (O) a client certificate names, as Kubernetes reads them.
fn identity_of(der: &[u8]) -> Result<Identity, Status> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| Status::unauthenticated(format!("the client certificate: {e}")))?;
    let subject = cert.subject();
    let user = subject
        .iter_common_name()
        .find_map(|cn| cn.as_str().ok())
        .ok_or_else(|| Status::unauthenticated("the client certificate names no user (CN)"))?;
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    Ok(Identity {
        user: user.to_string(),
        groups,
    })
}

#[tonic::async_trait]
impl Authorizer for KubeAuth {
    async fn authorize(&self, who: &Identity, access: &Access<'_>) -> Result<(), Status> {
        let attributes = resource_attributes(access)?;
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(who.user.clone()),
                groups: Some(who.groups.clone()),
                resource_attributes: Some(attributes.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Status::unavailable(format!("reviewing the access: {e}")))?;
        if reviewed.status.is_some_and(|s| s.allowed) {
            return Ok(());
        }
        Err(Status::permission_denied(format!(
            "{} may not {} {}{} of cluster {} (event {})",
            who.user,
            attributes.verb.as_deref().unwrap_or_default(),
            attributes.resource.as_deref().unwrap_or_default(),
            attributes
                .subresource
                .as_deref()
                .map(|s| format!("/{s}"))
                .unwrap_or_default(),
            access.cluster,
            access.event_type,
        )))
    }
}

/// The Kubernetes request an event stands for, as upstream's SAR authorizer maps it: the
/// cluster's namespace, the event's group and resource (ManagedClusters by the cluster's name,
/// token requests as `serviceaccounts/token`, manifest bundles as ManifestWorks).
pub fn resource_attributes(access: &Access<'_>) -> Result<ResourceAttributes, Status> {
    let event_type = access.event_type;
    let verb = match &event_type.action {
        Action::Create => "create",
        Action::Update => "update",
        Action::Delete => "delete",
        Action::Watch => "watch",
        Action::ResyncRequest => "list",
        other => {
            return Err(Status::permission_denied(format!(
                "unsupported action {other:?}"
            )));
        }
    };
    let data = &event_type.data_type;
    let mut attributes = ResourceAttributes {
        verb: Some(verb.to_string()),
        namespace: Some(access.cluster.to_string()),
        group: Some(data.group.clone()),
        resource: Some(data.resource.clone()),
        subresource: (event_type.sub_resource == SubResource::Status).then(|| "status".to_string()),
        ..Default::default()
    };
    match (data.group.as_str(), data.resource.as_str()) {
        ("cluster.open-cluster-management.io", "managedclusters") => {
            attributes.name = Some(access.cluster.to_string());
        }
        ("addon.open-cluster-management.io", "managedclusteraddons")
        | ("certificates.k8s.io", "certificatesigningrequests")
        | ("events.k8s.io", "events")
        | ("coordination.k8s.io", "leases") => {}
        ("authentication.k8s.io", "tokenrequests") => {
            attributes.group = Some(String::new());
            attributes.resource = Some("serviceaccounts".to_string());
            attributes.subresource = Some("token".to_string());
            match verb {
                "create" => attributes.name = access.name.map(str::to_string),
                // A subscription for tokens: upstream asks for the verb `subscribe`.
                "watch" => attributes.verb = Some("subscribe".to_string()),
                _ => {
                    return Err(Status::permission_denied(format!(
                        "unsupported action {verb}"
                    )));
                }
            }
        }
        ("io.open-cluster-management.works", "manifestbundles") => {
            attributes.group = Some("work.open-cluster-management.io".to_string());
            attributes.resource = Some("manifestworks".to_string());
        }
        _ => {
            return Err(Status::permission_denied(format!(
                "unsupported event type {event_type}"
            )));
        }
    }
    Ok(attributes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cloudevents_grpc::event_type::EventType;

    fn attributes(event_type: &str, cluster: &str, name: Option<&str>) -> ResourceAttributes {
        let event_type: EventType = event_type.parse().unwrap();
        resource_attributes(&Access {
            cluster,
            event_type: &event_type,
            name,
        })
        .unwrap()
    }

    #[test]
    fn events_map_to_the_requests_upstream_reviews() {
        let status = attributes(
            "cluster.open-cluster-management.io.v1.managedclusters.status.update_request",
            "c1",
            None,
        );
        assert_eq!(status.verb.as_deref(), Some("update"));
        assert_eq!(status.name.as_deref(), Some("c1"));
        assert_eq!(status.subresource.as_deref(), Some("status"));
        let token = attributes(
            "authentication.k8s.io.v1.tokenrequests.spec.create_request",
            "c1",
            Some("addon-agent"),
        );
        assert_eq!(
            (
                token.group.as_deref(),
                token.resource.as_deref(),
                token.subresource.as_deref()
            ),
            (Some(""), Some("serviceaccounts"), Some("token"))
        );
        assert_eq!(token.name.as_deref(), Some("addon-agent"));
        let works = attributes(
            "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.resync_request",
            "c1",
            None,
        );
        assert_eq!(works.verb.as_deref(), Some("list"));
        assert_eq!(works.resource.as_deref(), Some("manifestworks"));
    }

    #[test]
    fn unknown_types_and_actions_are_denied() {
        let event_type: EventType = "example.io.v1.widgets.spec.create_request".parse().unwrap();
        let access = Access {
            cluster: "c1",
            event_type: &event_type,
            name: None,
        };
        assert_eq!(
            resource_attributes(&access).unwrap_err().code(),
            tonic::Code::PermissionDenied
        );
    }
}
