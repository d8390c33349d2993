//! Per ManagedClusterAddOn of the add-on: the agent's ManifestWork, the registrations and health
//! mode in its status, the hub RoleBinding of its identity, and `ManifestApplied` /
//! `RegistrationApplied` from what was done. Everything the add-on makes on a cluster is owned by
//! its ManagedClusterAddOn, so disabling the add-on removes it (the garbage collector); a Hosted
//! add-on's hosting work, in another namespace, is removed by the framework ([`crate::hosting`]).
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource as _, ResourceExt as _};
use serde_json::{Value, json};

use crate::hosting;
use crate::{AgentAddon, Health};
use ocm_api::addon::hosted::{by_cluster, validity};
use ocm_api::addon::{
    ADDON_NAME_LABEL, ADDON_NAMESPACE_LABEL, HOSTING_MANIFEST_APPLIED, ManagedClusterAddOn,
    RegistrationConfig,
};
use ocm_api::cluster::ManagedCluster;
use ocm_api::conditions::{self, FALSE, TRUE};
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::work::ManifestWork;
use ocm_runtime::Shutdown;
use ocm_runtime::controller::Runner;
use ocm_runtime::identity::addon::default_group;

/// How often a ManagedClusterAddOn is looked at again without a change (its work's changes wake
/// it anyway): what someone else changed of its objects is put back by then.
const RESYNC: Duration = Duration::from_secs(300);

struct Context<A> {
    client: Client,
    addon: Arc<A>,
}

/// The field manager of what the framework writes for `addon`.
pub(crate) fn manager(addon: &str) -> String {
    format!("{addon}-addon-manager")
}

pub(crate) async fn run<A: AgentAddon>(
    client: Client,
    addon: Arc<A>,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let name = addon.name().to_owned();
    let addons: Api<ManagedClusterAddOn> = Api::all(client.clone());
    let works: Api<ManifestWork> = Api::all(client.clone());
    let ctx = Arc::new(Context { client, addon });
    // Both works carry the add-on's label: the deploy work is in its cluster's namespace, a
    // hosting work names its cluster in another label.
    let watched = name.clone();
    let controller = Controller::new(
        addons,
        watcher::Config::default().fields(&format!("metadata.name={name}")),
    )
    .watches(
        works,
        watcher::Config::default().labels(&format!("{ADDON_NAME_LABEL}={name}")),
        move |work: ManifestWork| {
            let cluster = work
                .labels()
                .get(ADDON_NAMESPACE_LABEL)
                .cloned()
                .or_else(|| work.namespace())?;
            Some(ObjectRef::new(&watched).within(&cluster))
        },
    );
    Runner::new("add-on framework: deploy", controller)
        .run(
            |mca, ctx| async move { reconcile(mca, ctx).await.map_err(crate::Failed) },
            ctx,
            shutdown,
        )
        .await;
    Ok(())
}

async fn reconcile<A: AgentAddon>(
    mca: Arc<ManagedClusterAddOn>,
    ctx: Arc<Context<A>>,
) -> anyhow::Result<Action> {
    let cluster = mca.namespace().unwrap_or_default();
    if mca.metadata.deletion_timestamp.is_some() {
        return released(&ctx.client, ctx.addon.name(), &mca).await;
    }
    let Some(managed) = Api::<ManagedCluster>::all(ctx.client.clone())
        .get_opt(&cluster)
        .await?
    else {
        return Ok(Action::requeue(RESYNC));
    };
    let addon = &*ctx.addon;
    let owner = mca
        .controller_owner_ref(&())
        .map(|mut o| {
            o.block_owner_deletion = Some(true);
            o
        })
        .ok_or_else(|| anyhow::anyhow!("the ManagedClusterAddOn has no uid"))?;
    let registration = addon.registration();
    let registrations = registrations(&registration);
    if let Some(role) = registration
        .hub_client
        .as_ref()
        .and_then(|h| h.cluster_role.as_deref())
    {
        bind(&ctx.client, addon.name(), &cluster, role, &owner).await?;
    }
    let hosting_cluster = if addon.hosted_mode() {
        mca.hosting_cluster()
    } else {
        None
    };
    let (manifests, hosting_manifests) = match addon
        .manifests(&managed, &mca)
        .and_then(|m| by_cluster(m, hosting_cluster.is_some()).map_err(anyhow::Error::msg))
    {
        Ok((managed, hosting)) => (Ok(managed), hosting),
        Err(e) => (Err(e), None),
    };
    let hosted_conditions = hosting_side(
        &ctx.client,
        addon.name(),
        &mca,
        hosting_cluster,
        hosting_manifests,
    )
    .await?;
    let applied = match manifests {
        // Nothing to deploy (the hub refuses an empty work): none, and nothing left of one.
        Ok(manifests) if manifests.is_empty() => {
            remove_work(&ctx.client, addon.name(), &cluster).await?;
            Ok(None)
        }
        Ok(manifests) => apply_work(&ctx.client, addon.name(), &cluster, manifests, &owner)
            .await
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) => Err(format!("the add-on's manifests: {e:#}")),
    };
    let manifest_applied = manifest_applied(&applied);
    // An empty list is left out: the API server drops it, so it would never read back equal.
    let mut status = json!({
        "namespace": addon.install_namespace(),
        "healthCheck": {"mode": match addon.health() {
            Health::Lease => "Lease",
            Health::Customized => "Customized",
        }},
        "conditions": [condition(&mca, "ManifestApplied", manifest_applied)],
    });
    status["conditions"]
        .as_array_mut()
        .expect("a list")
        .extend(hosted_conditions);
    if !registrations.is_empty() {
        status["registrations"] = json!(registrations);
        status["conditions"]
            .as_array_mut()
            .expect("a list")
            .push(condition(
                &mca,
                "RegistrationApplied",
                (
                    TRUE,
                    "SetPermissionApplied",
                    "the agent's identities are registered".into(),
                ),
            ));
    }
    if !holds(&mca, &status) {
        let field_manager = manager(addon.name());
        patch_status(&ctx.client, addon.name(), &cluster, &field_manager, status).await?;
    }
    applied.map_err(anyhow::Error::msg)?;
    Ok(Action::requeue(RESYNC))
}

/// A deleted add-on: a hosting work goes before the add-on does.
async fn released(
    client: &Client,
    addon: &str,
    mca: &ManagedClusterAddOn,
) -> anyhow::Result<Action> {
    if hosting::holds(mca) {
        let cluster = mca.namespace().unwrap_or_default();
        if !hosting::remove_works(client, addon, &cluster, None).await? {
            return Ok(Action::requeue(Duration::from_secs(2)));
        }
        hosting::set_finalizer(client, mca, false).await?;
    }
    Ok(Action::await_change())
}

/// `ManifestApplied` from the deploy work (none: no manifests).
fn manifest_applied(
    applied: &Result<Option<ManifestWork>, String>,
) -> (&'static str, &'static str, String) {
    match applied {
        Ok(None) => (
            TRUE,
            "AddonManifestApplied",
            "the add-on has no manifests".into(),
        ),
        Ok(Some(work)) if conditions::is_true(work_conditions(work), conditions::APPLIED) => (
            TRUE,
            "AddonManifestApplied",
            "the manifests are applied".into(),
        ),
        Ok(_) => (
            FALSE,
            "ManifestWorkApplyFailed",
            "the work is not applied yet".into(),
        ),
        Err(e) => (FALSE, "ManifestWorkApplyFailed", e.clone()),
    }
}

/// The conditions of the hosting side, when the add-on is Hosted ([`hosted`]); otherwise
/// (or no longer) nothing left on a hosting cluster, and no finalizer once that is so.
async fn hosting_side(
    client: &Client,
    addon: &str,
    mca: &ManagedClusterAddOn,
    hosting_cluster: Option<&str>,
    hosting_manifests: Option<Vec<Value>>,
) -> anyhow::Result<Vec<Value>> {
    if let (Some(hosting), Some(manifests)) = (hosting_cluster, hosting_manifests) {
        return hosted(client, addon, mca, hosting, manifests).await;
    }
    let cluster = mca.namespace().unwrap_or_default();
    if hosting::holds(mca) && hosting::remove_works(client, addon, &cluster, None).await? {
        hosting::set_finalizer(client, mca, false).await?;
    }
    Ok(Vec::new())
}

/// The hosting side of a Hosted add-on: the finalizer, the hosting work on a valid hosting
/// cluster (none elsewhere), and the conditions `HostingClusterValidity` and, once the work is
/// reported, `HostingManifestApplied`.
async fn hosted(
    client: &Client,
    addon: &str,
    mca: &ManagedClusterAddOn,
    hosting: &str,
    manifests: Vec<Value>,
) -> anyhow::Result<Vec<Value>> {
    let cluster = mca.namespace().unwrap_or_default();
    if !hosting::holds(mca) {
        // Written before any hosting work, so none can outlive the add-on.
        hosting::set_finalizer(client, mca, true).await?;
    }
    let valid = Api::<ManagedCluster>::all(client.clone())
        .get_opt(hosting)
        .await?
        .is_some_and(|c| c.metadata.deletion_timestamp.is_none());
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let validity = validity(hosting, valid, &now);
    let mut out = vec![condition(
        mca,
        &validity.type_,
        (&validity.status, &validity.reason, validity.message.clone()),
    )];
    let keep = (valid && !manifests.is_empty()).then_some(hosting);
    hosting::remove_works(client, addon, &cluster, keep).await?;
    if keep.is_some() {
        let work = hosting::apply_work(client, addon, &cluster, hosting, manifests).await?;
        if let Some(applied) = conditions::find(work_conditions(&work), conditions::APPLIED) {
            let (status, reason, message) = if applied.status == TRUE {
                (
                    TRUE,
                    "AddonManifestApplied",
                    "manifests of addon are applied successfully",
                )
            } else {
                (
                    FALSE,
                    "AddonManifestAppliedFailed",
                    "failed to apply the manifests of addon",
                )
            };
            out.push(condition(
                mca,
                HOSTING_MANIFEST_APPLIED,
                (status, reason, message.into()),
            ));
        }
    }
    Ok(out)
}

/// Whether `mca`'s status already holds everything in `status` (conditions by type, status,
/// reason and message), so no write is needed.
fn holds(mca: &ManagedClusterAddOn, status: &Value) -> bool {
    let Ok(current) = serde_json::to_value(&mca.status) else {
        return false;
    };
    let same_condition = |want: &Value| {
        current["conditions"].as_array().is_some_and(|have| {
            have.iter().any(|c| {
                ["type", "status", "reason", "message"]
                    .iter()
                    .all(|k| c[k] == want[k])
            })
        })
    };
    status.as_object().is_some_and(|fields| {
        fields.iter().all(|(k, want)| match k.as_str() {
            "conditions" => want
                .as_array()
                .is_some_and(|w| w.iter().all(same_condition)),
            _ => current[k] == *want,
        })
    })
}

/// The identities of `registration`, as the ManagedClusterAddOn's status lists them.
pub(crate) fn registrations(registration: &crate::Registration) -> Vec<RegistrationConfig> {
    let mut out = Vec::new();
    if registration.hub_client.is_some() {
        out.push(RegistrationConfig {
            signer_name: CLIENT_SIGNER.into(),
            subject: None,
        });
    }
    if let Some(custom) = &registration.custom_signer {
        out.push(RegistrationConfig {
            signer_name: custom.signer_name.clone(),
            subject: None,
        });
    }
    out
}

fn work_conditions(work: &ManifestWork) -> &[conditions::Condition] {
    work.status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default()
}

/// Condition `type_` as it should be, keeping its transition time while its status holds.
fn condition(
    mca: &ManagedClusterAddOn,
    type_: &str,
    (status, reason, message): (&str, &str, String),
) -> Value {
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let mut current = mca
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    conditions::set(
        &mut current,
        conditions::new(type_, status, reason, message, &now),
    );
    let c = conditions::find(&current, type_).expect("just set");
    serde_json::to_value(c).expect("a condition serializes")
}

/// Deletes the add-on's work on `cluster`, if there is one.
async fn remove_work(client: &Client, addon: &str, cluster: &str) -> Result<(), kube::Error> {
    let works = Api::<ManifestWork>::namespaced(client.clone(), cluster);
    match works
        .delete(&work_name(addon), &kube::api::DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// The add-on's deploy work's name (upstream's).
fn work_name(addon: &str) -> String {
    format!("addon-{addon}-deploy-0")
}

async fn apply_work(
    client: &Client,
    addon: &str,
    cluster: &str,
    manifests: Vec<Value>,
    owner: &k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
) -> Result<ManifestWork, kube::Error> {
    let name = work_name(addon);
    let work = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": cluster,
            "labels": {ADDON_NAME_LABEL: addon}, "ownerReferences": [owner]},
        "spec": {"workload": {"manifests": manifests}},
    });
    Api::<ManifestWork>::namespaced(client.clone(), cluster)
        .patch(
            &name,
            &PatchParams::apply(&manager(addon)).force(),
            &Patch::Apply(&work),
        )
        .await
}

/// Binds `role` to the add-on's identity on `cluster`, in the cluster's namespace.
async fn bind(
    client: &Client,
    addon: &str,
    cluster: &str,
    role: &str,
    owner: &k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
) -> Result<(), kube::Error> {
    let name = format!("open-cluster-management:{addon}:agent");
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": cluster,
            "labels": {ADDON_NAME_LABEL: addon}, "ownerReferences": [owner]},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
            "name": default_group(cluster, addon)}],
    });
    Api::<k8s_openapi::api::rbac::v1::RoleBinding>::namespaced(client.clone(), cluster)
        .patch(
            &name,
            &PatchParams::apply(&manager(addon)).force(),
            &Patch::Apply(&binding),
        )
        .await?;
    Ok(())
}

/// Server-side applies `status` to the add-on's ManagedClusterAddOn on `cluster` as
/// `field_manager` (each writer its own, so none drops what another set).
async fn patch_status(
    client: &Client,
    addon: &str,
    cluster: &str,
    field_manager: &str,
    status: Value,
) -> Result<(), kube::Error> {
    let body = json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
        "metadata": {"name": addon, "namespace": cluster},
        "status": status,
    });
    Api::<ManagedClusterAddOn>::namespaced(client.clone(), cluster)
        .patch_status(
            addon,
            &PatchParams::apply(field_manager).force(),
            &Patch::Apply(&body),
        )
        .await?;
    Ok(())
}

/// Sets one condition of the add-on on `cluster`, as its own field manager.
pub(crate) async fn set_condition(
    client: &Client,
    addon: &str,
    cluster: &str,
    type_: &str,
    (status, reason, message): (&str, &str, &str),
) -> Result<(), kube::Error> {
    let mca = Api::<ManagedClusterAddOn>::namespaced(client.clone(), cluster)
        .get(addon)
        .await?;
    let c = condition(&mca, type_, (status, reason, message.to_owned()));
    let field_manager = format!("{}-{}", manager(addon), type_.to_lowercase());
    patch_status(
        client,
        addon,
        cluster,
        &field_manager,
        json!({"conditions": [c]}),
    )
    .await
}
