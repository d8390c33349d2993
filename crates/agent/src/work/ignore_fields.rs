//! `serverSideApply.ignoreFields` of a ManifestWork: fields of an applied object the agent leaves
//! to the managed cluster (a HorizontalPodAutoscaler's `.spec.replicas`, a mutating webhook's
//! annotation), as upstream's work agent does.
//!
//! - `OnSpokePresent`: once the object exists, the field is whatever the cluster has: the agent
//!   sends the cluster's value (or nothing, when the cluster has none), never the work's.
//! - `OnSpokeChange`: the cluster's value is kept while the work's manifest is unchanged; when
//!   the manifest changes, its value is written again. Whether it changed is told by upstream's
//!   `open-cluster-management.io/config-spec-hash` annotation: a hash of the manifest without
//!   its `OnSpokePresent` fields, put on the object with each write.
//!
//! Every field that is not ignored is applied as before, so a change on the cluster to a field
//! the work sets is still reverted. Sending the cluster's own value (rather than leaving the field
//! out, which server-side apply reads as "remove what I owned") keeps the value where it is.
//! Paths are JSON paths of object keys (`.spec.replicas`) or JSON pointers (`/spec/replicas`);
//! a path into a list, and jq expressions, are refused with the reason in the manifest's status.
use serde_json::{Map, Value};

use ocm_api::work::{IgnoreField, IgnoreFieldCondition};

/// Upstream's annotation holding the hash of the applied manifest.
pub const SPEC_HASH_ANNOTATION: &str = "open-cluster-management.io/config-spec-hash";

/// A field, as the object keys leading to it.
type Path = Vec<String>;

/// The ignored fields of one manifest, by condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignored {
    /// Kept from the cluster whenever the object exists.
    present: Vec<Path>,
    /// Kept from the cluster while the manifest is unchanged.
    change: Vec<Path>,
}

impl Ignored {
    /// The fields of `fields`, or why one cannot be used.
    pub fn parse(fields: &[IgnoreField]) -> Result<Self, String> {
        let mut ignored = Self::default();
        for field in fields {
            if let Some(expr) = field.jq_path_expressions.first() {
                return Err(format!(
                    "ignoreFields: jqPathExpressions ({expr:?}) are not supported by this agent; use jsonPaths or jsonPointers"
                ));
            }
            let paths = field
                .json_paths
                .iter()
                .map(|p| json_path(p))
                .chain(field.json_pointers.iter().map(|p| json_pointer(p)));
            let list = match field.condition {
                IgnoreFieldCondition::OnSpokePresent => &mut ignored.present,
                IgnoreFieldCondition::OnSpokeChange => &mut ignored.change,
            };
            for path in paths {
                list.push(path?);
            }
        }
        Ok(ignored)
    }

    /// Whether nothing is ignored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.present.is_empty() && self.change.is_empty()
    }

    /// Makes `body` (the manifest to apply) leave the ignored fields to the cluster, given the
    /// object there (`None`: it is created, with every field of the manifest), and marks it
    /// with the manifest's hash.
    pub fn prepare(&self, body: &mut Value, existing: Option<&Value>) {
        let hash = self.hash(body);
        if let Some(existing) = existing {
            let unchanged = annotation(existing) == Some(hash.as_str());
            let kept = self
                .present
                .iter()
                .chain(self.change.iter().filter(|_| unchanged));
            for path in kept {
                match get(existing, path) {
                    Some(value) => set(body, path, value.clone()),
                    None => remove(body, path),
                }
            }
        }
        set(
            body,
            &["metadata", "annotations", SPEC_HASH_ANNOTATION].map(String::from),
            Value::String(hash),
        );
    }

    /// The manifest's hash: SHA-256 of it without its `OnSpokePresent` fields and the hash
    /// annotation (keys sorted, so equal manifests hash equal).
    fn hash(&self, body: &Value) -> String {
        let mut manifest = body.clone();
        for path in &self.present {
            remove(&mut manifest, path);
        }
        remove(
            &mut manifest,
            &["metadata", "annotations", SPEC_HASH_ANNOTATION].map(String::from),
        );
        let text = serde_json::to_vec(&manifest).expect("JSON values serialise");
        super::build::sha256_hex(&text)
    }
}

fn annotation(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/annotations")?
        .get(SPEC_HASH_ANNOTATION)?
        .as_str()
}

/// `.spec.replicas`, `spec.replicas` or `{.spec.replicas}`: object keys only.
fn json_path(path: &str) -> Result<Path, String> {
    let inner = path.trim().trim_start_matches('{').trim_end_matches('}');
    let keys: Path = inner
        .trim_start_matches('.')
        .split('.')
        .map(str::to_owned)
        .collect();
    let usable = keys
        .iter()
        .all(|k| !k.is_empty() && !k.contains(['[', ']', '*', '?', '@', '$']));
    if usable {
        Ok(keys)
    } else {
        Err(format!(
            "ignoreFields: jsonPath {path:?} is not a path of object keys such as .spec.replicas (lists and filters are not supported)"
        ))
    }
}

/// An RFC 6901 pointer (`/spec/replicas`, `~1` for `/`, `~0` for `~`); its keys must name object
/// fields (a list index is refused, as a path into a list is).
fn json_pointer(pointer: &str) -> Result<Path, String> {
    let refused = || {
        format!(
            "ignoreFields: jsonPointer {pointer:?} is not a pointer to an object field such as /spec/replicas"
        )
    };
    let rest = pointer.strip_prefix('/').ok_or_else(refused)?;
    let keys: Path = rest
        .split('/')
        .map(|k| k.replace("~1", "/").replace("~0", "~"))
        .collect();
    if keys
        .iter()
        .any(|k| k.is_empty() || k.parse::<usize>().is_ok())
    {
        return Err(refused());
    }
    Ok(keys)
}

fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, key| v.as_object()?.get(key))
}

/// Sets the field at `path`, creating the objects on the way.
fn set(value: &mut Value, path: &[String], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = value;
    for key in parents {
        if !here.is_object() {
            *here = Value::Object(Map::new());
        }
        here = here
            .as_object_mut()
            .expect("made an object")
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !here.is_object() {
        *here = Value::Object(Map::new());
    }
    here.as_object_mut()
        .expect("made an object")
        .insert(last.clone(), new);
}

fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(value, |v, key| v.as_object_mut()?.get_mut(key));
    if let Some(Value::Object(map)) = parent {
        map.remove(last);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ignoring(condition: IgnoreFieldCondition, paths: &[&str]) -> Ignored {
        Ignored::parse(&[IgnoreField {
            condition,
            json_paths: paths.iter().map(ToString::to_string).collect(),
            ..IgnoreField::default()
        }])
        .unwrap()
    }

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"replicas": replicas, "template": {"spec": {"image": image}}}})
    }

    #[test]
    fn on_spoke_present_sends_the_clusters_value_and_the_manifests_otherwise() {
        let ignored = ignoring(IgnoreFieldCondition::OnSpokePresent, &[".spec.replicas"]);
        // Created: the manifest's value.
        let mut body = deployment(2, "v1");
        ignored.prepare(&mut body, None);
        assert_eq!(body["spec"]["replicas"], 2);
        let created = body.clone();
        // The cluster scaled it to 7 and someone changed the image: 7 stays, the image is
        // the manifest's again — even after the manifest itself changes.
        let mut there = created.clone();
        there["spec"]["replicas"] = json!(7);
        there["spec"]["template"]["spec"]["image"] = json!("hand-edited");
        for manifest in [deployment(2, "v1"), deployment(3, "v2")] {
            let mut body = manifest.clone();
            ignored.prepare(&mut body, Some(&there));
            assert_eq!(body["spec"]["replicas"], 7);
            assert_eq!(
                body["spec"]["template"]["spec"]["image"],
                manifest["spec"]["template"]["spec"]["image"]
            );
        }
        // The field gone from the cluster: not sent.
        let mut bare = created;
        bare["spec"].as_object_mut().unwrap().remove("replicas");
        let mut body = deployment(2, "v1");
        ignored.prepare(&mut body, Some(&bare));
        assert!(body["spec"].get("replicas").is_none());
    }

    #[test]
    fn on_spoke_change_keeps_the_clusters_value_until_the_manifest_changes() {
        let ignored = ignoring(IgnoreFieldCondition::OnSpokeChange, &["spec.replicas"]);
        let mut created = deployment(2, "v1");
        ignored.prepare(&mut created, None);
        let mut there = created.clone();
        there["spec"]["replicas"] = json!(7);
        let mut same = deployment(2, "v1");
        ignored.prepare(&mut same, Some(&there));
        assert_eq!(same["spec"]["replicas"], 7);
        // The manifest now asks for 4: written, with the new hash.
        let mut changed = deployment(4, "v1");
        ignored.prepare(&mut changed, Some(&there));
        assert_eq!(changed["spec"]["replicas"], 4);
        assert_ne!(annotation(&changed), annotation(&created));
    }

    #[test]
    fn pointers_are_read_and_lists_and_jq_are_refused() {
        let ignored = Ignored::parse(&[IgnoreField {
            json_pointers: vec!["/metadata/annotations/a~1b".into()],
            ..IgnoreField::default()
        }])
        .unwrap();
        assert_eq!(
            ignored.present,
            [vec![
                "metadata".to_owned(),
                "annotations".into(),
                "a/b".into()
            ]]
        );
        for bad in [
            IgnoreField {
                json_paths: vec![".spec.containers[0].image".into()],
                ..IgnoreField::default()
            },
            IgnoreField {
                json_pointers: vec!["/spec/containers/0".into()],
                ..IgnoreField::default()
            },
            IgnoreField {
                jq_path_expressions: vec![".spec.replicas".into()],
                ..IgnoreField::default()
            },
        ] {
            let err = Ignored::parse(&[bad]).unwrap_err();
            assert!(err.starts_with("ignoreFields:"), "{err}");
        }
    }
}
