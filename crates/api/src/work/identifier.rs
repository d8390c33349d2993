//! Which resource a `ResourceIdentifier` names (in `manifestConfigs`, orphaning rules and
//! add-on health probes): group and resource equal, name and namespace matched with `*`
//! wildcards, an empty namespace for a cluster-scoped resource.
use super::{ManifestResourceMeta, ResourceIdentifier};

/// Whether `pattern` matches `text`; `*` in the pattern matches any run of characters.
#[must_use]
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let mut parts: Vec<&str> = rest.split('*').collect();
    let last = parts.pop().unwrap_or_default();
    for part in parts {
        match remaining.find(part) {
            Some(i) => remaining = &remaining[i + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

/// Whether a `manifestConfigs` / orphaning-rule identifier names this resource. Group and
/// resource must be equal; name and namespace may use `*` wildcards; an empty namespace names a
/// cluster-scoped resource.
#[must_use]
pub fn identifies(
    id: &ResourceIdentifier,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> bool {
    id.group.as_deref().unwrap_or_default() == group
        && id.resource == resource
        && wildcard_match(&id.name, name)
        && wildcard_match(id.namespace.as_deref().unwrap_or_default(), namespace)
}

/// Whether an identifier names the resource a work's status reports ([`identifies`]).
#[must_use]
pub fn identifies_reported(id: &ResourceIdentifier, meta: &ManifestResourceMeta) -> bool {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    identifies(
        id,
        &s(&meta.group),
        &s(&meta.resource),
        &s(&meta.namespace),
        &s(&meta.name),
    )
}

/// An identifier naming group, resource, namespace and name as given.
#[must_use]
pub fn named(group: &str, resource: &str, ns: &str, name: &str) -> ResourceIdentifier {
    ResourceIdentifier {
        group: Some(group.into()),
        resource: resource.into(),
        name: name.into(),
        namespace: Some(ns.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::named as id;
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*", "anything"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("web-*", "web-1"));
        assert!(wildcard_match("*-db", "prod-db"));
        assert!(wildcard_match("a*b*c", "abc"));
        assert!(wildcard_match("a*b*c", "a-x-b-y-c"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(!wildcard_match("web-*", "api-1"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exactly"));
    }

    #[test]
    fn identifier_matching() {
        let dep = id("apps", "deployments", "default", "nginx");
        assert!(identifies(&dep, "apps", "deployments", "default", "nginx"));
        assert!(!identifies(&dep, "", "deployments", "default", "nginx"));
        assert!(!identifies(&dep, "apps", "deployments", "other", "nginx"));
        assert!(!identifies(
            &dep,
            "apps",
            "statefulsets",
            "default",
            "nginx"
        ));
        // Core group and cluster scope are spelled as absent fields.
        let ns = ResourceIdentifier {
            group: None,
            resource: "namespaces".into(),
            name: "team-a".into(),
            namespace: None,
        };
        assert!(identifies(&ns, "", "namespaces", "", "team-a"));
        assert!(!identifies(&ns, "", "namespaces", "default", "team-a"));
        assert!(identifies(
            &id("", "configmaps", "*", "cm-*"),
            "",
            "configmaps",
            "x",
            "cm-1"
        ));
    }
}
