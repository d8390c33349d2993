//! The deploy work of a template add-on, as upstream's addon-framework (`agentdeploy`) makes
//! it: `addon-<name>-deploy-0` in the cluster's namespace ([`work_name`]), the template's agent
//! spec with the rendered manifests and the status feedback asked for ([`work_spec`]), labelled
//! with the add-on, owned by its ManagedClusterAddOn and annotated with the spec hashes of the
//! configs it was made from ([`build`], [`CONFIG_SPEC_HASH_ANNOTATION`]); and whether two works
//! were made from the same configs ([`same_configs`]). Pure.
use std::collections::BTreeMap;

use kube::ResourceExt as _;
use serde_json::json;

use super::GROUP;
use super::probe::Fields;
use crate::addon::owner_reference;
use ocm_api::addon::{ADDON_NAME_LABEL, AddOnTemplate, ConfigSpecHash, ManagedClusterAddOn};
use ocm_api::work::{ManifestConfigOption, ManifestWork, ManifestWorkSpec};

/// Work annotation with the spec hashes of the configs the work was made from (upstream's
/// `ManifestConfigSpecHashAnnotationKey`): how a rollout tells a current work from a stale one.
pub const CONFIG_SPEC_HASH_ANNOTATION: &str = "open-cluster-management.io/config-spec-hash";

/// The deploy work's name: upstream's prefix and the index of the only work.
#[must_use]
pub fn work_name(addon: &str) -> String {
    format!("addon-{addon}-deploy-0")
}

/// The deploy work of `mca` with `spec`, made from `configs` (by resource).
#[must_use]
pub fn build(
    mca: &ManagedClusterAddOn,
    spec: ManifestWorkSpec,
    configs: &[(&str, ConfigSpecHash)],
) -> ManifestWork {
    let addon = mca.name_any();
    let mut work = ManifestWork::new(&work_name(&addon), spec);
    work.metadata.namespace = mca.namespace();
    // `<resource>.<group>/<namespace>/<name>`, as upstream keys it.
    let hashes: serde_json::Map<String, serde_json::Value> = configs
        .iter()
        .map(|(resource, c)| {
            let key = format!(
                "{resource}.{GROUP}/{}/{}",
                c.namespace.clone().unwrap_or_default(),
                c.name
            );
            (key, json!(c.spec_hash.clone().unwrap_or_default()))
        })
        .collect();
    let hashes = serde_json::Value::Object(hashes);
    work.metadata.annotations = Some(BTreeMap::from([(
        CONFIG_SPEC_HASH_ANNOTATION.into(),
        hashes.to_string(),
    )]));
    work.metadata.labels = Some(BTreeMap::from([(ADDON_NAME_LABEL.into(), addon)]));
    work.metadata.owner_references = Some(vec![owner_reference(mca, true)]);
    work
}

/// A deploy work's spec: the template's, with `manifests`, their status feedback `configs`, and
/// the probe fields asked for.
#[must_use]
pub fn work_spec(
    template: &AddOnTemplate,
    manifests: &[serde_json::Value],
    configs: Vec<ManifestConfigOption>,
    fields: Option<&Fields>,
) -> ManifestWorkSpec {
    let mut spec: ManifestWorkSpec = template.spec.agent_spec.clone();
    spec.workload.manifests = manifests.to_vec();
    // One entry per resource, as upstream's: the feedback rules join the template's own entry
    // for that resource (its update strategy kept) rather than standing beside it.
    for config in configs {
        match spec
            .manifest_configs
            .iter_mut()
            .find(|c| c.resource_identifier == config.resource_identifier)
        {
            Some(existing) => {
                for rule in config.feedback_rules {
                    if !existing.feedback_rules.contains(&rule) {
                        existing.feedback_rules.push(rule);
                    }
                }
            }
            None => spec.manifest_configs.push(config),
        }
    }
    if let Some(fields) = fields {
        fields.ask(&mut spec.manifest_configs);
    }
    spec
}

/// Whether two works were made from the same configs (their spec-hash annotations agree).
#[must_use]
pub fn same_configs(a: &ManifestWork, b: &ManifestWork) -> bool {
    let hash = |w: &ManifestWork| w.annotations().get(CONFIG_SPEC_HASH_ANNOTATION).cloned();
    hash(a).is_some() && hash(a) == hash(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addon::template;

    #[test]
    fn feedback_joins_the_templates_own_entry_for_a_resource() {
        let template: AddOnTemplate = serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "AddOnTemplate",
            "metadata": {"name": "t"},
            "spec": {"addonName": "a", "agentSpec": {
                "workload": {"manifests": []},
                "manifestConfigs": [{
                    "resourceIdentifier": {"group": "apps", "resource": "deployments", "name": "agent", "namespace": "ns"},
                    "updateStrategy": {"type": "ServerSideApply"},
                }],
            }},
        }))
        .unwrap();
        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "agent", "namespace": "ns"},
        });
        let manifests = vec![deployment.clone()];
        let configs = vec![template::feedback(&deployment)];
        let spec = work_spec(&template, &manifests, configs, None);
        assert_eq!(
            spec.manifest_configs.len(),
            1,
            "{:?}",
            spec.manifest_configs
        );
        let entry = &spec.manifest_configs[0];
        assert!(
            entry.update_strategy.is_some(),
            "the template's strategy kept"
        );
        assert_eq!(entry.feedback_rules.len(), 1, "the well-known status asked");
    }
}
