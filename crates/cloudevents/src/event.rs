//! Reading and building the protobuf `CloudEvent` as sdk-go writes it in binary mode: the
//! context attributes `id`, `source`, `spec_version` and `type` are fields; `time` and every
//! extension (`clustername`, `resourceid`, `resourceversion`, `deletiontimestamp`, ...) are
//! attributes named with a `ce-` prefix; the data content type is the unprefixed `contenttype`;
//! the data is JSON in `binary_data`.
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::event_type::EventType;
use crate::proto::{
    CloudEvent, CloudEventAttributeValue, cloud_event, cloud_event_attribute_value::Attr,
};

/// The CloudEvents spec version sdk-go writes.
pub const SPEC_VERSION: &str = "1.0";
/// The extension naming the managed cluster an event is about.
pub const CLUSTER_NAME: &str = "clustername";
/// The extension carrying the resource's UID.
pub const RESOURCE_ID: &str = "resourceid";
/// The extension carrying the resource's version (a string of the Kubernetes resourceVersion).
pub const RESOURCE_VERSION: &str = "resourceversion";
/// The extension set when the resource is being deleted.
pub const DELETION_TIMESTAMP: &str = "deletiontimestamp";
/// The extension naming the source of a relayed event.
pub const ORIGINAL_SOURCE: &str = "originalsource";

const PREFIX: &str = "ce-";
const CONTENT_TYPE: &str = "contenttype";

/// An event that does not carry what it must.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// Its `type` does not parse.
    #[error(transparent)]
    Type(#[from] crate::event_type::TypeError),
    /// An extension it needs is missing or of another type.
    #[error("the event has no {0} extension")]
    Missing(&'static str),
    /// Its data is not the JSON the type calls for.
    #[error("the event's data: {0}")]
    Data(#[from] serde_json::Error),
    /// It carries no data where data is needed.
    #[error("the event carries no data")]
    NoData,
}

/// Starts an event of this type from this source, as sdk-go's event builder does: a fresh
/// UUID, the time now, and the `clustername` and `originalsource` extensions set.
#[must_use]
pub fn new_event(source: &str, event_type: &EventType, cluster: &str) -> CloudEvent {
    let mut event = CloudEvent {
        id: uuid::Uuid::new_v4().to_string(),
        source: source.to_string(),
        spec_version: SPEC_VERSION.to_string(),
        r#type: event_type.to_string(),
        ..CloudEvent::default()
    };
    event.attributes.insert(
        format!("{PREFIX}time"),
        attr(Attr::CeTimestamp(SystemTime::now().into())),
    );
    set_string(&mut event, CLUSTER_NAME, cluster);
    set_string(&mut event, ORIGINAL_SOURCE, "");
    event
}

/// Sets a string extension.
pub fn set_string(event: &mut CloudEvent, name: &str, value: &str) {
    event.attributes.insert(
        format!("{PREFIX}{name}"),
        attr(Attr::CeString(value.to_string())),
    );
}

/// Sets an integer extension (CloudEvents integers are 32-bit: larger values saturate).
pub fn set_integer(event: &mut CloudEvent, name: &str, value: i64) {
    let value = i32::try_from(value).unwrap_or(if value < 0 { i32::MIN } else { i32::MAX });
    event
        .attributes
        .insert(format!("{PREFIX}{name}"), attr(Attr::CeInteger(value)));
}

/// Sets a timestamp extension.
pub fn set_time(event: &mut CloudEvent, name: &str, value: SystemTime) {
    event.attributes.insert(
        format!("{PREFIX}{name}"),
        attr(Attr::CeTimestamp(value.into())),
    );
}

/// Sets the data: `value` as JSON.
pub fn set_json<T: Serialize>(event: &mut CloudEvent, value: &T) -> Result<(), EventError> {
    event.data = Some(cloud_event::Data::BinaryData(serde_json::to_vec(value)?));
    event.attributes.insert(
        CONTENT_TYPE.to_string(),
        attr(Attr::CeString("application/json".to_string())),
    );
    Ok(())
}

/// An extension's value as a string: strings as they are, integers in decimal (sdk-go's
/// `ToString` accepts only strings; integers are read here too so either writer is understood).
#[must_use]
pub fn string(event: &CloudEvent, name: &str) -> Option<String> {
    match event
        .attributes
        .get(&format!("{PREFIX}{name}"))?
        .attr
        .as_ref()?
    {
        Attr::CeString(s) | Attr::CeUri(s) | Attr::CeUriRef(s) => Some(s.clone()),
        Attr::CeInteger(i) => Some(i.to_string()),
        _ => None,
    }
}

/// Whether the extension is present (whatever its type).
#[must_use]
pub fn has(event: &CloudEvent, name: &str) -> bool {
    event.attributes.contains_key(&format!("{PREFIX}{name}"))
}

/// The event's parsed `type`.
pub fn event_type(event: &CloudEvent) -> Result<EventType, EventError> {
    Ok(event.r#type.parse()?)
}

/// The cluster the event names.
pub fn cluster_name(event: &CloudEvent) -> Result<String, EventError> {
    string(event, CLUSTER_NAME).ok_or(EventError::Missing(CLUSTER_NAME))
}

/// The event's data, which must be present.
pub fn data(event: &CloudEvent) -> Result<&[u8], EventError> {
    match &event.data {
        Some(cloud_event::Data::BinaryData(bytes)) => Ok(bytes),
        Some(cloud_event::Data::TextData(text)) => Ok(text.as_bytes()),
        _ => Err(EventError::NoData),
    }
}

/// The event's JSON data as `T`.
pub fn json<T: DeserializeOwned>(event: &CloudEvent) -> Result<T, EventError> {
    Ok(serde_json::from_slice(data(event)?)?)
}

fn attr(attr: Attr) -> CloudEventAttributeValue {
    CloudEventAttributeValue { attr: Some(attr) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_type::{Action, DataType, SubResource};

    #[test]
    fn an_event_carries_sdk_go_s_attribute_names() {
        let t = EventType::new(
            DataType::new("g.io", "v1", "things"),
            SubResource::Spec,
            Action::Create,
        );
        let mut event = new_event("kube", &t, "c1");
        set_string(&mut event, RESOURCE_VERSION, "42");
        set_json(&mut event, &serde_json::json!({"metadata": {"name": "c1"}})).unwrap();
        assert_eq!(event.spec_version, "1.0");
        assert_eq!(event.r#type, "g.io.v1.things.spec.create_request");
        let mut names: Vec<&str> = event.attributes.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "ce-clustername",
                "ce-originalsource",
                "ce-resourceversion",
                "ce-time",
                "contenttype"
            ]
        );
        assert_eq!(cluster_name(&event).unwrap(), "c1");
        let back: serde_json::Value = json(&event).unwrap();
        assert_eq!(back["metadata"]["name"], "c1");
    }

    #[test]
    fn an_event_without_a_cluster_or_data_is_refused() {
        let event = CloudEvent::default();
        assert!(matches!(
            cluster_name(&event),
            Err(EventError::Missing(CLUSTER_NAME))
        ));
        assert!(matches!(data(&event), Err(EventError::NoData)));
    }
}
