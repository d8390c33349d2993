//! What `init` and `join` install, as pure plans from typed options to the objects to apply
//! ([`hub`], [`klusterlet`]), plus the pieces of `init` that are not plain objects: the bootstrap
//! credential ([`credential`]), the `kube-public/cluster-info` discovery document
//! ([`cluster_info`]) and the join command ([`join_command`]).
pub mod cluster_info;
pub mod credential;
pub mod hub;
pub mod join_command;
pub mod klusterlet;

/// `Kind/name` of each planned object, for the plans' tests.
#[cfg(test)]
fn names(objects: &[kube::api::DynamicObject]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.types.as_ref().unwrap().kind,
                o.metadata.name.as_deref().unwrap()
            )
        })
        .collect()
}
