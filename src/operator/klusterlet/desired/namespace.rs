//! The agents' namespace, and the add-on namespace on the managed cluster.
use k8s_openapi::api::core::v1::Namespace;

use super::meta;
use crate::operator::klusterlet::validate::Validated;

/// Namespace `name`, labelled as the Klusterlet's.
pub(super) fn namespace(v: &Validated, name: &str) -> Namespace {
    Namespace {
        metadata: meta(v, name, None),
        ..Default::default()
    }
}

/// The namespace add-on agents are installed in by default, on the managed cluster (upstream's
/// operator ensures it for every Klusterlet). Unlabelled: every Klusterlet of the cluster applies
/// the same object.
pub(super) fn addon() -> Namespace {
    Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(crate::api::names::ADDON_NAMESPACE.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    }
}
