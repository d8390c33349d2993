//! What `clean` does in place of the hub controllers when none runs: ManagedClusters and
//! ManifestWorks keep finalizers nobody else would remove, and their CRDs could never go. Each
//! cluster is cleaned up as the controller would on its deletion (RBAC removed, namespace removed
//! when it is the cluster's own, finalizer dropped), and works are released: what they applied
//! stays on the managed clusters, whose agents are no longer answerable here.
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, ResourceExt as _};

use super::writer::Writer;
use ocm_api::cluster::ManagedCluster;
use ocm_api::work::ManifestWork;

/// Releases every ManifestWork and removes every ManagedCluster (see the module docs), then waits
/// up to `timeout` until the clusters' namespaces are gone (their works' finalizers held them). A
/// missing CRD means there is nothing of that kind; any other failure is an error.
pub async fn release_all(client: &Client, timeout: Duration) -> anyhow::Result<()> {
    // Clusters first: their agents lose their RBAC before any work changes, so no agent still
    // bound acts on a work's deletion (which would remove what it applied).
    let clusters: Api<ManagedCluster> = Api::all(client.clone());
    let writer = Writer::new(client.clone());
    let mut released = Vec::new();
    for mc in list_or_empty(&clusters)
        .await
        .context("listing ManagedClusters")?
    {
        let name = mc.name_any();
        released.push(name.clone());
        match clusters.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => return Err(e).with_context(|| format!("deleting ManagedCluster {name}")),
        }
        match writer.release(&name).await {
            Err(e) if e.code() != Some(404) => {
                return Err(e).with_context(|| format!("removing managed cluster {name}"));
            }
            _ => {}
        }
    }
    let strip = serde_json::json!({"metadata": {"finalizers": null}});
    let works: Api<ManifestWork> = Api::all(client.clone());
    for work in list_or_empty(&works)
        .await
        .context("listing ManifestWorks")?
        .iter()
        .filter(|w| !w.finalizers().is_empty())
    {
        let ns = work.namespace().unwrap_or_default();
        let name = work.name_any();
        match Api::<ManifestWork>::namespaced(client.clone(), &ns)
            .patch(&name, &PatchParams::default(), &Patch::Merge(&strip))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e).with_context(|| format!("releasing ManifestWork {ns}/{name}")),
        }
    }
    remove_shared_roles(client).await?;
    namespaces_gone(client, &released, timeout).await
}

/// Waits, all of them within `timeout`, until the namespaces the cleanup deleted are gone (a
/// namespace goes once the namespace controller has removed what it held).
async fn namespaces_gone(
    client: &Client,
    names: &[String],
    timeout: Duration,
) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    for name in names {
        let Some(ns) = namespaces.get_opt(name).await? else {
            continue;
        };
        if ns.metadata.deletion_timestamp.is_none() {
            continue; // not the cluster's own: the cleanup left it
        }
        let uid = ns.metadata.uid.unwrap_or_default();
        tokio::time::timeout_at(
            deadline,
            await_condition(namespaces.clone(), name, conditions::is_deleted(&uid)),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "namespace {name} is still terminating after {timeout:?} (see `kubectl get namespace {name} -o yaml`); re-run `clusteradm clean` to wait again"
            )
        })??;
    }
    Ok(())
}

/// Deletes the ClusterRoles every cluster's RoleBindings referred to (after the clusters).
pub async fn remove_shared_roles(client: &Client) -> anyhow::Result<()> {
    let roles: Api<ClusterRole> = Api::all(client.clone());
    for role in super::rbac::shared_cluster_roles() {
        let name = role.name_any();
        match roles.delete(&name, &DeleteParams::default()).await {
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e).with_context(|| format!("deleting ClusterRole {name}")),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Lists every object of a kind; a kind the server does not serve (CRD missing) lists empty.
async fn list_or_empty<K>(api: &Api<K>) -> Result<Vec<K>, kube::Error>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(vec![]),
        Err(e) => Err(e),
    }
}
