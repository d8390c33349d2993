//! The build step (pure): from a validated ClusterManager, the certificates and the in-process
//! options to [`Desired`], the typed objects of the hub. One file per kind; this file assembles
//! them and decides what a mode leaves out.
pub mod admission;
mod component;
mod config_map;
mod deployment;
pub mod hub;
mod rbac;
mod secret;
mod service;
mod webhook;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::DynamicObject;

pub use component::Component;
pub use deployment::args;
pub use rbac::rules;
pub use webhook::{
    CLUSTER_SET_BINDING_VALIDATOR, MANAGED_CLUSTER_MUTATOR, MANAGED_CLUSTER_VALIDATOR,
    MANIFEST_WORK_VALIDATOR,
};

use super::InProcess;
use super::certs::{CertKey, Certs, SIGNER_SECRET, ServingSpec};
use super::validate::Validated;
use crate::api::names::HUB_NAMESPACE;
use crate::api::operator::RelatedResourceMeta;
use crate::apply::to_dynamic;

/// Everything the hub consists of, typed.
#[derive(Debug, Clone, Default)]
pub struct Desired {
    /// The hub CRDs.
    pub crds: Vec<CustomResourceDefinition>,
    /// The hub namespace.
    pub namespace: Namespace,
    /// One per deployed component.
    pub service_accounts: Vec<ServiceAccount>,
    /// One per deployed component.
    pub cluster_roles: Vec<ClusterRole>,
    /// One per deployed component.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// The signer and the serving certificates.
    pub secrets: Vec<Secret>,
    /// The CA bundle.
    pub config_maps: Vec<ConfigMap>,
    /// One per deployed webhook.
    pub services: Vec<Service>,
    /// One per deployed component.
    pub deployments: Vec<Deployment>,
    /// Validating admission, when the webhooks are deployed.
    pub validating_webhooks: Vec<ValidatingWebhookConfiguration>,
    /// Mutating admission, when the webhooks are deployed.
    pub mutating_webhooks: Vec<MutatingWebhookConfiguration>,
    /// The admission rules the API server enforces itself, when the webhooks are not deployed.
    pub admission_policies: Vec<ValidatingAdmissionPolicy>,
    /// Their bindings.
    pub admission_policy_bindings: Vec<ValidatingAdmissionPolicyBinding>,
}

/// The serving certificates the hub needs: one per webhook, whatever the mode (a webhook served
/// in-process needs one too), and with our hub pods (`hub_pods`) their Service's.
#[must_use]
pub fn serving_specs(hub_pods: bool) -> Vec<ServingSpec> {
    let mut specs: Vec<ServingSpec> = Component::ALL
        .iter()
        .filter_map(|c| {
            c.serving_secret().map(|secret| ServingSpec {
                secret,
                dns_names: vec![c.service_dns()],
            })
        })
        .collect();
    // Our hub pods' Service (the add-on conversion webhook).
    if hub_pods {
        specs.push(ServingSpec {
            secret: hub::SERVING_SECRET,
            dns_names: vec![hub::service_dns()],
        });
    }
    specs
}

/// The hub for `v`. Components that run in this process are left out entirely; so are the
/// webhook Services and configurations when no webhook is deployed, so that nothing points at a
/// Service nobody serves.
#[must_use]
pub fn build(v: &Validated, certs: &Certs, in_process: InProcess) -> Desired {
    let deployed: Vec<Component> = Component::ALL
        .into_iter()
        .filter(|c| c.deployed(in_process))
        .collect();
    let mut secrets = vec![secret::tls(SIGNER_SECRET, &certs.signer)];
    for spec in serving_specs(in_process.hub_deployment) {
        let empty = CertKey {
            cert: String::new(),
            key: String::new(),
        };
        secrets.push(secret::tls(
            spec.secret,
            certs.serving.get(spec.secret).unwrap_or(&empty),
        ));
    }
    let webhooks = !in_process.webhooks;
    let port = |c: Component| match c {
        Component::WorkWebhook => v.work_webhook.port,
        _ => v.registration_webhook.port,
    };
    let bundle = certs.ca_bundle.as_bytes();
    let mut desired = Desired {
        crds: crate::api::hub_crds(),
        namespace: Namespace {
            metadata: ObjectMeta {
                name: Some(HUB_NAMESPACE.into()),
                ..Default::default()
            },
            ..Default::default()
        },
        service_accounts: deployed.iter().map(|c| rbac::service_account(*c)).collect(),
        cluster_roles: deployed.iter().map(|c| rbac::cluster_role(*c)).collect(),
        cluster_role_bindings: deployed
            .iter()
            .map(|c| rbac::cluster_role_binding(*c))
            .collect(),
        secrets,
        config_maps: vec![config_map::ca_bundle(&certs.ca_bundle)],
        services: deployed
            .iter()
            .filter(|c| c.is_webhook())
            .map(|c| service::service(*c, port(*c)))
            .collect(),
        deployments: deployed
            .iter()
            .map(|c| deployment::deployment(*c, v))
            .collect(),
        validating_webhooks: if webhooks {
            webhook::validating(v.registration_webhook.port, v.work_webhook.port, bundle)
        } else {
            Vec::new()
        },
        mutating_webhooks: if webhooks {
            webhook::mutating(v.registration_webhook.port, bundle)
        } else {
            Vec::new()
        },
        admission_policies: if webhooks {
            Vec::new()
        } else {
            admission::policies_with(admission::Gates::from_work_flags(&v.work_gates))
        },
        admission_policy_bindings: if webhooks {
            Vec::new()
        } else {
            admission::bindings()
        },
    };
    if in_process.hub_deployment {
        let image = v.single_image().unwrap_or(&v.registration_image);
        desired.service_accounts.push(hub::service_account());
        desired.cluster_roles.push(hub::cluster_role());
        desired
            .cluster_role_bindings
            .push(hub::cluster_role_binding());
        desired.deployments.push(hub::deployment(v, image));
        desired.services.push(hub::service());
        for crd in &mut desired.crds {
            if crate::hub::conversion::CRDS.contains(&crd.metadata.name.as_deref().unwrap_or("")) {
                hub::convert_through_service(crd, bundle);
            }
        }
    }
    desired
}

/// Calls `f` with every object of `d` as a dynamic object and as a related-resource entry.
macro_rules! each {
    ($d:expr, $f:expr) => {{
        let d = $d;
        let mut f = $f;
        d.crds.iter().for_each(|o| f(to_dynamic(o), related(o)));
        f(to_dynamic(&d.namespace), related(&d.namespace));
        d.service_accounts
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.cluster_roles
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.cluster_role_bindings
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.secrets.iter().for_each(|o| f(to_dynamic(o), related(o)));
        d.config_maps
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.services.iter().for_each(|o| f(to_dynamic(o), related(o)));
        d.deployments
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.validating_webhooks
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.mutating_webhooks
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.admission_policies
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
        d.admission_policy_bindings
            .iter()
            .for_each(|o| f(to_dynamic(o), related(o)));
    }};
}

impl Desired {
    /// Every object, ready for the apply engine.
    #[must_use]
    pub fn objects(&self) -> Vec<DynamicObject> {
        let mut out = Vec::new();
        each!(self, |o, _| out.push(o));
        out
    }

    /// Every object as a `relatedResources` entry of the ClusterManager status.
    #[must_use]
    pub fn related(&self) -> Vec<RelatedResourceMeta> {
        let mut out = Vec::new();
        each!(self, |_, r| out.push(r));
        out
    }
}

fn related<K: Resource<DynamicType = ()>>(obj: &K) -> RelatedResourceMeta {
    RelatedResourceMeta {
        group: K::group(&()).into_owned(),
        version: K::version(&()).into_owned(),
        resource: K::plural(&()).into_owned(),
        namespace: obj.meta().namespace.clone(),
        name: obj.meta().name.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests;
