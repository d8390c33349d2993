//! Removing the hub: what the finalizer does when the ClusterManager is deleted, and what
//! `clusteradm clean` runs itself when no operator is running. Webhook configurations go first
//! (nothing may point at a removed Service), then Deployments, Services, RBAC and the hub
//! namespace, and the hub CRDs last — managedclusteraddons, manifestworks, managedclusters and
//! manifestworkreplicasets one after another (upstream's order: dependents before what they
//! refer to), then the rest. Objects already gone count as removed.
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client};

use super::InProcess;
use super::certs::Certs;
use super::desired::{self, Desired};
use ocm_api::operator::{CLUSTER_MANAGER_NAME, ClusterManager, ClusterManagerSpec};
use ocm_runtime::apply::{ObjectError, Resolver, delete};

/// CRDs removed one by one, in this order, before the others.
pub const CRDS_FIRST: [&str; 4] = [
    "managedclusteraddons.addon.open-cluster-management.io",
    "manifestworks.work.open-cluster-management.io",
    "managedclusters.cluster.open-cluster-management.io",
    "manifestworkreplicasets.work.open-cluster-management.io",
];

/// Some objects could not be removed.
#[derive(Debug, thiserror::Error)]
#[error("{} hub objects could not be removed:\n{}{}", .failures.len(), ocm_runtime::apply::list_failures(.failures), held(.held_by))]
pub struct Error {
    /// What failed.
    pub failures: Vec<ObjectError>,
    /// Custom resources whose finalizers keep a CRD from going (at most a few per CRD).
    pub held_by: Vec<String>,
}

fn held(by: &[String]) -> String {
    if by.is_empty() {
        return String::new();
    }
    format!(
        "\nstill waiting for (whoever owns their finalizers must remove them): {}",
        by.join(", ")
    )
}

/// Everything any mode of the operator may have created, as `(objects, ordered CRDs)`: the
/// objects of the full (nothing in-process) hub, and every hub CRD in deletion order.
#[must_use]
pub fn inventory() -> (Vec<DynamicObject>, Vec<DynamicObject>) {
    let desired = full_hub(
        ClusterManagerSpec::default(),
        InProcess {
            hub_deployment: true,
            ..InProcess::NOTHING
        },
    );
    // Every mode's objects: the deployed webhooks' configurations above, and the admission
    // policies an in-process hub has in their place.
    let mut everything = desired.objects();
    everything.extend(
        desired::admission::policies()
            .iter()
            .map(ocm_runtime::apply::to_dynamic),
    );
    everything.extend(
        desired::admission::bindings()
            .iter()
            .map(ocm_runtime::apply::to_dynamic),
    );
    // The one configuration our hub's webhooks have and upstream's do not.
    everything.extend(
        desired::webhook::validating(desired::webhook::Endpoint::HubService(0), b"")
            .iter()
            .filter(|c| c.metadata.name.as_deref() == Some(desired::webhook::REPLICA_SET_VALIDATOR))
            .map(ocm_runtime::apply::to_dynamic),
    );
    // The identity our add-on manager binds templates' permissions as, which upstream's
    // add-on manager (deployed above) replaces.
    everything.extend([
        ocm_runtime::apply::to_dynamic(&desired::hub::addon_manager_cluster_role_binding()),
        ocm_runtime::apply::to_dynamic(&desired::hub::addon_manager_cluster_role()),
    ]);
    let (mut crds, objects): (Vec<_>, Vec<_>) = everything.into_iter().partition(|o| {
        o.types
            .as_ref()
            .is_some_and(|t| t.kind == "CustomResourceDefinition")
    });
    let rank = |o: &DynamicObject| {
        let name = o.metadata.name.as_deref().unwrap_or_default();
        CRDS_FIRST
            .iter()
            .position(|n| *n == name)
            .unwrap_or(CRDS_FIRST.len())
    };
    crds.sort_by_key(rank);
    (objects, crds)
}

/// The hub of a ClusterManager with `spec` (valid), as `in_process` deploys it, with empty
/// certificates: what to remove.
pub(super) fn full_hub(spec: ClusterManagerSpec, in_process: InProcess) -> Desired {
    let cm = ClusterManager::new(CLUSTER_MANAGER_NAME, spec);
    let v = super::validate::validate(&cm).expect("the spec is valid");
    desired::build(&v, &Certs::default(), in_process)
}

/// Removes the hub components and the hub CRDs; each deletion is waited on up to `timeout`.
/// The ordered CRDs go one at a time and a stuck one stops the rest: deleting what a pending
/// finalizer still needs would strand it for good.
pub async fn run(client: &Client, timeout: Duration) -> Result<(), Error> {
    let resolver = Resolver::new(client.clone());
    let (objects, crds) = inventory();
    let mut failures = Vec::new();
    if let Err(f) = delete::delete_all(&resolver, &objects, timeout).await {
        failures.extend(f);
    }
    let (first, rest): (Vec<_>, Vec<_>) = crds
        .into_iter()
        .partition(|c| CRDS_FIRST.contains(&c.metadata.name.as_deref().unwrap_or_default()));
    for crd in first {
        if let Err(f) = delete::delete_all(&resolver, std::slice::from_ref(&crd), timeout).await {
            let name = crd.metadata.name.unwrap_or_default();
            return Err(Error {
                failures: failures.into_iter().chain(f).collect(),
                held_by: held_by(client, &name).await,
            });
        }
    }
    if let Err(f) = delete::delete_all(&resolver, &rest, timeout).await {
        failures.extend(f);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error {
            failures,
            held_by: Vec::new(),
        })
    }
}

/// A few custom resources of CRD `name` still present (with their finalizers), for the error.
async fn held_by(client: &Client, name: &str) -> Vec<String> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let Ok(Some(crd)) = crds.get_opt(name).await else {
        return Vec::new();
    };
    let Some(version) = crd.spec.versions.iter().find(|v| v.storage) else {
        return Vec::new();
    };
    let names = &crd.spec.names;
    let gvk = GroupVersionKind::gvk(&crd.spec.group, &version.name, &names.kind);
    let ar = ApiResource::from_gvk_with_plural(&gvk, &names.plural);
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let Ok(list) = api.list(&ListParams::default().limit(5)).await else {
        return Vec::new();
    };
    list.items
        .iter()
        .map(|o| {
            let ns = o
                .metadata
                .namespace
                .as_deref()
                .map(|n| format!("{n}/"))
                .unwrap_or_default();
            let finalizers = o.metadata.finalizers.clone().unwrap_or_default().join(",");
            format!(
                "{} {ns}{} [{finalizers}]",
                names.kind,
                o.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

/// Removes the admission webhook configurations alone: with no hub running (an in-process hub
/// that crashed leaves them naming a server that is gone) they refuse every ManagedCluster and
/// ManifestWork write, releasing finalizers included, so `clean` removes them first.
pub async fn remove_admission(client: &Client, timeout: Duration) -> Result<(), Error> {
    let (objects, _) = inventory();
    let configurations: Vec<DynamicObject> = objects
        .into_iter()
        .filter(|o| {
            o.types.as_ref().is_some_and(|t| {
                t.kind == "ValidatingWebhookConfiguration"
                    || t.kind == "MutatingWebhookConfiguration"
            })
        })
        .collect();
    delete::delete_all(&Resolver::new(client.clone()), &configurations, timeout)
        .await
        .map(|_| ())
        .map_err(|failures| Error {
            failures,
            held_by: Vec::new(),
        })
}

/// Removes the hub components and CRDs (as the operator does when its ClusterManager is
/// deleted), for `clusteradm clean` when no operator is running.
pub async fn cleanup(client: &Client, timeout: Duration) -> anyhow::Result<()> {
    run(client, timeout).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crds_go_in_upstreams_order_and_everything_else_is_listed() {
        let (objects, crds) = inventory();
        let names: Vec<&str> = crds
            .iter()
            .map(|c| c.metadata.name.as_deref().unwrap())
            .collect();
        assert_eq!(names[..4], CRDS_FIRST);
        assert_eq!(names.len(), ocm_api::hub_crds().len());
        let has = |kind: &str, name: &str| {
            objects.iter().any(|o| {
                o.types.as_ref().unwrap().kind == kind && o.metadata.name.as_deref() == Some(name)
            })
        };
        assert!(has("Namespace", "open-cluster-management-hub"));
        assert!(has(
            "ValidatingWebhookConfiguration",
            desired::MANIFEST_WORK_VALIDATOR
        ));
        assert!(has(
            "ValidatingWebhookConfiguration",
            desired::webhook::REPLICA_SET_VALIDATOR
        ));
        assert!(has("Deployment", "cluster-manager-registration-controller"));
        assert!(has("ClusterRole", desired::hub::ADDON_MANAGER_ROLE));
        assert!(has(
            "ClusterRole",
            "open-cluster-management:cluster-manager-placement:controller"
        ));
    }
}
