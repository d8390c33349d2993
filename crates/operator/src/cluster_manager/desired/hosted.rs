//! Hosted mode's layout (pure): which of the hub's objects go to the hub cluster and which to the
//! management cluster, and what the hub pods need to run on the one and act on the other.
//!
//! - **The hub cluster** keeps what its API server and its users see: the CRDs, the hub namespace,
//!   the hub pods' identity and RBAC (their kubeconfig is a token of that ServiceAccount), the
//!   webhook configurations or admission policies, and the Service the webhooks are reached
//!   through, here with no selector: its Endpoints hold the hub pods' addresses, or the address
//!   the user exposes them at (a DNS name makes it an `ExternalName` Service), as upstream's.
//! - **The management cluster** runs the pods, in upstream's namespace `cluster-manager`: the
//!   Deployment, the certificates it mounts, the kubeconfig Secret, the network policy, the
//!   placement debug Service, and an identity there that may read the ClusterManager only (the
//!   hub pods follow its gates).
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Endpoints, Namespace, Service};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{DynamicObject, ObjectMeta};
use serde_json::json;

use super::{Desired, hub};
use crate::cluster_manager::validate::HostedWebhook;
use ocm_api::names::{HOSTED_HUB_NAMESPACE, HUB_NAMESPACE, HUB_SERVICE};

/// The management cluster's namespace of the hub pods (upstream's).
pub const NAMESPACE: &str = HOSTED_HUB_NAMESPACE;
/// The Secret with the hub pods' kubeconfig of the hub (upstream's `<ServiceAccount>-kubeconfig`).
pub const KUBECONFIG_SECRET: &str = "cluster-manager-hub-sa-kubeconfig";
/// Where the hub pods mount it (upstream's).
pub const KUBECONFIG_DIR: &str = "/var/run/secrets/hub";
/// The management cluster's ClusterRole (and binding) with which the hub pods read their
/// ClusterManager.
pub const MANAGEMENT_ROLE: &str = "open-cluster-management:cluster-manager-hub:management";
/// The port name the hub's Service and its Endpoints agree on.
const PORT_NAME: &str = "webhook";

/// The hub, split between the two clusters.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// What goes to the hub cluster.
    pub hub: Desired,
    /// What goes to the management cluster.
    pub management: Desired,
}

/// Splits `d` (built for our hub pods) for Hosted mode; the hub's API server reaches the webhooks
/// as `webhook` says (at `pod_ips`, the hub pods' current addresses, when it names none).
#[must_use]
pub fn split(d: Desired, webhook: &HostedWebhook, pod_ips: &[String]) -> Layout {
    let mut hub = d;
    let debug = |name: Option<&String>| name.is_some_and(|n| n == hub::PLACEMENT_DEBUG_SERVICE);
    let (debug_services, _ours): (Vec<Service>, Vec<Service>) = std::mem::take(&mut hub.services)
        .into_iter()
        .partition(|s| debug(s.metadata.name.as_ref()));
    let (debug_removed, removed): (Vec<DynamicObject>, Vec<DynamicObject>) =
        std::mem::take(&mut hub.removed)
            .into_iter()
            .partition(|o| debug(o.metadata.name.as_ref()));
    hub.removed = removed;
    hub.services = vec![service(webhook)];
    hub.endpoints = endpoints(webhook, pod_ips).into_iter().collect();
    let mut management = Desired {
        namespace: namespace(&hub.namespace),
        service_accounts: vec![hub::named_service_account(hub::SERVICE_ACCOUNT, NAMESPACE)],
        cluster_roles: vec![management_role()],
        cluster_role_bindings: vec![management_role_binding()],
        secrets: std::mem::take(&mut hub.secrets),
        config_maps: std::mem::take(&mut hub.config_maps),
        services: debug_services,
        deployments: std::mem::take(&mut hub.deployments),
        network_policies: std::mem::take(&mut hub.network_policies),
        removed: debug_removed,
        synced_labels: hub.synced_labels.clone(),
        ..Desired::default()
    };
    for deployment in &mut management.deployments {
        act_on_the_hub(deployment);
    }
    move_to_management(&mut management);
    Layout { hub, management }
}

/// The management namespace, under the Pod Security labels the hub namespace would carry.
fn namespace(hub_namespace: &Namespace) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.into()),
            labels: hub_namespace.metadata.labels.clone(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Every namespaced object of `m` into [`NAMESPACE`].
fn move_to_management(m: &mut Desired) {
    let into = |meta: &mut ObjectMeta| {
        if meta.namespace.is_some() {
            meta.namespace = Some(NAMESPACE.into());
        }
    };
    m.secrets.iter_mut().for_each(|o| into(&mut o.metadata));
    m.config_maps.iter_mut().for_each(|o| into(&mut o.metadata));
    m.services.iter_mut().for_each(|o| into(&mut o.metadata));
    m.deployments.iter_mut().for_each(|o| into(&mut o.metadata));
    m.network_policies
        .iter_mut()
        .for_each(|o| into(&mut o.metadata));
    m.removed.iter_mut().for_each(|o| into(&mut o.metadata));
}

/// The hub pods act on the hub with the mounted kubeconfig, and read their ClusterManager from
/// the cluster they run in.
fn act_on_the_hub(deployment: &mut Deployment) {
    let Some(pod) = deployment
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
    else {
        return;
    };
    for container in &mut pod.containers {
        let args = container.args.get_or_insert_with(Vec::new);
        args.push(format!("--kubeconfig={KUBECONFIG_DIR}/kubeconfig"));
        args.push("--cluster-manager-in-cluster".into());
        container.volume_mounts.get_or_insert_with(Vec::new).push(
            serde_json::from_value(
                json!({"name": "hub-kubeconfig", "mountPath": KUBECONFIG_DIR, "readOnly": true}),
            )
            .expect("a valid mount"),
        );
    }
    pod.volumes.get_or_insert_with(Vec::new).push(
        serde_json::from_value(
            json!({"name": "hub-kubeconfig", "secret": {"secretName": KUBECONFIG_SECRET}}),
        )
        .expect("a valid volume"),
    );
}

/// The hub's Service of the webhooks: no selector (no hub pod runs on the hub), or the DNS name
/// the user exposes them at.
#[must_use]
pub fn service(webhook: &HostedWebhook) -> Service {
    let port = hub::webhook_port_of(webhook);
    let spec = match webhook {
        HostedWebhook::Name { address, .. } => json!({
            "type": "ExternalName",
            "externalName": address,
            "ports": [{"name": PORT_NAME, "port": port, "targetPort": port}],
        }),
        HostedWebhook::Ip { .. } | HostedWebhook::PodAddresses => json!({
            "ports": [{"name": PORT_NAME, "port": port, "targetPort": port}],
        }),
    };
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": HUB_SERVICE, "namespace": HUB_NAMESPACE},
        "spec": spec,
    }))
    .expect("a valid Service")
}

/// The Service's Endpoints: the address the user names, or the hub pods' (none for a DNS name).
#[must_use]
pub fn endpoints(webhook: &HostedWebhook, pod_ips: &[String]) -> Option<Endpoints> {
    let port = hub::webhook_port_of(webhook);
    let addresses: Vec<&str> = match webhook {
        HostedWebhook::Name { .. } => return None,
        HostedWebhook::Ip { address, .. } => vec![address.as_str()],
        HostedWebhook::PodAddresses => pod_ips.iter().map(String::as_str).collect(),
    };
    let subsets = if addresses.is_empty() {
        json!([])
    } else {
        json!([{
            "addresses": addresses.iter().map(|ip| json!({"ip": ip})).collect::<Vec<_>>(),
            "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
        }])
    };
    Some(
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": HUB_SERVICE, "namespace": HUB_NAMESPACE},
            "subsets": subsets,
        }))
        .expect("valid Endpoints"),
    )
}

/// Read the ClusterManager (named: the only one the operator serves), nothing else.
fn management_role() -> ClusterRole {
    serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": MANAGEMENT_ROLE},
        "rules": [{
            "apiGroups": ["operator.open-cluster-management.io"],
            "resources": ["clustermanagers"],
            "verbs": ["get", "list", "watch"],
        }],
    }))
    .expect("a valid ClusterRole")
}

fn management_role_binding() -> ClusterRoleBinding {
    serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": MANAGEMENT_ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MANAGEMENT_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": hub::SERVICE_ACCOUNT, "namespace": NAMESPACE}],
    }))
    .expect("a valid ClusterRoleBinding")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_manager::InProcess;
    use crate::cluster_manager::desired::build;
    use crate::cluster_manager::test_support::{certs, cluster_manager};
    use crate::cluster_manager::validate::validate;

    const OURS: &str = "spec: {registrationImagePullSpec: i, workImagePullSpec: i, placementImagePullSpec: i, deployOption: {mode: Hosted}, placementConfiguration: {featureGates: [{feature: PlacementDebugServer, mode: Enable}]}}";

    fn layout(ips: &[String]) -> Layout {
        let v = validate(&cluster_manager(OURS)).unwrap();
        let webhook = v.hosted.clone().unwrap();
        split(
            build(&v, &certs(), InProcess::HUB_DEPLOYMENT),
            &webhook,
            ips,
        )
    }

    #[test]
    fn the_pods_and_what_they_mount_go_to_the_management_namespace_the_rest_to_the_hub() {
        let l = layout(&["10.0.0.7".into(), "10.0.0.8".into()]);
        let m = &l.management;
        assert_eq!(m.namespace.metadata.name.as_deref(), Some(NAMESPACE));
        assert!(!m.deployments.is_empty() && !m.secrets.is_empty());
        let namespaces: Vec<_> = m
            .objects()
            .into_iter()
            .filter_map(|o| o.metadata.namespace)
            .collect();
        assert!(namespaces.iter().all(|n| n == NAMESPACE), "{namespaces:?}");
        assert_eq!(
            m.services[0].metadata.name.as_deref(),
            Some(hub::PLACEMENT_DEBUG_SERVICE)
        );
        // The hub keeps no pod, no certificate key, and a Service without a selector whose
        // Endpoints are the pods'.
        let h = &l.hub;
        assert!(h.deployments.is_empty() && h.secrets.is_empty() && !h.crds.is_empty());
        assert_eq!(h.services.len(), 1);
        assert_eq!(h.services[0].spec.as_ref().unwrap().selector, None);
        let subset = &h.endpoints[0].subsets.as_ref().unwrap()[0];
        let ips: Vec<_> = subset.addresses.iter().flatten().map(|a| &a.ip).collect();
        assert_eq!(ips, ["10.0.0.7", "10.0.0.8"]);
        assert_eq!(subset.ports.as_ref().unwrap()[0].port, 9443);
        // No pod ready yet: no address, rather than a stale one.
        let none = layout(&[]);
        assert_eq!(none.hub.endpoints[0].subsets.as_deref(), Some(&[][..]));
    }

    #[test]
    fn a_dns_name_is_an_external_name_with_no_endpoints() {
        let webhook = HostedWebhook::Name {
            address: "hub-webhooks.example.com".into(),
            port: 30443,
        };
        let spec = service(&webhook).spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("ExternalName"));
        assert_eq!(
            spec.external_name.as_deref(),
            Some("hub-webhooks.example.com")
        );
        assert_eq!(spec.ports.unwrap()[0].port, 30443);
        assert!(endpoints(&webhook, &["10.0.0.7".into()]).is_none());
    }
}
