//! Upstream's placement debug endpoint (the `PlacementDebugServer` gate), served by our hub pods:
//! `GET /debug/placements/<namespace>/<name>` schedules that placement now, `POST` of a Placement
//! schedules the one given (neither writes anything), and the answer is upstream's `DebugResult`:
//! the placement, the clusters left after each filter of the pipeline, each prioritizer's scores
//! and weight, and the clusters' total scores, best first. As upstream's, a caller needs a bearer
//! token the API server authenticates, `get` (or `post`) on the non-resource URL it calls, and
//! `create` on placements in the placement's namespace; a refusal of the last, or a placement
//! not found, is answered as upstream's is, in the result's `error`.
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use kube::ResourceExt as _;
use serde::Serialize;
use serde_json::{Value, json};

use super::schedule::{Scheduled, Trace};
use ocm_api::cluster::Placement;
use ocm_runtime::Shutdown;
use ocm_runtime::callers::{Decision, Reviewer, serve_https};

/// The path every request starts with (upstream's `debugger.DebugPath`).
pub const PATH: &str = "/debug/placements/";
/// The port the hub pods serve it on; the Service `cluster-manager-placement` maps upstream's
/// 9443 to it (the pods' 9443 serves the webhooks).
pub const PORT: u16 = 9444;
/// The largest Placement a POST may carry (upstream's limit).
const MAX_BODY: usize = 1024 * 1024;
/// For a TLS handshake, a request's head, and its body.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the endpoint on `addr` with `client`'s API server until `shutdown`; returns the
/// address bound.
///
/// # Errors
/// The address cannot be bound, or no certificate could be made.
pub async fn serve(
    addr: SocketAddr,
    client: kube::Client,
    shutdown: Shutdown,
) -> anyhow::Result<SocketAddr> {
    let shared = Arc::new((Reviewer::new(client.clone()), client));
    serve_https(addr, PATH, IO_TIMEOUT, shutdown, move |req| {
        let shared = shared.clone();
        async move { respond(req, &shared.0, &shared.1).await }
    })
    .await
}

async fn respond(
    req: Request<Incoming>,
    reviewer: &Reviewer,
    client: &kube::Client,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let verb = match *req.method() {
        Method::GET => "get",
        Method::POST => "post",
        _ => return plain(StatusCode::METHOD_NOT_ALLOWED, "GET or POST"),
    };
    if !path.starts_with(PATH) {
        return plain(StatusCode::NOT_FOUND, "not found");
    }
    let user = match reviewer.decide(&req, &path, verb).await {
        Decision::Allowed(user) => user,
        Decision::Unauthenticated(why) => return plain(StatusCode::UNAUTHORIZED, &why),
        Decision::Forbidden(why) => return plain(StatusCode::FORBIDDEN, &why),
    };
    let result = match debug(req, &path, &user, reviewer, client).await {
        Ok(result) => result,
        Err(e) => DebugResult::error(e),
    };
    let body = serde_json::to_vec(&result).unwrap_or_default();
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

fn plain(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a valid response")
}

/// The placement asked about, checked against the caller's rights, scheduled now.
async fn debug(
    req: Request<Incoming>,
    path: &str,
    user: &UserInfo,
    reviewer: &Reviewer,
    client: &kube::Client,
) -> Result<DebugResult, String> {
    let placement = if req.method() == Method::POST {
        read_placement(req.into_body()).await?
    } else {
        let (ns, name) = split_key(&path[PATH.len()..])?;
        kube::Api::<Placement>::namespaced(client.clone(), ns)
            .get(name)
            .await
            .map_err(|e| match e {
                kube::Error::Api(s) if s.code == 404 => {
                    format!("placement.cluster.open-cluster-management.io \"{name}\" not found")
                }
                e => e.to_string(),
            })?
    };
    let ns = placement.namespace().unwrap_or_default();
    let create = ResourceAttributes {
        namespace: Some(ns.clone()),
        verb: Some("create".into()),
        group: Some("cluster.open-cluster-management.io".into()),
        version: Some("v1beta1".into()),
        resource: Some("placements".into()),
        ..Default::default()
    };
    let (allowed, reason) = reviewer
        .may(user, Some(create), None)
        .await
        .map_err(|e| format!("failed to check permissions: {e}"))?;
    if !allowed {
        return Err(format!(
            "user does not have permission to create placements in namespace {ns}: {reason}"
        ));
    }
    let (scheduled, trace) = super::explain::now(client, &placement)
        .await
        .map_err(|e| format!("{e:#}"))?;
    Ok(DebugResult::of(&placement, &scheduled, trace))
}

/// `<namespace>/<name>`, as upstream's `cache.SplitMetaNamespaceKey` reads it.
fn split_key(key: &str) -> Result<(&str, &str), String> {
    match key.split('/').collect::<Vec<_>>()[..] {
        [ns, name] if !ns.is_empty() && !name.is_empty() => Ok((ns, name)),
        _ => Err(format!("unexpected key format: {key:?}")),
    }
}

async fn read_placement(body: Incoming) -> Result<Placement, String> {
    let collected = tokio::time::timeout(IO_TIMEOUT, Limited::new(body, MAX_BODY).collect())
        .await
        .map_err(|_| "reading the request body timed out".to_owned())?
        .map_err(|_| format!("request body too large: exceeds maximum of {MAX_BODY} bytes"))?;
    parse_placement(&collected.to_bytes())
}

/// A Placement as Go's `json.Unmarshal` reads one: `null` is the field's zero value (Go clients
/// send `null` for their nil slices and maps), so nulls are dropped before it is read.
fn parse_placement(body: &[u8]) -> Result<Placement, String> {
    fn drop_nulls(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                fields.retain(|_, v| !v.is_null());
                fields.values_mut().for_each(drop_nulls);
            }
            Value::Array(items) => items.iter_mut().for_each(drop_nulls),
            _ => {}
        }
    }
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("failed to unmarshal placement JSON: {e}"))?;
    drop_nulls(&mut value);
    serde_json::from_value(value).map_err(|e| format!("failed to unmarshal placement JSON: {e}"))
}

/// Upstream's `DebugResult`, field for field.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct DebugResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    placement: Option<Value>,
    #[serde(
        rename = "filteredPipelineResults",
        skip_serializing_if = "Vec::is_empty"
    )]
    filter_results: Vec<FilterResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prioritize_results: Vec<PrioritizerResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    aggregated_scores: Vec<ClusterScore>,
    #[serde(skip_serializing_if = "String::is_empty")]
    error: String,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct FilterResult {
    name: String,
    filtered_clusters: Vec<String>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
struct PrioritizerResult {
    name: String,
    weight: i64,
    scores: BTreeMap<String, i64>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct ClusterScore {
    cluster_name: String,
    score: i64,
}

impl DebugResult {
    fn error(error: String) -> Self {
        Self {
            error,
            ..Self::default()
        }
    }

    /// The answer for `placement`: its spec with only the metadata that names it, the
    /// pipeline's filters (upstream's names, each with the clusters left after it and those
    /// before it), each prioritizer's scores and the totals, best first.
    fn of(placement: &Placement, scheduled: &Scheduled, trace: Trace) -> Self {
        let mut shown = json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {
                "name": placement.name_any(),
                "namespace": placement.namespace(),
                "labels": placement.metadata.labels,
                "annotations": placement.metadata.annotations,
            },
            "spec": placement.spec,
            "status": {},
        });
        if let Some(meta) = shown["metadata"].as_object_mut() {
            meta.retain(|_, v| !v.is_null());
        }
        let feasible: Vec<String> = trace.scored.iter().map(|s| s.cluster.clone()).collect();
        let mut prioritizers: BTreeMap<String, PrioritizerResult> = BTreeMap::new();
        for score in &trace.scored {
            for (name, value, weight) in &score.parts {
                prioritizers
                    .entry(name.clone())
                    .or_insert_with(|| PrioritizerResult {
                        name: name.clone(),
                        weight: *weight,
                        scores: BTreeMap::new(),
                    })
                    .scores
                    .insert(score.cluster.clone(), *value);
            }
        }
        let mut aggregated: Vec<ClusterScore> = trace
            .scored
            .iter()
            .map(|s| ClusterScore {
                cluster_name: s.cluster.clone(),
                score: s.total,
            })
            .collect();
        aggregated.sort_by(|a, b| {
            b.score
                .cmp(&a.score)
                .then_with(|| a.cluster_name.cmp(&b.cluster_name))
        });
        Self {
            placement: Some(shown),
            filter_results: vec![
                FilterResult {
                    name: "Predicate".into(),
                    filtered_clusters: trace.passed_predicates,
                },
                FilterResult {
                    name: "Predicate,TaintToleration".into(),
                    filtered_clusters: feasible,
                },
            ],
            prioritize_results: prioritizers.into_values().collect(),
            aggregated_scores: aggregated,
            error: scheduled.misconfigured.clone().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_go_clients_nulls_are_zero_values() {
        // What upstream's spec POSTs: Go's encoding of a Placement with nil slices and maps.
        let body = br#"{"kind":"Placement","apiVersion":"cluster.open-cluster-management.io/v1beta1","metadata":{"name":"p","namespace":"ns","creationTimestamp":null},"spec":{"clusterSets":["s"],"predicates":null,"prioritizerPolicy":{"mode":"","configurations":null},"spreadPolicy":{},"tolerations":[{"key":"k","operator":"Exists"}],"decisionStrategy":{"groupStrategy":{"decisionGroups":null,"clustersPerDecisionGroup":0}}},"status":{"conditions":null,"decisionGroups":null}}"#;
        let placement = parse_placement(body).unwrap();
        assert_eq!(placement.metadata.name.as_deref(), Some("p"));
        assert_eq!(placement.spec.cluster_sets, vec!["s".to_owned()]);
        assert!(parse_placement(b"{").is_err());
    }

    #[test]
    fn keys_are_namespace_and_name() {
        assert_eq!(split_key("ns/p"), Ok(("ns", "p")));
        for bad in ["ns", "ns/", "/p", "a/b/c", ""] {
            assert!(split_key(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_result_is_upstreams_shape() {
        let placement: Placement = serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7", "labels": {"a": "b"}},
            "spec": {"clusterSets": ["s"]},
            "status": {"numberOfSelectedClusters": 1},
        }))
        .unwrap();
        let trace = Trace {
            passed_predicates: vec!["c1".into(), "c2".into()],
            scored: vec![super::super::schedule::Score {
                cluster: "c1".into(),
                parts: vec![("Balance".into(), 100, 1), ("Steady".into(), 0, 1)],
                total: 100,
            }],
            ..Trace::default()
        };
        let result =
            serde_json::to_value(DebugResult::of(&placement, &Scheduled::default(), trace))
                .unwrap();
        assert_eq!(
            result["placement"]["metadata"],
            json!({"name": "p", "namespace": "ns", "labels": {"a": "b"}})
        );
        assert_eq!(result["placement"]["status"], json!({}));
        assert_eq!(
            result["filteredPipelineResults"][0],
            json!({"name": "Predicate", "filteredClusters": ["c1", "c2"]})
        );
        assert_eq!(
            result["filteredPipelineResults"][1]["filteredClusters"],
            json!(["c1"])
        );
        assert_eq!(
            result["prioritizeResults"][0],
            json!({"name": "Balance", "weight": 1, "scores": {"c1": 100}})
        );
        assert_eq!(
            result["aggregatedScores"],
            json!([{"clusterName": "c1", "score": 100}])
        );
        assert!(result.get("error").is_none());
    }
}
