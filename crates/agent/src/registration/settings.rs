//! What a Klusterlet's `registrationConfiguration` (and `externalServerURLs`) tells our
//! registration agent; upstream's registration agent takes each as a flag of the same meaning
//! (`--client-cert-expiration-seconds`, `--cluster-annotations`, `--spoke-external-server-urls`,
//! `--max-custom-cluster-claims`, `--reserved-cluster-claim-suffixes`).
use std::collections::BTreeMap;

use k8s_openapi::ByteString;

use ocm_api::cluster::ClientConfig;

/// Upstream's prefix of the annotations an agent may put on its ManagedCluster; others are
/// passed over (with a warning), as upstream's agent does.
pub const ANNOTATION_PREFIX: &str = "agent.open-cluster-management.io";

/// How many custom claims are reported, and which claims count as reserved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimLimits {
    /// Custom (not reserved) claims reported at most (upstream's default, 20).
    pub max_custom: usize,
    /// A claim whose name ends with one of these is reserved: always reported.
    pub reserved_suffixes: Vec<String>,
}

impl Default for ClaimLimits {
    fn default() -> Self {
        Self {
            max_custom: 20,
            reserved_suffixes: Vec::new(),
        }
    }
}

/// The registration agent's settings from its Klusterlet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `expirationSeconds` of the CSRs (the signer's default when `None`; 600 is the minimum).
    pub cert_expiration_seconds: Option<i32>,
    /// Annotations put on the ManagedCluster the agent creates.
    pub cluster_annotations: BTreeMap<String, String>,
    /// Labels put on the ManagedCluster the agent creates (`clusterLabels`, which upstream's
    /// agents do not act on).
    pub cluster_labels: BTreeMap<String, String>,
    /// How the hub reaches this cluster's API server (`spec.managedClusterClientConfigs` of the
    /// ManagedCluster the agent creates): each URL with its CA, none given: the CA the agent
    /// trusts the cluster with.
    pub external_servers: Vec<ClientConfig>,
    /// `clusterClaimConfiguration`.
    pub claims: ClaimLimits,
    /// `addOnKubeClientRegistrationDriver`: certificates or tokens for add-ons' hub clients.
    pub addon_auth: crate::addon::token::Auth,
}

impl Settings {
    /// The annotations the agent puts on its ManagedCluster: those under [`ANNOTATION_PREFIX`].
    #[must_use]
    pub fn annotations(&self) -> BTreeMap<String, String> {
        self.cluster_annotations
            .iter()
            .filter(|(key, _)| {
                let ours = key.starts_with(ANNOTATION_PREFIX);
                if !ours {
                    tracing::warn!(
                        "cluster annotation {key:?} does not start with {ANNOTATION_PREFIX:?}: not put on the ManagedCluster"
                    );
                }
                ours
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The client configs of the ManagedCluster: `given` (an explicit one, if any) then each
    /// external server not already named, with `managed_ca` where it names no CA.
    #[must_use]
    pub fn client_configs(
        &self,
        given: Option<&ClientConfig>,
        managed_ca: Option<&[u8]>,
    ) -> Vec<ClientConfig> {
        let mut configs: Vec<ClientConfig> = given.cloned().into_iter().collect();
        for server in &self.external_servers {
            if configs.iter().any(|c| c.url == server.url) {
                continue;
            }
            let ca_bundle = server
                .ca_bundle
                .clone()
                .or_else(|| managed_ca.map(|ca| ByteString(ca.to_vec())));
            configs.push(ClientConfig {
                url: server.url.clone(),
                ca_bundle,
            });
        }
        configs
    }
}

/// Parses upstream's `--cluster-annotations` value (and our `--cluster-labels`), `k1=v1,k2=v2`.
pub fn parse_pairs(text: &str) -> Result<BTreeMap<String, String>, String> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| format!("{pair:?} is not key=value"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_agent_annotations_reach_the_cluster() {
        let settings = Settings {
            cluster_annotations: parse_pairs(
                "agent.open-cluster-management.io/zone=eu,team=payments",
            )
            .unwrap(),
            ..Settings::default()
        };
        assert_eq!(
            settings.annotations().into_iter().collect::<Vec<_>>(),
            [(
                "agent.open-cluster-management.io/zone".to_owned(),
                "eu".to_owned()
            )]
        );
        assert!(parse_pairs("novalue").is_err());
    }

    #[test]
    fn external_servers_take_the_managed_ca_unless_they_name_one() {
        let settings = Settings {
            external_servers: vec![
                ClientConfig {
                    url: "https://a:6443".into(),
                    ca_bundle: None,
                },
                ClientConfig {
                    url: "https://b:6443".into(),
                    ca_bundle: Some(ByteString(b"b-ca".to_vec())),
                },
            ],
            ..Settings::default()
        };
        let configs = settings.client_configs(None, Some(b"managed-ca"));
        assert_eq!(configs.len(), 2);
        assert_eq!(configs[0].ca_bundle.as_ref().unwrap().0, b"managed-ca");
        assert_eq!(configs[1].ca_bundle.as_ref().unwrap().0, b"b-ca");
        // An explicit config for the same URL wins.
        let given = ClientConfig {
            url: "https://a:6443".into(),
            ca_bundle: None,
        };
        assert_eq!(settings.client_configs(Some(&given), None)[0], given);
        assert_eq!(settings.client_configs(Some(&given), None).len(), 2);
    }
}
