//! The published CA bundle (`ca-bundle-configmap`, key `ca-bundle.crt`).
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cluster_manager::certs::{CA_BUNDLE_CONFIGMAP, CA_BUNDLE_KEY};
use ocm_api::names::HUB_NAMESPACE;

/// The CA bundle ConfigMap.
#[must_use]
pub fn ca_bundle(bundle: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(CA_BUNDLE_CONFIGMAP.into()),
            namespace: Some(HUB_NAMESPACE.into()),
            ..Default::default()
        },
        data: Some([(CA_BUNDLE_KEY.to_string(), bundle.to_string())].into()),
        ..Default::default()
    }
}
