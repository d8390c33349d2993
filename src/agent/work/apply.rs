//! Applying one manifest of a work onto the managed cluster, by its update strategy:
//!
//! - `Update` (default): server-side apply as `work-agent`, forced — the work is the source of
//!   truth, so a hand edit of a field it sets is reverted on the next pass;
//! - `ServerSideApply`: server-side apply with the configured field manager and `force`, so a
//!   conflict with another manager is reported rather than overwritten;
//! - `CreateOnly`: created when absent, never updated;
//! - `ReadOnly`: only read; reported, never written, never deleted.
//!
//! Written objects get an ownerReference to the AppliedManifestWork, so that even if the agent is
//! gone, deleting that record lets the garbage collector remove them. A failure is reported in
//! the manifest's conditions and never stops the other manifests.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::Value;

use super::build::{self, Key};
use super::discovery::Discovery;
use super::feedback::{self, Feedback};
use super::status::{Availability, ManifestResult};
use crate::api::work::{
    AppliedManifestResourceMeta, AppliedManifestWork, ManifestConfigOption, UpdateStrategy,
    UpdateStrategyType, WORK_AGENT_FIELD_MANAGER,
};

/// The AppliedManifestWork applied objects are owned by.
#[derive(Debug, Clone)]
pub struct Owner {
    /// Its name.
    pub name: String,
    /// Its UID.
    pub uid: String,
}

impl Owner {
    /// The ownerReference objects carry.
    #[must_use]
    pub fn reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: AppliedManifestWork::api_version(&()).into_owned(),
            kind: AppliedManifestWork::kind(&()).into_owned(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            controller: None,
            block_owner_deletion: None,
        }
    }
}

/// What processing one manifest did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// For the work's status.
    pub result: ManifestResult,
    /// For the AppliedManifestWork, when the agent wrote (or created) the object.
    pub record: Option<AppliedManifestResourceMeta>,
    /// The resource the manifest names, when it could be resolved.
    pub key: Option<Key>,
}

/// The message of a Kubernetes error, without the debug dump.
#[must_use]
pub fn describe(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.reason),
        other => other.to_string(),
    }
}

/// The namespace a manifest goes to: its own for a namespaced kind (required), none otherwise.
fn namespace_of(parsed: &build::Parsed, namespaced: bool) -> Result<Option<String>, String> {
    if !namespaced {
        return Ok(None);
    }
    parsed
        .object
        .metadata
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .map(Some)
        .ok_or_else(|| "namespaced object has no metadata.namespace".into())
}

/// A manifest that failed before anything was applied.
fn failed(meta: crate::api::work::ManifestResourceMeta, message: String) -> Outcome {
    Outcome {
        result: ManifestResult {
            meta,
            applied: Err(message),
            available: Availability::Incomplete,
            feedback: None,
        },
        record: None,
        key: None,
    }
}

/// Applies manifest number `ordinal` of a work.
pub async fn apply_manifest(
    discovery: &Discovery,
    ordinal: usize,
    manifest: &Value,
    configs: &[ManifestConfigOption],
    owner: &Owner,
    executor: Option<super::executor::Executor<'_>>,
) -> Outcome {
    let mut meta = build::raw_meta(ordinal, manifest);
    let parsed = match build::parse(manifest) {
        Ok(p) => p,
        Err(e) => return failed(meta, e),
    };
    let (resource, namespaced) = match discovery.resolve(&parsed.gvk).await {
        Ok(r) => r,
        Err(e) => return failed(meta, format!("on the managed cluster: {e}")),
    };
    meta.resource = Some(resource.plural.clone());
    let namespace = match namespace_of(&parsed, namespaced) {
        Ok(ns) => ns,
        Err(why) => return failed(meta, why),
    };
    meta.namespace.clone_from(&namespace);
    let key = Key {
        group: parsed.gvk.group.clone(),
        resource: resource.plural.clone(),
        namespace: namespace.clone().unwrap_or_default(),
        name: parsed.name.clone(),
    };
    let target = super::executor::Target {
        group: &parsed.gvk.group,
        version: &parsed.gvk.version,
        resource: &resource.plural,
        namespace: namespace.as_deref(),
        name: &parsed.name,
    };
    if let Err(why) = super::executor::check(executor, target).await {
        // Keep its key: what it applied before is still wanted, not stale.
        return Outcome {
            key: Some(key),
            ..failed(meta, why)
        };
    }
    let config = build::config_for(configs, &meta);
    let strategy = build::strategy_for(configs, &meta);
    let api = discovery.api(&resource, namespaced, namespace.as_deref());
    let gvk = (
        parsed.gvk.group.as_str(),
        parsed.gvk.version.as_str(),
        parsed.gvk.kind.as_str(),
    );
    if strategy.type_ == UpdateStrategyType::ReadOnly {
        let (available, feedback) = read_only(&api, &parsed.name, config, gvk).await;
        return Outcome {
            result: ManifestResult {
                meta,
                applied: Ok(()),
                available,
                feedback,
            },
            record: None,
            key: Some(key),
        };
    }
    let body = body_for(&parsed, namespace.as_ref(), owner);
    match write(&api, &parsed.name, &body, strategy).await {
        Ok(obj) => {
            if parsed.gvk.group == "apiextensions.k8s.io"
                && parsed.gvk.kind == "CustomResourceDefinition"
            {
                discovery.learn_crd(&obj);
            }
            let record = AppliedManifestResourceMeta {
                group: Some(key.group.clone()).filter(|g| !g.is_empty()),
                version: parsed.gvk.version.clone(),
                resource: key.resource.clone(),
                namespace: namespace.clone(),
                name: parsed.name.clone(),
                uid: obj.metadata.uid.clone(),
            };
            // What the server returned is the object as it is now, status included.
            let feedback = Some(feedback_of(config, gvk, &obj));
            Outcome {
                result: ManifestResult {
                    meta,
                    applied: Ok(()),
                    available: Availability::Available,
                    feedback,
                },
                record: Some(record),
                key: Some(key),
            }
        }
        Err(e) => Outcome {
            result: ManifestResult {
                meta,
                applied: Err(describe(&e)),
                available: availability(&api, &parsed.name).await,
                feedback: None,
            },
            record: None,
            key: Some(key),
        },
    }
}

/// The object to send: in its namespace, owned by the AppliedManifestWork, without what the
/// server sets.
fn body_for(parsed: &build::Parsed, namespace: Option<&String>, owner: &Owner) -> DynamicObject {
    let mut body = parsed.object.clone();
    body.metadata.namespace = namespace.cloned();
    body.metadata.managed_fields = None;
    body.metadata.resource_version = None;
    let refs = body.metadata.owner_references.get_or_insert_default();
    if !refs.iter().any(|r| r.uid == owner.uid) {
        refs.push(owner.reference());
    }
    body
}

/// Writes the object by its (writing) strategy; returns the object as the server holds it.
async fn write(
    api: &Api<DynamicObject>,
    name: &str,
    body: &DynamicObject,
    strategy: UpdateStrategy,
) -> Result<DynamicObject, kube::Error> {
    let (manager, force) = match strategy.type_ {
        UpdateStrategyType::CreateOnly => return create_only(api, name, body).await,
        UpdateStrategyType::ServerSideApply => {
            let ssa = strategy.server_side_apply.unwrap_or_default();
            let manager = ssa
                .field_manager
                .unwrap_or_else(|| WORK_AGENT_FIELD_MANAGER.into());
            (manager, ssa.force.unwrap_or(false))
        }
        UpdateStrategyType::Update | UpdateStrategyType::ReadOnly => {
            (WORK_AGENT_FIELD_MANAGER.into(), true)
        }
    };
    let mut params = PatchParams::apply(&manager);
    params.force = force;
    api.patch(name, &params, &Patch::Apply(body)).await
}

/// Creates the object unless it exists; returns what is there.
async fn create_only(
    api: &Api<DynamicObject>,
    name: &str,
    body: &DynamicObject,
) -> Result<DynamicObject, kube::Error> {
    if let Some(existing) = api.get_opt(name).await? {
        return Ok(existing);
    }
    let params = PostParams {
        field_manager: Some(WORK_AGENT_FIELD_MANAGER.into()),
        ..Default::default()
    };
    match api.create(&params, body).await {
        Err(kube::Error::Api(s)) if s.is_already_exists() => api.get(name).await,
        other => other,
    }
}

/// What `config`'s feedback rules read from `obj`; the object is turned into JSON only when there
/// are rules to read it by (every applied object passes here).
fn feedback_of(
    config: Option<&ManifestConfigOption>,
    gvk: (&str, &str, &str),
    obj: &DynamicObject,
) -> Feedback {
    if config.is_none_or(|c| c.feedback_rules.is_empty()) {
        return Feedback::default();
    }
    match serde_json::to_value(obj) {
        Ok(object) => feedback::read(config, gvk, &object),
        Err(e) => Feedback {
            configured: true,
            errors: vec![format!("reading the object as JSON: {e}")],
            ..Feedback::default()
        },
    }
}

/// Whether a read-only object exists, and its feedback: the whole object is read only when
/// there are rules to read it by.
async fn read_only(
    api: &Api<DynamicObject>,
    name: &str,
    config: Option<&ManifestConfigOption>,
    gvk: (&str, &str, &str),
) -> (Availability, Option<Feedback>) {
    if config.is_none_or(|c| c.feedback_rules.is_empty()) {
        let available = availability(api, name).await;
        let feedback = (available == Availability::Available).then(Feedback::default);
        return (available, feedback);
    }
    match api.get_opt(name).await {
        Ok(Some(obj)) => (
            Availability::Available,
            Some(feedback_of(config, gvk, &obj)),
        ),
        Ok(None) => (Availability::NotAvailable, None),
        Err(e) => (Availability::FetchFailed(describe(&e)), None),
    }
}

/// Whether the object exists.
async fn availability(api: &Api<DynamicObject>, name: &str) -> Availability {
    match api.get_metadata_opt(name).await {
        Ok(Some(_)) => Availability::Available,
        Ok(None) => Availability::NotAvailable,
        Err(e) => Availability::FetchFailed(describe(&e)),
    }
}
