//! The template table: every `templates/**/*.j2` file, embedded at compile time. A unit test in
//! the parent module fails when a file on disk is missing here.

macro_rules! templates {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/", $path)))),*]
    };
}

/// `(path under templates/, contents)`.
pub static TEMPLATES: &[(&str, &str)] = templates![
    "cluster-manager-operator/00-namespace.yaml.j2",
    "cluster-manager-operator/10-rbac.yaml.j2",
    "cluster-manager-operator/20-deployment.yaml.j2",
    "hub-bootstrap/00-clusterrole.yaml.j2",
    "hub-bootstrap/10-identity.yaml.j2",
    "hub-bootstrap/20-cluster-info-rbac.yaml.j2",
    "klusterlet-operator/00-namespace.yaml.j2",
    "klusterlet-operator/10-rbac.yaml.j2",
    "klusterlet-operator/20-deployment.yaml.j2",
];
