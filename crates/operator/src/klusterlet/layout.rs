//! A Klusterlet whose layout changed (Default ↔ Singleton, or our image replacing upstream's):
//! the agents' Deployments and ServiceAccounts the new layout does not have go, so that two sets
//! of agents never run for one cluster. They are the Klusterlet's (its label) in the agents'
//! namespace and not in what was just applied.
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DeleteParams, ListParams};
use kube::{Client, ResourceExt};

use super::desired::{Desired, KLUSTERLET_LABEL};
use super::validate::Validated;

/// Deletes the Klusterlet's agent Deployments and ServiceAccounts in its agents' namespace that
/// `desired` does not hold; returns how many went.
pub async fn remove_former_agents(
    client: &Client,
    v: &Validated,
    desired: &Desired,
) -> Result<usize, kube::Error> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &v.agent_namespace);
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &v.agent_namespace);
    let mut removed =
        remove_unwanted(&deployments, v, &names(&desired.management.deployments)).await?;
    removed += remove_unwanted(&accounts, v, &names(&desired.management.service_accounts)).await?;
    Ok(removed)
}

/// Deletes the Klusterlet's objects in `api` not named in `wanted`; returns how many went.
async fn remove_unwanted<K>(
    api: &Api<K>,
    v: &Validated,
    wanted: &[String],
) -> Result<usize, kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let selector = ListParams::default().labels(&format!("{KLUSTERLET_LABEL}={}", v.name));
    let mut removed = 0;
    for object in api.list_metadata(&selector).await? {
        if !wanted.contains(&object.name_any()) {
            delete(api, &object.name_any()).await?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The names of `objects`.
fn names<K: kube::Resource>(objects: &[K]) -> Vec<String> {
    objects.iter().map(ResourceExt::name_any).collect()
}

async fn delete<K>(api: &Api<K>, name: &str) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::foreground()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
