//! Template add-ons: what an AddOnTemplate means for one cluster, as upstream's template add-on
//! agent reads it (ocm `pkg/addon/templateagent`). Here: which template a ManagedClusterAddOn
//! uses, its spec hash, the identities it registers, where its agent is installed, and its
//! manifests rendered for the cluster — `{{CLUSTER_NAME}}`, `{{HUB_KUBECONFIG}}` and
//! `{{INSTALL_NAMESPACE}}` substituted, the same values as environment variables of every
//! Deployment and DaemonSet container, and the hub kubeconfig secret mounted where
//! `HUB_KUBECONFIG` points. Beside it, all pure: the AddOnDeploymentConfig applied to the
//! manifests ([`config`]), health probes ([`probe`]), pre-delete hooks ([`hook`]), Hosted mode
//! ([`hosting`]), custom signers ([`signer`]) and the deploy work ([`work`]).
pub mod config;
pub mod hook;
pub use ocm_api::addon::hosted as hosting;
pub mod probe;
pub mod signer;
pub mod work;

use serde_json::{Value, json};

use ocm_api::addon::{
    ADDON_TEMPLATES, AddOnDeploymentConfigSpec, AddOnTemplate, ClusterManagementAddOn,
    ConfigSpecHash, DEFAULT_INSTALL_NAMESPACE, ManagedClusterAddOn, RegistrationConfig,
    RegistrationSpec, RegistrationType, Subject, token,
};
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::operator::AddOnAuthType;
use ocm_api::work::{FeedbackRule, FeedbackType, ManifestConfigOption, ResourceIdentifier};
use ocm_runtime::identity::addon::{addon_group, default_group};

/// The add-on API group, where AddOnTemplates live.
pub const GROUP: &str = "addon.open-cluster-management.io";
/// Where the agent's hub kubeconfig secret is mounted in its pods.
const HUB_KUBECONFIG_DIR: &str = "/managed/hub-kubeconfig";

/// The config of `resource` (in the add-on group) that `mca` uses, as (namespace, name): the one
/// its rollout pinned in its status when its add-on is rolled out ([`crate::addon::install::rollout`];
/// none until then), else its own if it names one, else its add-on's default.
#[must_use]
pub fn configured(
    mca: &ManagedClusterAddOn,
    cma: &ClusterManagementAddOn,
    resource: &str,
) -> Option<(String, String)> {
    if crate::addon::install::rollout::pins(cma) {
        return mca
            .status
            .iter()
            .flat_map(|s| &s.config_references)
            .filter(|r| r.group == GROUP && r.resource == resource)
            .find_map(|r| r.desired_config.as_ref())
            .map(|d| (d.namespace.clone().unwrap_or_default(), d.name.clone()));
    }
    let own = mca
        .spec
        .configs
        .iter()
        .find(|c| c.group == GROUP && c.resource == resource)
        .map(|c| (c.namespace.clone().unwrap_or_default(), c.name.clone()));
    own.or_else(|| {
        cma.spec
            .supported_configs
            .iter()
            .find(|c| c.group == GROUP && c.resource == resource)
            .and_then(|c| c.default_config.as_ref())
            .map(|d| (d.namespace.clone().unwrap_or_default(), d.name.clone()))
    })
}

/// The AddOnTemplate `mca` uses (templates are cluster-scoped: the name alone).
#[must_use]
pub fn template_name(mca: &ManagedClusterAddOn, cma: &ClusterManagementAddOn) -> Option<String> {
    configured(mca, cma, ADDON_TEMPLATES).map(|(_, name)| name)
}

/// The template's name and the SHA-256 of its spec (see [`spec_hash_of`]).
#[must_use]
pub fn spec_hash(template: &AddOnTemplate) -> ConfigSpecHash {
    spec_hash_of(
        None,
        &template.metadata.name.clone().unwrap_or_default(),
        &template.spec,
    )
}

/// A config object's namespace (none when empty: cluster-scoped), name and the SHA-256 of its
/// spec, as upstream's `GetSpecHash` computes it (the JSON of `{"spec": …}` with sorted keys), so
/// a spec change is a new desired config. The manager and the rollout both hash by this, so
/// their references compare equal.
#[must_use]
pub fn spec_hash_of(
    namespace: Option<&str>,
    name: &str,
    spec: &impl serde::Serialize,
) -> ConfigSpecHash {
    let spec = serde_json::to_value(spec).unwrap_or(Value::Null);
    let bytes = serde_json::to_vec(&json!({ "spec": spec })).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    ConfigSpecHash {
        namespace: namespace.filter(|n| !n.is_empty()).map(Into::into),
        name: name.to_string(),
        spec_hash: Some(ocm_runtime::pki::hex(digest.as_ref())),
    }
}

/// The user of a template add-on's agent: upstream names the agent `<addon>-agent`.
#[must_use]
pub fn agent_user(cluster: &str, addon: &str) -> String {
    format!("{}:agent:{addon}-agent", default_group(cluster, addon))
}

/// The identities the template registers for `addon` on `cluster`, as the ManagedClusterAddOn's
/// status lists them. A `CustomSigner` is listed with its own subject or the default one. The
/// `KubeClient` identity is the default one, or, where the cluster's agent declared the token
/// driver, the add-on's ServiceAccount on the hub (upstream's token subject). The hub names that
/// subject itself rather than keeping what the agent wrote (as upstream's manager does): the
/// template's hub permissions are bound to it, and an agent must not choose whom they go to.
#[must_use]
pub fn registrations(
    template: &AddOnTemplate,
    cluster: &str,
    addon: &str,
    driver: Option<AddOnAuthType>,
) -> Vec<RegistrationConfig> {
    let default_subject = || Subject {
        user: Some(agent_user(cluster, addon)),
        groups: vec![default_group(cluster, addon), addon_group(addon)],
        organization_units: Vec::new(),
    };
    let kube_client_subject = || match driver {
        Some(AddOnAuthType::Token) => Subject {
            user: Some(token::user(cluster, addon)),
            ..Subject::default()
        },
        _ => default_subject(),
    };
    template
        .spec
        .registration
        .iter()
        .filter_map(|r| match r.type_ {
            RegistrationType::KubeClient => Some(RegistrationConfig {
                signer_name: CLIENT_SIGNER.to_string(),
                subject: Some(kube_client_subject()),
            }),
            RegistrationType::CustomSigner => {
                r.custom_signer.as_ref().map(|s| RegistrationConfig {
                    signer_name: s.signer_name.clone(),
                    subject: Some(s.subject.clone().unwrap_or_else(default_subject)),
                })
            }
        })
        .collect()
}

/// Where the agent runs: the config's install namespace, else the namespace of the template's
/// first Deployment, else of its first DaemonSet, else upstream's default.
#[must_use]
pub fn install_namespace(
    template: &AddOnTemplate,
    config: Option<&AddOnDeploymentConfigSpec>,
) -> String {
    if let Some(ns) = config.and_then(config::install_namespace) {
        return ns.to_string();
    }
    let manifests = &template.spec.agent_spec.workload.manifests;
    let namespace_of = |kind: &str| {
        manifests
            .iter()
            .find(|m| m["kind"] == kind && is_apps(m))
            .and_then(|m| m["metadata"]["namespace"].as_str())
            .filter(|ns| !ns.is_empty())
            .map(str::to_string)
    };
    namespace_of("Deployment")
        .or_else(|| namespace_of("DaemonSet"))
        .unwrap_or_else(|| DEFAULT_INSTALL_NAMESPACE.to_string())
}

fn is_apps(manifest: &Value) -> bool {
    manifest["apiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("apps/"))
}

/// Why a template could not be rendered.
#[derive(Debug, thiserror::Error)]
#[error("manifest {index} of AddOnTemplate {template} is not valid JSON once rendered: {source}")]
pub struct RenderError {
    template: String,
    index: usize,
    source: serde_json::Error,
}

/// The template's manifests for `cluster`, and the status feedback upstream asks for on each
/// Deployment and DaemonSet (which its health check reads).
pub fn render(
    template: &AddOnTemplate,
    cluster: &str,
    addon: &str,
    config: Option<&AddOnDeploymentConfigSpec>,
) -> Result<(Vec<Value>, Vec<ManifestConfigOption>), RenderError> {
    let Placeholders {
        builtins: values,
        all: substituted,
    } = placeholders(template, cluster, config);
    let mut manifests = Vec::new();
    let mut configs = Vec::new();
    for (index, manifest) in template
        .spec
        .agent_spec
        .workload
        .manifests
        .iter()
        .enumerate()
    {
        let text = substitute(&manifest.to_string(), &substituted);
        let mut object: Value = serde_json::from_str(&text).map_err(|source| RenderError {
            template: template.metadata.name.clone().unwrap_or_default(),
            index,
            source,
        })?;
        if let Some(config) = config {
            config::decorate(&mut object, config);
        }
        if is_apps(&object) && matches!(object["kind"].as_str(), Some("Deployment" | "DaemonSet")) {
            decorate_pods(&mut object, &values, &template.spec.registration, addon);
            if let Some(config) = config {
                config::decorate_pods(&mut object, config, addon);
            }
            configs.push(feedback(&object));
        }
        manifests.push(object);
    }
    if let Some(config) = config {
        let namespace = install_namespace(template, Some(config));
        manifests.extend(config::injected(addon, &namespace, config));
    }
    Ok((manifests, configs))
}

/// What a template's `{{KEY}}` placeholders become on one cluster.
struct Placeholders {
    /// The built-ins, which the agent's containers also get as environment, as upstream orders
    /// them: defaults, then built-ins.
    builtins: Vec<(String, String)>,
    /// Everything substituted: the config's variables, then the built-ins (which win).
    all: Vec<(String, String)>,
}

fn placeholders(
    template: &AddOnTemplate,
    cluster: &str,
    config: Option<&AddOnDeploymentConfigSpec>,
) -> Placeholders {
    let mut builtins: Vec<(String, String)> = Vec::new();
    if !template.spec.registration.is_empty() {
        builtins.push((
            "HUB_KUBECONFIG".into(),
            format!("{HUB_KUBECONFIG_DIR}/kubeconfig"),
        ));
    }
    builtins.push(("CLUSTER_NAME".into(), cluster.to_string()));
    if let Some(ns) = config.and_then(config::install_namespace) {
        builtins.push(("INSTALL_NAMESPACE".into(), ns.to_string()));
    }
    let mut all: Vec<(String, String)> = config.map(config::variables).unwrap_or_default();
    all.retain(|(k, _)| !builtins.iter().any(|(v, _)| v == k));
    all.extend(builtins.iter().cloned());
    Placeholders { builtins, all }
}

/// `value` (one string, not JSON) with the template's placeholders filled in for `cluster`, the
/// values the manifests get.
#[must_use]
pub fn fill(
    template: &AddOnTemplate,
    cluster: &str,
    config: Option<&AddOnDeploymentConfigSpec>,
    value: &str,
) -> String {
    let values = placeholders(template, cluster, config).all;
    substitute_with(value, &values, str::to_owned)
}

/// Replaces each `{{KEY}}` of JSON text by its value, kept inside its JSON string; unknown keys
/// become empty, as upstream's fasttemplate leaves them.
fn substitute(text: &str, values: &[(String, String)]) -> String {
    substitute_with(text, values, |value| {
        let quoted = Value::String(value.to_owned()).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    })
}

/// Replaces each `{{KEY}}` by its value, written by `encode`; unknown keys become empty.
fn substitute_with(
    text: &str,
    values: &[(String, String)],
    encode: impl Fn(&str) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let key = &rest[start + 2..start + 2 + len];
        if let Some((_, value)) = values.iter().find(|(k, _)| *k == key) {
            out.push_str(&encode(value));
        }
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

/// Adds the values as environment variables of every container, and mounts the secrets the
/// registrations fill, as upstream's template agent does: `<addon>-hub-kubeconfig` at
/// `/managed/hub-kubeconfig` for a `KubeClient`, and `<addon>-<signer>-client-cert` at
/// `/managed/<signer>` for a `CustomSigner` (`/` in the signer name as `-`).
fn decorate_pods(
    object: &mut Value,
    values: &[(String, String)],
    registrations: &[RegistrationSpec],
    addon: &str,
) {
    let pod = &mut object["spec"]["template"]["spec"];
    if !pod.is_object() {
        return;
    }
    let env: Vec<Value> = values
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    for registration in registrations {
        match (&registration.type_, &registration.custom_signer) {
            (RegistrationType::KubeClient, _) => {
                mounts.push(json!({"name": "hub-kubeconfig", "mountPath": HUB_KUBECONFIG_DIR}));
                volumes.push(json!({"name": "hub-kubeconfig",
                    "secret": {"secretName": format!("{addon}-hub-kubeconfig")}}));
            }
            (RegistrationType::CustomSigner, Some(signer)) => {
                let dashed = signer.signer_name.replace('/', "-");
                let volume = format!("cert-{}", dashed.replace('.', "-"));
                mounts.push(json!({"name": volume, "mountPath": format!("/managed/{dashed}")}));
                volumes.push(json!({"name": volume,
                    "secret": {"secretName": format!("{addon}-{dashed}-client-cert")}}));
            }
            (RegistrationType::CustomSigner, None) => {}
        }
    }
    if let Some(containers) = pod["containers"].as_array_mut() {
        for container in containers {
            push_all(&mut container["env"], &env);
            if !mounts.is_empty() {
                push_all(&mut container["volumeMounts"], &mounts);
            }
        }
    }
    if !volumes.is_empty() {
        push_all(&mut pod["volumes"], &volumes);
    }
}

fn push_all(list: &mut Value, items: &[Value]) {
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Some(list) = list.as_array_mut() {
        list.extend_from_slice(items);
    }
}

/// Upstream's well-known status feedback for a workload: replicas and readiness.
pub(super) fn feedback(object: &Value) -> ManifestConfigOption {
    let resource = match object["kind"].as_str() {
        Some("DaemonSet") => "daemonsets",
        _ => "deployments",
    };
    ManifestConfigOption {
        resource_identifier: ResourceIdentifier {
            group: Some("apps".into()),
            resource: resource.into(),
            name: object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .into(),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_string),
        },
        feedback_rules: vec![FeedbackRule {
            type_: FeedbackType::WellKnownStatus,
            json_paths: Vec::new(),
        }],
        ..ManifestConfigOption::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::{AddOnTemplateSpec, KubeClientRegistration, RegistrationSpec};
    use ocm_api::work::{ManifestWorkSpec, ManifestsTemplate};

    fn template(manifests: Vec<Value>, kube_client: bool) -> AddOnTemplate {
        let registration = if kube_client {
            vec![RegistrationSpec {
                type_: RegistrationType::KubeClient,
                kube_client: Some(KubeClientRegistration::default()),
                custom_signer: None,
            }]
        } else {
            Vec::new()
        };
        let mut t = AddOnTemplate::new(
            "hello-0.0.1",
            AddOnTemplateSpec {
                addon_name: "hello".into(),
                agent_spec: ManifestWorkSpec {
                    workload: ManifestsTemplate { manifests },
                    ..ManifestWorkSpec::default()
                },
                registration,
            },
        );
        t.metadata.name = Some("hello-0.0.1".into());
        t
    }

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "hello-agent", "namespace": "hello-ns"},
            "spec": {"template": {"spec": {"containers": [{
                "name": "agent", "image": "x",
                "args": ["--cluster-name={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}", "{{UNKNOWN}}"]
            }]}}}
        })
    }

    #[test]
    fn values_are_substituted_and_injected_as_upstream_does() {
        let (manifests, configs) =
            render(&template(vec![deployment()], true), "c1", "hello", None).unwrap();
        let container = &manifests[0]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["args"],
            json!([
                "--cluster-name=c1",
                "--hub-kubeconfig=/managed/hub-kubeconfig/kubeconfig",
                ""
            ])
        );
        assert_eq!(
            container["env"],
            json!([{"name": "HUB_KUBECONFIG", "value": "/managed/hub-kubeconfig/kubeconfig"},
                   {"name": "CLUSTER_NAME", "value": "c1"}])
        );
        assert_eq!(
            manifests[0]["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
            "hello-hub-kubeconfig"
        );
        assert_eq!(configs.len(), 1);
        assert_eq!(configs[0].resource_identifier.resource, "deployments");
    }

    #[test]
    fn without_registrations_there_is_no_hub_kubeconfig() {
        let (manifests, _) =
            render(&template(vec![deployment()], false), "c1", "hello", None).unwrap();
        let container = &manifests[0]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["env"],
            json!([{"name": "CLUSTER_NAME", "value": "c1"}])
        );
        assert!(container.get("volumeMounts").is_none());
    }

    #[test]
    fn a_custom_signers_certificate_is_mounted_as_upstream_names_it() {
        let mut t = template(vec![deployment()], false);
        t.spec.registration = vec![RegistrationSpec {
            type_: RegistrationType::CustomSigner,
            kube_client: None,
            custom_signer: Some(
                serde_json::from_value(json!({
                "signerName": "example.com/hello", "signingCA": {"name": "ca"}}))
                .unwrap(),
            ),
        }];
        let (manifests, _) = render(&t, "c1", "hello", None).unwrap();
        let pod = &manifests[0]["spec"]["template"]["spec"];
        assert_eq!(
            pod["containers"][0]["volumeMounts"],
            json!([{"name": "cert-example-com-hello", "mountPath": "/managed/example.com-hello"}])
        );
        assert_eq!(
            pod["volumes"],
            json!([{"name": "cert-example-com-hello",
                "secret": {"secretName": "hello-example.com-hello-client-cert"}}])
        );
    }

    #[test]
    fn a_value_with_quotes_stays_valid_json() {
        assert_eq!(
            substitute(r#"{"a":"{{X}}"}"#, &[("X".into(), "say \"hi\"".into())]),
            r#"{"a":"say \"hi\""}"#
        );
    }

    #[test]
    fn the_install_namespace_is_the_first_deployments_and_the_hash_follows_the_spec() {
        let t = template(
            vec![
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "namespace": "other"}}),
                deployment(),
            ],
            true,
        );
        assert_eq!(install_namespace(&t, None), "hello-ns");
        assert_eq!(
            install_namespace(&template(Vec::new(), false), None),
            DEFAULT_INSTALL_NAMESPACE
        );
        let (a, b) = (
            spec_hash(&t),
            spec_hash(&template(vec![deployment()], true)),
        );
        assert_eq!(a.name, "hello-0.0.1");
        assert_eq!(a.spec_hash.as_ref().map(String::len), Some(64));
        assert_ne!(a.spec_hash, b.spec_hash);
    }

    #[test]
    fn the_agent_registers_upstreams_template_identity() {
        let r = registrations(&template(Vec::new(), true), "c1", "hello", None);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].signer_name, CLIENT_SIGNER);
        let subject = r[0].subject.as_ref().unwrap();
        assert_eq!(
            subject.user.as_deref(),
            Some("system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent")
        );
        assert_eq!(
            subject.groups,
            [
                "system:open-cluster-management:cluster:c1:addon:hello",
                "system:open-cluster-management:addon:hello"
            ]
        );
    }

    #[test]
    fn under_the_token_driver_the_kube_client_is_the_addons_service_account() {
        let r = registrations(
            &template(Vec::new(), true),
            "c1",
            "hello",
            Some(AddOnAuthType::Token),
        );
        let subject = r[0].subject.as_ref().unwrap();
        assert_eq!(
            subject.user.as_deref(),
            Some("system:serviceaccount:c1:hello-agent")
        );
        assert!(subject.groups.is_empty());
        let csr = registrations(
            &template(Vec::new(), true),
            "c1",
            "hello",
            Some(AddOnAuthType::Csr),
        );
        assert_eq!(
            csr,
            registrations(&template(Vec::new(), true), "c1", "hello", None)
        );
    }
}
