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
//! gone, deleting that record lets the garbage collector remove them. The reference is merged into
//! the object's list by its own compare-and-swap patch, never sent in the apply: every work applies
//! as the same field manager, so an applied list would replace the references of other works that
//! apply the same object, and deleting one of them would then delete what the others still want
//! (upstream's `ApplyOwnerReferences` merges the same way). A failure is reported in the
//! manifest's conditions and never stops the other manifests. This reads and decides; the writes
//! themselves are [`super::writer`]'s.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource as _;
use kube::api::{Api, DynamicObject};
use serde_json::Value;

use super::build::{self, Key};
use super::discovery::Discovery;
use super::feedback::{self, Feedback};
use super::ignore_fields::Ignored;
use super::status::{Availability, ManifestResult};
use super::writer;
use ocm_api::work::{
    AppliedManifestResourceMeta, AppliedManifestWork, ManifestConfigOption, UpdateStrategy,
    UpdateStrategyType,
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
fn failed(meta: ocm_api::work::ManifestResourceMeta, message: String) -> Outcome {
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
    reader: feedback::Reader,
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
        object: &parsed.object,
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
        let (available, feedback) = read_only(reader, &api, &parsed.name, config, gvk).await;
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
    let ignored = match ignored_fields(&strategy) {
        Ok(ignored) => ignored,
        Err(why) => {
            return Outcome {
                key: Some(key),
                ..failed(meta, why)
            };
        }
    };
    let target = Written {
        api: &api,
        name: &parsed.name,
        namespace: namespace.as_ref(),
        owner,
        ignored: &ignored,
    };
    let written = write_owned(&target, &parsed, strategy).await;
    if let Ok(obj) = &written
        && parsed.gvk.group == "apiextensions.k8s.io"
        && parsed.gvk.kind == "CustomResourceDefinition"
    {
        discovery.learn_crd(obj);
    }
    let read = Read {
        reader,
        config,
        gvk,
        version: &parsed.gvk.version,
    };
    outcome_of_write(written, meta, key, &read, &api, &parsed.name).await
}

/// How a written object is read back for the status.
struct Read<'a> {
    reader: feedback::Reader,
    config: Option<&'a ManifestConfigOption>,
    gvk: (&'a str, &'a str, &'a str),
    version: &'a str,
}

/// The outcome of writing a manifest: applied with its feedback, or the error with whether the
/// object is there.
async fn outcome_of_write(
    written: Result<DynamicObject, kube::Error>,
    meta: ocm_api::work::ManifestResourceMeta,
    key: Key,
    read: &Read<'_>,
    api: &Api<DynamicObject>,
    name: &str,
) -> Outcome {
    match written {
        Ok(obj) => {
            let record = record_of(&key, read.version, &obj);
            // What the server returned is the object as it is now, status included.
            let feedback = Some(feedback_of(read.reader, read.config, read.gvk, &obj));
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
                available: availability(api, name).await,
                feedback: None,
            },
            record: None,
            key: Some(key),
        },
    }
}

/// What the AppliedManifestWork records of an object the agent wrote.
fn record_of(key: &Key, version: &str, obj: &DynamicObject) -> AppliedManifestResourceMeta {
    AppliedManifestResourceMeta {
        group: Some(key.group.clone()).filter(|g| !g.is_empty()),
        version: version.to_owned(),
        resource: key.resource.clone(),
        namespace: Some(key.namespace.clone()).filter(|n| !n.is_empty()),
        name: key.name.clone(),
        uid: obj.metadata.uid.clone(),
    }
}

/// The fields a server-side apply leaves to the cluster ([`super::ignore_fields`]).
fn ignored_fields(strategy: &UpdateStrategy) -> Result<Ignored, String> {
    match (&strategy.type_, &strategy.server_side_apply) {
        (UpdateStrategyType::ServerSideApply, Some(ssa)) => Ignored::parse(&ssa.ignore_fields),
        _ => Ok(Ignored::default()),
    }
}

/// Where and how a manifest is written.
struct Written<'a> {
    api: &'a Api<DynamicObject>,
    name: &'a str,
    namespace: Option<&'a String>,
    owner: &'a Owner,
    ignored: &'a Ignored,
}

/// Writes the manifest by its strategy and makes sure the AppliedManifestWork owns what it wrote.
async fn write_owned(
    target: &Written<'_>,
    parsed: &build::Parsed,
    strategy: UpdateStrategy,
) -> Result<DynamicObject, kube::Error> {
    let (api, name, owner) = (target.api, target.name, target.owner);
    let strategy_type = strategy.type_;
    let mut body = body_for(parsed, target.namespace, owner, strategy_type);
    if !target.ignored.is_empty() {
        // One read more, for these manifests only: what the cluster has of the ignored fields.
        body = leave_to_cluster(api, name, body, target.ignored).await?;
    }
    match write(api, name, &body, strategy).await {
        // CreateOnly: what it created carries the reference; what was there before stays not ours.
        Ok(obj) if strategy_type == UpdateStrategyType::CreateOnly => Ok(obj),
        Ok(obj) => writer::add_owner(api, obj, owner).await,
        Err(e) => Err(e),
    }
}

/// The object to send: in its namespace, without what the server sets. Only a create carries the
/// owner reference; an apply leaves it to [`writer::add_owner`] (see the module doc).
fn body_for(
    parsed: &build::Parsed,
    namespace: Option<&String>,
    owner: &Owner,
    strategy: UpdateStrategyType,
) -> DynamicObject {
    let mut body = parsed.object.clone();
    body.metadata.namespace = namespace.cloned();
    body.metadata.managed_fields = None;
    body.metadata.resource_version = None;
    if strategy == UpdateStrategyType::CreateOnly {
        body.metadata.owner_references = Some(with_owner(
            body.metadata.owner_references.take().unwrap_or_default(),
            owner,
        ));
    }
    body
}

/// `body` with the ignored fields as the cluster has them (see [`super::ignore_fields`]).
async fn leave_to_cluster(
    api: &Api<DynamicObject>,
    name: &str,
    body: DynamicObject,
    ignored: &Ignored,
) -> Result<DynamicObject, kube::Error> {
    let existing = api
        .get_opt(name)
        .await?
        .map(|o| serde_json::to_value(o).expect("objects serialise"));
    let mut value = serde_json::to_value(&body).expect("objects serialise");
    ignored.prepare(&mut value, existing.as_ref());
    Ok(serde_json::from_value(value).expect("an object with fields set stays an object"))
}

/// `refs` with the AppliedManifestWork's reference added, unless it is there.
pub(crate) fn with_owner(mut refs: Vec<OwnerReference>, owner: &Owner) -> Vec<OwnerReference> {
    if !refs.iter().any(|r| r.uid == owner.uid) {
        refs.push(owner.reference());
    }
    refs
}

/// Writes the object by its (writing) strategy: a create-only one is created when absent, and
/// otherwise left as it is; returns the object as the server holds it.
async fn write(
    api: &Api<DynamicObject>,
    name: &str,
    body: &DynamicObject,
    strategy: UpdateStrategy,
) -> Result<DynamicObject, kube::Error> {
    if strategy.type_ != UpdateStrategyType::CreateOnly {
        return writer::apply(api, name, body, strategy).await;
    }
    match api.get_opt(name).await? {
        Some(existing) => Ok(existing),
        None => writer::create(api, name, body).await,
    }
}

/// What `config`'s feedback rules read from `obj`; the object is turned into JSON only when there
/// are rules to read it by (every applied object passes here).
fn feedback_of(
    reader: feedback::Reader,
    config: Option<&ManifestConfigOption>,
    gvk: (&str, &str, &str),
    obj: &DynamicObject,
) -> Feedback {
    if config.is_none_or(|c| c.feedback_rules.is_empty() && c.condition_rules.is_empty()) {
        return Feedback::default();
    }
    match serde_json::to_value(obj) {
        Ok(object) => feedback::read(reader, config, gvk, &object),
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
    reader: feedback::Reader,
    api: &Api<DynamicObject>,
    name: &str,
    config: Option<&ManifestConfigOption>,
    gvk: (&str, &str, &str),
) -> (Availability, Option<Feedback>) {
    if config.is_none_or(|c| c.feedback_rules.is_empty() && c.condition_rules.is_empty()) {
        let available = availability(api, name).await;
        let feedback = (available == Availability::Available).then(Feedback::default);
        return (available, feedback);
    }
    match api.get_opt(name).await {
        Ok(Some(obj)) => (
            Availability::Available,
            Some(feedback_of(reader, config, gvk, &obj)),
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
