//! The certificate Secrets: the signer and the webhook serving certificates (`kubernetes.io/tls`).
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cluster_manager::certs::CertKey;
use ocm_api::names::HUB_NAMESPACE;

/// A TLS Secret named `name` in the hub namespace holding `pair`.
#[must_use]
pub fn tls(name: &str, pair: &CertKey) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(HUB_NAMESPACE.into()),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".into()),
        data: Some(
            [
                (
                    "tls.crt".to_string(),
                    ByteString(pair.cert.clone().into_bytes()),
                ),
                (
                    "tls.key".to_string(),
                    ByteString(pair.key.clone().into_bytes()),
                ),
            ]
            .into(),
        ),
        ..Default::default()
    }
}
