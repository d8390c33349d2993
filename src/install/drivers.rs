//! The ClusterManager's registration drivers as `init`'s flags name them, written as upstream's
//! `clusteradm init` writes them (`pkg/cmd/init/exec.go`, `getRegistrationDrivers`): one entry per
//! `--registration-drivers` name, in that order — `csr` with `--auto-approved-csr-identities`,
//! `awsirsa` with the hub's EKS ARN, tags and approved ARN patterns, `grpc` with its approved
//! identities and the server's endpoint. Our components implement `csr` alone; the CLI refuses
//! the others where ours run, and passes them to upstream's components unchanged.
use crate::api::operator::{
    AutoApproval, AwsIrsaHubConfig, Endpoint, EndpointExposure, EndpointProtocol, EndpointType,
    HostEndpoint, HostnameEndpoint, RegistrationAuthType, RegistrationDriverHub,
    ServerConfiguration,
};

/// What `init` says about registration drivers.
#[derive(Debug, Clone, Default)]
pub struct DriverFlags {
    /// `--registration-drivers`: `csr`, `awsirsa`, `grpc` (empty: `csr`).
    pub names: Vec<String>,
    /// `--auto-approved-csr-identities`.
    pub csr_identities: Vec<String>,
    /// `--hub-cluster-arn` (unset: [`Drivers::complete_arn`] fills in upstream's default).
    pub hub_cluster_arn: Option<String>,
    /// `--aws-resource-tags`.
    pub aws_resource_tags: Vec<String>,
    /// `--auto-approved-arn-patterns`.
    pub arn_patterns: Vec<String>,
    /// `--auto-approved-grpc-identities`.
    pub grpc_identities: Vec<String>,
    /// `--grpc-server`.
    pub grpc_server: Option<String>,
    /// `--grpc-endpoint-type`: `hostname` or `loadBalancer`.
    pub grpc_endpoint_type: String,
}

/// The ClusterManager's `registrationDrivers` and, with `grpc`, its `serverConfiguration`.
/// The default is the `csr` driver alone, auto-approving nobody.
#[derive(Debug, Clone, PartialEq)]
pub struct Drivers {
    /// One entry per driver, in the order named.
    pub drivers: Vec<RegistrationDriverHub>,
    /// The gRPC server's endpoint exposure, with the `grpc` driver.
    pub server: Option<ServerConfiguration>,
}

impl Default for Drivers {
    fn default() -> Self {
        Self {
            drivers: vec![RegistrationDriverHub::default()],
            server: None,
        }
    }
}

impl Drivers {
    /// Sets the `csr` driver's auto-approved identities (a values file's `autoApproveUsers`),
    /// adding that driver first if none is named.
    pub fn approve_csr(&mut self, identities: &[String]) {
        let at = self
            .drivers
            .iter()
            .position(|d| d.auth_type == RegistrationAuthType::Csr)
            .unwrap_or_else(|| {
                self.drivers.insert(0, RegistrationDriverHub::default());
                0
            });
        self.drivers[at].csr = approval(identities);
    }
}

impl Drivers {
    /// Gives an `awsirsa` driver without `--hub-cluster-arn` upstream's default, `context_cluster`
    /// (the kubeconfig context's cluster name: an EKS kubeconfig names its cluster by ARN), and
    /// checks the ARN is an EKS cluster's, as the ClusterManager's schema does.
    pub fn complete_arn(&mut self, context_cluster: Option<&str>) -> Result<(), String> {
        let pattern = regex::Regex::new(crate::api::EKS_ARN).expect("a valid pattern");
        for irsa in self.drivers.iter_mut().filter_map(|d| d.awsirsa.as_mut()) {
            let arn = irsa
                .hub_cluster_arn
                .get_or_insert_with(|| context_cluster.unwrap_or_default().to_owned());
            if !pattern.is_match(arn) {
                return Err(format!(
                    "awsirsa: {arn:?} is not an EKS cluster ARN (arn:aws:eks:<region>:<account>:cluster/<name>): pass --hub-cluster-arn"
                ));
            }
        }
        Ok(())
    }
}

impl DriverFlags {
    /// The drivers, or what is wrong with the flags (upstream's messages).
    pub fn resolve(&self) -> Result<Drivers, String> {
        let mut out = Drivers {
            drivers: Vec::new(),
            server: None,
        };
        let names: Vec<&str> = self
            .names
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .collect();
        for name in if names.is_empty() { vec!["csr"] } else { names } {
            let driver = match name {
                "csr" => RegistrationDriverHub {
                    auth_type: RegistrationAuthType::Csr,
                    csr: approval(&self.csr_identities),
                    ..Default::default()
                },
                "awsirsa" => RegistrationDriverHub {
                    auth_type: RegistrationAuthType::Awsirsa,
                    awsirsa: Some(AwsIrsaHubConfig {
                        // Unset: the kubeconfig's, filled in by `Drivers::complete_arn`.
                        hub_cluster_arn: self.hub_cluster_arn.clone().filter(|a| !a.is_empty()),
                        auto_approved_identities: self.arn_patterns.clone(),
                        tags: self.aws_resource_tags.clone(),
                    }),
                    ..Default::default()
                },
                "grpc" => {
                    out.server = Some(self.grpc_server_configuration()?);
                    RegistrationDriverHub {
                        auth_type: RegistrationAuthType::Grpc,
                        grpc: approval(&self.grpc_identities),
                        ..Default::default()
                    }
                }
                other => {
                    return Err(format!(
                        "unknown registration-drivers type: {other} (csr, awsirsa and grpc are valid drivers)"
                    ));
                }
            };
            out.drivers.push(driver);
        }
        Ok(out)
    }

    fn grpc_server_configuration(&self) -> Result<ServerConfiguration, String> {
        let host = self.grpc_server.clone().filter(|s| !s.is_empty());
        let endpoint = match self.grpc_endpoint_type.as_str() {
            "hostname" => Endpoint {
                type_: EndpointType::Hostname,
                hostname: Some(HostnameEndpoint {
                    host: host.ok_or(
                        "grpc server should not be empty if the grpc endpoint type is hostname: pass --grpc-server",
                    )?,
                    ca_bundle: None,
                }),
                ..Default::default()
            },
            "loadBalancer" => Endpoint {
                type_: EndpointType::LoadBalancer,
                load_balancer: Some(HostEndpoint {
                    host,
                    ca_bundle: None,
                }),
                ..Default::default()
            },
            other => {
                return Err(format!(
                    "unknown grpc endpoint type {other} (hostname or loadBalancer)"
                ));
            }
        };
        Ok(ServerConfiguration {
            endpoints_exposure: vec![EndpointExposure {
                protocol: EndpointProtocol::Grpc,
                grpc: Some(endpoint),
                ..Default::default()
            }],
            ..Default::default()
        })
    }
}

fn approval(identities: &[String]) -> Option<AutoApproval> {
    (!identities.is_empty()).then(|| AutoApproval {
        auto_approved_identities: identities.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(names: &[&str]) -> DriverFlags {
        DriverFlags {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            grpc_endpoint_type: "hostname".into(),
            ..Default::default()
        }
    }

    #[test]
    fn none_named_is_csr_with_its_identities() {
        let f = DriverFlags {
            csr_identities: vec!["alice".into()],
            ..flags(&[])
        };
        let d = f.resolve().unwrap();
        assert_eq!(d.drivers.len(), 1);
        assert_eq!(d.drivers[0].auth_type, RegistrationAuthType::Csr);
        assert_eq!(
            d.drivers[0].csr.as_ref().unwrap().auto_approved_identities,
            ["alice"]
        );
        assert!(d.server.is_none());
    }

    #[test]
    fn every_driver_in_the_order_named_with_upstreams_fields() {
        let arn = "arn:aws:eks:us-west-2:123456789012:cluster/hub";
        let f = DriverFlags {
            hub_cluster_arn: Some(arn.into()),
            aws_resource_tags: vec!["team=a".into()],
            arn_patterns: vec!["arn:aws:eks:*".into()],
            grpc_identities: vec!["system:serviceaccount:ns:sa".into()],
            grpc_server: Some("grpc.hub.example:8090".into()),
            ..flags(&["grpc", "csr", "awsirsa"])
        };
        let d = f.resolve().unwrap();
        let kinds: Vec<_> = d.drivers.iter().map(|d| d.auth_type).collect();
        assert_eq!(
            kinds,
            [
                RegistrationAuthType::Grpc,
                RegistrationAuthType::Csr,
                RegistrationAuthType::Awsirsa
            ]
        );
        let irsa = d.drivers[2].awsirsa.as_ref().unwrap();
        assert_eq!(irsa.hub_cluster_arn.as_deref(), Some(arn));
        assert_eq!(irsa.tags, ["team=a"]);
        assert_eq!(irsa.auto_approved_identities, ["arn:aws:eks:*"]);
        let json = serde_json::to_value(d.server.unwrap()).unwrap();
        assert_eq!(
            json["endpointsExposure"][0]["grpc"],
            serde_json::json!({"type": "hostname", "hostname": {"host": "grpc.hub.example:8090"}})
        );
    }

    #[test]
    fn upstreams_refusals() {
        let mut irsa = flags(&["awsirsa"]).resolve().unwrap();
        let refused = irsa.complete_arn(Some("kind-hub")).unwrap_err();
        assert!(refused.contains("--hub-cluster-arn"), "{refused}");
        let arn = "arn:aws:eks:eu-west-1:123456789012:cluster/hub";
        let mut irsa = flags(&["awsirsa"]).resolve().unwrap();
        irsa.complete_arn(Some(arn)).unwrap();
        assert_eq!(
            irsa.drivers[0]
                .awsirsa
                .as_ref()
                .unwrap()
                .hub_cluster_arn
                .as_deref(),
            Some(arn)
        );
        assert!(
            flags(&["grpc"])
                .resolve()
                .unwrap_err()
                .contains("--grpc-server")
        );
        assert!(
            flags(&["sso"])
                .resolve()
                .unwrap_err()
                .contains("unknown registration-drivers type: sso")
        );
        let lb = DriverFlags {
            grpc_endpoint_type: "loadBalancer".into(),
            ..flags(&["grpc"])
        };
        assert!(lb.resolve().is_ok());
        let bad = DriverFlags {
            grpc_endpoint_type: "route".into(),
            ..flags(&["grpc"])
        };
        assert!(
            bad.resolve()
                .unwrap_err()
                .contains("unknown grpc endpoint type route")
        );
    }
}
