//! `--enable-sync-labels` (upstream's operator flag): the labels of the ClusterManager or
//! Klusterlet go onto every object its operator makes, and onto the pods of its Deployments, so a
//! team can find (and account for) what one CR produced by its own labels. Upstream's reserved
//! keys are not copied: `app`, and anything under `open-cluster-management.io`.
use std::collections::BTreeMap;

use kube::api::DynamicObject;

/// The labels a CR passes on: none unless `enabled`, and never the reserved ones.
#[must_use]
pub fn wanted(
    cr_labels: Option<&BTreeMap<String, String>>,
    enabled: bool,
) -> BTreeMap<String, String> {
    if !enabled {
        return BTreeMap::new();
    }
    cr_labels
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "app" && !k.starts_with("open-cluster-management.io"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Adds `labels` to each object, and to the pod template of each Deployment; an object's own
/// label of the same key is kept.
pub fn stamp(objects: &mut [DynamicObject], labels: &BTreeMap<String, String>) {
    if labels.is_empty() {
        return;
    }
    for o in objects {
        let own = o.metadata.labels.get_or_insert_with(BTreeMap::new);
        for (k, v) in labels {
            own.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let is_deployment = o.types.as_ref().is_some_and(|t| t.kind == "Deployment");
        if let Some(pod_labels) = is_deployment
            .then(|| o.data.pointer_mut("/spec/template/metadata"))
            .flatten()
            .and_then(serde_json::Value::as_object_mut)
        {
            let pod_labels = pod_labels
                .entry("labels")
                .or_insert_with(|| serde_json::json!({}));
            if let Some(pod_labels) = pod_labels.as_object_mut() {
                for (k, v) in labels {
                    pod_labels
                        .entry(k.clone())
                        .or_insert_with(|| serde_json::Value::String(v.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn reserved_keys_are_not_passed_on_and_nothing_is_when_disabled() {
        let cr = labels(&[
            ("team", "a"),
            ("app", "x"),
            ("open-cluster-management.io/created-by-klusterlet", "k"),
            ("open-cluster-management.io-x", "y"),
            ("example.com/cost", "7"),
        ]);
        assert_eq!(
            wanted(Some(&cr), true),
            labels(&[("example.com/cost", "7"), ("team", "a")])
        );
        assert!(wanted(Some(&cr), false).is_empty());
        assert!(wanted(None, true).is_empty());
    }

    #[test]
    fn objects_and_pod_templates_get_the_labels_and_keep_their_own() {
        let deployment: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"team": "own"}},
            "spec": {"template": {"metadata": {"labels": {"app": "d"}}}}
        }))
        .unwrap();
        let namespace: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}
        }))
        .unwrap();
        let mut objects = vec![deployment, namespace];
        stamp(&mut objects, &labels(&[("team", "a"), ("cost", "7")]));
        assert_eq!(
            objects[0].metadata.labels,
            Some(labels(&[("cost", "7"), ("team", "own")]))
        );
        assert_eq!(
            objects[0].data["spec"]["template"]["metadata"]["labels"],
            serde_json::json!({"app": "d", "cost": "7", "team": "a"})
        );
        assert_eq!(
            objects[1].metadata.labels,
            Some(labels(&[("cost", "7"), ("team", "a")]))
        );
        assert!(objects[1].data.get("spec").is_none());
    }
}
