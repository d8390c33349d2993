//! The image pull secret, as upstream's operators handle it: `init`/`join` put
//! [`IMAGE_PULL_SECRET`] in the operator namespace; while it is there, each operator copies it to
//! the namespaces its pods run in and names it in their `imagePullSecrets`, so a private registry
//! works for the components as it does for the operator itself.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{LocalObjectReference, Secret, ServiceAccount};
use kube::api::ObjectMeta;
use kube::{Api, Client};

use ocm_api::names::{IMAGE_PULL_SECRET, OPERATOR_NAMESPACE};

/// The pull secret of the operator namespace on `client`'s cluster, if there is one.
pub async fn read(client: &Client) -> Result<Option<Secret>, kube::Error> {
    Api::<Secret>::namespaced(client.clone(), OPERATOR_NAMESPACE)
        .get_opt(IMAGE_PULL_SECRET)
        .await
}

/// A copy of `source` in `namespace`: its type and data, none of its metadata but the name.
#[must_use]
pub fn copy(source: &Secret, namespace: &str, meta: ObjectMeta) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(IMAGE_PULL_SECRET.into()),
            namespace: Some(namespace.into()),
            ..meta
        },
        type_: source.type_.clone(),
        data: source.data.clone(),
        ..Default::default()
    }
}

fn reference() -> Vec<LocalObjectReference> {
    vec![LocalObjectReference {
        name: IMAGE_PULL_SECRET.into(),
    }]
}

/// Names the pull secret in the pods of `deployments`.
pub fn attach_to_pods(deployments: &mut [Deployment]) {
    for d in deployments {
        if let Some(pod) = d.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
            pod.image_pull_secrets = Some(reference());
        }
    }
}

/// Names the pull secret in `accounts` (upstream's agents get it through their ServiceAccount).
pub fn attach_to_accounts(accounts: &mut [ServiceAccount]) {
    for sa in accounts {
        sa.image_pull_secrets = Some(reference());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn a_copy_keeps_type_and_data_and_takes_the_given_metadata() {
        let source = Secret {
            metadata: ObjectMeta {
                name: Some(IMAGE_PULL_SECRET.into()),
                namespace: Some(OPERATOR_NAMESPACE.into()),
                resource_version: Some("7".into()),
                ..Default::default()
            },
            type_: Some("kubernetes.io/dockerconfigjson".into()),
            data: Some([(".dockerconfigjson".into(), ByteString(b"{}".to_vec()))].into()),
            ..Default::default()
        };
        let labels = Some([("a".to_string(), "b".to_string())].into());
        let copy = copy(
            &source,
            "agents",
            ObjectMeta {
                labels: labels.clone(),
                ..Default::default()
            },
        );
        assert_eq!(copy.metadata.namespace.as_deref(), Some("agents"));
        assert_eq!(copy.metadata.name.as_deref(), Some(IMAGE_PULL_SECRET));
        assert_eq!(copy.metadata.labels, labels);
        assert_eq!(copy.metadata.resource_version, None);
        assert_eq!(copy.type_, source.type_);
        assert_eq!(copy.data, source.data);
    }
}
