//! Hosted mode's I/O (the layout itself is [`desired::hosted`]): the hub cluster's client from
//! the external hub kubeconfig the user put beside the hub pods, the hub pods' addresses, their
//! kubeconfig of the hub, applying the two sides and removing them.
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::api::{ListParams, ObjectMeta};
use kube::{Api, Client};

use super::apply::{self, Applied};
use super::desired::{self, hosted::Layout};
use super::validate::HostedWebhook;
use super::{InProcess, cleanup};
use crate::token_kubeconfig::{self, Identity};
use ocm_api::names::{EXTERNAL_HUB_SECRET, HUB_NAMESPACE};
use ocm_api::operator::ClusterManagerSpec;
use ocm_runtime::apply::{Applier, MANAGED_BY_LABEL, delete};

pub use desired::hosted::NAMESPACE;

/// The field manager of the hub pods' kubeconfig Secret.
const MANAGER: &str = "cluster-manager-operator";

/// The hub cluster: a client with the user's kubeconfig, the cluster it names, and its text.
pub type Hub = token_kubeconfig::FromSecret;

/// The hub from Secret [`EXTERNAL_HUB_SECRET`] in [`NAMESPACE`] on `management`.
///
/// # Errors
/// A message for the Applied condition, saying what to create.
pub async fn hub(management: &Client) -> Result<Hub, String> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), NAMESPACE);
    token_kubeconfig::from_secret(&secrets, EXTERNAL_HUB_SECRET)
        .await
        .map_err(|e| {
            format!(
                "{e} (namespace {NAMESPACE}): Hosted mode reaches the hub cluster with the kubeconfig in its key `kubeconfig` (`clusteradm init --mode hosted --hub-kubeconfig FILE` writes it)"
            )
        })
}

/// The addresses of the hub pods that are ready, sorted.
///
/// # Errors
/// Listing the pods failed.
pub async fn ready_pod_ips(management: &Client) -> Result<Vec<String>, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(management.clone(), NAMESPACE);
    let selector = format!("app={}", desired::hub::NAME);
    let mut ips: Vec<String> = pods
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.status)
        .filter(|s| {
            s.conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
        .filter_map(|s| s.pod_ip)
        .collect();
    ips.sort();
    Ok(ips)
}

/// Applies the hub side with `hub`'s applier, then the management side with `management`'s, then
/// the hub pods' kubeconfig (their ServiceAccount exists on the hub by then).
///
/// # Errors
/// A message for the Applied condition.
pub async fn apply(
    hub: &Hub,
    (management, on_management): (&Client, &Applier),
    layout: &Layout,
    timeout: Duration,
) -> Result<Applied, String> {
    let on_hub = Applier::new(hub.client.clone(), timeout);
    let applied_hub = apply::apply(&on_hub, &layout.hub)
        .await
        .map_err(|e| format!("on the hub cluster: {}", ocm_runtime::report::chain(&e)))?;
    let mut applied = apply::apply(on_management, &layout.management)
        .await
        .map_err(|e| {
            format!(
                "on the management cluster: {}",
                ocm_runtime::report::chain(&e)
            )
        })?;
    applied.changed += applied_hub.changed;
    if kubeconfig(hub, management).await? {
        applied.changed += 1;
    }
    Ok(applied)
}

/// Makes or renews the hub pods' kubeconfig Secret; whether it wrote it.
async fn kubeconfig(hub: &Hub, management: &Client) -> Result<bool, String> {
    let secrets: Api<Secret> = Api::namespaced(management.clone(), NAMESPACE);
    let accounts: Api<ServiceAccount> = Api::namespaced(hub.client.clone(), HUB_NAMESPACE);
    let id = Identity {
        secret: ObjectMeta {
            name: Some(desired::hosted::KUBECONFIG_SECRET.into()),
            namespace: Some(NAMESPACE.into()),
            labels: Some(
                [(
                    MANAGED_BY_LABEL.to_owned(),
                    ocm_runtime::FIELD_MANAGER.to_owned(),
                )]
                .into(),
            ),
            ..Default::default()
        },
        account: desired::hub::SERVICE_ACCOUNT,
        account_namespace: HUB_NAMESPACE,
    };
    let text = hub.cluster.kubeconfig(desired::hosted::KUBECONFIG_DIR);
    token_kubeconfig::ensure(&secrets, &accounts, id, &text, MANAGER)
        .await
        .map_err(|e| format!("the hub pods' kubeconfig: {e} (on the hub cluster)"))
}

/// Removes a hosted hub: the hub cluster's side first (with the kubeconfig the user gave, which
/// goes with the management side after), then the management cluster's.
///
/// # Errors
/// The hub cluster unreachable, or objects that would not go.
pub async fn remove(management: &Client, timeout: Duration) -> anyhow::Result<()> {
    let hub = hub(management).await.map_err(anyhow::Error::msg)?;
    cleanup::run(&hub.client, timeout).await?;
    let resolver = ocm_runtime::apply::Resolver::new(management.clone());
    delete::delete_all(&resolver, &management_inventory(), timeout)
        .await
        .map_err(|failures| cleanup::Error {
            failures,
            held_by: Vec::new(),
        })?;
    Ok(())
}

/// Everything a hosted hub keeps on the management cluster, its namespace last.
fn management_inventory() -> Vec<kube::api::DynamicObject> {
    let debug_server = serde_json::json!({"featureGates": [{"feature": "PlacementDebugServer", "mode": "Enable"}]});
    let spec = ClusterManagerSpec {
        placement_configuration: Some(
            serde_json::from_value(debug_server).expect("a valid configuration"),
        ),
        ..ClusterManagerSpec::default()
    };
    let built = cleanup::full_hub(spec, InProcess::HUB_DEPLOYMENT);
    let layout = desired::hosted::split(built, &HostedWebhook::PodAddresses, &[]);
    let mut objects = layout.management.objects();
    objects.push(ocm_runtime::apply::to_dynamic(&Secret {
        metadata: ObjectMeta {
            name: Some(desired::hosted::KUBECONFIG_SECRET.into()),
            namespace: Some(NAMESPACE.into()),
            ..Default::default()
        },
        ..Default::default()
    }));
    // The namespace last: its deletion takes the rest, and the user's kubeconfig with it.
    let (namespaces, mut rest): (Vec<_>, Vec<_>) = objects
        .into_iter()
        .partition(|o| o.types.as_ref().is_some_and(|t| t.kind == "Namespace"));
    rest.extend(namespaces);
    rest
}
