//! The operator Deployment's settings upstream's Helm charts take from their values
//! (`replicaCount`, `images.overrides.operatorImage`, `images.imagePullPolicy`,
//! `podSecurityContext`, `securityContext`, `resources`, `nodeSelector`, `tolerations`,
//! `affinity`, `priorityClassName`), laid over the Deployment `init` and `join` render.
//!
//! The security contexts are merged over ours field by field, so a chart's default (which sets
//! no seccomp profile) keeps the pod within Pod Security `restricted`, which the operator's
//! namespace enforces; a setting that leaves it is refused here rather than by the API server at
//! the first pod.
use k8s_openapi::api::core::v1::{
    Affinity, PodSecurityContext, ResourceRequirements, SecurityContext, Toleration,
};
use kube::api::DynamicObject;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a values file sets of the operator's Deployment (each `None` keeps ours).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperatorPod {
    /// `replicaCount`.
    pub replicas: Option<i32>,
    /// `images.overrides.operatorImage`.
    pub image: Option<String>,
    /// `images.imagePullPolicy`.
    pub image_pull_policy: Option<String>,
    /// `podSecurityContext`, merged over ours.
    pub pod_security_context: Option<Value>,
    /// `securityContext`, merged over ours.
    pub security_context: Option<Value>,
    /// `resources`, instead of ours.
    pub resources: Option<Value>,
    /// `nodeSelector`.
    pub node_selector: Option<Value>,
    /// `tolerations`.
    pub tolerations: Option<Value>,
    /// `affinity`.
    pub affinity: Option<Value>,
    /// `priorityClassName` (the klusterlet chart's, also given to its agents).
    pub priority_class_name: Option<String>,
}

const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

impl OperatorPod {
    /// Whether nothing is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The keys set, by the values file's paths (for a warning where no Deployment is made).
    #[must_use]
    pub fn keys(&self) -> Vec<&'static str> {
        [
            ("replicaCount", self.replicas.is_some()),
            ("images.overrides.operatorImage", self.image.is_some()),
            ("images.imagePullPolicy", self.image_pull_policy.is_some()),
            ("podSecurityContext", self.pod_security_context.is_some()),
            ("securityContext", self.security_context.is_some()),
            ("resources", self.resources.is_some()),
            ("nodeSelector", self.node_selector.is_some()),
            ("tolerations", self.tolerations.is_some()),
            ("affinity", self.affinity.is_some()),
            ("priorityClassName", self.priority_class_name.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect()
    }

    /// Takes the value at a chart's top-level `key` (or `images.*`), checked against its
    /// Kubernetes type; `Ok(false)` when the key is not one of these.
    ///
    /// # Errors
    /// The value is not of the key's type.
    pub fn take(&mut self, path: &str, v: &Value) -> Result<bool, String> {
        let bad = |e: &dyn std::fmt::Display| format!("{path}: {e}");
        match path {
            "replicaCount" => {
                let n = v
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| bad(&"a number of replicas (0 or more)"))?;
                self.replicas = Some(n);
            }
            "images.overrides.operatorImage" => {
                let image = v.as_str().ok_or_else(|| bad(&"an image reference"))?;
                crate::api::image::reference(image).map_err(|e| bad(&e))?;
                self.image = Some(image.to_owned());
            }
            "images.imagePullPolicy" => {
                let policy = v
                    .as_str()
                    .filter(|p| PULL_POLICIES.contains(p))
                    .ok_or_else(|| bad(&"Always, IfNotPresent or Never"))?;
                self.image_pull_policy = Some(policy.to_owned());
            }
            "podSecurityContext" => {
                self.pod_security_context =
                    Some(typed::<PodSecurityContext>(v).map_err(|e| bad(&e))?);
            }
            "securityContext" => {
                self.security_context = Some(typed::<SecurityContext>(v).map_err(|e| bad(&e))?);
            }
            "resources" => {
                self.resources = Some(typed::<ResourceRequirements>(v).map_err(|e| bad(&e))?);
            }
            "nodeSelector" => {
                self.node_selector =
                    Some(typed::<BTreeMap<String, String>>(v).map_err(|e| bad(&e))?);
            }
            "tolerations" => {
                self.tolerations = Some(typed::<Vec<Toleration>>(v).map_err(|e| bad(&e))?);
            }
            "affinity" => self.affinity = Some(typed::<Affinity>(v).map_err(|e| bad(&e))?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Refuses settings that would take the operator's pod out of Pod Security `restricted`,
    /// which its namespace enforces (the API server would refuse every pod).
    ///
    /// # Errors
    /// Which settings, and why.
    pub fn check(&self) -> Result<(), String> {
        use crate::operator::pod_security;
        let mut spec = serde_json::json!({"template": {"spec": {
            "securityContext": pod_security::pod(),
            "containers": [{"securityContext": pod_security::container()}],
        }}});
        self.lay_over(&mut spec);
        if pod_security::is_restricted(&spec["template"]["spec"]) {
            Ok(())
        } else {
            Err("podSecurityContext/securityContext: the operator's namespace enforces Pod Security `restricted` (non-root, no privilege escalation, every capability dropped, the runtime's seccomp profile); these settings leave it".into())
        }
    }

    /// Lays these settings over the operator Deployment among `objects` (checked with
    /// [`Self::check`] when read).
    pub fn apply(&self, objects: &mut [DynamicObject]) {
        if let Some(deployment) = objects
            .iter_mut()
            .find(|o| o.types.as_ref().is_some_and(|t| t.kind == "Deployment"))
        {
            self.lay_over(&mut deployment.data["spec"]);
        }
    }

    /// Over a Deployment's `spec`.
    fn lay_over(&self, spec: &mut Value) {
        if let Some(n) = self.replicas {
            spec["replicas"] = n.into();
        }
        let pod = &mut spec["template"]["spec"];
        for (key, value) in [
            ("nodeSelector", &self.node_selector),
            ("tolerations", &self.tolerations),
            ("affinity", &self.affinity),
        ] {
            if let Some(v) = value.as_ref().filter(|v| !is_empty_value(v)) {
                pod[key] = v.clone();
            }
        }
        if let Some(class) = self.priority_class_name.as_ref().filter(|c| !c.is_empty()) {
            pod["priorityClassName"] = class.clone().into();
        }
        if let Some(ctx) = &self.pod_security_context {
            crate::merge_patch::merge(&mut pod["securityContext"], ctx);
        }
        let container = &mut pod["containers"][0];
        if let Some(image) = &self.image {
            container["image"] = image.clone().into();
        }
        if let Some(policy) = &self.image_pull_policy {
            container["imagePullPolicy"] = policy.clone().into();
        }
        if let Some(ctx) = &self.security_context {
            crate::merge_patch::merge(&mut container["securityContext"], ctx);
        }
        if let Some(resources) = &self.resources {
            container["resources"] = resources.clone();
        }
        if self.replicas.is_some_and(|n| n > 1) {
            // More than one replica: let them elect a leader (upstream's operator image takes
            // the flag; ours always holds a Lease).
            if let Some(args) = container["args"].as_array_mut() {
                args.retain(|a| {
                    !a.as_str()
                        .is_some_and(|a| a.starts_with("--disable-leader-election"))
                });
            }
        }
    }
}

/// `v` checked against `T`, kept as the JSON given (so merges see only the keys set).
fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Result<Value, serde_json::Error> {
    serde_json::from_value::<T>(v.clone())?;
    Ok(v.clone())
}

/// An empty map, list or string, or null: upstream's charts write nothing for it.
#[must_use]
pub fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Null => true,
        _ => false,
    }
}
