//! An add-on's AddOnDeploymentConfig applied to its template, as upstream's template agent applies
//! it: customized variables as `{{NAME}}` values, `agentInstallNamespace` as the install namespace
//! (`{{INSTALL_NAMESPACE}}`, the namespace of every namespaced manifest and of binding subjects),
//! node placement on the pods of Deployments and DaemonSets, registry mirrors on their images,
//! proxy settings as their environment (with the proxy's CA in a ConfigMap they mount) and
//! resource requirements on the containers their IDs match. A cluster's `image-registries`
//! annotation gives the mirrors when the config names none.
use std::borrow::Cow;

use base64::Engine as _;
use kube::ResourceExt as _;
use regex::Regex;
use serde_json::{Value, json};

use ocm_api::addon::{
    ADDON_DEPLOYMENT_CONFIGS, AddOnDeploymentConfigSpec, ClusterManagementAddOn, ImageMirror,
    ManagedClusterAddOn,
};
use ocm_api::cluster::{IMAGE_REGISTRIES_ANNOTATION, ManagedCluster};

/// The AddOnDeploymentConfig `mca` uses, as (namespace, name): its own config, else the add-on's
/// default.
#[must_use]
pub fn reference(
    mca: &ManagedClusterAddOn,
    cma: &ClusterManagementAddOn,
) -> Option<(String, String)> {
    super::configured(mca, cma, ADDON_DEPLOYMENT_CONFIGS)
}

/// The template values the config adds: its variables.
#[must_use]
pub fn variables(config: &AddOnDeploymentConfigSpec) -> Vec<(String, String)> {
    config
        .customized_variables
        .iter()
        .map(|v| (v.name.clone(), v.value.clone().unwrap_or_default()))
        .collect()
}

/// The install namespace the config sets, if any.
#[must_use]
pub fn install_namespace(config: &AddOnDeploymentConfigSpec) -> Option<&str> {
    config
        .agent_install_namespace
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// Applies the config to one rendered manifest.
pub fn decorate(object: &mut Value, config: &AddOnDeploymentConfigSpec) {
    if let Some(ns) = install_namespace(config) {
        if object["metadata"]["namespace"].is_string() {
            object["metadata"]["namespace"] = json!(ns);
        }
        if matches!(
            object["kind"].as_str(),
            Some("RoleBinding" | "ClusterRoleBinding")
        ) && let Some(subjects) = object["subjects"].as_array_mut()
        {
            for s in subjects.iter_mut().filter(|s| s["namespace"].is_string()) {
                s["namespace"] = json!(ns);
            }
        }
    }
    if !matches!(object["kind"].as_str(), Some("Deployment" | "DaemonSet")) {
        return;
    }
    let pod = &mut object["spec"]["template"]["spec"];
    if let Some(placement) = &config.node_placement {
        if !placement.node_selector.is_empty() {
            pod["nodeSelector"] = json!(placement.node_selector);
        }
        if !placement.tolerations.is_empty() {
            pod["tolerations"] = json!(placement.tolerations);
        }
    }
    for list in ["containers", "initContainers"] {
        for container in pod[list].as_array_mut().into_iter().flatten() {
            if let Some(image) = container["image"].as_str() {
                container["image"] = json!(mirrored(image, config));
            }
        }
    }
}

/// Where a pod finds the proxy's CA, as upstream mounts it.
const PROXY_CA_DIR: &str = "/managed/proxy-ca";
const PROXY_CA_KEY: &str = "ca-bundle.crt";

/// The ConfigMap holding the proxy's CA (upstream's `<addon>-proxy-ca`).
fn proxy_ca_name(addon: &str) -> String {
    format!("{addon}-proxy-ca")
}

/// The proxy's CA as PEM text, if the config has one (it is stored base64-encoded).
fn proxy_ca(config: &AddOnDeploymentConfigSpec) -> Option<String> {
    let encoded = config.proxy_config.as_ref()?.ca_bundle.as_deref()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok().filter(|pem| !pem.is_empty())
}

/// Manifests the config adds beside the template's: the proxy CA's ConfigMap in `namespace`.
#[must_use]
pub fn injected(addon: &str, namespace: &str, config: &AddOnDeploymentConfigSpec) -> Vec<Value> {
    proxy_ca(config)
        .map(|pem| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": proxy_ca_name(addon), "namespace": namespace},
                "data": {PROXY_CA_KEY: pem}})
        })
        .into_iter()
        .collect()
}

/// The proxy environment of the agent's containers, as upstream sets it (both cases).
fn proxy_env(config: &AddOnDeploymentConfigSpec) -> Vec<(String, String)> {
    let Some(proxy) = &config.proxy_config else {
        return Vec::new();
    };
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &proxy.http_proxy),
        ("HTTPS_PROXY", &proxy.https_proxy),
        ("NO_PROXY", &proxy.no_proxy),
    ] {
        if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
            env.push((name.to_string(), value.to_string()));
            env.push((name.to_lowercase(), value.to_string()));
        }
    }
    if !env.is_empty() && proxy_ca(config).is_some() {
        env.push((
            "CA_BUNDLE_FILE_PATH".into(),
            format!("{PROXY_CA_DIR}/{PROXY_CA_KEY}"),
        ));
    }
    env
}

/// Upstream's container-ID patterns: `<resource>:<name>:<container>`, each part a regular
/// expression and `*` any; `None` for an ID not of three parts or not a valid expression.
fn container_pattern(id: &str) -> Option<Regex> {
    let parts: Vec<&str> = id.split(':').collect();
    let [resource, name, container] = parts.as_slice() else {
        return None;
    };
    let part = |p: &str| {
        if p == "*" {
            ".+".to_string()
        } else {
            p.to_string()
        }
    };
    Regex::new(&format!(
        "^{}:{}:{}$",
        part(resource),
        part(name),
        part(container)
    ))
    .ok()
}

/// The pod-level settings applied after the template's own values, in upstream's order: the
/// proxy (environment and CA mount), then resource requirements (the last matching entry wins).
pub fn decorate_pods(object: &mut Value, config: &AddOnDeploymentConfigSpec, addon: &str) {
    let resource = match object["kind"].as_str() {
        Some("Deployment") => "deployments",
        Some("DaemonSet") => "daemonsets",
        _ => return,
    };
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let env = proxy_env(config);
    let with_ca = env.iter().any(|(k, _)| k == "CA_BUNDLE_FILE_PATH");
    let patterns: Vec<(Regex, Value)> = config
        .resource_requirements
        .iter()
        .filter_map(|r| {
            let pattern = container_pattern(&r.container_id);
            if pattern.is_none() {
                tracing::warn!(container_id = %r.container_id, "ignoring an invalid container ID");
            }
            Some((pattern?, json!(r.resources)))
        })
        .collect();
    let pod = &mut object["spec"]["template"]["spec"];
    for container in pod["containers"].as_array_mut().into_iter().flatten() {
        if !env.is_empty() {
            let mut list = container
                .get("env")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            list.extend(env.iter().map(|(k, v)| json!({"name": k, "value": v})));
            container["env"] = Value::Array(list);
        }
        if with_ca {
            let mut mounts = container["volumeMounts"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            mounts.push(json!({"name": "proxy-ca-bundle", "mountPath": PROXY_CA_DIR}));
            container["volumeMounts"] = Value::Array(mounts);
        }
        let id = format!(
            "{resource}:{name}:{}",
            container["name"].as_str().unwrap_or_default()
        );
        if let Some((_, resources)) = patterns.iter().rev().find(|(p, _)| p.is_match(&id)) {
            container["resources"] = resources.clone();
        }
    }
    if with_ca {
        let mut volumes = pod["volumes"].as_array().cloned().unwrap_or_default();
        volumes
            .push(json!({"name": "proxy-ca-bundle", "configMap": {"name": proxy_ca_name(addon)}}));
        pod["volumes"] = Value::Array(volumes);
    }
}

/// The config an add-on's manifests are rendered with: its own, or, when that names no image
/// mirrors, with those of the cluster's `image-registries` annotation (upstream's template agent
/// ranks the annotation below the config). A malformed annotation is passed over with a warning.
#[must_use]
pub fn with_cluster_mirrors<'a>(
    config: Option<&'a AddOnDeploymentConfigSpec>,
    cluster: Option<&ManagedCluster>,
) -> Option<Cow<'a, AddOnDeploymentConfigSpec>> {
    if config.is_some_and(|c| !c.registries.is_empty()) {
        return config.map(Cow::Borrowed);
    }
    let Some(registries) = cluster.and_then(cluster_mirrors).filter(|r| !r.is_empty()) else {
        return config.map(Cow::Borrowed);
    };
    Some(Cow::Owned(AddOnDeploymentConfigSpec {
        registries,
        ..config.cloned().unwrap_or_default()
    }))
}

/// The mirrors of a cluster's `image-registries` annotation.
fn cluster_mirrors(cluster: &ManagedCluster) -> Option<Vec<ImageMirror>> {
    #[derive(serde::Deserialize)]
    struct Annotation {
        #[serde(default)]
        registries: Vec<ImageMirror>,
    }
    let text = cluster.annotations().get(IMAGE_REGISTRIES_ANNOTATION)?;
    match serde_json::from_str::<Annotation>(text) {
        Ok(a) => Some(a.registries),
        Err(e) => {
            tracing::warn!(cluster = %cluster.name_any(), error = %e, "ignoring a malformed {IMAGE_REGISTRIES_ANNOTATION} annotation");
            None
        }
    }
}

/// `image` as upstream's `OverrideImage` rewrites it: each mirror whose source prefixes the image
/// replaces that prefix, and one without a source takes the image's last path segment; the last
/// mirror that changes the image wins.
fn mirrored(image: &str, config: &AddOnDeploymentConfigSpec) -> String {
    config
        .registries
        .iter()
        .rev()
        .filter_map(|r| {
            let mirror = r.mirror.trim_end_matches('/');
            match r.source.as_deref().map(|s| s.trim_end_matches('/')) {
                None | Some("") => {
                    let last = image.rsplit('/').next().unwrap_or(image);
                    Some(if mirror.is_empty() {
                        last.to_string()
                    } else {
                        format!("{mirror}/{last}")
                    })
                }
                Some(source) => image
                    .strip_prefix(source)
                    .map(|rest| format!("{mirror}{rest}")),
            }
        })
        .find(|name| name != image)
        .unwrap_or_else(|| image.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::NodePlacement;

    #[test]
    fn namespace_placement_and_mirrors_are_applied() {
        let config = AddOnDeploymentConfigSpec {
            agent_install_namespace: Some("elsewhere".into()),
            node_placement: Some(NodePlacement {
                node_selector: [("role".to_string(), "infra".to_string())].into(),
                tolerations: vec![
                    serde_json::from_value(
                        json!({"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}),
                    )
                    .unwrap(),
                ],
            }),
            registries: vec![ImageMirror {
                mirror: "mirror.local/ocm".into(),
                source: Some("quay.io/ocm".into()),
            }],
            ..AddOnDeploymentConfigSpec::default()
        };
        let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "x"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "quay.io/ocm/agent:1"}, {"name": "d", "image": "other/x"}]}}}});
        decorate(&mut deployment, &config);
        assert_eq!(deployment["metadata"]["namespace"], "elsewhere");
        assert_eq!(
            deployment["spec"]["template"]["spec"]["nodeSelector"]["role"],
            "infra"
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["tolerations"],
            json!([{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}])
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "mirror.local/ocm/agent:1"
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][1]["image"],
            "other/x"
        );
        let mut cluster_role = json!({"kind": "ClusterRole", "metadata": {"name": "r"}});
        decorate(&mut cluster_role, &config);
        assert!(cluster_role["metadata"].get("namespace").is_none());
    }

    #[test]
    fn mirrors_rewrite_images_as_upstreams_override_does() {
        let mirror = |source: Option<&str>, mirror: &str| ImageMirror {
            mirror: mirror.into(),
            source: source.map(str::to_string),
        };
        let config = |registries| AddOnDeploymentConfigSpec {
            registries,
            ..AddOnDeploymentConfigSpec::default()
        };
        let prefixed = config(vec![mirror(Some("quay.io/a/"), "local/b/")]);
        assert_eq!(mirrored("quay.io/a/img:1", &prefixed), "local/b/img:1");
        assert_eq!(
            mirrored("docker.io/a/img:1", &prefixed),
            "docker.io/a/img:1"
        );
        // Without a source: the mirror takes the image's last segment (or is the segment alone).
        let any = config(vec![mirror(None, "local/x")]);
        assert_eq!(mirrored("quay.io/a/img:1", &any), "local/x/img:1");
        assert_eq!(
            mirrored("quay.io/a/img:1", &config(vec![mirror(Some(""), "")])),
            "img:1"
        );
        // The last mirror that changes the image wins.
        let both = config(vec![
            mirror(Some("quay.io/a"), "first/a"),
            mirror(Some("quay.io"), "second"),
            mirror(Some("nothing.here"), "third"),
        ]);
        assert_eq!(mirrored("quay.io/a/img:1", &both), "second/a/img:1");
    }

    #[test]
    fn proxy_and_resources_reach_the_matching_containers() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let config: AddOnDeploymentConfigSpec = serde_json::from_value(json!({
            "proxyConfig": {"httpProxy": "http://proxy:3128", "noProxy": "10.0.0.0/8",
                "caBundle": base64::engine::general_purpose::STANDARD.encode(pem)},
            "resourceRequirements": [
                {"containerID": "*:*:*", "resources": {"requests": {"memory": "64Mi"}}},
                {"containerID": "deployments:agent:main", "resources": {"limits": {"cpu": "1"}, "claims": [{"name": "gpu"}]}},
                {"containerID": "not-three-parts", "resources": {"limits": {"cpu": "9"}}},
            ],
        }))
        .unwrap();
        let mut deployment = json!({"kind": "Deployment", "metadata": {"name": "agent"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "main", "env": [{"name": "CLUSTER_NAME", "value": "c1"}]},
                {"name": "sidecar"}]}}}});
        decorate_pods(&mut deployment, &config, "hello");
        let pod = &deployment["spec"]["template"]["spec"];
        let names: Vec<&str> = pod["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "CLUSTER_NAME",
                "HTTP_PROXY",
                "http_proxy",
                "NO_PROXY",
                "no_proxy",
                "CA_BUNDLE_FILE_PATH"
            ]
        );
        assert_eq!(
            pod["containers"][0]["resources"],
            json!({"limits": {"cpu": "1"}, "claims": [{"name": "gpu"}]})
        );
        assert_eq!(
            pod["containers"][1]["resources"],
            json!({"requests": {"memory": "64Mi"}})
        );
        assert_eq!(pod["volumes"][0]["configMap"]["name"], "hello-proxy-ca");
        assert_eq!(
            pod["containers"][1]["volumeMounts"][0]["mountPath"],
            "/managed/proxy-ca"
        );
        let injected = injected("hello", "agents", &config);
        assert_eq!(
            injected[0]["metadata"],
            json!({"name": "hello-proxy-ca", "namespace": "agents"})
        );
        assert_eq!(injected[0]["data"]["ca-bundle.crt"], pem);
    }

    #[test]
    fn without_proxy_or_requirements_pods_are_untouched() {
        let mut deployment = json!({"kind": "Deployment", "metadata": {"name": "a"},
            "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}});
        let before = deployment.clone();
        decorate_pods(&mut deployment, &AddOnDeploymentConfigSpec::default(), "a");
        assert_eq!(deployment, before);
        assert!(injected("a", "ns", &AddOnDeploymentConfigSpec::default()).is_empty());
    }
}
