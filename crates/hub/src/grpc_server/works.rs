//! The `manifestbundles` type (`io.open-cluster-management.works/v1alpha1`): a work agent is sent
//! its cluster's ManifestWorks as manifest bundles (the spec, with the work's metadata in the
//! `metadata` extension and its generation as the `resourceversion`), and reports each work's
//! status back; as upstream's work service, a status for an older generation is dropped, the
//! hub's finalizer is added while the agent holds the work and removed once it reports the
//! work `Deleted`.
use cloudevents_grpc::broker::{Identity, Service};
use cloudevents_grpc::event::{self, EventError};
use cloudevents_grpc::event_type::{Action, DataType, EventType, SubResource};
use cloudevents_grpc::proto::CloudEvent;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::Store;
use ocm_api::conditions::Condition;
use ocm_api::work::{MANIFEST_WORK_FINALIZER, ManifestWork};
use serde::Deserialize;
use tonic::Status;

use super::encode::{SOURCE, drop_nulls};
use super::{feed, status_of};

/// The extension carrying the work's metadata (JSON).
const WORK_META: &str = "metadata";
/// The condition a work agent reports once it removed a deleted work's resources.
const DELETED: &str = "Deleted";

/// sdk-go's data type of manifest bundles.
#[must_use]
pub fn data_type() -> DataType {
    DataType::new(
        "io.open-cluster-management.works",
        "v1alpha1",
        "manifestbundles",
    )
}

/// How ManifestWorks reach work agents.
#[must_use]
pub fn kind() -> feed::Kind<ManifestWork> {
    feed::Kind {
        data_type: data_type(),
        cluster_of: |work| work.metadata.namespace.clone(),
        encode,
    }
}

/// A work as sdk-go's source codec writes it.
fn encode(
    work: &ManifestWork,
    event_type: &EventType,
    cluster: &str,
) -> Result<CloudEvent, EventError> {
    let meta = &work.metadata;
    let mut event = event::new_event(SOURCE, event_type, cluster);
    event::set_string(
        &mut event,
        event::RESOURCE_ID,
        meta.uid.as_deref().unwrap_or_default(),
    );
    event::set_integer(
        &mut event,
        event::RESOURCE_VERSION,
        meta.generation.unwrap_or_default(),
    );
    event::set_string(&mut event, WORK_META, &serde_json::to_string(meta)?);
    if let Some(deleting) = &meta.deletion_timestamp {
        event::set_time(&mut event, event::DELETION_TIMESTAMP, deleting.0.into());
        return Ok(event);
    }
    let spec = &work.spec;
    let bundle = serde_json::json!({
        "manifests": spec.workload.manifests,
        "deleteOption": spec.delete_option,
        "manifestConfigs": spec.manifest_configs,
        "executer": spec.executor,
    });
    let mut bundle = bundle;
    drop_nulls(&mut bundle);
    event::set_json(&mut event, &bundle)?;
    Ok(event)
}

/// What a work agent reports (sdk-go's `ManifestBundleStatus`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BundleStatus {
    #[serde(default)]
    conditions: Vec<Condition>,
    #[serde(default)]
    resource_status: Vec<serde_json::Value>,
}

/// Serves ManifestWorks from the hub's API server.
pub struct Works {
    pub(super) client: kube::Client,
    pub(super) store: Store<ManifestWork>,
}

#[tonic::async_trait]
impl Service for Works {
    async fn list(&self, cluster: &str) -> Result<Vec<CloudEvent>, Status> {
        Ok(feed::list(&self.store, &kind(), cluster).await)
    }

    async fn handle(
        &self,
        _who: &Identity,
        report: &CloudEvent,
        event_type: &EventType,
    ) -> Result<(), Status> {
        if (event_type.action.clone(), event_type.sub_resource)
            != (Action::Update, SubResource::Status)
        {
            return Err(Status::invalid_argument(format!(
                "unsupported action {:?} for manifestbundles (only status updates)",
                event_type.action
            )));
        }
        let invalid = |e: EventError| Status::invalid_argument(e.to_string());
        let cluster = event::cluster_name(report).map_err(invalid)?;
        let uid = event::string(report, event::RESOURCE_ID)
            .ok_or_else(|| Status::invalid_argument("the status names no resourceid"))?;
        let generation: i64 = event::string(report, event::RESOURCE_VERSION)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                Status::invalid_argument("the status names no integer resourceversion")
            })?;
        let mut data: serde_json::Value = event::json(report).map_err(invalid)?;
        drop_nulls(&mut data);
        let status: BundleStatus =
            serde_json::from_value(data).map_err(|e| Status::invalid_argument(e.to_string()))?;
        // The work is found by its UID in the cluster's namespace; one gone since is done.
        let Some(last) = self.store.state().into_iter().find(|w| {
            w.metadata.uid.as_deref() == Some(uid.as_str())
                && w.metadata.namespace.as_deref() == Some(cluster.as_str())
        }) else {
            return Ok(());
        };
        let name = last.metadata.name.clone().unwrap_or_default();
        let api: Api<ManifestWork> = Api::namespaced(self.client.clone(), &cluster);
        let finalizers = last.metadata.finalizers.clone().unwrap_or_default();
        if status
            .conditions
            .iter()
            .any(|c| c.type_ == DELETED && c.status == "True")
        {
            let kept: Vec<&String> = finalizers
                .iter()
                .filter(|f| *f != MANIFEST_WORK_FINALIZER)
                .collect();
            if kept.len() == finalizers.len() {
                return Ok(());
            }
            return patch_finalizers(&api, &name, &last, &kept).await;
        }
        if last.metadata.generation.unwrap_or_default() > generation {
            return Ok(());
        }
        if !finalizers.iter().any(|f| f == MANIFEST_WORK_FINALIZER) {
            let mut with = finalizers.iter().collect::<Vec<_>>();
            let ours = MANIFEST_WORK_FINALIZER.to_string();
            with.push(&ours);
            patch_finalizers(&api, &name, &last, &with).await?;
        }
        let patch = serde_json::json!({"status": {
            "conditions": status.conditions,
            "resourceStatus": {"manifests": status.resource_status},
        }});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(drop)
            .map_err(status_of)
    }
}

/// Sets the work's finalizers, refused if the work changed since it was read.
async fn patch_finalizers(
    api: &Api<ManifestWork>,
    name: &str,
    last: &ManifestWork,
    finalizers: &[&String],
) -> Result<(), Status> {
    let patch = serde_json::json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": last.metadata.resource_version,
    }});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(drop)
        .map_err(status_of)
}
