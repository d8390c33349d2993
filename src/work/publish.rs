//! Putting a work into clusters' namespaces on the hub (`clusteradm create work`): observe each
//! target cluster (does its namespace exist, is the work there already), decide per cluster
//! (pure [`plan`]: create, update, unchanged, or refuse), then execute. Every refusal is known
//! before the first write.
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::{Value, json};

use crate::api::cluster::{PLACEMENT_LABEL, Placement, PlacementDecision};
use crate::api::work::ManifestWork;

/// What the hub holds for one target cluster.
#[derive(Debug, Clone)]
pub struct Observed {
    /// The cluster (= namespace).
    pub cluster: String,
    /// Whether the cluster's namespace exists.
    pub namespace_exists: bool,
    /// The work of that name already there.
    pub existing: Option<ManifestWork>,
}

/// What will happen in one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The work is created.
    Create,
    /// The existing work's manifests are replaced.
    Update,
    /// The existing work already holds these manifests.
    Unchanged,
}

/// Why the plan was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// Some clusters have no namespace on the hub.
    #[error("unknown cluster{}: {}: the hub has no namespace of that name", if .0.len() > 1 { "s" } else { "" }, .0.join(", "))]
    UnknownClusters(Vec<String>),
    /// The work exists and `--overwrite` was not given.
    #[error("work {name} already exists in cluster{} {}", if .clusters.len() > 1 { "s" } else { "" }, .clusters.join(", "))]
    Exists {
        /// The work.
        name: String,
        /// Where it exists.
        clusters: Vec<String>,
    },
}

/// One decided step.
#[derive(Debug, Clone)]
pub struct Step {
    /// The cluster.
    pub cluster: String,
    /// What happens.
    pub change: Change,
    /// The work as it will be on the hub.
    pub work: ManifestWork,
}

/// Decides, per cluster, what to do with work `name` holding `manifests`.
pub fn plan(
    name: &str,
    manifests: &[Value],
    observed: &[Observed],
    overwrite: bool,
) -> Result<Vec<Step>, Refusal> {
    let unknown: Vec<String> = observed
        .iter()
        .filter(|o| !o.namespace_exists)
        .map(|o| o.cluster.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(Refusal::UnknownClusters(unknown));
    }
    let existing: Vec<String> = observed
        .iter()
        .filter(|o| o.existing.is_some())
        .map(|o| o.cluster.clone())
        .collect();
    if !existing.is_empty() && !overwrite {
        return Err(Refusal::Exists {
            name: name.into(),
            clusters: existing,
        });
    }
    Ok(observed
        .iter()
        .map(|o| match &o.existing {
            None => Step {
                cluster: o.cluster.clone(),
                change: Change::Create,
                work: super::manifests::work(name, &o.cluster, manifests.to_vec()),
            },
            Some(old) => {
                let mut work = old.clone();
                work.spec.workload.manifests = manifests.to_vec();
                let change = if old.spec.workload.manifests == manifests {
                    Change::Unchanged
                } else {
                    Change::Update
                };
                Step {
                    cluster: o.cluster.clone(),
                    change,
                    work,
                }
            }
        })
        .collect())
}

/// The longest work name: its AppliedManifestWork is named `<64 hex digits>-<name>`, and object
/// names stop at 253 characters.
pub const MAX_NAME_LEN: usize = 253 - 65;

/// Checks a work name: a DNS subdomain (lower-case alphanumerics, `-`, `.`) short enough for its
/// AppliedManifestWork name.
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ok_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !ok_chars || !ok_ends {
        return Err(format!(
            "invalid work name {name:?}: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "work name {name:?} is {} characters long; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    Ok(())
}

/// A read of the hub failed; `missing_kind` when the hub does not serve ManifestWorks at all.
#[derive(Debug, thiserror::Error)]
#[error("reading {what} on the hub")]
pub struct ReadError {
    /// What was read.
    pub what: String,
    /// The hub does not serve the kind (OCM is not installed).
    pub missing_kind: bool,
    /// The failed request.
    #[source]
    pub source: kube::Error,
}

fn read_error(what: String) -> impl FnOnce(kube::Error) -> ReadError {
    move |source| ReadError {
        missing_kind: matches!(&source, kube::Error::Api(s) if s.is_not_found()),
        what,
        source,
    }
}

/// Observes each cluster concurrently.
pub async fn observe(
    client: &Client,
    name: &str,
    clusters: &[String],
) -> Result<Vec<Observed>, ReadError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    crate::runtime::fan_out::try_all(clusters.iter().map(|cluster| {
        let namespaces = namespaces.clone();
        async move {
            let ns = namespaces
                .get_metadata_opt(cluster)
                .await
                .map_err(|source| ReadError {
                    what: format!("namespace {cluster}"),
                    missing_kind: false,
                    source,
                })?;
            let existing = if ns.is_some() {
                let works: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
                let by_name = ListParams::default().fields(&format!("metadata.name={name}"));
                let list = works
                    .list(&by_name)
                    .await
                    .map_err(read_error(format!("ManifestWorks in namespace {cluster}")))?;
                list.items.into_iter().next()
            } else {
                None
            };
            Ok(Observed {
                cluster: cluster.clone(),
                namespace_exists: ns.is_some(),
                existing,
            })
        }
    }))
    .await
}

/// Creates or updates the work of each step (none for unchanged ones).
pub async fn execute(client: &Client, steps: &[Step]) -> Result<(), kube::Error> {
    crate::runtime::fan_out::try_all(steps.iter().map(|step| async move {
        let works: Api<ManifestWork> = Api::namespaced(client.clone(), &step.cluster);
        match step.change {
            Change::Create => works
                .create(&PostParams::default(), &step.work)
                .await
                .map(drop),
            Change::Update => {
                let patch =
                    json!({"spec": {"workload": {"manifests": step.work.spec.workload.manifests}}});
                works
                    .patch(
                        &step.work.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await
                    .map(drop)
            }
            Change::Unchanged => Ok(()),
        }
    }))
    .await
    .map(drop)
}

/// The clusters placement `namespace/name` has chosen, sorted; `None` when there is no such
/// placement.
pub async fn placement_clusters(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Option<Vec<String>>, ReadError> {
    let placements: Api<Placement> = Api::namespaced(client.clone(), namespace);
    let what = format!("placement {namespace}/{name}");
    if placements
        .get_metadata_opt(name)
        .await
        .map_err(read_error(what.clone()))?
        .is_none()
    {
        return Ok(None);
    }
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), namespace);
    let selector = ListParams::default().labels(&format!("{PLACEMENT_LABEL}={name}"));
    let list = decisions
        .list(&selector)
        .await
        .map_err(read_error(format!("the decisions of {what}")))?;
    let mut clusters: Vec<String> = list
        .items
        .iter()
        .filter_map(|d| d.status.as_ref())
        .flat_map(|s| s.decisions.iter().map(|d| d.cluster_name.clone()))
        .filter(|c| !c.is_empty())
        .collect();
    clusters.sort();
    clusters.dedup();
    Ok(Some(clusters))
}

#[cfg(test)]
mod tests {
    //! Unit tests of the `create work` plan.
    use serde_json::json;

    use super::*;

    fn manifests(replicas: i64) -> Vec<Value> {
        vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"}, "spec": {"replicas": replicas}}),
        ]
    }

    fn observed(cluster: &str, namespace_exists: bool, existing: Option<Vec<Value>>) -> Observed {
        Observed {
            cluster: cluster.into(),
            namespace_exists,
            existing: existing.map(|m| super::super::manifests::work("w", cluster, m)),
        }
    }

    #[test]
    fn creates_where_absent() {
        let steps = plan(
            "w",
            &manifests(1),
            &[observed("c1", true, None), observed("c2", true, None)],
            false,
        )
        .unwrap();
        assert_eq!(steps.len(), 2);
        assert!(steps.iter().all(|s| s.change == Change::Create));
        assert_eq!(steps[1].work.metadata.namespace.as_deref(), Some("c2"));
        assert_eq!(steps[1].work.spec.workload.manifests, manifests(1));
    }

    #[test]
    fn unknown_clusters_are_refused_first() {
        let err = plan(
            "w",
            &manifests(1),
            &[
                observed("c1", false, None),
                observed("c2", true, Some(manifests(1))),
                observed("c3", false, None),
            ],
            false,
        )
        .unwrap_err();
        assert_eq!(
            err,
            Refusal::UnknownClusters(vec!["c1".into(), "c3".into()])
        );
        assert_eq!(
            err.to_string(),
            "unknown clusters: c1, c3: the hub has no namespace of that name"
        );
    }

    #[test]
    fn existing_needs_overwrite() {
        let obs = [
            observed("c1", true, Some(manifests(1))),
            observed("c2", true, None),
        ];
        let err = plan("w", &manifests(2), &obs, false).unwrap_err();
        assert_eq!(err.to_string(), "work w already exists in cluster c1");
        let steps = plan("w", &manifests(2), &obs, true).unwrap();
        assert_eq!(
            (steps[0].change, steps[1].change),
            (Change::Update, Change::Create)
        );
        assert_eq!(steps[0].work.spec.workload.manifests, manifests(2));
    }

    #[test]
    fn same_manifests_are_unchanged_and_other_spec_is_kept() {
        let mut obs = observed("c1", true, Some(manifests(3)));
        obs.existing.as_mut().unwrap().spec.delete_option =
            Some(crate::api::work::DeleteOption::default());
        let steps = plan("w", &manifests(3), &[obs], true).unwrap();
        assert_eq!(steps[0].change, Change::Unchanged);
        assert!(steps[0].work.spec.delete_option.is_some());
    }

    #[test]
    fn work_names() {
        assert!(validate_name("my-first-work").is_ok());
        assert!(validate_name("a.b-1").is_ok());
        assert!(validate_name("My-Work").is_err());
        assert!(validate_name("-w").is_err());
        assert!(validate_name("").is_err());
        assert!(validate_name(&"w".repeat(MAX_NAME_LEN)).is_ok());
        assert!(
            validate_name(&"w".repeat(MAX_NAME_LEN + 1))
                .unwrap_err()
                .contains("at most 188")
        );
    }
}
