//! Upstream's admission webhooks, served by the hub process ([`crate::webhook`]): the
//! registration webhook's ManagedCluster defaulting and validation and ManagedClusterSetBinding
//! validation (`pkg/registration/webhook/` in open-cluster-management-io/ocm), and the work
//! webhook's ManifestWork and ManifestWorkReplicaSet validation (`pkg/work/webhook/`).
//!
//! They answer as upstream's do: a shape error is `400 BadRequest`, a missing permission
//! `403 Forbidden`, with upstream's messages, and the API server prefixes each with `admission
//! webhook "<name>" denied the request: `. Permissions are asked of the API server's own
//! authorizer with a SubjectAccessReview for the requesting user, as upstream does.
//!
//! The no-server alternative is the ValidatingAdmissionPolicies of
//! the ClusterManager operator's `desired::admission` (`init --admission policies`), which
//! refuse the same requests with `422 Invalid` and their own messages.
mod access;
mod cluster_set_binding;
pub mod configurations;
mod managed_cluster;
mod manifest_work;
mod review;
pub mod webhooks;

use futures::future::BoxFuture;
use kube::Client;
use serde_json::Value;

use crate::settings;
pub use crate::settings::Settings;
pub use access::Lookup;
pub use review::{Denied, Request};

use ocm_runtime::Shutdown;

/// Upstream's path of the ManagedCluster validating webhook.
pub const VALIDATE_MANAGED_CLUSTER: &str =
    "/validate-cluster-open-cluster-management-io-v1-managedcluster";
/// Upstream's path of the ManagedCluster mutating webhook.
pub const MUTATE_MANAGED_CLUSTER: &str =
    "/mutate-cluster-open-cluster-management-io-v1-managedcluster";
/// Upstream's path of the ManagedClusterSetBinding validating webhook.
pub const VALIDATE_CLUSTER_SET_BINDING: &str =
    "/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding";
/// Upstream's path of the ManifestWork validating webhook.
pub const VALIDATE_MANIFEST_WORK: &str =
    "/validate-work-open-cluster-management-io-v1-manifestwork";
/// Upstream's path of the ManifestWorkReplicaSet validating webhook.
pub const VALIDATE_REPLICA_SET: &str =
    "/validate-work-open-cluster-management-io-v1alpha1-manifestworkreplicaset";

const PATHS: [&str; 5] = [
    VALIDATE_MANAGED_CLUSTER,
    MUTATE_MANAGED_CLUSTER,
    VALIDATE_CLUSTER_SET_BINDING,
    VALIDATE_MANIFEST_WORK,
    VALIDATE_REPLICA_SET,
];

/// Whether an admission webhook is served at `path`.
#[must_use]
pub fn serves(path: &str) -> bool {
    PATHS.contains(&path)
}

/// Answers admission reviews: the hub's client for the permission and namespace lookups, and the
/// ClusterManager's settings (its gates) as last watched.
#[derive(Clone)]
pub struct Reviewer {
    lookup: access::Api,
    settings: settings::Watched,
}

impl Reviewer {
    /// A reviewer for the hub `client`, watching the ClusterManager until `shutdown`.
    #[must_use]
    pub fn start(client: Client, shutdown: Shutdown) -> Self {
        Self::with_settings(client.clone(), settings::watch(client, shutdown))
    }

    /// A reviewer for the hub `client` that follows `settings` (watched by its caller).
    #[must_use]
    pub fn with_settings(client: Client, settings: settings::Watched) -> Self {
        Self {
            settings,
            lookup: access::Api::new(client),
        }
    }

    /// The ClusterManager's settings, as this reviewer watches them.
    #[must_use]
    pub fn settings(&self) -> settings::Watched {
        self.settings.clone()
    }

    /// The AdmissionReview answering `review` at `path`, or `None` when no webhook is there.
    #[must_use]
    pub fn answer(&self, path: &str, review: Value) -> Option<BoxFuture<'static, Value>> {
        if !serves(path) {
            return None;
        }
        let path = path.to_owned();
        let this = self.clone();
        Some(Box::pin(async move {
            let request = match Request::parse(&review) {
                Ok(r) => r,
                Err(denied) => return review::respond(&review, &Err(denied)),
            };
            let outcome = match this.settings.current().await {
                Some(settings) => decide(&path, &request, settings, &this.lookup).await,
                None => Err(Denied::unavailable(
                    "the hub has not yet read its ClusterManager's settings",
                )),
            };
            review::respond(&review, &outcome)
        }))
    }
}

/// What the webhook at `path` says of `request`: allowed (with a JSON patch for a mutation) or
/// denied.
pub async fn decide(
    path: &str,
    request: &Request,
    settings: Settings,
    lookup: &impl Lookup,
) -> Result<Option<Value>, Denied> {
    match path {
        MUTATE_MANAGED_CLUSTER => managed_cluster::default(request, settings, lookup).await,
        VALIDATE_MANAGED_CLUSTER => managed_cluster::validate(request, lookup)
            .await
            .map(|()| None),
        VALIDATE_CLUSTER_SET_BINDING => cluster_set_binding::validate(request, lookup)
            .await
            .map(|()| None),
        VALIDATE_MANIFEST_WORK => manifest_work::validate(request, settings, lookup)
            .await
            .map(|()| None),
        VALIDATE_REPLICA_SET => manifest_work::validate_replica_set(request).map(|()| None),
        _ => Err(Denied::bad_request(format!(
            "no admission webhook at {path}"
        ))),
    }
}

#[cfg(test)]
mod test_support {
    //! A [`Lookup`] that allows what it lists, and a request builder.
    use k8s_openapi::api::authorization::v1::ResourceAttributes;
    use serde_json::{Value, json};

    use super::{Lookup, Request, Settings};

    /// Upstream's defaults: webhooks, `DefaultClusterSet` on, `NilExecutorValidating` off.
    pub const SETTINGS: Settings = Settings {
        webhooks: true,
        default_cluster_set: true,
        nil_executor_validating: false,
        auto_approve: None,
        cluster_profile: false,
        clean_up_completed_works: false,
        resource_cleanup: true,
        manifest_work_replica_set: false,
        addon_management: true,
        one_image: false,
        hosted: false,
    };

    /// Allows `verb/resource[/subresource]` for anyone; namespaces terminate when told.
    #[derive(Default)]
    pub struct Fake {
        pub allow: Vec<String>,
        pub terminating: bool,
    }

    impl Lookup for Fake {
        async fn allowed(&self, _user: &Value, a: ResourceAttributes) -> Result<bool, kube::Error> {
            let mut key = format!(
                "{}/{}",
                a.verb.unwrap_or_default(),
                a.resource.unwrap_or_default()
            );
            if let Some(sub) = a.subresource {
                key = format!("{key}/{sub}");
            }
            Ok(self.allow.contains(&key))
        }

        async fn terminating(&self, _name: &str) -> Result<bool, kube::Error> {
            Ok(self.terminating)
        }
    }

    pub fn request(operation: &str, object: Value, old_object: Option<Value>) -> Request {
        Request {
            operation: operation.into(),
            user: json!({"username": "alice", "groups": ["system:authenticated"]}),
            object,
            old_object,
        }
    }
}
