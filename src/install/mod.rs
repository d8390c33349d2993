//! What `init` and `join` install, as pure plans from typed options to the objects to apply
//! ([`hub`], [`klusterlet`]), plus the pieces of `init` that are not plain objects: the bootstrap
//! credential ([`credential`]), the `kube-public/cluster-info` discovery document
//! ([`cluster_info`]) and the join command ([`join_command`]).
pub mod chart;
pub mod cluster_info;
pub mod credential;
pub mod drivers;
pub mod hub;
pub mod hub_addon;
pub mod join_command;
pub mod klusterlet;
pub mod operator_pod;
pub mod upgrade;

/// `Kind/name` of each planned object, for the plans' tests.
#[cfg(test)]
fn names(objects: &[kube::api::DynamicObject]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.types.as_ref().unwrap().kind,
                o.metadata.name.as_deref().unwrap()
            )
        })
        .collect()
}

/// The operator container's command line and probes, as the operator templates take them:
/// upstream's `registration-operator` image, or ours (`clusteradm operator ...`, probes over
/// plain HTTP on 8000, authenticated `/metrics` over HTTPS on 8443).
#[derive(Debug, serde::Serialize)]
pub struct OperatorContainer {
    /// `args`, as a JSON array.
    pub args: String,
    /// `livenessProbe.httpGet`, as a JSON object.
    pub liveness: String,
    /// `readinessProbe.httpGet`, as a JSON object.
    pub readiness: String,
    /// `resources`, as a JSON object (upstream's Default class unless [`Self::resources`] says).
    pub resources: String,
}

impl OperatorContainer {
    /// For operator `which` (`hub` or `klusterlet`); `ours` when the image is ours.
    #[must_use]
    pub fn new(which: &str, ours: bool, upstream_flags: &[&str]) -> Self {
        let http = |path: &str, scheme: &str, port: u16| {
            serde_json::json!({"path": path, "scheme": scheme, "port": port}).to_string()
        };
        if ours {
            let args = [
                "operator",
                which,
                "--probe-address=0.0.0.0:8000",
                "--metrics-address=0.0.0.0:8443",
            ];
            Self {
                args: serde_json::json!(args).to_string(),
                liveness: http("/healthz", "HTTP", 8000),
                readiness: http("/readyz", "HTTP", 8000),
                resources: default_resources(),
            }
        } else {
            let mut args = vec!["/registration-operator", which];
            args.extend_from_slice(upstream_flags);
            Self {
                args: serde_json::json!(args).to_string(),
                liveness: http("/healthz", "HTTPS", 8443),
                readiness: http("/healthz", "HTTPS", 8443),
                resources: default_resources(),
            }
        }
    }

    /// The operator runs with `--enable-sync-labels` (ours and upstream's take the same flag).
    #[must_use]
    pub fn sync_labels(mut self, on: bool) -> Self {
        if on && let Ok(mut args) = serde_json::from_str::<Vec<String>>(&self.args) {
            args.push("--enable-sync-labels".into());
            self.args = serde_json::json!(args).to_string();
        }
        self
    }

    /// The operator's container gets the resources its CR gives the components' (upstream's
    /// `--resource-*` flags set both).
    #[must_use]
    pub fn resources(mut self, req: Option<&crate::api::operator::ResourceRequirement>) -> Self {
        // A missing requirement is refused by the flags' parser; the Default class otherwise.
        if let Ok(json) = crate::operator::resources::json(req) {
            self.resources = json.to_string();
        }
        self
    }
}

fn default_resources() -> String {
    crate::operator::resources::json(None)
        .unwrap_or_default()
        .to_string()
}
