//! What the node should serve, from the cluster's Services and EndpointSlices: each TCP port of a
//! ClusterIP Service with the ready endpoints behind it, a NodePort (or LoadBalancer) Service's
//! node port on the node's own address too, and the DNS records of every Service.
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::ResourceExt as _;

/// The label an EndpointSlice names its Service by.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The cluster's DNS domain (the kubelets' `clusterDomain`).
pub const DOMAIN: &str = "cluster.local";

/// A Service's virtual address: its ClusterIP and port.
pub type Frontend = (IpAddr, u16);

/// Everything the node serves.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Each TCP Service port, with the endpoints it leads to (none: connections are refused).
    pub ports: BTreeMap<Frontend, Vec<SocketAddr>>,
    /// DNS records: a name and the addresses it resolves to.
    pub records: BTreeMap<String, Vec<IpAddr>>,
}

/// The table for `services` and `slices` on the node at `node_ip`. The `default/kubernetes`
/// Service has its name but no port here: the plane leads its address to the API server itself.
#[must_use]
pub fn build(
    services: &[impl AsRef<Service>],
    slices: &[impl AsRef<EndpointSlice>],
    node_ip: IpAddr,
) -> Table {
    let mut table = Table::default();
    // ExternalName Services, resolved once every other name is known.
    let mut aliases = Vec::new();
    for service in services.iter().map(AsRef::as_ref) {
        let (ns, name) = (service.namespace().unwrap_or_default(), service.name_any());
        let spec = service.spec.clone().unwrap_or_default();
        let fqdn = format!("{name}.{ns}.svc.{DOMAIN}");
        if spec.type_.as_deref() == Some("ExternalName") {
            if let Some(target) = spec.external_name.as_deref() {
                aliases.push((fqdn, cluster_name(target)));
            }
            continue;
        }
        let cluster_ip = spec
            .cluster_ip
            .as_deref()
            .and_then(|ip| ip.parse::<IpAddr>().ok());
        if ns == "default" && name == "kubernetes" {
            table.records.extend(cluster_ip.map(|ip| (fqdn, vec![ip])));
            continue;
        }
        let own: Vec<&EndpointSlice> = slices
            .iter()
            .map(AsRef::as_ref)
            .filter(|s| s.namespace().as_deref() == Some(ns.as_str()))
            .filter(|s| s.labels().get(SERVICE_NAME_LABEL) == Some(&name))
            .collect();
        let Some(ip) = cluster_ip else {
            // Headless: the name resolves to the ready endpoints themselves.
            let mut ips: Vec<IpAddr> = endpoints(&own, None).iter().map(SocketAddr::ip).collect();
            ips.sort_unstable();
            ips.dedup();
            if !ips.is_empty() {
                table.records.insert(fqdn, ips);
            }
            continue;
        };
        table.records.insert(fqdn, vec![ip]);
        for port in spec.ports.unwrap_or_default() {
            if port.protocol.as_deref().unwrap_or("TCP") != "TCP" {
                continue;
            }
            let Ok(number) = u16::try_from(port.port) else {
                continue;
            };
            let targets = endpoints(&own, port.name.as_deref());
            // Every node serves a node port, as kube-proxy does.
            let exposed = matches!(spec.type_.as_deref(), Some("NodePort" | "LoadBalancer"));
            if let Some(node_port) = port
                .node_port
                .filter(|_| exposed)
                .and_then(|n| u16::try_from(n).ok())
            {
                table.ports.insert((node_ip, node_port), targets.clone());
            }
            table.ports.insert((ip, number), targets);
        }
    }
    // A hosts file has no CNAME: an ExternalName gets its target's addresses, which is what a
    // client of the CNAME ends with. A target outside the cluster has none here (no outside DNS).
    for (alias, target) in aliases {
        if let Some(ips) = table.records.get(&target).cloned() {
            table.records.insert(alias, ips);
        }
    }
    table
}

/// `target` as the cluster's full name for it: without a trailing dot, and `<svc>.<ns>.svc`
/// completed with the cluster domain, as a pod's search path completes it.
fn cluster_name(target: &str) -> String {
    // DNS names match whatever their case; the records are lower case.
    let target = target.trim_end_matches('.').to_ascii_lowercase();
    match target.strip_suffix(".svc") {
        Some(_) => format!("{target}.{DOMAIN}"),
        None => target,
    }
}

/// The ready endpoints of the slices' port named `port` (a Service's unnamed port is the
/// slices' unnamed one); with `None`, of every port (for addresses only).
fn endpoints(slices: &[&EndpointSlice], port: Option<&str>) -> Vec<SocketAddr> {
    let mut found = Vec::new();
    for slice in slices {
        let numbers: Vec<u16> = slice
            .ports
            .iter()
            .flatten()
            .filter(|p| port.is_none() || p.name.as_deref().unwrap_or("") == port.unwrap_or(""))
            .filter_map(|p| p.port.and_then(|n| u16::try_from(n).ok()))
            .collect();
        let numbers = if port.is_none() && numbers.is_empty() {
            vec![0]
        } else {
            numbers
        };
        for endpoint in slice.endpoints.iter().flatten() {
            // Unset readiness is ready, as kube-proxy reads it.
            let ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            for address in &endpoint.addresses {
                let Ok(ip) = address.parse::<IpAddr>() else {
                    continue;
                };
                found.extend(numbers.iter().map(|n| SocketAddr::new(ip, *n)));
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// The records as a hosts file (`address name` per line), which the DNS server reads.
#[must_use]
pub fn hosts_file(records: &BTreeMap<String, Vec<IpAddr>>) -> String {
    records
        .iter()
        .flat_map(|(name, ips)| ips.iter().map(move |ip| format!("{ip} {name}\n")))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use serde_json::json;

    const NODE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 200, 0, 1));

    fn service(name: &str, ip: &str, ports: &serde_json::Value) -> Service {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
            "spec": {"clusterIP": ip, "ports": ports}}))
        .unwrap()
    }

    fn slice(
        service: &str,
        ports: &serde_json::Value,
        endpoints: &serde_json::Value,
    ) -> EndpointSlice {
        serde_json::from_value(json!({
            "metadata": {"name": format!("{service}-x"), "namespace": "ns",
                "labels": {SERVICE_NAME_LABEL: service}},
            "addressType": "IPv4", "ports": ports, "endpoints": endpoints}))
        .unwrap()
    }

    #[test]
    fn a_service_port_leads_to_its_ready_endpoints_by_port_name() {
        let services = [Arc::new(service(
            "web",
            "10.96.0.10",
            &json!([{"name": "https", "port": 443}, {"name": "dns", "port": 53, "protocol": "UDP"}]),
        ))];
        let slices = [Arc::new(slice(
            "web",
            &json!([{"name": "https", "port": 8443}, {"name": "dns", "port": 5353}]),
            &json!([{"addresses": ["10.1.0.5"]},
                   {"addresses": ["10.1.0.6"], "conditions": {"ready": false}}]),
        ))];
        let table = build(&services, &slices, NODE);
        let ip: IpAddr = "10.96.0.10".parse().unwrap();
        assert_eq!(
            table.ports,
            BTreeMap::from([((ip, 443), vec!["10.1.0.5:8443".parse().unwrap()])]),
            "UDP is not proxied, an unready endpoint is not used"
        );
        assert_eq!(table.records["web.ns.svc.cluster.local"], vec![ip]);
    }

    #[test]
    fn kubernetes_has_its_name_but_no_port_and_an_external_name_resolves_to_its_target() {
        let mut kubernetes = service("kubernetes", "10.96.0.1", &json!([{"port": 443}]));
        kubernetes.metadata.namespace = Some("default".into());
        let alias = |name: &str, target: &str| -> Service {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
                "spec": {"type": "ExternalName", "externalName": target}}))
            .unwrap()
        };
        let services = [
            Arc::new(kubernetes),
            Arc::new(alias("loopback", "kubernetes.default.svc")),
            Arc::new(alias("full", "kubernetes.default.svc.cluster.local.")),
            Arc::new(alias("outside", "example.com")),
        ];
        let table = build(&services, &[] as &[Arc<EndpointSlice>], NODE);
        assert!(
            table.ports.is_empty(),
            "the plane leads 10.96.0.1:443 itself"
        );
        assert_eq!(
            hosts_file(&table.records),
            "10.96.0.1 full.ns.svc.cluster.local\n\
             10.96.0.1 kubernetes.default.svc.cluster.local\n\
             10.96.0.1 loopback.ns.svc.cluster.local\n",
            "a name outside the cluster has no record"
        );
    }

    #[test]
    fn a_node_port_leads_from_the_nodes_address_too() {
        let mut web = service(
            "web",
            "10.96.0.10",
            &json!([{"port": 443, "nodePort": 30443}]),
        );
        web.spec.as_mut().unwrap().type_ = Some("NodePort".into());
        let internal = service(
            "db",
            "10.96.0.11",
            &json!([{"port": 5432, "nodePort": 30432}]),
        );
        let slices = [
            Arc::new(slice(
                "web",
                &json!([{"port": 8443}]),
                &json!([{"addresses": ["10.1.0.5"]}]),
            )),
            Arc::new(slice(
                "db",
                &json!([{"port": 5432}]),
                &json!([{"addresses": ["10.1.0.6"]}]),
            )),
        ];
        let table = build(&[Arc::new(web), Arc::new(internal)], &slices, NODE);
        let target: SocketAddr = "10.1.0.5:8443".parse().unwrap();
        assert_eq!(table.ports[&(NODE, 30443)], vec![target]);
        assert_eq!(
            table.ports[&("10.96.0.10".parse().unwrap(), 443)],
            vec![target]
        );
        assert!(
            !table.ports.contains_key(&(NODE, 30432)),
            "a ClusterIP Service's stray nodePort is not served"
        );
    }

    #[test]
    fn a_headless_service_resolves_to_its_endpoints() {
        let services = [Arc::new(service("db", "None", &json!([{"port": 5432}])))];
        let slices = [Arc::new(slice(
            "db",
            &json!([{"port": 5432}]),
            &json!([{"addresses": ["10.1.0.7"]}, {"addresses": ["10.1.0.8"]}]),
        ))];
        let table = build(&services, &slices, NODE);
        assert!(table.ports.is_empty(), "{:?}", table.ports);
        assert_eq!(
            hosts_file(&table.records),
            "10.1.0.7 db.ns.svc.cluster.local\n10.1.0.8 db.ns.svc.cluster.local\n"
        );
    }
}
