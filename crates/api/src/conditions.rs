//! Status conditions shared by every OCM kind: the k8s-openapi [`Condition`], its CRD schema, the
//! condition types several kinds use, and pure helpers that behave like apimachinery's
//! `meta.FindStatusCondition` / `meta.SetStatusCondition` (no clock: the caller stamps the time).
use schemars::{Schema, SchemaGenerator};
use serde_json::json;

pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Condition status `True`.
pub const TRUE: &str = "True";
/// Condition status `False`.
pub const FALSE: &str = "False";
/// Condition status `Unknown`.
pub const UNKNOWN: &str = "Unknown";

/// The desired resources were applied (operators, ManifestWork).
pub const APPLIED: &str = "Applied";
/// The thing is up and serving (Klusterlet, ManifestWork, add-ons).
pub const AVAILABLE: &str = "Available";
/// A rollout is in progress (operators, ManifestWork, add-ons).
pub const PROGRESSING: &str = "Progressing";
/// Something is wrong but the thing still partly works (ManifestWork, add-ons).
pub const DEGRADED: &str = "Degraded";

/// The condition of `type_`, if present.
#[must_use]
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present with status `True`.
#[must_use]
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == TRUE)
}

/// A condition of `type_` with `status`, stamped `now` (for no generation in particular).
#[must_use]
pub fn new(
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    now: &Time,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: now.clone(),
        observed_generation: None,
    }
}

/// Adds or updates the condition of `new.type_`; returns whether anything changed.
///
/// When the status is unchanged the existing `lastTransitionTime` is kept, so a caller can always
/// pass "now" in `new` and the time still records when the status last flipped.
pub fn set(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let Some(old) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(new);
        return true;
    };
    let time = if old.status == new.status {
        old.last_transition_time.clone()
    } else {
        new.last_transition_time.clone()
    };
    let merged = Condition {
        last_transition_time: time,
        ..new
    };
    if *old == merged {
        return false;
    }
    *old = merged;
    true
}

/// Schema of a condition list keyed by `type`, as most OCM statuses declare it.
pub fn schema(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = schema_atomic(generator);
    super::schema::insert(&mut schema, "x-kubernetes-list-type", json!("map"));
    super::schema::insert(&mut schema, "x-kubernetes-list-map-keys", json!(["type"]));
    schema
}

/// Schema of a condition list without list-map markers (upstream ManagedClusterSet and
/// ManagedClusterSetBinding declare it so).
pub fn schema_atomic(generator: &mut SchemaGenerator) -> Schema {
    let mut item = super::schema::plain::<Condition>(generator);
    if let Some(props) = item.as_object_mut().and_then(|o| o.get_mut("properties")) {
        // The validation apimachinery puts on every Condition, so invalid ones fail here as upstream.
        props["status"]["enum"] = json!([TRUE, FALSE, UNKNOWN]);
        props["type"]["maxLength"] = json!(316);
        props["type"]["pattern"] = json!(super::schema::QUALIFIED_NAME);
        props["reason"]["minLength"] = json!(1);
        props["reason"]["maxLength"] = json!(1024);
        props["reason"]["pattern"] = json!(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$");
        props["message"]["maxLength"] = json!(32768);
        props["observedGeneration"]["minimum"] = json!(0);
    }
    schemars::json_schema!({ "type": "array", "items": item })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn cond(type_: &str, status: &str, reason: &str, secs: i64) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{reason} message"),
            last_transition_time: Time(Timestamp::from_second(secs).unwrap()),
            observed_generation: None,
        }
    }

    #[test]
    fn find_and_is_true() {
        let list = vec![
            cond(APPLIED, TRUE, "Done", 1),
            cond(AVAILABLE, FALSE, "Down", 1),
        ];
        assert_eq!(find(&list, AVAILABLE).unwrap().reason, "Down");
        assert!(find(&list, PROGRESSING).is_none());
        assert!(is_true(&list, APPLIED));
        assert!(!is_true(&list, AVAILABLE));
        assert!(!is_true(&list, PROGRESSING));
    }

    #[test]
    fn set_appends_a_new_type() {
        let mut list = vec![cond(APPLIED, TRUE, "Done", 1)];
        assert!(set(&mut list, cond(AVAILABLE, TRUE, "Up", 2)));
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].last_transition_time.0.as_second(), 2);
    }

    #[test]
    fn same_status_keeps_transition_time_but_updates_the_rest() {
        let mut list = vec![cond(AVAILABLE, TRUE, "Up", 1)];
        let mut new = cond(AVAILABLE, TRUE, "StillUp", 5);
        new.observed_generation = Some(3);
        assert!(set(&mut list, new));
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].last_transition_time.0.as_second(), 1);
        assert_eq!(
            (list[0].reason.as_str(), list[0].observed_generation),
            ("StillUp", Some(3))
        );
    }

    #[test]
    fn status_change_takes_the_new_transition_time() {
        let mut list = vec![cond(AVAILABLE, TRUE, "Up", 1)];
        assert!(set(&mut list, cond(AVAILABLE, FALSE, "Down", 7)));
        assert_eq!(
            (
                list[0].status.as_str(),
                list[0].last_transition_time.0.as_second()
            ),
            (FALSE, 7)
        );
    }

    #[test]
    fn identical_update_reports_no_change() {
        let mut list = vec![cond(AVAILABLE, TRUE, "Up", 1)];
        assert!(!set(&mut list, cond(AVAILABLE, TRUE, "Up", 9)));
        assert_eq!(list[0].last_transition_time.0.as_second(), 1);
    }

    #[test]
    fn schema_is_a_list_map_keyed_by_type_without_upstream_text() {
        let schema = schemars::generate::SchemaSettings::openapi3()
            .with(|s| s.inline_subschemas = true)
            .into_generator()
            .into_root_schema_for::<Probe>();
        let conditions = &schema.as_value()["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
        assert_eq!(
            conditions["items"]["properties"]["lastTransitionTime"]["format"],
            "date-time"
        );
        assert!(!conditions.to_string().contains("description"));
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Probe {
        #[schemars(schema_with = "super::schema")]
        conditions: Vec<Condition>,
    }
}
