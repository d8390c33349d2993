//! The agents' namespace.
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
