//! Managed clusters named on the command line (`--clusters a,b`): the names as given, and the
//! check, before any write, that the hub knows each of them.
use anyhow::Context as _;
use kube::Client;
use kube::api::Api;

use crate::api::cluster::ManagedCluster;
use crate::error::UserError;

/// Names given as a comma-separated flag: trimmed, empties dropped, each once, in order.
#[must_use]
pub fn names(given: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in given.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

/// The clusters `names`, or an error naming the first the hub does not know and saying that
/// `nothing` was done.
pub async fn existing(
    client: &Client,
    names: &[String],
    nothing: &str,
) -> anyhow::Result<Vec<ManagedCluster>> {
    let api: Api<ManagedCluster> = Api::all(client.clone());
    let found = crate::runtime::fan_out::try_all(names.iter().map(|c| api.get_opt(c)))
        .await
        .map_err(crate::error::ocm_api_missing)
        .context("reading ManagedClusters")?;
    if let Some((missing, _)) = names.iter().zip(&found).find(|(_, c)| c.is_none()) {
        return Err(UserError::new(
            format!("managed cluster {missing} not found on the hub: {nothing}"),
            "`clusteradm get clusters` lists the known clusters",
        )
        .into());
    }
    Ok(found.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_deduplicated_in_order() {
        let given = ["b".to_string(), " a ".into(), String::new(), "b".into()];
        assert_eq!(names(&given), ["b", "a"]);
    }
}
