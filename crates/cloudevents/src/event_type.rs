//! CloudEvents types as OCM names them: `<group>.<version>.<resource>.<spec|status>.<action>`,
//! e.g. `cluster.open-cluster-management.io.v1.managedclusters.status.update_request`.
use std::fmt;
use std::str::FromStr;

/// The `type` of the broker's heartbeats, sent down every subscription.
pub const HEARTBEAT: &str = "io.open-cluster-management.cloudevents.heartbeat";

/// Which kind of resource an event carries (the subscription's `data_type`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataType {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl DataType {
    /// A data type of these parts.
    #[must_use]
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        Self {
            group: group.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.group, self.version, self.resource)
    }
}

impl FromStr for DataType {
    type Err = TypeError;

    /// As sdk-go's: the last two parts are version and resource, the rest is the group.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('.').collect();
        let [group @ .., version, resource] = parts.as_slice() else {
            return Err(TypeError(format!(
                "data type {s:?}: want <group>.<version>.<resource>"
            )));
        };
        if group.is_empty() {
            return Err(TypeError(format!(
                "data type {s:?}: want <group>.<version>.<resource>"
            )));
        }
        Ok(Self::new(&group.join("."), version, resource))
    }
}

/// Whether an event is about a resource's spec (hub → agent) or status (agent → hub).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubResource {
    /// `spec`
    Spec,
    /// `status`
    Status,
}

/// What an event asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `create_request`
    Create,
    /// `update_request`
    Update,
    /// `delete_request`
    Delete,
    /// `watch_request` (authorising a subscription)
    Watch,
    /// `resync_request`: send me everything of this type for my cluster.
    ResyncRequest,
    /// `resync_response`
    ResyncResponse,
    /// Any other action, kept as sent.
    Other(String),
}

impl Action {
    fn as_str(&self) -> &str {
        match self {
            Self::Create => "create_request",
            Self::Update => "update_request",
            Self::Delete => "delete_request",
            Self::Watch => "watch_request",
            Self::ResyncRequest => "resync_request",
            Self::ResyncResponse => "resync_response",
            Self::Other(other) => other,
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "create_request" => Self::Create,
            "update_request" => Self::Update,
            "delete_request" => Self::Delete,
            "watch_request" => Self::Watch,
            "resync_request" => Self::ResyncRequest,
            "resync_response" => Self::ResyncResponse,
            other => Self::Other(other.to_string()),
        }
    }
}

/// A parsed event `type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventType {
    /// The resource kind.
    pub data_type: DataType,
    /// Spec or status.
    pub sub_resource: SubResource,
    /// The action.
    pub action: Action,
}

impl EventType {
    /// An event type of these parts.
    #[must_use]
    pub fn new(data_type: DataType, sub_resource: SubResource, action: Action) -> Self {
        Self {
            data_type,
            sub_resource,
            action,
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sub = match self.sub_resource {
            SubResource::Spec => "spec",
            SubResource::Status => "status",
        };
        write!(f, "{}.{sub}.{}", self.data_type, self.action.as_str())
    }
}

impl FromStr for EventType {
    type Err = TypeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (rest, action) = s.rsplit_once('.').ok_or_else(|| unsupported(s))?;
        let (data_type, sub) = rest.rsplit_once('.').ok_or_else(|| unsupported(s))?;
        let sub_resource = match sub {
            "spec" => SubResource::Spec,
            "status" => SubResource::Status,
            other => {
                return Err(TypeError(format!(
                    "event type {s:?}: unsupported subresource {other:?}"
                )));
            }
        };
        let data_type = data_type.parse().map_err(|_| unsupported(s))?;
        Ok(Self::new(data_type, sub_resource, Action::parse(action)))
    }
}

fn unsupported(s: &str) -> TypeError {
    TypeError(format!(
        "event type {s:?}: want <group>.<version>.<resource>.<spec|status>.<action>"
    ))
}

/// An event or data type that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TypeError(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip_as_sdk_go_names_them() {
        let s = "cluster.open-cluster-management.io.v1.managedclusters.status.update_request";
        let t: EventType = s.parse().unwrap();
        assert_eq!(
            t.data_type,
            DataType::new(
                "cluster.open-cluster-management.io",
                "v1",
                "managedclusters"
            )
        );
        assert_eq!(t.sub_resource, SubResource::Status);
        assert_eq!(t.action, Action::Update);
        assert_eq!(t.to_string(), s);
        // A group of several dots: only the last two parts are version and resource.
        let events: DataType = "events.k8s.io.v1.events".parse().unwrap();
        assert_eq!(events.group, "events.k8s.io");
    }

    #[test]
    fn malformed_types_are_refused() {
        assert!("a.b".parse::<DataType>().is_err());
        assert!(
            "a.v1.things.body.create_request"
                .parse::<EventType>()
                .is_err()
        );
        assert!("things.create_request".parse::<EventType>().is_err());
    }
}
