//! What the registration agent reads of the managed cluster for its status: the API server's
//! health (`/livez`, else `/healthz`), its version, node capacity and allocatable, and its
//! ClusterClaims (and ClusterProperties, with their gate), read concurrently. [`super::status`] turns them into the ManagedCluster's
//! status.
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};

use super::capacity;
use super::status::{Observed, claims_of};
use crate::gates::Gates;
use ocm_api::about::ClusterProperty;
use ocm_api::cluster::ClusterClaim;

/// Probes the managed cluster: health, version, nodes and claims (unless `gates` switch
/// `ClusterClaim` off; and, with `ClusterProperty`, the About API's properties), concurrently;
/// claims as `limits` allow.
pub async fn observe(
    managed: &kube::Client,
    gates: Gates,
    limits: &super::settings::ClaimLimits,
) -> Observed {
    let nodes: Api<Node> = Api::all(managed.clone());
    let list = ListParams::default();
    let claims = async {
        if !gates.cluster_claim {
            return Ok(Vec::new());
        }
        Api::<ClusterClaim>::all(managed.clone())
            .list(&list)
            .await
            .map(|l| l.items)
    };
    let properties = async {
        if !gates.cluster_property {
            return Ok(Vec::new());
        }
        Api::<ClusterProperty>::all(managed.clone())
            .list(&list)
            .await
            .map(|l| l.items)
    };
    let (health, version, nodes, claims, properties) = tokio::join!(
        probe(managed),
        managed.apiserver_version(),
        nodes.list(&list),
        claims,
        properties
    );
    // Either list failing (the CRD not there yet) keeps what was reported: a partial list would
    // take the other's entries off the hub for a beat.
    let claims = match (claims, properties) {
        (Ok(claims), Ok(properties)) => Some(claims_of(&claims, &properties, limits)),
        _ => None,
    };
    Observed {
        health,
        version: version.ok().map(|v| v.git_version),
        resources: nodes.ok().map(|list| capacity::of_nodes(&list.items)),
        claims,
    }
}

async fn probe(managed: &kube::Client) -> Result<(), String> {
    let get = |path: &str| {
        let request = http::Request::get(path)
            .body(Vec::new())
            .expect("a static request");
        managed.request_text(request)
    };
    match get("/livez").await {
        Ok(body) if body.trim() == "ok" => Ok(()),
        Ok(body) => Err(format!("/livez answered {:?}", body.trim())),
        // Older or locked-down apiservers serve only /healthz.
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => match get("/healthz").await {
            Ok(body) if body.trim() == "ok" => Ok(()),
            Ok(body) => Err(format!("/healthz answered {:?}", body.trim())),
            Err(e) => Err(format!("/healthz: {e}")),
        },
        Err(e) => Err(format!("/livez: {e}")),
    }
}
