//! RFC 7386 JSON merge patch: how a values file's settings are laid over what the flags give.
use serde_json::Value;

/// Merges `patch` into `target`: objects merge key by key, `null` removes, anything else
/// replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let map = target.as_object_mut().expect("made an object");
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn objects_merge_null_removes_the_rest_replaces() {
        let mut target = json!({"a": {"b": 1, "c": 2}, "d": [1], "e": 1});
        super::merge(
            &mut target,
            &json!({"a": {"b": 3}, "d": [2], "e": null, "f": "x"}),
        );
        assert_eq!(target, json!({"a": {"b": 3, "c": 2}, "d": [2], "f": "x"}));
    }
}
