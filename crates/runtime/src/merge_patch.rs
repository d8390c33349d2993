//! JSON merge patches (RFC 7386) between two versions of an object: what a status writer sends so
//! that a field the new version leaves out (an emptied list our types skip when empty) is removed,
//! not kept from the old one as a plain merge of the new version would keep it.
use serde_json::{Map, Value};

/// The merge patch that turns `old` into `new`: keys gone from an object become `null`, objects
/// in both are patched key by key, anything else is `new`'s value.
#[must_use]
pub fn between(old: &Value, new: &Value) -> Value {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return new.clone();
    };
    let mut patch = Map::new();
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        patch.insert(key.clone(), Value::Null);
    }
    for (key, value) in new {
        match old.get(key) {
            Some(before) if before == value => {}
            Some(before) => {
                patch.insert(key.clone(), between(before, value));
            }
            None => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(patch)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_dropped_key_is_nulled_and_nested_objects_are_patched_by_key() {
        let old = json!({"configReferences": [{"name": "c"}], "conditions": [{"type": "A"}],
            "healthCheck": {"mode": "Lease", "extra": 1}, "same": 1});
        let new =
            json!({"conditions": [{"type": "B"}], "healthCheck": {"mode": "Lease"}, "same": 1});
        assert_eq!(
            between(&old, &new),
            json!({"configReferences": null, "conditions": [{"type": "B"}],
                "healthCheck": {"extra": null}})
        );
    }

    #[test]
    fn from_nothing_the_patch_is_the_new_version() {
        let new = json!({"a": [1]});
        assert_eq!(between(&Value::Null, &new), new);
    }
}
