//! `init --cluster-manager-values-file` and `join --klusterlet-values-file`: upstream's Helm
//! chart values, as upstream's commands take them — the file overrides the flags. Only the values
//! this tool can honour are taken; any other key is refused by its path, so no value is silently
//! ignored. The feature gates of the file and of `--feature-gates` are checked here together
//! ([`read_checked`]): our components refuse those they would not honour.
use std::path::Path;

use base64::Engine as _;
use serde_json::Value;

use crate::error::UserError;
use crate::install::hub::ExtraBootstrap;
use crate::install::operator_pod::{OperatorPod, is_empty_value as is_empty};

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
    /// `klusterlet.name`.
    pub klusterlet_name: Option<String>,
    /// The CR's spec fields the chart copies from its values as they are (the sections' settings
    /// but their gates, `priorityClassName`, `serverConfiguration`, the components' images of
    /// `images.overrides`), merged over what the command writes.
    pub cr_spec: Option<Value>,
    /// `clusterManager.create` / `klusterlet.create`: `false` makes no CR.
    pub create_cr: Option<bool>,
    /// The operator Deployment's settings ([`OperatorPod`]).
    pub operator_pod: OperatorPod,
    /// `createBootstrapToken` / `createBootstrapSA`: made besides the credential init prints.
    pub extra_bootstrap: ExtraBootstrap,
    /// `noOperator`: the klusterlet operator is not deployed.
    pub no_operator: Option<bool>,
    /// `bootstrapHubKubeConfig`: the bootstrap kubeconfig, instead of the one join writes.
    pub bootstrap_hub_kubeconfig: Option<String>,
    /// `multiHubBootstrapHubKubeConfigs`: `(secret name, kubeconfig)`, instead of
    /// `bootstrap-hub-kubeconfig`.
    pub multi_hub_kubeconfigs: Vec<(String, String)>,
    /// `externalManagedKubeConfig` (Hosted modes).
    pub external_managed_kubeconfig: Option<String>,
}

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
        opts.spec_overlay = self.cr_spec;
        opts.operator_pod = self.operator_pod;
        opts.extra_bootstrap = self.extra_bootstrap;
        if let Some(create) = self.create_cr {
            opts.create_cluster_manager = create;
        }
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
        if let Some(name) = self.klusterlet_name {
            opts.klusterlet_name = name;
        }
        if let Some(create) = self.create_cr {
            opts.create_klusterlet = create;
        }
        if self.no_operator == Some(true) {
            opts.deploy_operator = false;
        }
        if let Some(kubeconfig) = self.bootstrap_hub_kubeconfig {
            opts.bootstrap_kubeconfig = kubeconfig;
        }
        if let Some(kubeconfig) = self.external_managed_kubeconfig {
            opts.external_managed_kubeconfig = Some(kubeconfig.into_bytes());
        }
        opts.multi_hub_kubeconfigs = self.multi_hub_kubeconfigs;
        opts.spec_overlay = self.cr_spec;
        opts.operator_pod = self.operator_pod;
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

/// What runs the chart's part: upstream's images, our image's pods, or this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Upstream's images (upstream's operator): every gate upstream defines is honoured.
    Upstream,
    /// Our image (`--image`).
    OurPods,
    /// This process (`--in-process`).
    InProcess,
}

impl Runs {
    /// From `--in-process` and `--image`.
    #[must_use]
    pub fn of(in_process: bool, image: bool) -> Self {
        match (in_process, image) {
            (true, _) => Self::InProcess,
            (false, true) => Self::OurPods,
            (false, false) => Self::Upstream,
        }
    }
}

/// [`read`], when a file is given; then, when our components run the chart's part (`runs`), the
/// gates of the flags (`flag_gates`) and the file refused where they would not honour them
/// ([`crate::api::gates`]).
pub fn read_checked(
    path: Option<&Path>,
    chart: Chart,
    runs: Runs,
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
    check_gates(runs, flag_gates, values.as_ref(), refusal)?;
    Ok(values)
}

/// Refuses the gate settings (from the flags and a values file) our components would not honour,
/// when they are what runs (`--in-process` or `--image`); `refusal` is the hub's or the
/// klusterlet's ([`crate::api::gates`]). With upstream's images upstream's operator runs the hub
/// or the klusterlet, and implements every gate upstream defines (the placement debug server's
/// sidecar included).
fn check_gates(
    runs: Runs,
    flags: &[(String, bool)],
    file: Option<&Values>,
    refusal: Refusal,
) -> anyhow::Result<()> {
    if runs == Runs::Upstream {
        return Ok(());
    }
    let gates: Vec<(String, bool)> = flags
        .iter()
        .chain(file.iter().flat_map(|v| v.feature_gates.iter()))
        .cloned()
        .collect();
    let in_process = || {
        (runs == Runs::InProcess)
            .then(|| crate::api::gates::placement_debug_refusal(&gates))
            .flatten()
    };
    match refusal(&gates).or_else(in_process) {
        Some(why) => Err(UserError::new(
            why,
            "drop the gate, or run upstream's images (no --in-process or --image), which implement it",
        )
        .into()),
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

impl Chart {
    /// `<section>.<key>` values the chart copies into the CR's spec whole.
    fn spec_keys(self) -> &'static [&'static str] {
        match self {
            Self::ClusterManager => &["resourceRequirement"],
            Self::Klusterlet => &[
                "namespace",
                "externalServerURLs",
                "resourceRequirement",
                "nodePlacement",
            ],
        }
    }

    /// Configurations whose settings (all but the feature gates, read with the flags') are
    /// copied into the spec.
    fn configurations(self) -> &'static [&'static str] {
        match self {
            Self::ClusterManager => &[
                "registrationConfiguration",
                "workConfiguration",
                "addOnManagerConfiguration",
                "placementConfiguration",
            ],
            Self::Klusterlet => &["registrationConfiguration", "workConfiguration"],
        }
    }

    /// Top-level values that are spec fields of the same name.
    fn top_level_spec_keys(self) -> &'static [&'static str] {
        match self {
            Self::ClusterManager => &["serverConfiguration"],
            Self::Klusterlet => &["priorityClassName"],
        }
    }

    /// `images.overrides.<key>` and the spec field it sets.
    fn image_overrides(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::ClusterManager => &[
                ("registrationImage", "registrationImagePullSpec"),
                ("workImage", "workImagePullSpec"),
                ("placementImage", "placementImagePullSpec"),
                ("addOnManagerImage", "addOnManagerImagePullSpec"),
            ],
            Self::Klusterlet => &[
                ("registrationImage", "registrationImagePullSpec"),
                ("workImage", "workImagePullSpec"),
                // The Klusterlet's own image is the operator's, which also runs the operator.
                ("operatorImage", "imagePullSpec"),
            ],
        }
    }

    /// Settings of a configuration read with the flags rather than copied.
    fn read_with_flags(self, configuration: &str, key: &str) -> bool {
        key == "featureGates"
            || (self == Self::ClusterManager
                && configuration == "registrationConfiguration"
                && key == "autoApproveUsers")
    }
}

/// Takes out of `doc` the spec fields upstream's chart copies into its CR as they are, and
/// returns them as a spec to merge, checked against the CR's type (a key the type does not
/// have is refused: the API server would drop it).
fn take_cr_spec(doc: &mut Value, chart: Chart) -> Result<Option<Value>, String> {
    let mut spec = serde_json::Map::new();
    for key in chart.top_level_spec_keys() {
        if let Some(v) = doc
            .as_object_mut()
            .and_then(|d| d.remove(*key))
            .filter(|v| !is_empty(v))
        {
            spec.insert((*key).into(), v);
        }
    }
    if let Some(overrides) = doc.pointer("/images/overrides").and_then(Value::as_object) {
        for (key, field) in chart.image_overrides() {
            let Some(v) = overrides.get(*key).filter(|v| !is_empty(v)) else {
                continue;
            };
            let image = v
                .as_str()
                .ok_or_else(|| format!("images.overrides.{key} must be a string"))?;
            crate::api::image::reference(image)
                .map_err(|e| format!("images.overrides.{key}: {e}"))?;
            spec.insert((*field).into(), v.clone());
        }
        // The operator's image is the operator Deployment's, read with the flattened keys.
        if let Some(o) = doc
            .pointer_mut("/images/overrides")
            .and_then(Value::as_object_mut)
        {
            o.retain(|k, _| k == "operatorImage");
        }
    }
    if let Some(section) = doc.get_mut(chart.cr()).and_then(Value::as_object_mut) {
        for key in chart.spec_keys() {
            if let Some(v) = section.remove(*key).filter(|v| !is_empty(v)) {
                spec.insert((*key).into(), v);
            }
        }
        for key in chart.configurations() {
            let Some(config) = section.get_mut(*key).and_then(Value::as_object_mut) else {
                continue;
            };
            let (kept, settings): (serde_json::Map<String, Value>, _) = std::mem::take(config)
                .into_iter()
                .partition(|(k, _)| chart.read_with_flags(key, k));
            *config = kept;
            let settings: serde_json::Map<String, Value> =
                settings.into_iter().filter(|(_, v)| !is_empty(v)).collect();
            if !settings.is_empty() {
                spec.insert((*key).into(), Value::Object(settings));
            }
        }
    }
    if spec.is_empty() {
        return Ok(None);
    }
    let spec = Value::Object(spec);
    let cr = chart.cr();
    let typed = match chart {
        Chart::Klusterlet => {
            serde_json::from_value::<crate::api::operator::KlusterletSpec>(spec.clone())
                .and_then(serde_json::to_value)
        }
        Chart::ClusterManager => {
            serde_json::from_value::<crate::api::operator::ClusterManagerSpec>(spec.clone())
                .and_then(serde_json::to_value)
        }
    }
    .map_err(|e| format!("{cr}: {e}"))?;
    if let Some(path) = dropped(&spec, &typed, "") {
        return Err(format!("{cr}{path} is not a field of the {cr} CR"));
    }
    Ok(Some(spec))
}

/// The first key of `given` that `kept` (its typed round trip) lost, as `.a.b`.
fn dropped(given: &Value, kept: &Value, at: &str) -> Option<String> {
    match (given, kept) {
        (Value::Object(g), Value::Object(k)) => g.iter().find_map(|(key, v)| {
            let path = format!("{at}.{key}");
            match k.get(key) {
                None if !v.is_null() => Some(path),
                None => None,
                Some(kv) => dropped(v, kv, &path),
            }
        }),
        (Value::Array(g), Value::Array(k)) => g
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (g, k))| dropped(g, k, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// Top-level values of the operator's Deployment, each read whole ([`OperatorPod::take`]).
const OPERATOR_POD_KEYS: &[&str] = &[
    "podSecurityContext",
    "securityContext",
    "resources",
    "nodeSelector",
    "tolerations",
    "affinity",
];

/// The first key of `doc` this tool cannot honour, or the values.
fn interpret(doc: &Value, chart: Chart) -> Result<Values, String> {
    let mut out = Values::default();
    let mut doc = doc.clone();
    out.cr_spec = take_cr_spec(&mut doc, chart)?;
    if let Some(class) = out
        .cr_spec
        .as_ref()
        .and_then(|s| s.get("priorityClassName"))
        .and_then(Value::as_str)
    {
        // The chart gives its class to the operator too.
        out.operator_pod.priority_class_name = Some(class.to_owned());
    }
    if let Some(top) = doc.as_object_mut() {
        for key in OPERATOR_POD_KEYS {
            if let Some(v) = top.remove(*key) {
                out.operator_pod.take(key, &v)?;
            }
        }
        if chart == Chart::Klusterlet {
            take_klusterlet_secrets(top, &mut out)?;
        }
    }
    let mut leaves = Vec::new();
    flatten(&doc, "", &mut leaves);
    for (path, v) in &leaves {
        if is_empty(v) || out.operator_pod.take(path, v)? {
            continue;
        }
        interpret_leaf(path, v, chart, &mut out)?;
    }
    pull_credential_from_user(&doc, &mut out);
    out.operator_pod.check()?;
    Ok(out)
}

/// The klusterlet chart's kubeconfigs (`bootstrapHubKubeConfig`,
/// `multiHubBootstrapHubKubeConfigs`, `externalManagedKubeConfig`), each checked to be one.
fn take_klusterlet_secrets(
    top: &mut serde_json::Map<String, Value>,
    out: &mut Values,
) -> Result<(), String> {
    let kubeconfig = |key: &str, v: &Value| -> Result<String, String> {
        let text = v
            .as_str()
            .ok_or_else(|| format!("{key} must be a kubeconfig's text"))?;
        let kc = kube::config::Kubeconfig::from_yaml(text)
            .map_err(|e| format!("{key}: not a kubeconfig: {e}"))?;
        if !kc
            .clusters
            .iter()
            .any(|c| c.cluster.as_ref().is_some_and(|c| c.server.is_some()))
        {
            return Err(format!("{key}: a kubeconfig naming no API server"));
        }
        Ok(text.to_owned())
    };
    if let Some(v) = top
        .remove("bootstrapHubKubeConfig")
        .filter(|v| !is_empty(v))
    {
        out.bootstrap_hub_kubeconfig = Some(kubeconfig("bootstrapHubKubeConfig", &v)?);
    }
    if let Some(v) = top
        .remove("externalManagedKubeConfig")
        .filter(|v| !is_empty(v))
    {
        out.external_managed_kubeconfig = Some(kubeconfig("externalManagedKubeConfig", &v)?);
    }
    if let Some(v) = top
        .remove("multiHubBootstrapHubKubeConfigs")
        .filter(|v| !is_empty(v))
    {
        let key = "multiHubBootstrapHubKubeConfigs";
        let list = v
            .as_array()
            .ok_or_else(|| format!("{key} must be a list of {{name, kubeConfig}}"))?;
        for (i, hub) in list.iter().enumerate() {
            let name = hub["name"]
                .as_str()
                .filter(|n| crate::api::names::is_dns_subdomain(n))
                .ok_or_else(|| format!("{key}[{i}].name must be a Secret name"))?;
            let text = kubeconfig(&format!("{key}[{i}].kubeConfig"), &hub["kubeConfig"])?;
            out.multi_hub_kubeconfigs.push((name.to_owned(), text));
        }
    }
    if top.get("grpcConfig").is_some_and(|v| !is_empty(v)) {
        return Err("grpcConfig: the gRPC registration driver is not implemented here (agents register through the hub's API server with CSRs)".into());
    }
    Ok(())
}

/// One leaf of the values (by its dotted path) onto `out`.
fn interpret_leaf(path: &str, v: &Value, chart: Chart, out: &mut Values) -> Result<(), String> {
    let text = || {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{path} must be a string"))
    };
    let flag = || {
        v.as_bool()
            .ok_or_else(|| format!("{path} must be true or false"))
    };
    let cr = chart.cr();
    let cm = chart == Chart::ClusterManager;
    match path {
        "images.registry" => {
            out.registry =
                Some(crate::api::image::registry(&text()?).map_err(|e| format!("{path}: {e}"))?);
        }
        "images.tag" => {
            out.tag = Some(crate::api::image::tag(&text()?).map_err(|e| format!("{path}: {e}"))?);
        }
        "images.imageCredentials.dockerConfigJson" => {
            out.pull_credential = Some(text()?.into_bytes());
        }
        // The secret is always made; a user and password are read below, together.
        "images.imageCredentials.createImageCredentials"
        | "images.imageCredentials.userName"
        | "images.imageCredentials.password" => {}
        "enableSyncLabels" => out.sync_labels = Some(flag()?),
        "clusterManager.create" | "klusterlet.create" if path.starts_with(cr) => {
            out.create_cr = Some(flag()?);
        }
        "clusterManager.mode" if cm => {
            if text()? != "Default" {
                return Err(format!(
                    "{path}: only Default here (the hub in Hosted mode is not supported yet)"
                ));
            }
        }
        "createBootstrapToken" if cm => out.extra_bootstrap.token = flag()?,
        "createBootstrapSA" if cm => out.extra_bootstrap.service_account = flag()?,
        "klusterlet.mode" if !cm => {
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
        "klusterlet.clusterName" if !cm => {
            let name = text()?;
            crate::api::names::validate_cluster_name(&name).map_err(|e| format!("{path}: {e}"))?;
            out.cluster_name = Some(name);
        }
        "klusterlet.name" if !cm => {
            let name = text()?;
            crate::api::names::validate_cluster_name(&name).map_err(|e| format!("{path}: {e}"))?;
            out.klusterlet_name = Some(name);
        }
        "noOperator" if !cm => out.no_operator = Some(flag()?),
        "clusterManager.registrationConfiguration.autoApproveUsers" if cm => {
            out.auto_approve_users = Some(strings(v, path)?);
        }
        p if is_gate_list(p, cr) => out.feature_gates.extend(gates(v, p)?),
        other => return Err(format!("{other} is not supported here")),
    }
    Ok(())
}

/// Upstream's chart builds the docker config from a user and password, for `images.registry`.
fn pull_credential_from_user(doc: &Value, out: &mut Values) {
    if let Some(images) = doc.pointer("/images/imageCredentials")
        && out.pull_credential.is_none()
        && let (Some(user), Some(password)) = (
            images.get("userName").and_then(Value::as_str),
            images.get("password").and_then(Value::as_str),
        )
        && !user.is_empty()
    {
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
}

fn is_gate_list(path: &str, cr: &str) -> bool {
    [
        "registrationConfiguration",
        "workConfiguration",
        "addOnManagerConfiguration",
        "placementConfiguration",
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
        let e = values("images: {overridez: {workImage: x}}", Chart::ClusterManager).unwrap_err();
        assert!(
            e.contains("images.overridez.workImage is not supported"),
            "{e}"
        );
        let e = values(
            "images: {overrides: {workImage: 'Not An Image'}}",
            Chart::ClusterManager,
        )
        .unwrap_err();
        assert!(e.starts_with("images.overrides.workImage:"), "{e}");
        let e = values("clusterManager: {mode: Hosted}", Chart::ClusterManager).unwrap_err();
        assert!(e.contains("Hosted mode is not supported yet"), "{e}");
        let e = values("grpcConfig: 'url: x'", Chart::Klusterlet).unwrap_err();
        assert!(e.contains("gRPC registration driver"), "{e}");
        let e = values(
            "clusterManager: {workConfiguration: {statusSyncIntervall: 1s}}",
            Chart::ClusterManager,
        )
        .unwrap_err();
        assert!(
            e.contains("clusterManager.workConfiguration.statusSyncIntervall is not a field"),
            "{e}"
        );
        let e = values(
            "securityContext: {privileged: true, allowPrivilegeEscalation: true}",
            Chart::Klusterlet,
        )
        .unwrap_err();
        assert!(e.contains("Pod Security `restricted`"), "{e}");
        let e = values(
            "bootstrapHubKubeConfig: 'not: [a kubeconfig'",
            Chart::Klusterlet,
        )
        .unwrap_err();
        assert!(
            e.starts_with("bootstrapHubKubeConfig: not a kubeconfig"),
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
        let spec = v.cr_spec.unwrap();
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

    /// Every key of upstream v1.3.1's cluster-manager chart values, at its default or a value a
    /// user sets, is taken (none refused, none dropped).
    #[test]
    fn every_key_of_the_cluster_manager_chart_is_taken() {
        let v = values(
            r#"
replicaCount: 3
images:
  overrides: {registrationImage: "r.example/reg:v9", workImage: "", placementImage: "", addOnManagerImage: "r.example/addon:v9", operatorImage: "r.example/op:v9"}
  registry: quay.io/open-cluster-management
  tag: ""
  imagePullPolicy: IfNotPresent
  imageCredentials: {createImageCredentials: false, userName: "", password: "", dockerConfigJson: ""}
podSecurityContext: {runAsNonRoot: true}
securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, privileged: false, runAsNonRoot: true, readOnlyRootFilesystem: true}
resources: {requests: {cpu: 2m, memory: 16Mi}}
nodeSelector: {}
tolerations: []
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 70
      podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchExpressions: [{key: app, operator: In, values: [cluster-manager]}]}}
enableSyncLabels: false
createBootstrapToken: true
createBootstrapSA: false
clusterManager:
  create: true
  mode: Default
  resourceRequirement: {type: Default}
  registrationConfiguration:
    featureGates: [{feature: DefaultClusterSet, mode: Enable}]
    registrationDrivers: [{authType: csr}]
  workConfiguration: {workDriver: kube}
  addOnManagerConfiguration: {}
  placementConfiguration:
    featureGates: [{feature: PlacementDebugServer, mode: Disable}]
"#,
            Chart::ClusterManager,
        )
        .unwrap();
        assert_eq!(v.operator_pod.replicas, Some(3));
        assert_eq!(v.operator_pod.image.as_deref(), Some("r.example/op:v9"));
        assert_eq!(
            v.operator_pod.image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
        assert!(v.operator_pod.affinity.is_some() && v.operator_pod.resources.is_some());
        assert!(v.extra_bootstrap.token && !v.extra_bootstrap.service_account);
        assert_eq!(v.create_cr, Some(true));
        let spec = v.cr_spec.unwrap();
        assert_eq!(spec["registrationImagePullSpec"], "r.example/reg:v9");
        assert_eq!(spec["addOnManagerImagePullSpec"], "r.example/addon:v9");
        assert!(
            spec.get("workImagePullSpec").is_none(),
            "an empty override is none"
        );
        assert_eq!(
            spec["registrationConfiguration"]["registrationDrivers"][0]["authType"],
            "csr"
        );
        assert_eq!(spec["workConfiguration"]["workDriver"], "kube");
        assert_eq!(spec["resourceRequirement"]["type"], "Default");
        assert!(
            spec.get("placementConfiguration").is_none(),
            "gates travel with the flags'"
        );
        let mut gates = v.feature_gates;
        gates.sort();
        assert_eq!(
            gates,
            [
                ("DefaultClusterSet".to_owned(), true),
                ("PlacementDebugServer".to_owned(), false)
            ]
        );
    }

    /// Every key of upstream v1.3.1's klusterlet chart values is taken.
    #[test]
    fn every_key_of_the_klusterlet_chart_is_taken() {
        let kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: h, cluster: {server: 'https://hub:6443'}}]\ncontexts: [{name: h, context: {cluster: h, user: u}}]\nusers: [{name: u, user: {token: t}}]\ncurrent-context: h\n";
        let doc = serde_json::json!({
            "replicaCount": 1,
            "images": {
                "overrides": {"registrationImage": "", "workImage": "r.example/work:v9", "operatorImage": "r.example/op:v9"},
                "registry": "quay.io/open-cluster-management", "tag": "", "imagePullPolicy": "Always",
                "imageCredentials": {"createImageCredentials": false, "userName": "", "password": "", "dockerConfigJson": ""},
            },
            "podSecurityContext": {"runAsNonRoot": true},
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "privileged": false, "runAsNonRoot": true, "readOnlyRootFilesystem": true},
            "resources": {"requests": {"cpu": "2m", "memory": "16Mi"}, "limits": {"memory": "2Gi"}},
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {},
            "enableSyncLabels": false,
            "bootstrapHubKubeConfig": kubeconfig,
            "grpcConfig": "",
            "multiHubBootstrapHubKubeConfigs": [{"name": "hub1", "kubeConfig": kubeconfig}],
            "externalManagedKubeConfig": kubeconfig,
            "noOperator": true,
            "priorityClassName": "klusterlet-critical",
            "klusterlet": {
                "create": false, "mode": "Singleton", "name": "klusterlet", "clusterName": "cluster1",
                "namespace": "", "externalServerURLs": [], "resourceRequirement": {"type": "Default"},
                "nodePlacement": {}, "registrationConfiguration": {"clientCertExpirationSeconds": 600}, "workConfiguration": {},
            },
        });
        let v = interpret(&doc, Chart::Klusterlet).unwrap();
        assert_eq!(v.operator_pod.image.as_deref(), Some("r.example/op:v9"));
        assert_eq!(
            v.operator_pod.priority_class_name.as_deref(),
            Some("klusterlet-critical")
        );
        assert_eq!(v.no_operator, Some(true));
        assert_eq!(v.create_cr, Some(false));
        assert_eq!(v.klusterlet_name.as_deref(), Some("klusterlet"));
        assert_eq!(v.bootstrap_hub_kubeconfig.as_deref(), Some(kubeconfig));
        assert_eq!(v.external_managed_kubeconfig.as_deref(), Some(kubeconfig));
        assert_eq!(
            v.multi_hub_kubeconfigs,
            [("hub1".to_owned(), kubeconfig.to_owned())]
        );
        let spec = v.cr_spec.unwrap();
        assert_eq!(spec["workImagePullSpec"], "r.example/work:v9");
        assert_eq!(spec["imagePullSpec"], "r.example/op:v9");
        assert_eq!(spec["priorityClassName"], "klusterlet-critical");
        assert_eq!(
            spec["registrationConfiguration"]["clientCertExpirationSeconds"],
            600
        );
    }

    #[test]
    fn the_operator_pod_settings_lie_over_the_rendered_deployment() {
        let v = values(
            "replicaCount: 2\nimages: {overrides: {operatorImage: 'r.example/op:v9'}, imagePullPolicy: Never}\npodSecurityContext: {runAsUser: 1000}\nnodeSelector: {zone: a}\nresources: {requests: {cpu: 5m}}",
            Chart::ClusterManager,
        )
        .unwrap();
        let opts = crate::install::hub::InitOptions {
            operator_pod: v.operator_pod,
            ..Default::default()
        };
        let plan = crate::install::hub::plan(&opts).unwrap();
        let deployment = plan
            .iter()
            .find(|o| o.types.as_ref().unwrap().kind == "Deployment")
            .unwrap();
        let spec = &deployment.data["spec"];
        assert_eq!(spec["replicas"], 2);
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["nodeSelector"]["zone"], "a");
        // Merged over ours: the seccomp profile stays, the pod stays `restricted`.
        assert_eq!(pod["securityContext"]["runAsUser"], 1000);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert!(crate::operator::pod_security::is_restricted(pod));
        let container = &pod["containers"][0];
        assert_eq!(container["image"], "r.example/op:v9");
        assert_eq!(container["imagePullPolicy"], "Never");
        assert_eq!(
            container["resources"],
            serde_json::json!({"requests": {"cpu": "5m"}})
        );
        // Two replicas elect a leader.
        assert!(
            !container["args"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a.as_str().unwrap().starts_with("--disable-leader-election")),
            "{}",
            container["args"]
        );
    }
}
