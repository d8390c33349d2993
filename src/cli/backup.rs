//! `clusteradm backup`: the hub's OCM objects as one YAML stream, for `clusteradm restore` on a hub
//! rebuilt from scratch (etcd lost, or the hub moved to a new cluster with the same address and
//! CA). What a backup holds is what users and their tools made: clusters and their acceptance,
//! sets and bindings, placements, works and replica sets, add-ons, their templates and configs,
//! the ClusterManager, the namespaces those live in, and the ClusterRoles add-on templates grant.
//! What the hub's controllers make from those (cluster namespaces' RBAC, placement decisions,
//! the works of add-ons and replica sets, leases, CSRs) is left out: a restored hub makes it again,
//! under the same names, so the agents find what they applied still managed.
//!
//! No Secret is taken: the agents keep their hub certificates (signed by the hub's CA, which a
//! rebuilt hub must keep), and `init` makes a new bootstrap credential for clusters joining later.
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use kube::ResourceExt as _;
use kube::api::{Api, DynamicObject, GroupVersionKind, ListParams};

use super::Ctx;

/// Flags of `backup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write the objects to FILE (a new 0600 file) instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// The kinds a backup lists from the hub, in the order a restore creates them (namespaces and
/// ClusterRoles, which are derived, come right after the clusters).
pub const KINDS: &[(&str, &str, &str)] = &[
    (
        "operator.open-cluster-management.io",
        "v1",
        "ClusterManager",
    ),
    (
        "cluster.open-cluster-management.io",
        "v1beta2",
        "ManagedClusterSet",
    ),
    ("cluster.open-cluster-management.io", "v1", "ManagedCluster"),
    (
        "cluster.open-cluster-management.io",
        "v1beta2",
        "ManagedClusterSetBinding",
    ),
    (
        "addon.open-cluster-management.io",
        "v1alpha1",
        "AddOnTemplate",
    ),
    (
        "addon.open-cluster-management.io",
        "v1alpha1",
        "AddOnDeploymentConfig",
    ),
    (
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ClusterManagementAddOn",
    ),
    (
        "addon.open-cluster-management.io",
        "v1alpha1",
        "ManagedClusterAddOn",
    ),
    ("cluster.open-cluster-management.io", "v1beta1", "Placement"),
    (
        "work.open-cluster-management.io",
        "v1alpha1",
        "ManifestWorkReplicaSet",
    ),
    ("work.open-cluster-management.io", "v1", "ManifestWork"),
];

/// The label upstream's replica-set controller puts on the works it makes.
const REPLICA_SET_LABEL: &str = "work.open-cluster-management.io/manifestworkreplicaset";

/// Runs `backup`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let kube = ctx
        .hub(&[<crate::api::cluster::ManagedCluster as kube::CustomResourceExt>::crd_name()])
        .await?;
    let objects = collect(&kube.client).await?;
    let text = crate::apply::to_yaml(&objects)?;
    if let Some(path) = &args.output_file {
        crate::kubeconfig::write_private(path, text.as_bytes())
            .with_context(|| format!("writing --output-file {}", path.display()))?;
        ctx.printer.done(format!(
            "backed up {} of hub {} to {}",
            summary(&objects),
            kube.url(),
            path.display()
        ));
    } else {
        crate::ui::stdout::print(text)?;
        ctx.printer.info(format!(
            "backed up {} of hub {}",
            summary(&objects),
            kube.url()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every object a backup holds, cleaned of what the server sets, in restore order.
///
/// # Errors
/// A list failed (a kind that is not served is skipped: its feature is off).
pub async fn collect(client: &kube::Client) -> anyhow::Result<Vec<DynamicObject>> {
    let resolver = crate::apply::Resolver::new(client.clone());
    let mut listed = Vec::new();
    for (group, version, kind) in KINDS {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let Ok((resource, _)) = resolver.resolve(&gvk).await else {
            continue;
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let list = api
            .list(&ListParams::default())
            .await
            .with_context(|| format!("listing {kind}s on the hub"))?;
        listed.extend(
            list.items
                .into_iter()
                .filter(|o| !generated(o))
                .map(|o| cleaned(o, group, version, kind)),
        );
    }
    let namespaces = namespaces_of(client, &listed).await?;
    let roles = template_roles(client, &listed).await?;
    // Clusters, then what holds their objects, then the rest in KINDS' order.
    let split = listed
        .iter()
        .position(|o| {
            !matches!(
                kind_of(o),
                "ClusterManager" | "ManagedClusterSet" | "ManagedCluster"
            )
        })
        .unwrap_or(listed.len());
    let rest = listed.split_off(split);
    Ok([listed, namespaces, roles, rest].concat())
}

fn kind_of(o: &DynamicObject) -> &str {
    o.types.as_ref().map_or("", |t| t.kind.as_str())
}

/// A work a controller made from other objects (an add-on's, owned by its ManagedClusterAddOn; a
/// replica set's, labelled): a restored hub makes it again. Other kinds are kept whoever owns
/// them (the hub owns every ManagedClusterAddOn by its ClusterManagementAddOn, enabled by hand
/// or not), their owners dropped: the hub sets them again.
fn generated(o: &DynamicObject) -> bool {
    kind_of(o) == "ManifestWork"
        && (o
            .metadata
            .owner_references
            .as_ref()
            .is_some_and(|r| !r.is_empty())
            || o.labels().contains_key(REPLICA_SET_LABEL))
}

/// `o` without what the server sets or controllers keep: identity, versions, timestamps, owners,
/// finalizers, status.
fn cleaned(mut o: DynamicObject, group: &str, version: &str, kind: &str) -> DynamicObject {
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    o.types = Some(kube::api::TypeMeta {
        api_version,
        kind: kind.to_owned(),
    });
    let m = &mut o.metadata;
    m.uid = None;
    m.resource_version = None;
    m.generation = None;
    m.creation_timestamp = None;
    m.deletion_timestamp = None;
    m.deletion_grace_period_seconds = None;
    m.managed_fields = None;
    m.owner_references = None;
    m.finalizers = None;
    if let Some(data) = o.data.as_object_mut() {
        data.remove("status");
    }
    o
}

/// The namespaces the namespaced objects live in, as they are (a cluster namespace keeps the
/// label that tells the hub it is that cluster's).
async fn namespaces_of(
    client: &kube::Client,
    objects: &[DynamicObject],
) -> anyhow::Result<Vec<DynamicObject>> {
    let names: BTreeSet<&str> = objects
        .iter()
        .filter_map(|o| o.metadata.namespace.as_deref())
        .collect();
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let mut out = Vec::new();
    for name in names {
        let Some(ns) = api
            .get_opt(name)
            .await
            .with_context(|| format!("reading namespace {name}"))?
        else {
            continue;
        };
        let mut o = cleaned(crate::apply::to_dynamic(&ns), "", "v1", "Namespace");
        if let Some(data) = o.data.as_object_mut() {
            data.remove("spec");
        }
        out.push(o);
    }
    Ok(out)
}

/// The ClusterRoles add-on templates grant their agents on the hub (`hubPermissions`).
async fn template_roles(
    client: &kube::Client,
    objects: &[DynamicObject],
) -> anyhow::Result<Vec<DynamicObject>> {
    let mut names = BTreeSet::new();
    for template in objects.iter().filter(|o| kind_of(o) == "AddOnTemplate") {
        let registrations = template.data["spec"]["registration"].as_array().cloned();
        for permission in registrations
            .unwrap_or_default()
            .iter()
            .filter_map(|r| r["kubeClient"]["hubPermissions"].as_array().cloned())
            .flatten()
        {
            if let Some(name) = permission["currentCluster"]["clusterRoleName"].as_str() {
                names.insert(name.to_owned());
            }
            let role_ref = &permission["singleNamespace"]["roleRef"];
            if role_ref["kind"] == "ClusterRole"
                && let Some(name) = role_ref["name"].as_str()
            {
                names.insert(name.to_owned());
            }
        }
    }
    let api: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(client.clone());
    let mut out = Vec::new();
    for name in names {
        if let Some(role) = api
            .get_opt(&name)
            .await
            .with_context(|| format!("reading ClusterRole {name}"))?
        {
            let role = crate::apply::to_dynamic(&role);
            out.push(cleaned(
                role,
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRole",
            ));
        }
    }
    Ok(out)
}

/// `3 ManagedClusters, 2 ManifestWorks, …` for messages.
#[must_use]
pub fn summary(objects: &[DynamicObject]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for o in objects {
        let kind = kind_of(o).to_owned();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    if counts.is_empty() {
        return "no objects".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n} {k}{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(json: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn what_controllers_make_is_left_out_and_server_fields_are_dropped() {
        let owned = object(serde_json::json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "addon-x-deploy-0", "namespace": "c1",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ManagedClusterAddOn", "name": "x", "uid": "u"}]},
        }));
        let replica = object(serde_json::json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "r", "namespace": "c1", "labels": {REPLICA_SET_LABEL: "ns.r"}},
        }));
        let mine = object(serde_json::json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "w", "namespace": "c1", "uid": "u1", "resourceVersion": "7",
                "finalizers": ["cluster.open-cluster-management.io/manifest-work-cleanup"]},
            "spec": {"workload": {"manifests": []}},
            "status": {"conditions": []},
        }));
        assert!(generated(&owned) && generated(&replica) && !generated(&mine));
        let addon = object(serde_json::json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
            "metadata": {"name": "x", "namespace": "c1",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ClusterManagementAddOn", "name": "x", "uid": "u"}]},
        }));
        assert!(
            !generated(&addon),
            "an add-on enabled by hand is the user's"
        );
        let clean = cleaned(
            mine,
            "work.open-cluster-management.io",
            "v1",
            "ManifestWork",
        );
        assert_eq!(clean.metadata.uid, None);
        assert_eq!(clean.metadata.resource_version, None);
        assert_eq!(clean.metadata.finalizers, None);
        assert!(clean.data.get("status").is_none());
        assert!(clean.data.get("spec").is_some());
        assert_eq!(summary(&[clean.clone(), clean]), "2 ManifestWorks");
    }
}
