//! `spec.executor`: a work that names a ServiceAccount on the managed cluster is applied only
//! where that ServiceAccount may act, as upstream's work agent checks
//! (`pkg/work/spoke/auth/basic`): one SubjectAccessReview per verb — create, update, patch, get,
//! and delete when the work will own the object — before each manifest is applied. A refusal fails
//! that manifest only, with upstream's message, and is checked again on the next retry.
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::api::work::{
    AppliedManifestResourceMeta, DeleteOption, ManifestWorkExecutor, ServiceAccountSubject,
};

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
    /// Client of the managed cluster (for the SubjectAccessReviews).
    pub client: &'a Client,
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
        let mut verbs = vec!["create", "update", "patch", "get"];
        if !super::build::is_orphaned(self.delete_option, &record) {
            verbs.push("delete");
        }
        for verb in verbs {
            if !allowed(self.client, sa, target, verb).await? {
                return Err(format!(
                    "not allowed to apply the resource {} {}, {} {}",
                    target.group,
                    target.resource,
                    target.namespace.unwrap_or_default(),
                    target.name
                ));
            }
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
            user: Some(format!(
                "system:serviceaccount:{}:{}",
                sa.namespace, sa.name
            )),
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
