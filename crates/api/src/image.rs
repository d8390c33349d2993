//! Image references, registries and tags as the OCI distribution grammar defines them
//! (`distribution/reference`): every image a flag or a values file names is checked against it
//! before anything is rendered, so no text but an image reaches the YAML (a tag holding a newline
//! and a document would otherwise add objects to what is applied).
use std::sync::LazyLock;

use regex::Regex;

const PATH_COMPONENT: &str = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const DOMAIN_AND_PORT: &str = r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?";
const TAG: &str = r"[\w][\w.-]{0,127}";
const DIGEST: &str = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

/// A whole reference, as a regular expression (RE2 syntax too: the Helm charts check with it).
pub static REFERENCE_PATTERN: LazyLock<String> = LazyLock::new(|| {
    format!(
        "^(?:{DOMAIN_AND_PORT}/)?{PATH_COMPONENT}(?:/{PATH_COMPONENT})*(?::{TAG})?(?:@{DIGEST})?$"
    )
});
/// A registry with an optional path, as a regular expression.
pub static REGISTRY_PATTERN: LazyLock<String> =
    LazyLock::new(|| format!("^{DOMAIN_AND_PORT}(?:/{PATH_COMPONENT})*/?$"));
/// A tag, as a regular expression.
pub static TAG_PATTERN: LazyLock<String> = LazyLock::new(|| format!("^{TAG}$"));

static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&REFERENCE_PATTERN).expect("a valid pattern"));
static REGISTRY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&REGISTRY_PATTERN).expect("a valid pattern"));
static TAG_ONLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&TAG_PATTERN).expect("a valid pattern"));

/// A whole image reference, `[registry/]path[:tag][@digest]` (`--image`).
pub fn reference(text: &str) -> Result<String, String> {
    check(
        &REFERENCE,
        text,
        "an image reference such as registry.example.com/clusteradm:v0.1.0",
    )
}

/// A registry with an optional path, `host[:port][/path]` (`--image-registry`, `images.registry`).
pub fn registry(text: &str) -> Result<String, String> {
    check(
        &REGISTRY,
        text,
        "a registry such as quay.io/open-cluster-management",
    )
}

/// An image tag (`images.tag`, a version bundle's tag).
pub fn tag(text: &str) -> Result<String, String> {
    check(&TAG_ONLY, text, "an image tag such as v1.3.1")
}

fn check(pattern: &Regex, text: &str, expected: &str) -> Result<String, String> {
    if pattern.is_match(text) {
        Ok(text.to_owned())
    } else {
        Err(format!("{text:?} is not {expected}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_follow_the_distribution_grammar() {
        for good in [
            "clusteradm",
            "registry.example.com/clusteradm:v0.1.0",
            "localhost:5000/a/b_c/d-e:1.0",
            "127.0.0.1:18100/clusteradm-rs/clusteradm:dev",
            "quay.io/open-cluster-management/registration:v1.3.1@sha256:0123456789abcdef0123456789abcdef",
            "[::1]:5000/x:y",
        ] {
            assert!(reference(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "x:v1\nkind: ClusterRoleBinding",
            "registry.example/UPPER",
            "x:tag with space",
            "x:{{evil}}",
            "-leading",
            "x@sha256:short",
        ] {
            assert!(reference(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn registries_and_tags() {
        assert!(registry("quay.io/open-cluster-management").is_ok());
        assert!(registry("localhost:5000").is_ok());
        assert!(registry("r.example/ocm/").is_ok());
        assert!(registry("r.example\n---").is_err());
        assert!(registry("r.example/ocm:v1").is_err());
        assert!(tag("v1.3.1").is_ok());
        assert!(tag("latest").is_ok());
        assert!(tag("v1\n---\nkind: Secret").is_err());
        assert!(tag(".hidden").is_err());
        assert!(tag(&"a".repeat(129)).is_err());
    }
}
