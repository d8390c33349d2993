//! What one reconcile of a ManagedClusterAddOn does, decided from what the stores show (no I/O):
//! the [`Step`]s the [`super::writer`] carries out, in order, and what follows them. For an add-on
//! on a cluster: owning it by its ClusterManagementAddOn (as upstream's addon-owner controller),
//! then for a template add-on what the [`super::plan`] wants — its finalizers, hub RoleBindings,
//! deploy and hosting works and status. For a deleted one: its hosting work removed first
//! (nothing else removes it), then its pre-delete hook run ([`crate::addon::template::hook`]);
//! the garbage collector removes the rest.
//!
//! A finalizer change is always the last step: its update wakes the add-on again, with the
//! version the writes after it need.
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::ResourceExt as _;

use super::plan::{self, Hosting, HostingInputs, Inputs};
use crate::addon::install::rollout;
use crate::addon::owner_reference;
use crate::addon::template::{RenderError, hook};
use ocm_api::addon::{
    ADDON_TEMPLATES, AddOnDeploymentConfig, AddOnTemplate, ClusterManagementAddOn,
    ClusterManagementAddOnSpec, ConfigMeta, ConfigReferent, DEPRECATED_PRE_DELETE_HOOK_FINALIZER,
    HOOK_MANIFEST_COMPLETED, HOSTING_MANIFEST_FINALIZER, ManagedClusterAddOn,
    ManagedClusterAddOnStatus, PRE_DELETE_HOOK_FINALIZER,
};
use ocm_api::cluster::ManagedCluster;
use ocm_api::conditions::{self, TRUE};
use ocm_api::work::ManifestWork;

/// How soon an add-on whose hosting cluster the hub does not know looks for it again.
const HOSTING_RETRY: Duration = Duration::from_secs(30);

/// An object one add-on names: its key, and the object if the store has it.
pub type Named<Key, K> = (Key, Option<Arc<K>>);

/// What the stores show of one add-on's world.
pub struct Seen {
    /// Its ClusterManagementAddOn, or the stand-in of a deleted one ([`addon_of`]).
    pub cma: Option<Arc<ClusterManagementAddOn>>,
    /// The AddOnTemplate it uses, by name, and the template if it exists (`None`: not a
    /// template add-on).
    pub template: Option<Named<String, AddOnTemplate>>,
    /// The AddOnDeploymentConfig it uses, by (namespace, name), and the config if it exists.
    pub config: Option<Named<(String, String), AddOnDeploymentConfig>>,
    /// Its deploy work.
    pub work: Option<Arc<ManifestWork>>,
    /// Its managed cluster.
    pub cluster: Option<Arc<ManagedCluster>>,
    /// The hosting cluster it names, if it names one.
    pub hosting: Option<HostingSeen>,
    /// Its pre-delete hook work (looked for only once the add-on is deleted).
    pub hook_work: Option<Arc<ManifestWork>>,
}

/// The hosting cluster a Hosted add-on names, and its hosting work, as the stores show them.
pub struct HostingSeen {
    /// The hosting cluster's name.
    pub name: String,
    /// The hosting cluster, if the hub knows it.
    pub cluster: Option<Arc<ManagedCluster>>,
    /// The add-on's work there.
    pub work: Option<Arc<ManifestWork>>,
}

impl HostingSeen {
    fn inputs(&self) -> HostingInputs<'_> {
        HostingInputs {
            name: &self.name,
            found: self.cluster.is_some(),
            deleting: self
                .cluster
                .as_ref()
                .is_some_and(|c| c.metadata.deletion_timestamp.is_some()),
            work: self.work.as_deref(),
        }
    }
}

/// One write, carried out by the [`super::writer`].
#[derive(Debug)]
pub enum Step {
    /// The add-on's owner references become these (its ClusterManagementAddOn's added). The
    /// steps after it write with the updated add-on; none runs if it changed meanwhile.
    Own(Vec<OwnerReference>),
    /// The add-on's finalizers become these (guarded by its version). Always the last step.
    Finalizers(Vec<String>),
    /// Deletes the add-on's works on any hosting cluster, as the store shows them then.
    DeleteHostingWorks,
    /// Applies a hub RoleBinding of the add-on.
    Binding(Box<RoleBinding>),
    /// Applies a deploy (or hosting) work, the store showing `current`.
    Work {
        /// The work as the store shows it.
        current: Option<Arc<ManifestWork>>,
        /// The work as it should be.
        wanted: Box<ManifestWork>,
    },
    /// Applies the pre-delete hook work.
    HookWork {
        /// The store shows a hook work.
        exists: bool,
        /// The work as it should be.
        wanted: Box<ManifestWork>,
    },
    /// Writes the add-on's status (unless it already is this).
    Status(Box<ManagedClusterAddOnStatus>),
}

/// What follows the steps.
#[derive(Debug)]
pub enum Then {
    /// Nothing until the add-on, or something it is woken by, changes.
    AwaitChange,
    /// Look again after this long.
    Requeue(Duration),
    /// Fail: the template renders to something that is not an object.
    Fail(RenderError),
}

/// One reconcile: the steps in order, then what follows.
#[derive(Debug)]
pub struct Decision {
    /// The writes, in order.
    pub steps: Vec<Step>,
    /// What follows them.
    pub then: Then,
}

impl Decision {
    /// `steps`, then nothing until a change.
    fn awaiting(steps: Vec<Step>) -> Self {
        Self {
            steps,
            then: Then::AwaitChange,
        }
    }
}

/// The ClusterManagementAddOn a reconcile of `mca` works for: the stored one; for a deleted
/// add-on whose ClusterManagementAddOn was deleted too (its add-ons go with it), a stand-in whose
/// default template is the one `mca` last used, so its hook still runs; otherwise none.
#[must_use]
pub fn addon_of(
    mca: &ManagedClusterAddOn,
    stored: Option<Arc<ClusterManagementAddOn>>,
) -> Option<Arc<ClusterManagementAddOn>> {
    stored.or_else(|| {
        mca.metadata
            .deletion_timestamp
            .is_some()
            .then(|| Arc::new(last_used(mca)))
    })
}

/// What one reconcile of `mca` does, from what the stores show (`seen`), at `now`.
#[must_use]
pub fn decide(mca: &ManagedClusterAddOn, seen: &Seen, now: &Time) -> Decision {
    let deleting = mca.metadata.deletion_timestamp.is_some();
    if deleting && has_finalizer(mca, HOSTING_MANIFEST_FINALIZER) {
        // Its work on the hosting cluster first: nothing else removes it. The finalizer's
        // removal wakes the add-on again for its hook.
        return Decision::awaiting(vec![
            Step::DeleteHostingWorks,
            Step::Finalizers(finalizers(mca, HOSTING_MANIFEST_FINALIZER, false)),
        ]);
    }
    if deleting && !has_finalizer(mca, PRE_DELETE_HOOK_FINALIZER) {
        // Nothing to run first: the garbage collector removes what it owns.
        return Decision::awaiting(Vec::new());
    }
    let Some(cma) = &seen.cma else {
        return Decision::awaiting(Vec::new());
    };
    let mut steps = Vec::new();
    if !deleting && let Some(owners) = owners(mca, cma) {
        steps.push(Step::Own(owners));
    }
    let Some((template_name, template)) = &seen.template else {
        // Not a template add-on: its own manager deploys it and runs its pre-delete hook (the Go
        // addon-framework's hook controller holds the same finalizer), so the finalizer is its
        // to drop, as upstream's hub leaves it. Dropping it here skipped the policy add-ons'
        // uninstall pods.
        return Decision::awaiting(steps);
    };
    let planned = plan::plan(&Inputs {
        mca,
        template: Some((template_name.clone(), template.as_deref())),
        config: seen
            .config
            .as_ref()
            .map(|(reference, config)| (reference.clone(), config.as_deref())),
        pinned: rollout::pins(cma),
        work: seen.work.as_deref(),
        cluster: seen.cluster.as_deref(),
        hosting: seen.hosting.as_ref().map(HostingSeen::inputs),
        now,
    });
    let planned = match planned {
        Ok(planned) => planned,
        Err(e) => {
            return Decision {
                steps,
                then: Then::Fail(e),
            };
        }
    };
    if deleting {
        steps.extend(run_hook(mca, seen, planned, now));
        // The hook work's status changes wake this add-on again.
        return Decision::awaiting(steps);
    }
    deploy(mca, seen, planned, steps)
}

/// For a live template add-on, after `steps`: its hook finalizer, bindings, works and status.
fn deploy(
    mca: &ManagedClusterAddOn,
    seen: &Seen,
    mut planned: plan::Plan,
    mut steps: Vec<Step>,
) -> Decision {
    // The finalizer goes with the hook: added before anything could need it, dropped with it
    // (and left as it is while the add-on cannot be rendered: its hooks are unknown then).
    if planned.work.is_some()
        && planned.hook.is_some() != has_finalizer(mca, PRE_DELETE_HOOK_FINALIZER)
    {
        // The update wakes this add-on again, with the version the status write needs.
        steps.push(hook_finalizer(mca, planned.hook.is_some()));
        return Decision::awaiting(steps);
    }
    steps.extend(
        planned
            .bindings
            .into_iter()
            .map(|b| Step::Binding(Box::new(b))),
    );
    if let Some(wanted) = planned.work {
        steps.push(Step::Work {
            current: seen.work.clone(),
            wanted: Box::new(wanted),
        });
    }
    let current = seen.hosting.as_ref().and_then(|h| h.work.clone());
    if hosting(mca, planned.hosting, current, &mut steps) {
        // A finalizer changed: the update wakes this add-on again.
        return Decision::awaiting(steps);
    }
    planned
        .status
        .conditions
        .retain(|c| c.type_ != HOOK_MANIFEST_COMPLETED);
    steps.push(Step::Status(Box::new(planned.status)));
    let then = if seen.hosting.as_ref().is_some_and(|h| h.cluster.is_none()) {
        // A cluster first seen wakes no add-on: look again for the hosting cluster to join.
        Then::Requeue(HOSTING_RETRY)
    } else {
        Then::AwaitChange
    };
    Decision { steps, then }
}

/// The steps that make the add-on's hosting side what the plan says: the finalizer first (then
/// `true`: the update wakes the add-on again), the work applied or removed.
fn hosting(
    mca: &ManagedClusterAddOn,
    wanted: Hosting,
    current: Option<Arc<ManifestWork>>,
    steps: &mut Vec<Step>,
) -> bool {
    let finalized = has_finalizer(mca, HOSTING_MANIFEST_FINALIZER);
    match wanted {
        // Only a finalized add-on ever had a hosting work: the others cost no lookup.
        Hosting::Remove if finalized => {
            steps.push(Step::DeleteHostingWorks);
            steps.push(Step::Finalizers(finalizers(
                mca,
                HOSTING_MANIFEST_FINALIZER,
                false,
            )));
            return true;
        }
        Hosting::Keep | Hosting::Remove => {}
        // Added before a work can go to the hosting cluster.
        Hosting::Deploy(_) if !finalized => {
            steps.push(Step::Finalizers(finalizers(
                mca,
                HOSTING_MANIFEST_FINALIZER,
                true,
            )));
            return true;
        }
        Hosting::Deploy(None) => steps.push(Step::DeleteHostingWorks),
        Hosting::Deploy(Some(wanted)) => steps.push(Step::Work { current, wanted }),
    }
    false
}

/// For a deleted add-on holding the hook finalizer: sends the hook work, reports
/// `HookManifestCompleted`, and releases the add-on once the hook finished (or there is none).
fn run_hook(mca: &ManagedClusterAddOn, seen: &Seen, planned: plan::Plan, now: &Time) -> Vec<Step> {
    let Some(wanted) = planned.hook else {
        return vec![hook_finalizer(mca, false)];
    };
    let condition = hook::condition(seen.hook_work.as_deref().unwrap_or(&wanted), now);
    let mut steps = vec![Step::HookWork {
        exists: seen.hook_work.is_some(),
        wanted: Box::new(wanted),
    }];
    if condition.status == TRUE {
        // Released first, as upstream updates finalizers before status: a status write would
        // move the version this guarded update is made against, and the add-on is going anyway.
        steps.push(hook_finalizer(mca, false));
        return steps;
    }
    let mut status = planned.status;
    conditions::set(&mut status.conditions, condition);
    steps.push(Step::Status(Box::new(status)));
    steps
}

/// The add-on's owner references with `cma`'s added; `None` when `cma` already owns it.
fn owners(mca: &ManagedClusterAddOn, cma: &ClusterManagementAddOn) -> Option<Vec<OwnerReference>> {
    let uid = cma.uid().unwrap_or_default();
    if mca.owner_references().iter().any(|o| o.uid == uid) {
        return None;
    }
    let mut owners = mca.owner_references().to_vec();
    owners.push(owner_reference(cma, false));
    Some(owners)
}

fn has_finalizer(mca: &ManagedClusterAddOn, finalizer: &str) -> bool {
    mca.has_finalizer(finalizer)
}

fn finalizers(mca: &ManagedClusterAddOn, finalizer: &str, present: bool) -> Vec<String> {
    mca.finalizers_with(finalizer, present)
}

/// The hook finalizer added or removed, and the deprecated one dropped, as upstream does.
fn hook_finalizer(mca: &ManagedClusterAddOn, present: bool) -> Step {
    let mut list = finalizers(mca, PRE_DELETE_HOOK_FINALIZER, present);
    list.retain(|f| f != DEPRECATED_PRE_DELETE_HOOK_FINALIZER);
    Step::Finalizers(list)
}

/// A stand-in for a deleted ClusterManagementAddOn: its default template the one `mca` last used.
fn last_used(mca: &ManagedClusterAddOn) -> ClusterManagementAddOn {
    let supported_configs = mca
        .status
        .iter()
        .flat_map(|s| &s.config_references)
        .filter(|r| r.resource == ADDON_TEMPLATES)
        .map(|r| ConfigMeta {
            group: r.group.clone(),
            resource: r.resource.clone(),
            default_config: Some(ConfigReferent {
                namespace: None,
                name: r.name.clone(),
            }),
        })
        .collect();
    ClusterManagementAddOn::new(
        &mca.name_any(),
        ClusterManagementAddOnSpec {
            supported_configs,
            ..ClusterManagementAddOnSpec::default()
        },
    )
}

#[cfg(test)]
mod tests {
    //! A reconcile's steps decided from objects; no cluster.
    use super::*;
    use ocm_api::addon::{
        HOSTED_MANIFEST_LOCATION_KEY, HOSTING_CLUSTER_ANNOTATION, PRE_DELETE_HOOK_KEY,
    };
    use serde_json::{Value, json};

    fn now() -> Time {
        Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
    }

    fn mca(finalizers: &[&str], owned: bool, deleting: bool) -> ManagedClusterAddOn {
        let owners = if owned {
            json!([{"apiVersion": "addon.open-cluster-management.io/v1alpha1",
                "kind": "ClusterManagementAddOn", "name": "hello", "uid": "u1"}])
        } else {
            json!([])
        };
        let mut mca: ManagedClusterAddOn = serde_json::from_value(json!({
            "metadata": {"name": "hello", "namespace": "c1", "uid": "m1",
                "finalizers": finalizers, "ownerReferences": owners},
            "spec": {},
        }))
        .unwrap();
        if deleting {
            mca.metadata.deletion_timestamp = Some(now());
        }
        mca
    }

    fn cma() -> Arc<ClusterManagementAddOn> {
        let mut cma = ClusterManagementAddOn::new("hello", ClusterManagementAddOnSpec::default());
        cma.metadata.uid = Some("u1".into());
        Arc::new(cma)
    }

    fn template(manifests: &[Value]) -> Arc<AddOnTemplate> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": "hello-0.0.1"},
                "spec": {"addonName": "hello", "agentSpec": {"workload": {"manifests": manifests}}},
            }))
            .unwrap(),
        )
    }

    fn deployment(annotations: &Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "agent", "namespace": "ns", "annotations": annotations},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}})
    }

    fn hook_job() -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "cleanup", "namespace": "ns", "annotations": {PRE_DELETE_HOOK_KEY: ""}}})
    }

    fn seen(template: Option<Arc<AddOnTemplate>>) -> Seen {
        Seen {
            cma: Some(cma()),
            template: template.map(|t| ("hello-0.0.1".to_string(), Some(t))),
            config: None,
            work: None,
            cluster: None,
            hosting: None,
            hook_work: None,
        }
    }

    /// The steps by kind, finalizer lists spelled out.
    fn steps(decision: &Decision) -> Vec<String> {
        decision
            .steps
            .iter()
            .map(|s| match s {
                Step::Own(owners) => format!(
                    "own {:?}",
                    owners.iter().map(|o| o.uid.as_str()).collect::<Vec<_>>()
                ),
                Step::Finalizers(f) => format!("finalizers {f:?}"),
                Step::DeleteHostingWorks => "delete hosting works".into(),
                Step::Binding(_) => "binding".into(),
                Step::Work { wanted, .. } => format!("work {}", wanted.name_any()),
                Step::HookWork { wanted, .. } => format!("hook work {}", wanted.name_any()),
                Step::Status(_) => "status".into(),
            })
            .collect()
    }

    #[test]
    fn an_add_on_is_owned_by_its_cluster_management_add_on_once() {
        let got = decide(&mca(&[], false, false), &seen(None), &now());
        assert_eq!(steps(&got), ["own [\"u1\"]"]);
        assert!(matches!(got.then, Then::AwaitChange));
        let got = decide(&mca(&[], true, false), &seen(None), &now());
        assert!(got.steps.is_empty(), "{:?}", steps(&got));
        let mut gone = seen(None);
        gone.cma = None;
        assert!(
            decide(&mca(&[], false, false), &gone, &now())
                .steps
                .is_empty()
        );
    }

    #[test]
    fn the_hook_finalizer_follows_the_templates_hook_and_ends_the_reconcile() {
        let with_hook = template(&[deployment(&json!({})), hook_job()]);
        let got = decide(
            &mca(
                &[DEPRECATED_PRE_DELETE_HOOK_FINALIZER, "other"],
                false,
                false,
            ),
            &seen(Some(with_hook.clone())),
            &now(),
        );
        assert_eq!(
            steps(&got),
            [
                "own [\"u1\"]".to_string(),
                format!("finalizers [\"other\", \"{PRE_DELETE_HOOK_FINALIZER}\"]")
            ]
        );
        let got = decide(
            &mca(&[PRE_DELETE_HOOK_FINALIZER], true, false),
            &seen(Some(with_hook)),
            &now(),
        );
        assert_eq!(steps(&got), ["work addon-hello-deploy-0", "status"]);
        let without = template(&[deployment(&json!({}))]);
        let got = decide(
            &mca(&[PRE_DELETE_HOOK_FINALIZER], true, false),
            &seen(Some(without)),
            &now(),
        );
        assert_eq!(steps(&got), ["finalizers []"]);
    }

    #[test]
    fn a_deleted_add_on_lets_go_of_its_hosting_work_then_runs_its_hook() {
        let hosting_and_hook = [HOSTING_MANIFEST_FINALIZER, PRE_DELETE_HOOK_FINALIZER];
        let got = decide(&mca(&hosting_and_hook, true, true), &seen(None), &now());
        assert_eq!(
            steps(&got),
            [
                "delete hosting works".to_string(),
                format!("finalizers [\"{PRE_DELETE_HOOK_FINALIZER}\"]")
            ]
        );
        let with_hook = template(&[deployment(&json!({})), hook_job()]);
        let deleting = mca(&[PRE_DELETE_HOOK_FINALIZER], true, true);
        let got = decide(&deleting, &seen(Some(with_hook)), &now());
        assert_eq!(steps(&got), ["hook work addon-hello-pre-delete", "status"]);
        let Some(Step::Status(status)) = got.steps.last() else {
            unreachable!()
        };
        let hook = conditions::find(&status.conditions, HOOK_MANIFEST_COMPLETED).unwrap();
        assert_eq!(hook.reason, "HookManifestIsNotCompleted");
        let without = template(&[deployment(&json!({}))]);
        let got = decide(&deleting, &seen(Some(without)), &now());
        assert_eq!(steps(&got), ["finalizers []"], "no hook: released");
        let got = decide(&mca(&[], true, true), &seen(None), &now());
        assert!(
            got.steps.is_empty(),
            "nothing holds it: the garbage collector's"
        );
    }

    #[test]
    fn a_deleted_add_on_of_its_own_manager_keeps_the_hook_finalizer_for_that_manager() {
        let deleting = mca(&[PRE_DELETE_HOOK_FINALIZER], true, true);
        let got = decide(&deleting, &seen(None), &now());
        assert!(
            got.steps.is_empty(),
            "the hook finalizer of a non-template add-on is its own manager's: {:?}",
            steps(&got)
        );
    }

    #[test]
    fn a_deleted_add_on_whose_add_on_is_gone_runs_the_hook_of_the_template_it_last_used() {
        let mut deleting = mca(&[PRE_DELETE_HOOK_FINALIZER], true, true);
        deleting.status = Some(
            serde_json::from_value(json!({"configReferences": [{
                "group": "addon.open-cluster-management.io", "resource": ADDON_TEMPLATES,
                "name": "hello-0.0.1"}]}))
            .unwrap(),
        );
        let stand_in = addon_of(&deleting, None).unwrap();
        assert_eq!(
            crate::addon::template::template_name(&deleting, &stand_in).as_deref(),
            Some("hello-0.0.1")
        );
        assert!(addon_of(&mca(&[], true, false), None).is_none());
    }

    #[test]
    fn a_hosted_add_on_looks_again_for_a_hosting_cluster_the_hub_does_not_know() {
        let hosted = template(&[deployment(
            &json!({HOSTED_MANIFEST_LOCATION_KEY: "hosting"}),
        )]);
        let mut mca = mca(&[], true, false);
        mca.metadata.annotations =
            Some([(HOSTING_CLUSTER_ANNOTATION.to_string(), "h".to_string())].into());
        let mut seen = seen(Some(hosted));
        seen.hosting = Some(HostingSeen {
            name: "h".into(),
            cluster: None,
            work: None,
        });
        let got = decide(&mca, &seen, &now());
        assert_eq!(steps(&got), ["work addon-hello-deploy-0", "status"]);
        assert!(matches!(got.then, Then::Requeue(d) if d == HOSTING_RETRY));
    }
}
