//! Kubernetes objects as spec events and back, as sdk-go's codecs write them: the object's UID
//! is the `resourceid`, its resourceVersion the `resourceversion`, a deleting object carries only
//! its `deletiontimestamp`, any other its JSON (with `apiVersion` and `kind`) as data.
use cloudevents_grpc::event::{self, EventError};
use cloudevents_grpc::event_type::EventType;
use cloudevents_grpc::proto::CloudEvent;
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The source the hub's events name (upstream's `kube`).
pub const SOURCE: &str = "kube";

/// `object` as an event of `event_type` about `cluster`.
pub fn encode<K>(
    object: &K,
    event_type: &EventType,
    cluster: &str,
) -> Result<CloudEvent, EventError>
where
    K: Resource<DynamicType = ()> + Serialize,
{
    let meta = object.meta();
    let mut event = event::new_event(SOURCE, event_type, cluster);
    event::set_string(
        &mut event,
        event::RESOURCE_ID,
        meta.uid.as_deref().unwrap_or_default(),
    );
    if let Some(version) = &meta.resource_version {
        event::set_string(&mut event, event::RESOURCE_VERSION, version);
    }
    if let Some(deleting) = &meta.deletion_timestamp {
        event::set_time(&mut event, event::DELETION_TIMESTAMP, deleting.0.into());
        return Ok(event);
    }
    let mut value = serde_json::to_value(object)?;
    // k8s-openapi's and kube's types write apiVersion and kind themselves; set them anyway so
    // that a type that does not still reads as upstream's.
    value["apiVersion"] = K::api_version(&()).into_owned().into();
    value["kind"] = K::kind(&()).into_owned().into();
    event::set_json(&mut event, &value)?;
    Ok(event)
}

/// The object an agent's event carries. Go's agents write nil slices and maps as `null`: those
/// fields are dropped first, so that they read as absent (as the API server reads them).
pub fn decode<K: DeserializeOwned>(event: &CloudEvent) -> Result<K, EventError> {
    let mut value: serde_json::Value = event::json(event)?;
    drop_nulls(&mut value);
    Ok(serde_json::from_value(value)?)
}

/// Removes every `null` member of every object in `value`.
pub fn drop_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(fields) => {
            fields.retain(|_, v| !v.is_null());
            fields.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// The object an agent's create request carries, with the fields only the API server sets
/// cleared (a create with a resourceVersion is refused).
pub fn decode_for_create<K: DeserializeOwned + Resource>(
    event: &CloudEvent,
) -> Result<K, EventError> {
    let mut object: K = decode(event)?;
    let meta = object.meta_mut();
    meta.uid = None;
    meta.resource_version = None;
    meta.creation_timestamp = None;
    meta.managed_fields = None;
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_s_nulls_read_as_absent_fields() {
        let t: EventType =
            "cluster.open-cluster-management.io.v1.managedclusters.spec.create_request"
                .parse()
                .unwrap();
        let mut event = event::new_event("agent", &t, "c1");
        let data = serde_json::json!({
            "metadata": {"name": "c1", "labels": null, "creationTimestamp": null},
            "spec": {"hubAcceptsClient": false, "managedClusterClientConfigs": null, "taints": [{"key": "k", "value": null, "effect": "NoSelect"}]},
            "status": {"conditions": null}
        });
        event::set_json(&mut event, &data).unwrap();
        let cluster: ocm_api::cluster::ManagedCluster = decode(&event).unwrap();
        assert_eq!(cluster.metadata.name.as_deref(), Some("c1"));
        assert!(cluster.spec.managed_cluster_client_configs.is_empty());
        assert_eq!(cluster.spec.taints.len(), 1);
    }
}
