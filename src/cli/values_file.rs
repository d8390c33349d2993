//! `init --cluster-manager-values-file` and `join --klusterlet-values-file`: upstream's Helm
//! chart values, as upstream's commands take them — the file overrides the flags. Only the values
//! this tool can honour are taken; any other key is refused by its path, so no value is silently
//! ignored. The feature gates of the file and of `--feature-gates` are checked here together
//! ([`read_checked`]): our components refuse those they would not honour.
use std::path::Path;

use base64::Engine as _;
use serde_json::Value;

use crate::error::UserError;

/// What a values file sets (each `None` leaves the flag's value).
#[derive(Debug, Default, PartialEq)]
pub struct Values {
    /// `images.registry`.
    pub registry: Option<String>,
    /// `images.tag`.
    pub tag: Option<String>,
    /// `images.imageCredentials`: a docker config JSON.
    pub pull_credential: Option<Vec<u8>>,
    /// `enableSyncLabels`.
    pub sync_labels: Option<bool>,
    /// Gates of `clusterManager.*Configuration` / `klusterlet.*Configuration`, `(name, on)`.
    pub feature_gates: Vec<(String, bool)>,
    /// `clusterManager.registrationConfiguration.autoApproveUsers`.
    pub auto_approve_users: Option<Vec<String>>,
    /// `klusterlet.mode`: `Singleton` (true) or `Default` (false).
    pub singleton: Option<bool>,
    /// `klusterlet.clusterName`.
    pub cluster_name: Option<String>,
    /// The Klusterlet spec fields the chart copies from its values as they are
    /// ([`KLUSTERLET_SPEC_KEYS`], the configurations' settings, `priorityClassName`), merged over
    /// what join writes.
    pub klusterlet_spec: Option<Value>,
}

/// `klusterlet.<key>` values upstream's chart copies into the Klusterlet's spec whole.
const KLUSTERLET_SPEC_KEYS: &[&str] = &[
    "namespace",
    "externalServerURLs",
    "resourceRequirement",
    "nodePlacement",
];
/// Configurations whose settings (all but the feature gates, read with the flags') are copied.
const KLUSTERLET_CONFIGURATIONS: &[&str] = &["registrationConfiguration", "workConfiguration"];

impl Values {
    /// The images, pull credential and label sync both charts take, over the options' fields.
    fn onto_common(
        &mut self,
        registry: &mut String,
        tag: &mut String,
        pull: &mut Option<Vec<u8>>,
        sync_labels: &mut bool,
    ) {
        if let Some(r) = self.registry.take() {
            *registry = r;
        }
        if let Some(t) = self.tag.take() {
            *tag = t;
        }
        if let Some(p) = self.pull_credential.take() {
            *pull = Some(p);
        }
        if let Some(s) = self.sync_labels {
            *sync_labels = s;
        }
    }

    /// Over `init`'s options from flags.
    pub fn onto_init(mut self, opts: &mut crate::install::hub::InitOptions) {
        self.onto_common(
            &mut opts.registry,
            &mut opts.tag,
            &mut opts.image_pull_credential,
            &mut opts.sync_labels,
        );
        if let Some(users) = self.auto_approve_users {
            opts.drivers.approve_csr(&users);
        }
        opts.feature_gates.extend(self.feature_gates);
    }

    /// Over `join`'s options from flags.
    pub fn onto_join(mut self, opts: &mut crate::install::klusterlet::JoinOptions) {
        self.onto_common(
            &mut opts.registry,
            &mut opts.tag,
            &mut opts.image_pull_credential,
            &mut opts.sync_labels,
        );
        if let Some(s) = self.singleton {
            opts.singleton = s;
        }
        if let Some(name) = self.cluster_name {
            opts.cluster_name = name;
        }
        opts.spec_overlay = self.klusterlet_spec;
        for (name, on) in self.feature_gates {
            opts.feature_gates.retain(|(n, _)| *n != name);
            opts.feature_gates.push((name, on));
        }
    }
}

/// Which chart's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// `--cluster-manager-values-file`.
    ClusterManager,
    /// `--klusterlet-values-file`.
    Klusterlet,
}

impl Chart {
    fn flag(self) -> &'static str {
        match self {
            Self::ClusterManager => "--cluster-manager-values-file",
            Self::Klusterlet => "--klusterlet-values-file",
        }
    }

    /// The key of the CR's section.
    fn cr(self) -> &'static str {
        match self {
            Self::ClusterManager => "clusterManager",
            Self::Klusterlet => "klusterlet",
        }
    }
}

/// Which gate settings a side's components would not honour ([`crate::api::gates`]).
type Refusal = fn(&[(String, bool)]) -> Option<String>;

/// [`read`], when a file is given; then, when our components run the chart's part (`ours`), the
/// gates of the flags (`flag_gates`) and the file refused where they would not honour them
/// ([`crate::api::gates`]).
pub fn read_checked(
    path: Option<&Path>,
    chart: Chart,
    ours: bool,
    flag_gates: &[(String, bool)],
) -> anyhow::Result<Option<Values>> {
    use crate::api::gates::{self, Side};
    let values = path.map(|p| read(p, chart)).transpose()?;
    let (side, refusal): (_, Refusal) = match chart {
        Chart::ClusterManager => (Side::Hub, gates::hub_refusal),
        Chart::Klusterlet => (Side::Klusterlet, gates::klusterlet_refusal),
    };
    // A name upstream does not define is refused whichever images run, as upstream's CLI does.
    let every: Vec<(String, bool)> = flag_gates
        .iter()
        .chain(values.iter().flat_map(|v| v.feature_gates.iter()))
        .cloned()
        .collect();
    if let Some(why) = gates::unrecognized(side, &every) {
        return Err(UserError::new(why, "check the gate's spelling, or drop it").into());
    }
    check_gates(ours, flag_gates, values.as_ref(), refusal)?;
    Ok(values)
}

/// Refuses the gate settings (from the flags and a values file) our components would not honour,
/// when they are what runs (`ours`: `--in-process` or `--image`), and those this operator would
/// not deploy with upstream's images either; `refusal` is the hub's or the klusterlet's
/// ([`crate::api::gates`]).
fn check_gates(
    ours: bool,
    flags: &[(String, bool)],
    file: Option<&Values>,
    refusal: Refusal,
) -> anyhow::Result<()> {
    // With upstream's images only what this operator does not deploy is refused.
    let gates: Vec<(String, bool)> = flags
        .iter()
        .chain(file.iter().flat_map(|v| v.feature_gates.iter()))
        .filter(|(name, _)| ours || crate::api::gates::not_deployed_by_this_operator(name))
        .cloned()
        .collect();
    match refusal(&gates) {
        Some(why) if ours => Err(UserError::new(
            why,
            "drop the gate, or run upstream's images (no --in-process or --image), which implement it",
        )
        .into()),
        Some(why) => Err(UserError::new(why, "drop the gate").into()),
        None => Ok(()),
    }
}

/// Reads and interprets a values file.
pub fn read(path: &Path, chart: Chart) -> anyhow::Result<Values> {
    let flag = chart.flag();
    let bad = |e: String| -> anyhow::Error {
        UserError::new(
            format!("{flag} {}: {e}", path.display()),
            "the values supported here: images.registry, images.tag, images.imageCredentials, enableSyncLabels, the CR's featureGates (and clusterManager.registrationConfiguration.autoApproveUsers, klusterlet.mode)",
        )
        .into()
    };
    let bytes =
        crate::input::read(path, flag).map_err(|e| bad(crate::runtime::report::chain(&e)))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
    let value: Value = if text.trim().is_empty() {
        Value::Null
    } else {
        crate::yaml::from_str_multi(&text)
            .map_err(|e| bad(format!("not YAML: {e}")))?
            .into_iter()
            .next()
            .unwrap_or(Value::Null)
    };
    interpret(&value, chart).map_err(bad)
}

/// Takes out of `doc` the Klusterlet spec fields upstream's chart copies as they are, and
/// returns them as a spec to merge, checked against the Klusterlet's type.
fn take_klusterlet_spec(doc: &mut Value) -> Result<Option<Value>, String> {
    let mut spec = serde_json::Map::new();
    if let Some(class) = doc
        .as_object_mut()
        .and_then(|d| d.remove("priorityClassName"))
        && class.as_str().is_some_and(|c| !c.is_empty())
    {
        spec.insert("priorityClassName".into(), class);
    }
    if let Some(section) = doc.get_mut("klusterlet").and_then(Value::as_object_mut) {
        for key in KLUSTERLET_SPEC_KEYS {
            if let Some(v) = section.remove(*key).filter(|v| !is_empty(v)) {
                spec.insert((*key).into(), v);
            }
        }
        for key in KLUSTERLET_CONFIGURATIONS {
            let Some(config) = section.get_mut(*key).and_then(Value::as_object_mut) else {
                continue;
            };
            let gates = config.remove("featureGates");
            let settings: serde_json::Map<String, Value> = std::mem::take(config);
            if let Some(gates) = gates {
                config.insert("featureGates".into(), gates);
            }
            if !settings.is_empty() {
                spec.insert((*key).into(), Value::Object(settings));
            }
        }
    }
    if spec.is_empty() {
        return Ok(None);
    }
    let spec = Value::Object(spec);
    serde_json::from_value::<crate::api::operator::KlusterletSpec>(spec.clone())
        .map_err(|e| format!("klusterlet: {e}"))?;
    Ok(Some(spec))
}

/// An empty map, list or string: upstream's chart writes nothing for it.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// The values of `doc`, or the first key this tool cannot honour.
fn interpret(doc: &Value, chart: Chart) -> Result<Values, String> {
    let mut out = Values::default();
    let mut doc = doc.clone();
    if chart == Chart::Klusterlet {
        out.klusterlet_spec = take_klusterlet_spec(&mut doc)?;
    }
    let doc = &doc;
    let mut leaves = Vec::new();
    flatten(doc, "", &mut leaves);
    let cr = chart.cr();
    for (path, v) in &leaves {
        let text = || {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{path} must be a string"))
        };
        match path.as_str() {
            "images.registry" => {
                out.registry = Some(
                    crate::api::image::registry(&text()?).map_err(|e| format!("{path}: {e}"))?,
                );
            }
            "images.tag" => {
                out.tag =
                    Some(crate::api::image::tag(&text()?).map_err(|e| format!("{path}: {e}"))?);
            }
            "images.imageCredentials.dockerConfigJson" => {
                out.pull_credential = Some(text()?.into_bytes());
            }
            // The secret is always made; a user and password are read below, together.
            "images.imageCredentials.createImageCredentials"
            | "images.imageCredentials.userName"
            | "images.imageCredentials.password" => {}
            "enableSyncLabels" => {
                out.sync_labels = Some(
                    v.as_bool()
                        .ok_or("enableSyncLabels must be true or false")?,
                );
            }
            p if p == format!("{cr}.mode") && chart == Chart::Klusterlet => {
                out.singleton = Some(match text()?.as_str() {
                    "Singleton" => true,
                    "Default" => false,
                    other => {
                        return Err(format!(
                            "klusterlet.mode {other:?}: Default or Singleton here (Hosted modes need join --mode hosted)"
                        ));
                    }
                });
            }
            "klusterlet.clusterName" if chart == Chart::Klusterlet => {
                let name = text()?;
                crate::api::names::validate_cluster_name(&name)
                    .map_err(|e| format!("{path}: {e}"))?;
                out.cluster_name = Some(name);
            }
            // Upstream's chart names the Klusterlet it creates; join's is always `klusterlet`.
            "klusterlet.create" | "klusterlet.name" if chart == Chart::Klusterlet => {}
            p if p == "clusterManager.registrationConfiguration.autoApproveUsers"
                && chart == Chart::ClusterManager =>
            {
                out.auto_approve_users = Some(strings(v, p)?);
            }
            p if is_gate_list(p, cr) => out.feature_gates.extend(gates(v, p)?),
            other => return Err(format!("{other} is not supported here")),
        }
    }
    if let Some(images) = doc.pointer("/images/imageCredentials")
        && out.pull_credential.is_none()
        && let (Some(user), Some(password)) = (
            images.get("userName").and_then(Value::as_str),
            images.get("password").and_then(Value::as_str),
        )
        && !user.is_empty()
    {
        // Upstream's chart builds the docker config from them, for `images.registry`.
        let registry = out
            .registry
            .clone()
            .unwrap_or_else(|| crate::api::names::DEFAULT_REGISTRY.into());
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        out.pull_credential = Some(
            serde_json::json!({"auths": {registry: {"auth": auth}}})
                .to_string()
                .into_bytes(),
        );
    }
    Ok(out)
}

fn is_gate_list(path: &str, cr: &str) -> bool {
    [
        "registrationConfiguration",
        "workConfiguration",
        "addOnManagerConfiguration",
    ]
    .iter()
    .any(|section| path == format!("{cr}.{section}.featureGates"))
}

/// `[{feature, mode: Enable|Disable}]` (the CRs' own gate type) as `(name, on)`.
fn gates(v: &Value, path: &str) -> Result<Vec<(String, bool)>, String> {
    let list: Vec<crate::api::operator::FeatureGate> = serde_json::from_value(v.clone())
        .map_err(|e| format!("{path}: a list of {{feature, mode: Enable|Disable}}: {e}"))?;
    Ok(list
        .into_iter()
        .map(|g| {
            let on = g.enabled();
            (g.feature, on)
        })
        .collect())
}

fn strings(v: &Value, path: &str) -> Result<Vec<String>, String> {
    v.as_array()
        .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
        .ok_or_else(|| format!("{path} must be a list of strings"))
}

/// Each leaf of `v` by its dotted path; lists are leaves (gate lists are read whole).
fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(child, &path, out);
            }
        }
        Value::Null => {}
        other => out.push((prefix.to_string(), other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(yaml: &str, chart: Chart) -> Result<Values, String> {
        interpret(&serde_yaml::from_str(yaml).unwrap(), chart)
    }

    #[test]
    fn upstream_keys_map_onto_flags() {
        let v = values(
            "images: {registry: r.example/ocm, tag: v1.2.0, imageCredentials: {createImageCredentials: true, dockerConfigJson: '{}'}}
enableSyncLabels: true
clusterManager:
  registrationConfiguration:
    featureGates: [{feature: ManagedClusterAutoApproval, mode: Enable}]
    autoApproveUsers: [alice]
  workConfiguration:
    featureGates: [{feature: ManifestWorkReplicaSet, mode: Disable}]",
            Chart::ClusterManager,
        )
        .unwrap();
        assert_eq!(v.registry.as_deref(), Some("r.example/ocm"));
        assert_eq!(v.tag.as_deref(), Some("v1.2.0"));
        assert_eq!(v.pull_credential.as_deref(), Some(&b"{}"[..]));
        assert_eq!(v.sync_labels, Some(true));
        assert_eq!(v.auto_approve_users, Some(vec!["alice".to_string()]));
        assert_eq!(
            v.feature_gates,
            [
                ("ManagedClusterAutoApproval".to_string(), true),
                ("ManifestWorkReplicaSet".to_string(), false)
            ]
        );
    }

    #[test]
    fn a_user_and_password_become_a_docker_config_for_the_registry() {
        let v = values(
            "images: {registry: r.example, imageCredentials: {userName: u, password: p}}",
            Chart::Klusterlet,
        )
        .unwrap();
        let json: Value = serde_json::from_slice(&v.pull_credential.unwrap()).unwrap();
        assert_eq!(json["auths"]["r.example"]["auth"], "dTpw");
    }

    #[test]
    fn what_is_not_honoured_is_refused_by_its_path() {
        let e = values("images: {overrides: {workImage: x}}", Chart::ClusterManager).unwrap_err();
        assert!(
            e.contains("images.overrides.workImage is not supported"),
            "{e}"
        );
        let e = values("klusterlet: {mode: Hosted}", Chart::Klusterlet).unwrap_err();
        assert!(e.contains("join --mode hosted"), "{e}");
        // The other chart's sections are not this one's.
        let e = values("klusterlet: {mode: Singleton}", Chart::ClusterManager).unwrap_err();
        assert!(e.contains("klusterlet.mode is not supported"), "{e}");
        assert_eq!(
            values("klusterlet: {mode: Singleton}", Chart::Klusterlet)
                .unwrap()
                .singleton,
            Some(true)
        );
        let e = values(
            "clusterManager: {workConfiguration: {featureGates: [{feature: X, mode: On}]}}",
            Chart::ClusterManager,
        )
        .unwrap_err();
        assert!(
            e.contains("clusterManager.workConfiguration.featureGates: a list"),
            "{e}"
        );
        assert_eq!(values("{}", Chart::Klusterlet).unwrap(), Values::default());
    }

    #[test]
    fn the_charts_klusterlet_fields_are_taken_whole_and_checked_against_the_type() {
        let v = values(
            "priorityClassName: high\nklusterlet: {clusterName: c9, name: klusterlet, create: true, nodePlacement: {nodeSelector: {zone: a}}, externalServerURLs: [], registrationConfiguration: {featureGates: [{feature: ClusterClaim, mode: Enable}], clusterAnnotations: {agent.open-cluster-management.io/a: b}}}",
            Chart::Klusterlet,
        )
        .unwrap();
        assert_eq!(v.cluster_name.as_deref(), Some("c9"));
        assert_eq!(v.feature_gates, [("ClusterClaim".to_owned(), true)]);
        let spec = v.klusterlet_spec.unwrap();
        assert_eq!(spec["priorityClassName"], "high");
        assert_eq!(spec["nodePlacement"]["nodeSelector"]["zone"], "a");
        // The gates travel with the flags', not in the merged spec; an empty list is nothing.
        assert!(
            spec["registrationConfiguration"]
                .get("featureGates")
                .is_none()
        );
        assert!(spec.get("externalServerURLs").is_none());
        let e = values(
            "klusterlet: {nodePlacement: {nodeSelector: [a]}}",
            Chart::Klusterlet,
        )
        .unwrap_err();
        assert!(e.starts_with("klusterlet:"), "{e}");
        let e = values("klusterlet: {clusterName: Bad_Name}", Chart::Klusterlet).unwrap_err();
        assert!(e.contains("klusterlet.clusterName"), "{e}");
    }
}
