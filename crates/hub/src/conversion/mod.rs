//! The add-on API's conversion webhook: upstream serves `v1alpha1` and `v1beta1` of
//! ClusterManagementAddOn and ManagedClusterAddOn and converts between them in its add-on
//! webhook; here the hub process does it ([`convert`]), on the hub's webhook server
//! ([`crate::webhook`]).
//!
//! **Who points the CRDs at it.** In-process, the holder of the hub's Lease points both CRDs'
//! `spec.conversion` at itself with its CA ([`crd::point_at`]), and on shutdown (stepping down
//! included) sets them back to `None` only while they still name this process's webhook
//! ([`crd::reset_if_ours`]), each write a compare-and-swap: a stepping-down leader never
//! overwrites the next leader's `url`/`caBundle`. The server keeps answering until that reset is
//! done. Under `None` the API server relabels objects without converting them: `v1alpha1` (the
//! stored version) and metadata-only readers (namespace deletion, garbage collection) keep
//! working, `v1beta1` readers get `v1alpha1` shapes: `v1beta1` needs the hub.
//!
//! **A crash fails closed.** A hub killed before its reset leaves the CRDs naming a webhook that
//! is gone. `v1alpha1` keeps working (stored objects need no conversion), and `v1beta1` requests,
//! and lists at the preferred version (`v1beta1`: namespace deletion and garbage collection of
//! add-ons stall), fail with the API server's "conversion webhook ... failed" error instead of
//! being served unconverted. The next hub to take the Lease points the CRDs at itself at once.
pub mod convert;
pub mod crd;

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::webhook::Serving;

/// The CRDs whose versions this webhook converts.
pub const CRDS: [&str; 2] = [
    "clustermanagementaddons.addon.open-cluster-management.io",
    "managedclusteraddons.addon.open-cluster-management.io",
];
/// The path the webhook answers on.
pub const PATH: &str = "/convert";

/// Points both CRDs at `serving`, retrying (the operator may not have installed them yet) until
/// done.
pub async fn keep_pointed(hub: &Client, serving: &Serving) {
    let mut backoff = ocm_runtime::Backoff::capped(Duration::from_secs(10));
    loop {
        match crd::point_at(hub, serving).await {
            Ok(()) => return,
            Err(e) => tracing::debug!(
                "pointing the add-on CRDs at the conversion webhook: {}",
                ocm_runtime::report::chain(&e)
            ),
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// The ConversionReview answering `review`: every object converted, or a failure naming why.
/// Takes the review by value so that its objects are converted in place, not copied.
#[must_use]
pub fn review_response(mut review: Value) -> Value {
    let request = &mut review["request"];
    let desired = request["desiredAPIVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let objects = match request["objects"].take() {
        Value::Array(objects) => objects,
        _ => Vec::new(),
    };
    let converted: Result<Vec<Value>, String> = objects
        .into_iter()
        .map(|o| convert::convert(o, &desired))
        .collect();
    let (objects, result) = match converted {
        Ok(objects) => (objects, json!({"status": "Success"})),
        Err(message) => (Vec::new(), json!({"status": "Failure", "message": message})),
    };
    let uid = review["request"]["uid"].take();
    json!({
        "apiVersion": review["apiVersion"].as_str().unwrap_or("apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": {"uid": uid, "convertedObjects": objects, "result": result},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_is_answered_with_its_uid_and_the_converted_objects() {
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "abc", "desiredAPIVersion": "addon.open-cluster-management.io/v1beta1", "objects": [
                {"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn", "metadata": {"name": "a"}, "spec": {}}
            ]},
        });
        let response = review_response(review);
        assert_eq!(response["response"]["uid"], "abc");
        assert_eq!(response["response"]["result"]["status"], "Success");
        assert_eq!(
            response["response"]["convertedObjects"][0]["apiVersion"],
            "addon.open-cluster-management.io/v1beta1"
        );
    }

    #[test]
    fn a_review_with_another_kind_fails_whole() {
        let review = json!({"request": {"uid": "x", "desiredAPIVersion": "v9", "objects": [{"apiVersion": "v1", "kind": "Pod"}]}});
        let response = review_response(review);
        assert_eq!(response["response"]["result"]["status"], "Failure");
        assert_eq!(response["response"]["convertedObjects"], json!([]));
    }
}
