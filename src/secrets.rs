//! Reading Secrets: one field as text, whether it was written as `data` or `stringData`.
use k8s_openapi::api::core::v1::Secret;

/// A secret field as text (`data`, else `stringData`); `None` when absent or empty.
#[must_use]
pub fn field(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .or_else(|| {
            secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(key).cloned())
        })
        .filter(|s| !s.is_empty())
}
