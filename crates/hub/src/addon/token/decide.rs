//! What the token infrastructure controller does for one add-on, decided from the add-on alone
//! (pure): make the ServiceAccount, Role and RoleBinding its agent's tokens need, remove them, or
//! nothing; and the objects themselves, as upstream's manifests spell them.
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef};
use kube::ResourceExt as _;
use kube::api::ObjectMeta;
use std::collections::BTreeMap;

use ocm_api::addon::{ManagedClusterAddOn, token};
use ocm_api::conditions;
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::operator::AddOnAuthType;

/// The step for one add-on.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Its agent asked for tokens: apply the three objects and say so in its condition.
    Ensure,
    /// It no longer does (or is gone, or going): delete them; and drop the condition when the
    /// add-on stays.
    Remove {
        /// The add-on stays, so its condition goes.
        drop_condition: bool,
    },
    /// Nothing of ours is there or wanted.
    Nothing,
}

/// The step for `mca` (`None`: deleted).
#[must_use]
pub fn decide(mca: Option<&ManagedClusterAddOn>) -> Step {
    let Some(mca) = mca else {
        return Step::Remove {
            drop_condition: false,
        };
    };
    let reported = has_condition(mca);
    if mca.metadata.deletion_timestamp.is_some() {
        return if reported {
            Step::Remove {
                drop_condition: false,
            }
        } else {
            Step::Nothing
        };
    }
    if uses_token(mca) {
        Step::Ensure
    } else if reported {
        Step::Remove {
            drop_condition: true,
        }
    } else {
        Step::Nothing
    }
}

/// Whether the add-on registers a hub client and its cluster's agent declared the token driver
/// for it (upstream's `usesTokenAuth`).
#[must_use]
pub fn uses_token(mca: &ManagedClusterAddOn) -> bool {
    mca.status.as_ref().is_some_and(|s| {
        s.kube_client_driver == Some(AddOnAuthType::Token)
            && s.registrations
                .iter()
                .any(|r| r.signer_name == CLIENT_SIGNER)
    })
}

fn has_condition(mca: &ManagedClusterAddOn) -> bool {
    mca.status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, token::INFRASTRUCTURE_READY))
        .is_some()
}

/// Upstream's labels on the three objects.
fn labels(addon: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (token::NAME_LABEL.to_string(), addon.to_string()),
        (token::INFRASTRUCTURE_LABEL.to_string(), "true".to_string()),
    ])
}

fn meta(name: String, cluster: &str, addon: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(cluster.to_string()),
        labels: Some(labels(addon)),
        ..ObjectMeta::default()
    }
}

/// The add-on's objects in its cluster's namespace: the ServiceAccount whose tokens its agent
/// uses, and the Role and RoleBinding that let the cluster's agent (its groups) request them.
#[must_use]
pub fn objects(cluster: &str, addon: &str) -> (ServiceAccount, Role, RoleBinding) {
    let account = ServiceAccount {
        metadata: meta(token::service_account(addon), cluster, addon),
        ..ServiceAccount::default()
    };
    let role = Role {
        metadata: meta(token::role(addon), cluster, addon),
        rules: Some(vec![
            PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["serviceaccounts/token".into()]),
                resource_names: Some(vec![token::service_account(addon)]),
                verbs: vec!["create".into()],
                ..PolicyRule::default()
            },
            // Upstream's: lets the agent's gRPC client subscribe on a hub's gRPC server.
            PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["serviceaccounts/token".into()]),
                verbs: vec!["subscribe".into()],
                ..PolicyRule::default()
            },
        ]),
    };
    let binding = RoleBinding {
        metadata: meta(token::role(addon), cluster, addon),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: token::role(addon),
        },
        subjects: Some(crate::registration::rbac::subjects(cluster)),
    };
    (account, role, binding)
}

/// The add-on a token infrastructure object belongs to, as (cluster, add-on), from its labels.
#[must_use]
pub fn owner_of<K: kube::Resource>(object: &K) -> Option<(String, String)> {
    let labels = object.labels();
    if labels.get(token::INFRASTRUCTURE_LABEL).map(String::as_str) != Some("true") {
        return None;
    }
    let addon = labels.get(token::NAME_LABEL).filter(|a| !a.is_empty())?;
    Some((object.namespace()?, addon.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::{ManagedClusterAddOnSpec, ManagedClusterAddOnStatus, RegistrationConfig};

    fn addon(driver: Option<AddOnAuthType>, client: bool, reported: bool) -> ManagedClusterAddOn {
        let mut mca = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        mca.metadata.namespace = Some("c1".into());
        let registrations = if client {
            vec![RegistrationConfig {
                signer_name: CLIENT_SIGNER.into(),
                subject: None,
            }]
        } else {
            vec![RegistrationConfig {
                signer_name: "example.com/other".into(),
                subject: None,
            }]
        };
        let conditions = if reported {
            vec![conditions::new(
                token::INFRASTRUCTURE_READY,
                conditions::TRUE,
                token::INFRASTRUCTURE_READY_REASON,
                "ready",
                &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                ),
            )]
        } else {
            Vec::new()
        };
        mca.status = Some(ManagedClusterAddOnStatus {
            kube_client_driver: driver,
            registrations,
            conditions,
            ..ManagedClusterAddOnStatus::default()
        });
        mca
    }

    #[test]
    fn only_a_hub_client_under_the_token_driver_gets_the_infrastructure() {
        let token = Some(AddOnAuthType::Token);
        assert_eq!(decide(Some(&addon(token, true, false))), Step::Ensure);
        assert_eq!(decide(Some(&addon(token, false, false))), Step::Nothing);
        assert_eq!(
            decide(Some(&addon(Some(AddOnAuthType::Csr), true, false))),
            Step::Nothing
        );
        assert_eq!(decide(Some(&addon(None, true, false))), Step::Nothing);
    }

    #[test]
    fn what_was_made_goes_when_the_driver_changes_or_the_addon_goes() {
        let csr = Some(AddOnAuthType::Csr);
        assert_eq!(
            decide(Some(&addon(csr, true, true))),
            Step::Remove {
                drop_condition: true
            }
        );
        let mut going = addon(Some(AddOnAuthType::Token), true, true);
        going.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        assert_eq!(
            decide(Some(&going)),
            Step::Remove {
                drop_condition: false
            }
        );
        going.status.as_mut().unwrap().conditions.clear();
        assert_eq!(decide(Some(&going)), Step::Nothing);
        assert_eq!(
            decide(None),
            Step::Remove {
                drop_condition: false
            }
        );
    }

    #[test]
    fn the_objects_are_upstreams() {
        let (account, role, binding) = objects("c1", "hello");
        assert_eq!(account.name_any(), "hello-agent");
        assert_eq!(role.name_any(), "hello-token-role");
        assert_eq!(binding.name_any(), "hello-token-role");
        for labels in [account.labels(), role.labels(), binding.labels()] {
            assert_eq!(labels[token::INFRASTRUCTURE_LABEL], "true");
            assert_eq!(labels[token::NAME_LABEL], "hello");
        }
        let rules = role.rules.unwrap();
        assert_eq!(
            rules[0].resource_names.as_deref(),
            Some(&["hello-agent".to_string()][..])
        );
        assert_eq!(rules[0].verbs, ["create"]);
        let groups: Vec<&str> = binding
            .subjects
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            groups,
            [
                "system:open-cluster-management:c1",
                "open-cluster-management:c1"
            ]
        );
        assert_eq!(owner_of(&account), Some(("c1".into(), "hello".into())));
        let mut unlabelled = account.clone();
        unlabelled.metadata.labels = None;
        assert_eq!(owner_of(&unlabelled), None);
    }
}
