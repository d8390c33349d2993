//! One apply engine for every bundle this tool installs: server-side apply with one field manager
//! ([`crate::FIELD_MANAGER`]), applied tier by tier ([`order::tier`]), CRDs waited on until
//! Established, kinds resolved by one discovery per run, every per-object failure collected, and a
//! report that tells created, configured and unchanged objects apart.
pub mod approve;
pub mod delete;
pub mod order;
mod resolve;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use serde::Serialize;

pub use resolve::Resolver;

/// The label every applied object carries, naming this tool as its manager.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// What an apply did to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// It did not exist before.
    Created,
    /// It existed and changed.
    Configured,
    /// It existed and the apply changed nothing (same resourceVersion).
    Unchanged,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Created => "created",
            Self::Configured => "configured",
            Self::Unchanged => "unchanged",
        })
    }
}

/// Names one object in messages: `Kind namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Namespace, for namespaced objects.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// The reference of a dynamic object.
    #[must_use]
    pub fn of(obj: &DynamicObject) -> Self {
        Self {
            kind: obj
                .types
                .as_ref()
                .map(|t| t.kind.clone())
                .unwrap_or_default(),
            namespace: obj.metadata.namespace.clone(),
            name: obj.metadata.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// One applied object.
#[derive(Debug, Clone)]
pub struct Applied {
    /// Which object.
    pub object: ObjectRef,
    /// What changed.
    pub change: Change,
    /// The object as the server returned it.
    pub result: DynamicObject,
}

/// One object that failed.
#[derive(Debug, thiserror::Error)]
#[error("{object}: {source}")]
pub struct ObjectError {
    /// Which object.
    pub object: ObjectRef,
    /// Why.
    #[source]
    pub source: ObjectErrorKind,
}

/// Why one object failed.
#[derive(Debug, thiserror::Error)]
pub enum ObjectErrorKind {
    /// The object lacks apiVersion, kind or name.
    #[error("object has no {0}")]
    Incomplete(&'static str),
    /// The server does not serve this kind.
    #[error("the server has no resource for {group}/{version} {kind} (is its CRD installed?)")]
    UnknownKind {
        /// API group.
        group: String,
        /// Version.
        version: String,
        /// Kind.
        kind: String,
    },
    /// A namespaced object without a namespace.
    #[error("namespaced object has no metadata.namespace")]
    NoNamespace,
    /// The API call failed.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// Watching a CRD for Established (or an object for its deletion) failed.
    #[error("waiting on the object failed")]
    Wait(#[source] kube::runtime::wait::Error),
    /// A deleted object was still there after the timeout (a finalizer nobody removes?).
    #[error("still present {0:?} after deletion (a finalizer is pending)")]
    StillPresent(Duration),
    /// A CRD did not become Established in time.
    #[error("not Established within {0:?}")]
    NotEstablished(Duration),
}

/// A bundle apply that did not fully succeed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Some objects failed; the others were applied.
    #[error("{} of {} objects failed to apply:\n{}", .failures.len(), .failures.len() + .applied.len(), list_failures(.failures))]
    Objects {
        /// What failed.
        failures: Vec<ObjectError>,
        /// What was applied before or beside the failures.
        applied: Vec<Applied>,
    },
}

/// Per-object failures as an indented list, one `  - Kind ns/name: cause` line each.
#[must_use]
pub fn list_failures(failures: &[ObjectError]) -> String {
    failures
        .iter()
        .map(|f| format!("  - {f}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The outcome of a successful bundle apply.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every object, in apply order.
    pub applied: Vec<Applied>,
}

impl Report {
    /// Counts per change kind, e.g. `2 created, 5 unchanged`.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for a in &self.applied {
            *counts.entry(a.change.to_string()).or_default() += 1;
        }
        counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// True when nothing changed.
    #[must_use]
    pub fn unchanged(&self) -> bool {
        self.applied.iter().all(|a| a.change == Change::Unchanged)
    }

    /// The applied object with this kind and name, if any.
    #[must_use]
    pub fn find(&self, kind: &str, name: &str) -> Option<&Applied> {
        self.applied
            .iter()
            .find(|a| a.object.kind == kind && a.object.name == name)
    }
}

/// Applies bundles to one cluster.
pub struct Applier {
    client: Client,
    resolver: Resolver,
    crd_timeout: Duration,
}

impl Applier {
    /// An applier whose CRD waits are bounded by `crd_timeout`.
    #[must_use]
    pub fn new(client: Client, crd_timeout: Duration) -> Self {
        Self {
            resolver: Resolver::new(client.clone()),
            client,
            crd_timeout,
        }
    }

    /// The resolver, shared with callers that need kind → resource too.
    #[must_use]
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// Applies `objects` tier by tier; objects within a tier go concurrently.
    pub async fn apply(&self, objects: Vec<DynamicObject>) -> Result<Report, Error> {
        let mut applied = Vec::new();
        let mut failures = Vec::new();
        for (_, objs) in order::by_tier(&objects) {
            let results = join_all(objs.iter().map(|o| self.apply_one(o))).await;
            let mut tier_applied = Vec::new();
            for (obj, result) in objs.iter().zip(results) {
                match result {
                    Ok(a) => tier_applied.push(a),
                    Err(source) => failures.push(ObjectError {
                        object: ObjectRef::of(obj),
                        source,
                    }),
                }
            }
            // This tier's CRDs must be Established before anything that may use them.
            let crds: Vec<&Applied> = tier_applied
                .iter()
                .filter(|a| a.object.kind == "CustomResourceDefinition")
                .collect();
            let waits = join_all(crds.iter().map(|a| self.wait_established(&a.result))).await;
            for (a, w) in crds.iter().zip(waits) {
                if let Err(source) = w {
                    failures.push(ObjectError {
                        object: a.object.clone(),
                        source,
                    });
                }
            }
            applied.extend(tier_applied);
        }
        if failures.is_empty() {
            Ok(Report { applied })
        } else {
            Err(Error::Objects { failures, applied })
        }
    }

    async fn apply_one(&self, obj: &DynamicObject) -> Result<Applied, ObjectErrorKind> {
        let (gvk, name) = identify(obj)?;
        let api = self
            .resolver
            .api_for(&gvk, obj.metadata.namespace.as_deref())
            .await?;
        let mut body = obj.clone();
        body.metadata.managed_fields = None;
        body.metadata.resource_version = None;
        // Owning at least one field keeps managedFields non-empty from creation on; without it the
        // apiserver migrates the object on the next apply ("before-first-apply"), a spurious write.
        body.metadata
            .labels
            .get_or_insert_default()
            .insert(MANAGED_BY_LABEL.into(), crate::FIELD_MANAGER.into());
        let mut before = api.get_metadata_opt(&name).await?;
        if let Some(uid) = before
            .as_ref()
            .filter(|b| b.metadata.deletion_timestamp.is_some())
            .and_then(|b| b.metadata.uid.clone())
        {
            // Applied now, it would be patched and then deleted (a terminating CRD also refuses
            // every new custom resource): wait until it is gone, then create it afresh.
            self.wait_gone(&api, &name, &uid).await?;
            before = None;
        }
        let result = api
            .patch(
                &name,
                &PatchParams::apply(crate::FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await?;
        let change = match before {
            None => Change::Created,
            Some(b) if b.metadata.resource_version == result.metadata.resource_version => {
                Change::Unchanged
            }
            Some(_) => Change::Configured,
        };
        if gvk.kind == "CustomResourceDefinition" {
            self.resolver.learn_crd(&result);
        }
        Ok(Applied {
            object: ObjectRef::of(obj),
            change,
            result,
        })
    }

    async fn wait_gone(
        &self,
        api: &Api<DynamicObject>,
        name: &str,
        uid: &str,
    ) -> Result<(), ObjectErrorKind> {
        tracing::info!("{name} is being deleted: waiting until it is gone before applying it");
        match tokio::time::timeout(
            self.crd_timeout,
            await_condition(api.clone(), name, conditions::is_deleted(uid)),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ObjectErrorKind::Wait(e)),
            Err(_) => Err(ObjectErrorKind::StillPresent(self.crd_timeout)),
        }
    }

    async fn wait_established(&self, crd: &DynamicObject) -> Result<(), ObjectErrorKind> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        match tokio::time::timeout(
            self.crd_timeout,
            await_condition(api, &name, conditions::is_crd_established()),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ObjectErrorKind::Wait(e)),
            Err(_) => Err(ObjectErrorKind::NotEstablished(self.crd_timeout)),
        }
    }
}

/// The kind and name every apply or delete needs, or which of them is missing.
fn identify(obj: &DynamicObject) -> Result<(GroupVersionKind, String), ObjectErrorKind> {
    let gvk = gvk_of(obj).ok_or(ObjectErrorKind::Incomplete("apiVersion/kind"))?;
    let name = obj
        .metadata
        .name
        .clone()
        .ok_or(ObjectErrorKind::Incomplete("metadata.name"))?;
    Ok((gvk, name))
}

/// The group/version/kind of a dynamic object, when it has one.
#[must_use]
pub fn gvk_of(obj: &DynamicObject) -> Option<GroupVersionKind> {
    let types = obj.types.as_ref()?;
    if types.kind.is_empty() || types.api_version.is_empty() {
        return None;
    }
    let (group, version) = types
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &types.api_version));
    Some(GroupVersionKind::gvk(group, version, &types.kind))
}

/// Prints a bundle as a multi-document YAML stream (what `--dry-run` shows).
pub fn to_yaml(objects: &[DynamicObject]) -> Result<String, ocm_api::yaml::Error> {
    let mut out = String::new();
    for obj in objects {
        out.push_str("---\n");
        out.push_str(&ocm_api::yaml::to_string(obj)?);
    }
    Ok(out)
}

/// Parses a multi-document YAML stream into objects; `source` names it in errors.
pub fn parse_objects(text: &str, source: &str) -> anyhow::Result<Vec<DynamicObject>> {
    use anyhow::Context as _;
    let docs = ocm_api::yaml::from_str_multi(text)
        .with_context(|| format!("{source} is not valid YAML"))?;
    docs.into_iter()
        .enumerate()
        .map(|(i, doc)| {
            serde_json::from_value(doc)
                .with_context(|| format!("{source}: document {} is not a Kubernetes object", i + 1))
        })
        .collect()
}

/// Any serialisable Kubernetes object as a [`DynamicObject`], for the apply engine.
///
/// # Panics
/// Only if `T`'s serialisation is not an object, which no Kubernetes type does.
pub fn to_dynamic<T: Serialize>(obj: &T) -> DynamicObject {
    serde_json::from_value(serde_json::to_value(obj).expect("serialisable"))
        .expect("a Kubernetes object")
}
