//! `spec.executor`: a work that names a ServiceAccount on the managed cluster is applied only
//! where that ServiceAccount may act, as upstream's work agent checks
//! (`pkg/work/spoke/auth/basic`): one SubjectAccessReview per verb — create, update, patch, get,
//! and delete when the work will own the object — before each manifest is applied, answered from
//! [`super::executor_cache`] when RBAC has not changed since.
//!
//! Reviews cannot see escalation: the agent itself holds `bind` and `escalate`, so an executor
//! that may merely write RoleBindings in its namespace would get `cluster-admin` bound through
//! the agent. So an RBAC manifest (Role, ClusterRole, RoleBinding, ClusterRoleBinding) is also
//! created as a dry run impersonating the executor, where the API server's escalation guard
//! applies; `Forbidden` refuses it (upstream's `CheckEscalation`), `AlreadyExists` passes (the
//! guard runs before the existence check). A refusal fails that manifest only, with upstream's
//! message, and is checked again on the next retry.
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, DynamicObject, PostParams};

use super::executor_cache::{Dimension, SarCache};
use ocm_api::work::{
    AppliedManifestResourceMeta, DeleteOption, ManifestWorkExecutor, ServiceAccountSubject,
};

/// The API group of the kinds that can escalate.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
/// The resources checked for escalation.
const RBAC_RESOURCES: [&str; 4] = [
    "roles",
    "rolebindings",
    "clusterroles",
    "clusterrolebindings",
];

/// The executor of a work, resolved: the ServiceAccount to check, or why the executor is unusable.
#[must_use]
pub fn subject(
    executor: Option<&ManifestWorkExecutor>,
) -> Option<Result<&ServiceAccountSubject, String>> {
    let executor = executor?;
    Some(
        executor
            .subject
            .as_ref()
            .and_then(|s| s.service_account.as_ref())
            .ok_or_else(|| "the executor service account is nil".to_string()),
    )
}

/// The work's executor, when it names one: whose permissions every manifest is checked against.
#[derive(Clone, Copy)]
pub struct Executor<'a> {
    /// Client of the managed cluster (for the SubjectAccessReviews and the escalation dry run).
    pub client: &'a Client,
    /// Review answers of earlier passes.
    pub cache: &'a SarCache,
    /// The ServiceAccount, or why the executor is unusable.
    pub subject: Result<&'a ServiceAccountSubject, &'a str>,
    /// The work's delete option (what the work will own is checked for `delete` too).
    pub delete_option: Option<&'a DeleteOption>,
}

/// What is about to be applied.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// API group (`""` for the core group).
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
    /// Namespace, for namespaced objects.
    pub namespace: Option<&'a str>,
    /// Object name.
    pub name: &'a str,
    /// The manifest, as it will be applied (sent as the escalation dry run).
    pub object: &'a DynamicObject,
}

impl Target<'_> {
    /// Upstream's refusal, `why` appended when given.
    fn not_allowed(&self, why: Option<&str>) -> String {
        let mut message = format!(
            "not allowed to apply the resource {} {}, {} {}",
            self.group,
            self.resource,
            self.namespace.unwrap_or_default(),
            self.name
        );
        if let Some(why) = why {
            message.push_str(", error: ");
            message.push_str(why);
        }
        message
    }

    /// Whether the API server's escalation guard applies to this object.
    fn is_rbac(&self) -> bool {
        self.group == RBAC_GROUP && RBAC_RESOURCES.contains(&self.resource)
    }
}

impl Executor<'_> {
    /// `Ok` when the executor may apply `target`; upstream's refusal message otherwise.
    pub async fn may_apply(&self, target: Target<'_>) -> Result<(), String> {
        let sa = self.subject.map_err(str::to_string)?;
        let record = AppliedManifestResourceMeta {
            group: Some(target.group.into()),
            version: target.version.into(),
            resource: target.resource.into(),
            namespace: target.namespace.map(Into::into),
            name: target.name.into(),
            uid: None,
        };
        let delete = !super::build::is_orphaned(self.delete_option, &record);
        let dimension = Dimension {
            executor_namespace: sa.namespace.clone(),
            executor_name: sa.name.clone(),
            group: target.group.into(),
            version: target.version.into(),
            resource: target.resource.into(),
            namespace: target.namespace.unwrap_or_default().into(),
            name: target.name.into(),
            delete,
        };
        let reviews = || async {
            let mut verbs = vec!["create", "update", "patch", "get"];
            if delete {
                verbs.push("delete");
            }
            for verb in verbs {
                if !allowed(self.client, sa, target, verb).await? {
                    return Ok::<_, String>(false);
                }
            }
            Ok(true)
        };
        if !self.cache.check_with(dimension, reviews).await? {
            return Err(target.not_allowed(None));
        }
        if target.is_rbac() {
            escalation(self.client, sa, target).await?;
        }
        Ok(())
    }
}

/// `Ok` without an executor; otherwise [`Executor::may_apply`].
pub async fn check(executor: Option<Executor<'_>>, target: Target<'_>) -> Result<(), String> {
    match executor {
        Some(executor) => executor.may_apply(target).await,
        None => Ok(()),
    }
}

/// One SubjectAccessReview: may `sa` do `verb` on `target`?
async fn allowed(
    client: &Client,
    sa: &ServiceAccountSubject,
    target: Target<'_>,
    verb: &str,
) -> Result<bool, String> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some(target.group.into()),
                version: Some(target.version.into()),
                resource: Some(target.resource.into()),
                namespace: target.namespace.map(Into::into),
                name: Some(target.name.into()),
                verb: Some(verb.into()),
                ..Default::default()
            }),
            user: Some(username(sa)),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                "system:authenticated".into(),
                format!("system:serviceaccounts:{}", sa.namespace),
            ]),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| {
            format!(
                "checking the executor's permission: {}",
                super::apply::describe(&e)
            )
        })?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

/// The user a ServiceAccount authenticates as.
fn username(sa: &ServiceAccountSubject) -> String {
    format!("system:serviceaccount:{}:{}", sa.namespace, sa.name)
}

/// Creates `target` as a dry run impersonating `sa`: `Forbidden` means applying it would grant
/// more than `sa` holds.
async fn escalation(
    client: &Client,
    sa: &ServiceAccountSubject,
    target: Target<'_>,
) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("checking the executor's permission: {e}");
    let path = match target.namespace {
        Some(ns) => format!(
            "/apis/{}/{}/namespaces/{ns}/{}",
            target.group, target.version, target.resource
        ),
        None => format!(
            "/apis/{}/{}/{}",
            target.group, target.version, target.resource
        ),
    };
    let mut object = target.object.clone();
    object.metadata.uid = None; // as upstream: the uid of a manifest is not its own
    object.metadata.resource_version = None;
    let body = serde_json::to_vec(&object).map_err(|e| failed(&e))?;
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let mut request = kube::core::Request::new(path)
        .create(&params, body)
        .map_err(|e| failed(&e))?;
    let user = http::HeaderValue::from_str(&username(sa)).map_err(|e| failed(&e))?;
    request.headers_mut().insert("Impersonate-User", user);
    match client.request::<DynamicObject>(request).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 && s.reason == "AlreadyExists" => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            tracing::info!(
                resource = target.resource,
                namespace = target.namespace.unwrap_or_default(),
                name = target.name,
                "not allowed to apply the resource: {}",
                s.message
            );
            Err(target.not_allowed(Some("permission escalation")))
        }
        Err(e) => Err(failed(&super::apply::describe(&e))),
    }
}
