//! The name a cluster registers under when its Klusterlet names none: the one the registration
//! agent stored with its hub credential (`cluster-name` of the hub kubeconfig secret), so a
//! restarted agent keeps it, else a new random UUID, as upstream's agent does.
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

use super::secret::CLUSTER_NAME_KEY;

/// The stored cluster name in secret `namespace/secret`, or a new one.
///
/// # Errors
/// Reading the secret failed (other than its absence).
pub async fn stored_or_new(
    management: &Client,
    namespace: &str,
    secret: &str,
) -> Result<String, kube::Error> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), namespace);
    let stored = secrets
        .get_opt(secret)
        .await?
        .and_then(|s| ocm_runtime::secrets::field(&s, CLUSTER_NAME_KEY))
        .filter(|name| ocm_api::names::is_dns_label(name));
    Ok(stored.unwrap_or_else(|| {
        let name = ocm_runtime::lease::random_uuid();
        tracing::info!(cluster = %name, "the Klusterlet names no cluster: registering as a generated name");
        name
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_generated_name_is_a_cluster_name() {
        let name = ocm_runtime::lease::random_uuid();
        assert!(
            ocm_api::names::validate_cluster_name(&name).is_ok(),
            "{name}"
        );
    }
}
