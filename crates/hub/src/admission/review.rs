//! The AdmissionReview wire format: the request read from it, and the answer written back, with a
//! denial's status as upstream's webhooks (controller-runtime) set it.
use base64::Engine as _;
use serde_json::{Value, json};

/// What a webhook needs of an AdmissionReview's request.
#[derive(Debug, Clone)]
pub struct Request {
    /// `CREATE`, `UPDATE`, ...
    pub operation: String,
    /// The requesting user's `userInfo`, for SubjectAccessReviews.
    pub user: Value,
    /// The object as it would be written.
    pub object: Value,
    /// The object as stored, on an update.
    pub old_object: Option<Value>,
}

impl Request {
    /// The request of `review`, or a denial when it has none.
    ///
    /// # Errors
    /// A review without a request object.
    pub fn parse(review: &Value) -> Result<Self, Denied> {
        let request = &review["request"];
        if !request.is_object() {
            return Err(Denied::bad_request("the AdmissionReview has no request"));
        }
        let old_object = match &request["oldObject"] {
            Value::Null => None,
            old => Some(old.clone()),
        };
        Ok(Self {
            operation: request["operation"].as_str().unwrap_or_default().to_owned(),
            user: request["userInfo"].clone(),
            object: request["object"].clone(),
            old_object,
        })
    }

    /// The requesting user's name, for messages.
    #[must_use]
    pub fn username(&self) -> &str {
        self.user["username"].as_str().unwrap_or_default()
    }

    /// Whether this is a create.
    #[must_use]
    pub fn is_create(&self) -> bool {
        self.operation == "CREATE"
    }
}

/// A refused request: the HTTP status the API server answers with, its reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// HTTP status code.
    pub code: u16,
    /// The `Status` reason.
    pub reason: &'static str,
    /// The message, after the API server's `admission webhook "<name>" denied the request: `.
    pub message: String,
}

impl Denied {
    /// `400 BadRequest`: the object is malformed.
    #[must_use]
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message: message.into(),
        }
    }

    /// `403 Forbidden` on `resource` (`resource.group`, as Kubernetes names it) `name`, as
    /// `apierrors.NewForbidden` words it.
    #[must_use]
    pub fn forbidden(resource: &str, name: &str, cause: impl std::fmt::Display) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: format!("{resource} \"{name}\" is forbidden: {cause}"),
        }
    }

    /// `503 ServiceUnavailable`: the hub cannot decide yet; the API server fails the request.
    #[must_use]
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            code: 503,
            reason: "ServiceUnavailable",
            message: message.into(),
        }
    }
}

/// The AdmissionReview answering `review` with `outcome`: allowed, with a JSON patch when
/// `Some`, or denied.
#[must_use]
pub fn respond(review: &Value, outcome: &Result<Option<Value>, Denied>) -> Value {
    let mut response = json!({"uid": review["request"]["uid"].clone()});
    match outcome {
        Ok(patch) => {
            response["allowed"] = json!(true);
            if let Some(patch) = patch {
                response["patchType"] = json!("JSONPatch");
                response["patch"] =
                    json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
            }
        }
        Err(denied) => {
            response["allowed"] = json!(false);
            response["status"] = json!({
                "metadata": {},
                "status": "Failure",
                "code": denied.code,
                "reason": denied.reason,
                "message": denied.message,
            });
        }
    }
    json!({
        "apiVersion": review["apiVersion"].as_str().unwrap_or("admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": response,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denial_carries_its_code_reason_and_message_and_the_uid() {
        let review = json!({"apiVersion": "admission.k8s.io/v1beta1", "request": {"uid": "u1"}});
        let answer = respond(
            &review,
            &Err(Denied::forbidden(
                "managedclusters/accept.cluster.open-cluster-management.io",
                "c1",
                "no",
            )),
        );
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1beta1");
        assert_eq!(answer["response"]["uid"], "u1");
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["code"], 403);
        assert_eq!(
            answer["response"]["status"]["message"],
            "managedclusters/accept.cluster.open-cluster-management.io \"c1\" is forbidden: no"
        );
    }

    #[test]
    fn a_patch_is_sent_as_base64_json_patch() {
        let review = json!({"request": {"uid": "u2"}});
        let patch = json!([{"op": "add", "path": "/a", "value": 1}]);
        let answer = respond(&review, &Ok(Some(patch.clone())));
        assert_eq!(answer["response"]["allowed"], true);
        assert_eq!(answer["response"]["patchType"], "JSONPatch");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(answer["response"]["patch"].as_str().unwrap())
            .unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&decoded).unwrap(), patch);
    }
}
