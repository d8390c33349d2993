//! The agents' namespace, and the add-on namespace on the managed cluster.
use k8s_openapi::api::core::v1::Namespace;

use super::meta;
use crate::klusterlet::validate::Validated;
use crate::pod_security;

/// Namespace `name`, labelled as the Klusterlet's. The agents' namespace in Default and
/// Singleton modes holds only the agents we render, so Pod Security's `restricted` is enforced
/// there; in Hosted modes hosted add-on agents run beside them, so it is only warned.
pub(super) fn namespace(v: &Validated, name: &str) -> Namespace {
    let mut metadata = meta(v, name, None);
    metadata
        .labels
        .get_or_insert_default()
        .extend(pod_security::labels(!v.hosted));
    Namespace {
        metadata,
        ..Default::default()
    }
}

/// The namespace add-on agents are installed in by default, on the managed cluster (upstream's
/// operator ensures it for every Klusterlet). Not labelled as a Klusterlet's: every Klusterlet of
/// the cluster applies the same object. Other projects' add-on agents run here, so Pod Security's
/// `restricted` is warned and audited, not enforced.
pub(super) fn addon() -> Namespace {
    Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(ocm_api::names::ADDON_NAMESPACE.to_owned()),
            labels: Some(pod_security::labels(false)),
            ..Default::default()
        },
        ..Default::default()
    }
}
