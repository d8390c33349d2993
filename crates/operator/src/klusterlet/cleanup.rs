//! Cleanup when a Klusterlet goes: every object its build step can produce (agents, RBAC,
//! namespaces with the bootstrap and hub kubeconfig secrets, managed CRDs), each deletion waited
//! on and bounded. Run by the loop behind the Klusterlet's finalizer, and by `unjoin` directly
//! ([`cleanup`]) when no operator is running to do it.
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt as _};

use super::InProcess;
use super::desired::build;
use super::observe::external_managed_client;
use super::validate::{self, Validated};
use ocm_api::names::EXTERNAL_MANAGED_SECRET;
use ocm_api::operator::{
    KLUSTERLET_FINALIZER, KLUSTERLET_HOSTED_FINALIZER, Klusterlet, KlusterletSpec,
};
use ocm_api::work::AppliedManifestWork;
use ocm_runtime::apply::{Resolver, delete};

/// What cleanup needs to know of a Klusterlet; defaults when it is gone or unreadable.
fn settings(name: &str, k: Option<&Klusterlet>) -> Validated {
    let fallback = || {
        let mut blank = Klusterlet::new(name, KlusterletSpec::default());
        blank.metadata.generation = None;
        validate::lenient(&blank).expect("the default Klusterlet is valid")
    };
    k.and_then(|k| validate::lenient(k).ok())
        .unwrap_or_else(fallback)
}

/// Removes what a Klusterlet produced (not the Klusterlet itself, nor its finalizer).
pub async fn remove_objects(
    client: &Client,
    name: &str,
    k: Option<&Klusterlet>,
    timeout: Duration,
) -> anyhow::Result<()> {
    let v = settings(name, k);
    let desired = build(&v, InProcess::default());
    let management = desired.management.to_dynamic();
    // The agents stop first: the RBAC they act with, on either cluster, goes after them, so a
    // stopping agent meets no refusal. Boxed: the wait is a large future, and every caller of
    // this one carries it.
    Box::pin(stop_agents(client, &management, timeout.min(AGENTS_STOP))).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &v.agent_namespace);
    let managed = if !v.hosted {
        Some(client.clone())
    } else if k.is_some_and(super::hosted_finalizer::present) {
        // Objects may be on the managed cluster: removed through the Secret, waited for (as
        // upstream's; it may come back, or the removal be given up by hand).
        let managed = external_managed_client(&secrets).await.map_err(|e| {
            anyhow::anyhow!(
                "waiting to reach the managed cluster, where the agents' objects are removed: {e} \
                 (create secret {EXTERNAL_MANAGED_SECRET} in namespace {ns} again, or remove \
                 finalizer {KLUSTERLET_HOSTED_FINALIZER} from the Klusterlet to leave them there)",
                ns = v.agent_namespace
            )
        })?;
        Some(managed)
    } else {
        tracing::info!(
            klusterlet = name,
            "nothing was applied on the managed cluster"
        );
        None
    };
    let managed = match (managed, k) {
        (Some(managed), Some(k)) if v.hosted => managed_still_cleaned(client, &managed, k)
            .await?
            .then_some(managed),
        (managed, _) => managed,
    };
    if let Some(managed) = managed {
        let mut objects = desired.managed.to_dynamic();
        // The About API's CRD is the cluster's, not OCM's (other projects state properties
        // there): kept, as upstream keeps it.
        objects.retain(|o| o.metadata.name.as_deref() != Some(ocm_api::about::CRD_NAME));
        let others = others_exist(client, name).await;
        // The add-on namespace is every Klusterlet's of the cluster: kept while another is there
        // (as upstream). Other Klusterlets of a management cluster manage other clusters, so a
        // Hosted one's managed cluster loses it.
        if others && !v.hosted {
            objects.retain(|o| o.metadata.name.as_deref() != Some(ocm_api::names::ADDON_NAMESPACE));
        }
        // The CRDs are shared by every Klusterlet of a management cluster outside Hosted modes.
        if !v.hosted && others {
            objects.retain(|o| {
                o.types
                    .as_ref()
                    .is_none_or(|t| t.kind != "CustomResourceDefinition")
            });
        } else {
            release_applied_works(&managed).await?;
        }
        delete::delete_all(&Resolver::new(managed), &objects, timeout)
            .await
            .map_err(|failures| {
                anyhow::anyhow!(
                    "objects not removed:\n{}",
                    ocm_runtime::apply::list_failures(&failures)
                )
            })
            .with_context(|| {
                format!("removing the agents of Klusterlet {name} from the managed cluster")
            })?;
    }
    delete::delete_all(&Resolver::new(client.clone()), &management, timeout)
        .await
        .map_err(|failures| {
            anyhow::anyhow!(
                "objects not removed:\n{}",
                ocm_runtime::apply::list_failures(&failures)
            )
        })
        .with_context(|| format!("removing the agents of Klusterlet {name}"))?;
    Ok(())
}

/// How long the agents' pods are waited for before their identities go anyway (a pod on a node
/// that is gone never finishes).
const AGENTS_STOP: Duration = Duration::from_secs(60);

/// Deletes the agents' Deployments with their pods (foreground) and waits, within `bound`, until
/// they are gone: the RBAC they act with goes after them, so a running agent meets no refusal.
async fn stop_agents(client: &Client, objects: &[kube::api::DynamicObject], bound: Duration) {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::runtime::wait::{await_condition, conditions};
    let deadline = tokio::time::Instant::now() + bound;
    let deployments = objects
        .iter()
        .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "Deployment"));
    for d in deployments {
        let (name, namespace) = (d.name_any(), d.namespace().unwrap_or_default());
        let api: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
        let uid = match api
            .delete(&name, &kube::api::DeleteParams::foreground())
            .await
        {
            Ok(either) => either.left().and_then(|d| d.metadata.uid),
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => {
                tracing::warn!(deployment = %name, "stopping the agent: {e}");
                continue;
            }
        };
        let uid = uid.unwrap_or_default();
        let gone = await_condition(api, &name, conditions::is_deleted(&uid));
        if tokio::time::timeout_at(deadline, gone).await.is_err() {
            tracing::warn!(deployment = %name, "the agent's pods still run after {bound:?}: removing its identity anyway");
        }
    }
}

/// Upstream's annotation on a Hosted Klusterlet being removed: when the operator first found its
/// managed cluster unreachable.
pub const EVICTION_ANNOTATION: &str =
    "operator.open-cluster-management.io/managed-resources-eviction-timestamp";
/// How long after that the managed cluster's objects are left there (upstream's 5 minutes).
const EVICTION_AFTER: k8s_openapi::jiff::SignedDuration =
    k8s_openapi::jiff::SignedDuration::from_mins(5);

/// Hosted modes: whether the managed cluster's objects are still to be removed. Yes while it
/// answers (a former [`EVICTION_ANNOTATION`] goes). While it cannot be reached: an error, so the
/// removal is retried, until [`EVICTION_AFTER`] past the annotation this sets at the first
/// failure (a destroyed cluster); then no, and the Klusterlet goes with its management side only.
async fn managed_still_cleaned(
    client: &Client,
    managed: &Client,
    k: &Klusterlet,
) -> anyhow::Result<bool> {
    use k8s_openapi::jiff::Timestamp;
    let klusterlets: Api<Klusterlet> = Api::all(client.clone());
    let annotate = |value: Option<String>| {
        let patch = serde_json::json!({"metadata": {"annotations": {EVICTION_ANNOTATION: value}}});
        let klusterlets = klusterlets.clone();
        async move {
            klusterlets
                .patch(
                    &k.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .context("annotating the Klusterlet")
        }
    };
    let since = k
        .annotations()
        .get(EVICTION_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok());
    let works: Api<AppliedManifestWork> = Api::all(managed.clone());
    let unreachable = match works.list_metadata(&ListParams::default().limit(1)).await {
        Ok(_) | Err(kube::Error::Api(_)) => None,
        Err(e) => Some(e),
    };
    let Some(e) = unreachable else {
        if k.annotations().contains_key(EVICTION_ANNOTATION) {
            annotate(None).await?;
        }
        return Ok(true);
    };
    let now = Timestamp::now();
    match since {
        Some(since) if now.duration_since(since) > EVICTION_AFTER => {
            tracing::warn!(klusterlet = %k.name_any(), "the managed cluster was unreachable for {EVICTION_AFTER:#}: leaving its objects there");
            Ok(false)
        }
        Some(_) => anyhow::bail!(
            "the managed cluster is unreachable ({e}); its objects are left there {EVICTION_AFTER:#} after the first failure"
        ),
        None => {
            annotate(Some(Timestamp::from_second(now.as_second())?.to_string())).await?;
            anyhow::bail!(
                "the managed cluster is unreachable ({e}); retrying, and leaving its objects there after {EVICTION_AFTER:#}"
            )
        }
    }
}

async fn others_exist(client: &Client, name: &str) -> bool {
    Api::<Klusterlet>::all(client.clone())
        .list(&ListParams::default())
        .await
        .is_ok_and(|l| l.items.iter().any(|k| k.name_any() != name))
}

/// With no work agent left to release them, AppliedManifestWorks would hold their CRD's deletion
/// forever: drop their finalizers (what they applied stays, as when upstream's agent is removed).
async fn release_applied_works(client: &Client) -> anyhow::Result<()> {
    let api: Api<AppliedManifestWork> = Api::all(client.clone());
    let list = match api.list(&ListParams::default()).await {
        Ok(list) => list,
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
        Err(e) => return Err(e).context("listing AppliedManifestWorks"),
    };
    for work in list.items.iter().filter(|w| !w.finalizers().is_empty()) {
        let patch = serde_json::json!({"metadata": {"finalizers": null}});
        api.patch(
            &work.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .with_context(|| format!("releasing AppliedManifestWork {}", work.name_any()))?;
    }
    Ok(())
}

/// Cleans up after the Klusterlet `name` without an operator: removes what it produced, then its
/// finalizer, so its deletion can complete. Bounded by `timeout` per deletion.
pub async fn cleanup(client: &Client, name: &str, timeout: Duration) -> anyhow::Result<()> {
    let api: Api<Klusterlet> = Api::all(client.clone());
    let k = match api.get_opt(name).await {
        Ok(k) => k,
        Err(kube::Error::Api(s)) if s.code == 404 => None, // the CRD is gone
        Err(e) => return Err(e).with_context(|| format!("reading Klusterlet {name}")),
    };
    remove_objects(client, name, k.as_ref(), timeout).await?;
    if let Some(k) = k {
        let ours = [KLUSTERLET_FINALIZER, KLUSTERLET_HOSTED_FINALIZER];
        super::hosted_finalizer::without(&api, &k, &ours)
            .await
            .with_context(|| format!("removing the finalizer of Klusterlet {name}"))?;
    }
    Ok(())
}

/// Deletes the namespaces labelled as Klusterlet `v`'s on `client`'s cluster but those it uses
/// (`kept`): after `spec.namespace` changed, once the agents are applied in the new one
/// (upstream's namespace reconcile). The add-on namespace stays.
pub async fn remove_stale_namespaces(
    client: &Client,
    v: &Validated,
    kept: &[&str],
) -> Result<(), kube::Error> {
    use k8s_openapi::api::core::v1::Namespace;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let labelled =
        ListParams::default().labels(&format!("{}={}", super::desired::KLUSTERLET_LABEL, v.name));
    for ns in namespaces.list_metadata(&labelled).await? {
        let name = ns.name_any();
        if kept.contains(&name.as_str()) || name == ocm_api::names::ADDON_NAMESPACE {
            continue;
        }
        tracing::info!(klusterlet = %v.name, namespace = %name, "deleting the Klusterlet's former agent namespace");
        match namespaces
            .delete(&name, &kube::api::DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
