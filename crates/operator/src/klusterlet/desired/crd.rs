//! The CRDs the agents need on the managed cluster: AppliedManifestWork (the work agent's record
//! of what it applied) and ClusterClaim (facts the cluster states about itself); with the
//! `ClusterProperty` gate, the About API's ClusterProperty too.
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::klusterlet::validate::Validated;

/// The managed-cluster CRDs.
pub(super) fn managed(v: &Validated) -> Vec<CustomResourceDefinition> {
    let mut crds = ocm_api::managed_crds();
    if v.agent_gates().cluster_property {
        crds.push(ocm_api::cluster_property_crd());
    }
    crds
}
