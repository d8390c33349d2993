//! Hosted mode's settings (pure): where the hub's API server reaches the hub pods' webhooks.
//!
//! Our hub pods run on the management cluster and serve every webhook (admission and the add-on
//! API's conversion) on one port. Upstream's `hosted.*WebhookConfiguration` give the address the
//! hub's API server calls (an IP: a selector-less Service and its Endpoints on the hub; a DNS
//! name: an `ExternalName` Service), which the user exposes. Left out, the operator copies the
//! hub pods' own addresses into that Endpoints, for hubs whose API server reaches the management
//! cluster's pod network (a hub control plane running as pods there, or this project's nodes).
use ocm_api::operator::{ClusterManagerDeployOption, HostedWebhookConfiguration};

use super::Error;

/// Upstream's default port of a hosted webhook address.
pub const DEFAULT_PORT: i32 = 443;

/// Where the hub's API server reaches the hub pods' webhooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostedWebhook {
    /// At the hub pods' own addresses, which the operator keeps current.
    PodAddresses,
    /// At an IP address and port the user exposes them on.
    Ip {
        /// The address.
        address: String,
        /// The port.
        port: i32,
    },
    /// At a DNS name and port the user exposes them on.
    Name {
        /// The name.
        address: String,
        /// The port.
        port: i32,
    },
}

/// The hosted webhook settings of `deploy` (mode Hosted).
///
/// # Errors
/// A setting our one hub pod cannot honour: a bind configuration (the pods serve on the pod
/// network), or registration and work webhooks at different addresses (one pod serves both).
pub fn webhook(deploy: &ClusterManagerDeployOption) -> Result<HostedWebhook, Error> {
    let hosted = deploy.hosted.clone().unwrap_or_default();
    let refuse = |what: &str| Err(Error::Unsupported(what.to_owned()));
    let configs = [
        ("registration", &hosted.registration_webhook_configuration),
        ("work", &hosted.work_webhook_configuration),
    ];
    for (name, config) in &configs {
        if config
            .as_ref()
            .is_some_and(|c| c.bind_configuration.is_some())
        {
            return refuse(&format!(
                "spec.deployOption.hosted.{name}WebhookConfiguration.bindConfiguration: our hub pods serve every webhook on the pod network, port 9443; expose that port at the address instead"
            ));
        }
    }
    let at = |c: &Option<HostedWebhookConfiguration>| {
        c.as_ref()
            .map(|c| (c.address.clone(), c.port.unwrap_or(DEFAULT_PORT)))
    };
    let (registration, work) = (
        at(&hosted.registration_webhook_configuration),
        at(&hosted.work_webhook_configuration),
    );
    let chosen = match (registration, work) {
        (None, None) => return Ok(HostedWebhook::PodAddresses),
        (Some(r), Some(w)) if r != w => {
            return refuse(
                "spec.deployOption.hosted.workWebhookConfiguration: our hub pods serve the registration and work webhooks together, so it must name the registrationWebhookConfiguration's address and port (or be left out)",
            );
        }
        (Some(one), _) | (None, Some(one)) => one,
    };
    let (address, port) = chosen;
    if address.trim().is_empty() {
        return refuse(
            "spec.deployOption.hosted.registrationWebhookConfiguration.address is empty: name the address the hub's API server reaches the hub pods at, or leave the configuration out",
        );
    }
    if !(1..=65535).contains(&port) {
        return refuse(&format!(
            "spec.deployOption.hosted.registrationWebhookConfiguration.port {port} is not a port"
        ));
    }
    Ok(if is_ip(&address) {
        HostedWebhook::Ip { address, port }
    } else {
        HostedWebhook::Name { address, port }
    })
}

/// Whether `address` is an IPv4 address (upstream's test: digits and dots).
fn is_ip(address: &str) -> bool {
    address.parse::<std::net::Ipv4Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy(yaml: &str) -> ClusterManagerDeployOption {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn no_address_means_the_pods_own_an_ip_an_endpoint_and_a_name_an_external_name() {
        assert_eq!(
            webhook(&deploy("{mode: Hosted}")).unwrap(),
            HostedWebhook::PodAddresses
        );
        assert_eq!(
            webhook(&deploy(
                "{mode: Hosted, hosted: {registrationWebhookConfiguration: {address: 10.1.2.3, port: 30443}}}"
            ))
            .unwrap(),
            HostedWebhook::Ip {
                address: "10.1.2.3".into(),
                port: 30443
            }
        );
        assert_eq!(
            webhook(&deploy(
                "{mode: Hosted, hosted: {workWebhookConfiguration: {address: hub-webhooks.example.com}}}"
            ))
            .unwrap(),
            HostedWebhook::Name {
                address: "hub-webhooks.example.com".into(),
                port: DEFAULT_PORT
            }
        );
    }

    #[test]
    fn what_one_pod_cannot_serve_is_refused_by_its_field() {
        let err = webhook(&deploy(
            "{mode: Hosted, hosted: {registrationWebhookConfiguration: {address: a.example, port: 1}, workWebhookConfiguration: {address: b.example, port: 1}}}",
        ))
        .unwrap_err();
        assert!(
            err.to_string().contains("workWebhookConfiguration"),
            "{err}"
        );
        let err = webhook(&deploy(
            "{mode: Hosted, hosted: {registrationWebhookConfiguration: {address: 10.0.0.1, bindConfiguration: {hostNetwork: true}}}}",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("bindConfiguration"), "{err}");
        let err = webhook(&deploy(
            "{mode: Hosted, hosted: {registrationWebhookConfiguration: {address: ''}}}",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("address is empty"), "{err}");
    }
}
