//! The CRDs the agents need on the managed cluster: AppliedManifestWork (the work agent's record
//! of what it applied) and ClusterClaim (facts the cluster states about itself).
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The managed-cluster CRDs.
pub(super) fn managed() -> Vec<CustomResourceDefinition> {
    crate::api::managed_crds()
}
