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
    let wanted_deployments: Vec<String> = desired
        .management
        .deployments
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    let wanted_accounts: Vec<String> = desired
        .management
        .service_accounts
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    let selector = ListParams::default().labels(&format!("{KLUSTERLET_LABEL}={}", v.name));
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &v.agent_namespace);
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &v.agent_namespace);
    let mut removed = 0;
    for d in deployments.list_metadata(&selector).await? {
        if !wanted_deployments.contains(&d.name_any()) {
            delete(&deployments, &d.name_any()).await?;
            removed += 1;
        }
    }
    for a in accounts.list_metadata(&selector).await? {
        if !wanted_accounts.contains(&a.name_any()) {
            delete(&accounts, &a.name_any()).await?;
            removed += 1;
        }
    }
    Ok(removed)
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
