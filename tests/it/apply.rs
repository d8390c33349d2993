//! The apply engine against a real apiserver: a CRD and its custom resource in one bundle, applied
//! twice; the second apply changes nothing.
use std::time::Duration;

use clusteradm::apply::{Applier, Change, parse_objects};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use crate::common;

fn bundle(suffix: &str) -> String {
    // One unique CRD per test run, so parallel runs and earlier runs never collide.
    let plural = format!("widgets{suffix}");
    format!(
        r"
apiVersion: v1
kind: Namespace
metadata:
  name: it-apply-{suffix}
---
apiVersion: it.clusteradm.dev/v1
kind: Widget{suffix}
metadata:
  name: first
  namespace: it-apply-{suffix}
spec:
  size: 3
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.it.clusteradm.dev
spec:
  group: it.clusteradm.dev
  scope: Namespaced
  names:
    kind: Widget{suffix}
    plural: {plural}
    singular: widget{suffix}
    listKind: Widget{suffix}List
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
"
    )
}

#[tokio::test]
async fn crd_and_custom_resource_apply_then_reapply_unchanged() {
    let hub = common::hub().await;
    let suffix = common::unique("").replace('-', "");
    // Deliberately out of order: the engine must put the CRD and namespace first.
    let objects = parse_objects(&bundle(&suffix), "bundle").unwrap();
    let applier = Applier::new(hub.clone(), Duration::from_secs(30));
    let first = applier.apply(objects.clone()).await.unwrap();
    assert_eq!(first.applied.len(), 3);
    assert!(
        first.applied.iter().all(|a| a.change == Change::Created),
        "{:?}",
        first.summary()
    );
    assert_eq!(first.applied[0].object.kind, "CustomResourceDefinition");
    assert_eq!(first.applied[2].object.kind, format!("Widget{suffix}"));

    // A new applier (a new run) must find everything unchanged: the resourceVersions read just
    // before it are the ones it returns. (The CRD's own status changed after the first apply.)
    let before = resource_versions(&hub, &objects).await;
    let second = Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(objects.clone())
        .await
        .unwrap();
    let changed: Vec<String> = second
        .applied
        .iter()
        .filter(|a| a.change != Change::Unchanged)
        .map(|a| a.object.to_string())
        .collect();
    assert!(second.unchanged(), "{} {changed:?}", second.summary());
    let after: Vec<Option<String>> = second
        .applied
        .iter()
        .map(|a| a.result.metadata.resource_version.clone())
        .collect();
    let mut before_sorted = before.clone();
    let mut after_sorted = after.clone();
    before_sorted.sort();
    after_sorted.sort();
    assert_eq!(before_sorted, after_sorted);

    // A changed field is reported as configured.
    let changed = bundle(&suffix).replace("size: 3", "size: 4");
    let third = Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(parse_objects(&changed, "b").unwrap())
        .await
        .unwrap();
    let widget = third.find(&format!("Widget{suffix}"), "first").unwrap();
    assert_eq!(widget.change, Change::Configured);
    assert_eq!(widget.result.data["spec"]["size"], 4);

    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    crds.delete(
        &format!("widgets{suffix}.it.clusteradm.dev"),
        &DeleteParams::default(),
    )
    .await
    .unwrap();
    let nss: Api<Namespace> = Api::all(hub);
    nss.delete(&format!("it-apply-{suffix}"), &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn per_object_failures_are_collected_with_kind_and_name() {
    let hub = common::hub().await;
    let ns = common::unique("it-apply-fail");
    let text = format!(
        r"
apiVersion: v1
kind: Namespace
metadata:
  name: {ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: good
  namespace: {ns}
data: {{a: b}}
---
apiVersion: nosuch.clusteradm.dev/v1
kind: Gadget
metadata:
  name: g1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: Bad_Name
  namespace: {ns}
"
    );
    let err = Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(parse_objects(&text, "bundle").unwrap())
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("2 of 4 objects failed"), "{message}");
    assert!(message.contains("Gadget g1"), "{message}");
    assert!(message.contains("is its CRD installed?"), "{message}");
    assert!(
        message.contains(&format!("ConfigMap {ns}/Bad_Name")),
        "{message}"
    );
    let clusteradm::apply::Error::Objects { applied, .. } = err;
    assert!(
        applied.iter().any(|a| a.object.name == "good"),
        "the valid objects are still applied"
    );
    Api::<Namespace>::all(hub)
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
}

async fn resource_versions(
    client: &kube::Client,
    objects: &[kube::api::DynamicObject],
) -> Vec<Option<String>> {
    let resolver = clusteradm::apply::Resolver::new(client.clone());
    let mut out = Vec::new();
    for obj in objects {
        let gvk = clusteradm::apply::gvk_of(obj).unwrap();
        let api = resolver
            .api_for(&gvk, obj.metadata.namespace.as_deref())
            .await
            .unwrap();
        let got = api
            .get(obj.metadata.name.as_deref().unwrap())
            .await
            .unwrap();
        out.push(got.metadata.resource_version);
    }
    out
}

/// An object being deleted (here a ConfigMap held by a finalizer; in the interop run a CRD that
/// `clean` was still removing) is not patched on its way out: the apply waits until it is gone,
/// then creates it afresh.
#[tokio::test]
async fn an_object_being_deleted_is_recreated_once_gone() {
    let hub = common::hub().await;
    let name = common::unique("it-apply-dying");
    let cms: Api<ConfigMap> = Api::namespaced(hub.clone(), "default");
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata: {{a: b}}\n"
    );
    let objects = parse_objects(&text, "cm").unwrap();
    Applier::new(hub.clone(), Duration::from_secs(30))
        .apply(objects.clone())
        .await
        .unwrap();
    let hold = Patch::Merge(json!({"metadata": {"finalizers": ["it.clusteradm.dev/hold"]}}));
    cms.patch(&name, &PatchParams::default(), &hold)
        .await
        .unwrap();
    cms.delete(&name, &DeleteParams::default()).await.unwrap();
    let dying = cms.get(&name).await.unwrap();
    assert!(dying.metadata.deletion_timestamp.is_some());

    let apply = tokio::spawn({
        let (hub, objects) = (hub.clone(), objects.clone());
        async move {
            Applier::new(hub, Duration::from_secs(30))
                .apply(objects)
                .await
        }
    });
    // While the finalizer holds it, the apply neither finishes nor touches it.
    let unchanged = cms.get(&name).await.unwrap();
    assert_eq!(
        unchanged.metadata.resource_version,
        dying.metadata.resource_version
    );
    assert!(!apply.is_finished());
    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    cms.patch(&name, &PatchParams::default(), &release)
        .await
        .unwrap();

    let report = tokio::time::timeout(Duration::from_secs(30), apply)
        .await
        .expect("the apply did not finish once the object was gone")
        .unwrap()
        .unwrap();
    assert_eq!(report.applied[0].change, Change::Created);
    let fresh = cms.get(&name).await.unwrap();
    assert_ne!(fresh.metadata.uid, dying.metadata.uid);
    assert!(fresh.metadata.deletion_timestamp.is_none());
    cms.delete(&name, &DeleteParams::default()).await.unwrap();
}
