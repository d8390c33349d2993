//! Checks run before changing anything, so a command fails before it half-applies: can this
//! identity do what the command is about to do (SelfSubjectAccessReview, answered from RBAC)?
use anyhow::Context as _;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};

/// One permission: verb on group/resource, optionally in a namespace.
#[derive(Debug, Clone, Copy)]
pub struct Permission<'a> {
    /// e.g. `create`.
    pub verb: &'a str,
    /// API group, `""` for the core group.
    pub group: &'a str,
    /// Plural resource, optionally with `/subresource`.
    pub resource: &'a str,
    /// Namespace, for namespaced resources.
    pub namespace: Option<&'a str>,
}

impl std::fmt::Display for Permission<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let group = if self.group.is_empty() {
            String::new()
        } else {
            format!(".{}", self.group)
        };
        write!(f, "{} {}{group}", self.verb, self.resource)?;
        if let Some(ns) = self.namespace {
            write!(f, " in namespace {ns}")?;
        }
        Ok(())
    }
}

/// Whether the client's identity has the permission.
pub async fn can_i(client: &Client, p: Permission<'_>) -> anyhow::Result<bool> {
    let (resource, subresource) = p
        .resource
        .split_once('/')
        .map_or((p.resource, None), |(r, s)| (r, Some(s)));
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(p.verb.into()),
                group: Some(p.group.into()),
                resource: Some(resource.into()),
                subresource: subresource.map(Into::into),
                namespace: p.namespace.map(Into::into),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .with_context(|| format!("asking whether we may {p}"))?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

/// The permissions of `wanted` the identity lacks (all checked concurrently).
pub async fn missing<'a>(
    client: &Client,
    wanted: &[Permission<'a>],
) -> anyhow::Result<Vec<Permission<'a>>> {
    let answers = futures::future::try_join_all(wanted.iter().map(|p| can_i(client, *p))).await?;
    Ok(wanted
        .iter()
        .zip(answers)
        .filter(|(_, ok)| !ok)
        .map(|(p, _)| *p)
        .collect())
}
