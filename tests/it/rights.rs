//! Every identity our pods run as, with its effective rights as the API server computes them (a
//! SelfSubjectRulesReview made as that identity, its rendered roles applied), against upstream
//! v1.3.1's roles for the components whose work it does (`../shared/reference/ocm-v1.3.1-rbac/`).
//! A right no upstream role of those components holds must be in [`BEYOND_UPSTREAM`], with the
//! reason the README's security section gives; the test prints the table of each identity's
//! rights, and of those beyond upstream's.
use std::collections::BTreeSet;

use clusteradm::operator::cluster_manager::desired::hub;
use clusteradm::runtime::impersonate;
use k8s_openapi::api::authorization::v1::{
    ResourceRule, SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

use crate::common;

const REFERENCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/reference/ocm-v1.3.1-rbac"
);

/// Rights an identity of ours holds that upstream's matching components do not, each with why:
/// `(identity, group, resource, verb, why)`, `*` for every verb.
const BEYOND_UPSTREAM: &[(&str, &str, &str, &str, &str)] = &[
    (
        "grpc server",
        "certificates.k8s.io",
        "certificatesigningrequests/status",
        "patch",
        "it signs the approved CSRs of the gRPC signer, which upstream's registration controller \
         signs (ours has no gRPC CA)",
    ),
    (
        "grpc server",
        "certificates.k8s.io",
        "signers",
        "sign",
        "the gRPC signer only, by name: as above",
    ),
    (
        "agent",
        "authentication.k8s.io",
        "tokenreviews",
        "create",
        "its /metrics authenticates callers (upstream's agents serve no authenticated metrics)",
    ),
    (
        "hub pod",
        "",
        "serviceaccounts",
        "impersonate",
        "upstream's add-on manager's ServiceAccount only, by name: it reads a template add-on's \
         signing CA as that account, whose rights the user grants as upstream documents",
    ),
    (
        "hub pod",
        "cluster.open-cluster-management.io",
        "managedclustersets/join",
        "create",
        "the `default` set only, by name: the registration controller puts a cluster without a \
         set there (upstream's mutating webhook does it in the request), and the admission \
         policy asks the writer of that label for `join`",
    ),
    (
        "hub pod",
        "operator.open-cluster-management.io",
        "clustermanagers",
        "get",
        "the webhooks read the ClusterManager's gates (upstream's get them as flags)",
    ),
    (
        "hub pod",
        "operator.open-cluster-management.io",
        "clustermanagers",
        "list",
        "as `get`: the ClusterManager is watched",
    ),
    (
        "hub pod",
        "operator.open-cluster-management.io",
        "clustermanagers",
        "watch",
        "as `get`: the ClusterManager is watched",
    ),
    (
        "cluster-manager operator",
        "",
        "pods",
        "list",
        "a hosted hub's pods on the management cluster: their addresses go into the hub \
         cluster's Endpoints of the webhooks",
    ),
    (
        "cluster-manager operator",
        "",
        "pods",
        "watch",
        "as `list`: a hosted hub pod's readiness changes those Endpoints",
    ),
    (
        "cluster-manager operator",
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        "*",
        "`init --admission policies`: the hub's admission rules as policies instead of webhooks",
    ),
    (
        "cluster-manager operator",
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        "*",
        "as above: each policy's binding",
    ),
    (
        "cluster-manager operator",
        "networking.k8s.io",
        "networkpolicies",
        "*",
        "the hub pods' NetworkPolicy (only the API server reaches their webhook port)",
    ),
    (
        "cluster-manager operator",
        "rbac.authorization.k8s.io",
        "clusterroles",
        "bind",
        "it grants the hub's components their roles without holding each right itself; \
         upstream's holds them all, and `serviceaccounts/token create` for every ServiceAccount, \
         which ours does not hold",
    ),
    (
        "cluster-manager operator",
        "rbac.authorization.k8s.io",
        "clusterroles",
        "escalate",
        "as `bind`",
    ),
    (
        "cluster-manager operator",
        "rbac.authorization.k8s.io",
        "roles",
        "bind",
        "as for clusterroles",
    ),
    (
        "cluster-manager operator",
        "rbac.authorization.k8s.io",
        "roles",
        "escalate",
        "as for clusterroles",
    ),
    (
        "cluster-manager operator",
        "",
        "secrets",
        "*",
        "by two names of ours only: our hub pods' serving certificate \
         (cluster-manager-hub-serving-cert) and a hosted hub's pods' kubeconfig \
         (cluster-manager-hub-sa-kubeconfig), as upstream's for its components' own",
    ),
    (
        "klusterlet operator",
        "authentication.k8s.io",
        "tokenreviews",
        "create",
        "its /metrics authenticates callers",
    ),
];

/// One right: API group, resource, verb, and the name it is limited to (none: every name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Right {
    group: String,
    resource: String,
    verb: String,
    names: Vec<String>,
}

fn rights_of(rules: &[ResourceRule]) -> BTreeSet<Right> {
    let mut out = BTreeSet::new();
    for rule in rules {
        for group in rule.api_groups.clone().unwrap_or_default() {
            for resource in rule.resources.clone().unwrap_or_default() {
                // One right per name, so a rule's names are judged one by one.
                let names = match rule.resource_names.as_deref() {
                    None | Some([]) => vec![Vec::new()],
                    Some(names) => names.iter().map(|n| vec![n.clone()]).collect(),
                };
                for verb in &rule.verbs {
                    for names in &names {
                        out.insert(Right {
                            group: group.clone(),
                            resource: resource.clone(),
                            verb: verb.clone(),
                            names: names.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Whether `rules` grant `right` (wildcards, and names: a rule limited to names grants only those).
fn granted(right: &Right, rules: &[PolicyRule]) -> bool {
    let has = |list: Option<&Vec<String>>, item: &str| {
        list.is_some_and(|l| l.iter().any(|x| x == "*" || x == item))
    };
    rules.iter().any(|r| {
        has(r.api_groups.as_ref(), &right.group)
            && has(r.resources.as_ref(), &right.resource)
            && (r.verbs.iter().any(|v| v == "*" || *v == right.verb))
            && match r.resource_names.as_deref() {
                None | Some([]) => true,
                Some(names) => {
                    !right.names.is_empty() && right.names.iter().all(|n| names.contains(n))
                }
            }
    })
}

/// The `rules` of the upstream role files named, their template directives dropped (every
/// conditional rule counts: upstream's roles with every feature on).
fn upstream_rules(files: &[&str]) -> Vec<PolicyRule> {
    files
        .iter()
        .flat_map(|file| rules_in(&format!("{REFERENCE}/{file}")))
        .collect()
}

/// The `rules` of every role in the YAML file at `path` (one or more documents), template
/// directives dropped.
fn rules_in(path: &str) -> Vec<PolicyRule> {
    #[derive(serde::Deserialize)]
    struct Rules {
        #[serde(default)]
        rules: Vec<PolicyRule>,
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let body: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("{{"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rules = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&body) {
        let parsed: Option<Rules> =
            serde::Deserialize::deserialize(document).unwrap_or_else(|e| panic!("{path}: {e}"));
        rules.extend(parsed.map(|r| r.rules).unwrap_or_default());
    }
    assert!(!rules.is_empty(), "{path} has no rules");
    rules
}

/// What `user` (a ServiceAccount) may do in `namespaces`, as the API server says, less what
/// every authenticated ServiceAccount may (discovery, self reviews): `baseline`'s.
async fn effective(
    admin: &kube::Client,
    (namespace, name): (&str, &str),
    namespaces: &[&str],
    baseline: &BTreeSet<Right>,
) -> BTreeSet<Right> {
    let (user, groups) = impersonate::service_account(namespace, name);
    let client = impersonate::as_user(admin, &user, &groups);
    let mut out = BTreeSet::new();
    for ns in namespaces {
        let review = SelfSubjectRulesReview {
            spec: SelfSubjectRulesReviewSpec {
                namespace: Some((*ns).to_owned()),
            },
            ..Default::default()
        };
        let status = Api::<SelfSubjectRulesReview>::all(client.clone())
            .create(&PostParams::default(), &review)
            .await
            .unwrap()
            .status
            .unwrap();
        out.extend(rights_of(&status.resource_rules));
    }
    out.retain(|r| !baseline.contains(r));
    out
}

/// The rights of `identity` that `upstream` does not grant, less the listed ones; printed.
/// Whether `right` is a `patch` where `upstream` grants `update` of the same resource: the same
/// write, sent as a merge or server-side-apply patch (ours never replaces whole objects).
fn patch_for_update(right: &Right, upstream: &[PolicyRule]) -> bool {
    right.verb == "patch"
        && granted(
            &Right {
                verb: "update".into(),
                ..right.clone()
            },
            upstream,
        )
}

fn beyond(identity: &str, ours: &BTreeSet<Right>, upstream: &[PolicyRule]) -> Vec<Right> {
    let as_patch: Vec<&Right> = ours
        .iter()
        .filter(|r| !granted(r, upstream) && patch_for_update(r, upstream))
        .collect();
    for r in &as_patch {
        println!(
            "  patch where upstream's hold update: {}/{} {:?}",
            r.group, r.resource, r.names
        );
    }
    let extra: Vec<Right> = ours
        .iter()
        .filter(|r| !granted(r, upstream) && !patch_for_update(r, upstream))
        .filter(|r| {
            !BEYOND_UPSTREAM.iter().any(|(who, g, res, v, _)| {
                *who == identity
                    && r.group == *g
                    && r.resource == *res
                    && (*v == "*" || r.verb == *v)
            })
        })
        .cloned()
        .collect();
    println!(
        "{identity}: {} rights, {} beyond upstream's unlisted",
        ours.len(),
        extra.len()
    );
    for (who, g, res, v, why) in BEYOND_UPSTREAM.iter().filter(|b| b.0 == identity) {
        println!("  listed beyond upstream: {v} {g}/{res}: {why}");
        let _ = who;
    }
    extra
}

async fn apply_roles(client: &kube::Client, objects: Vec<kube::api::DynamicObject>) {
    clusteradm::apply::Applier::new(client.clone(), std::time::Duration::from_secs(30))
        .apply(objects)
        .await
        .unwrap();
}

/// Deletes the cluster-scoped RBAC object `name` of resource `plural`, if it is there.
async fn delete_rbac(client: &kube::Client, plural: &str, name: &str) {
    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", ""),
        plural,
    );
    let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &resource);
    let _ = api.delete(name, &DeleteParams::default()).await;
}

/// A ServiceAccount's rights with no binding at all: what every one of them has.
async fn baseline(admin: &kube::Client) -> BTreeSet<Right> {
    let nobody = common::unique("nobody");
    effective(admin, ("default", &nobody), &["default"], &BTreeSet::new()).await
}

#[tokio::test]
async fn the_hub_pod_holds_nothing_beyond_upstreams_hub_components() {
    let hub = common::hub().await;
    let apply = PatchParams::apply("it-rights").force();
    Api::<ClusterRole>::all(hub.clone())
        .patch(
            hub::CLUSTER_ROLE,
            &apply,
            &Patch::Apply(&hub::cluster_role()),
        )
        .await
        .unwrap();
    Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(hub.clone())
        .patch(
            hub::CLUSTER_ROLE,
            &apply,
            &Patch::Apply(&hub::cluster_role_binding()),
        )
        .await
        .unwrap();
    let baseline = baseline(&hub).await;
    let upstream = upstream_rules(&[
        "cluster-manager__hub__registration__clusterrole.yaml",
        "cluster-manager__hub__placement__clusterrole.yaml",
        "cluster-manager__hub__work__clusterrole.yaml",
        "cluster-manager__hub__addon-manager__clusterrole.yaml",
        "cluster-manager__hub__clusterprofiles__clusterrole.yaml",
        "cluster-manager__hub__registration__webhook-clusterrole.yaml",
        "cluster-manager__hub__work__webhook-clusterrole.yaml",
    ]);
    let sa = ("open-cluster-management-hub", hub::SERVICE_ACCOUNT);
    let ours = common::eventually(
        "the hub pod's role in effect",
        std::time::Duration::from_secs(30),
        || {
            let (hub, baseline) = (hub.clone(), baseline.clone());
            async move {
                let ours = effective(
                    &hub,
                    sa,
                    &["default", "open-cluster-management-hub"],
                    &baseline,
                )
                .await;
                ours.iter()
                    .any(|r| r.resource == "managedclusters")
                    .then_some(ours)
            }
        },
    )
    .await;
    let extra = beyond("hub pod", &ours, &upstream);
    assert!(
        extra.is_empty(),
        "the hub pod holds beyond upstream's: {extra:#?}"
    );
    // What it needs no more than upstream: no Secret but through impersonation.
    assert!(!ours.iter().any(|r| r.resource == "secrets"), "{ours:#?}");
}

/// Upstream's add-on manager's account, as which our hub binds templates' hub permissions:
/// nothing beyond upstream's add-on manager's role, and no Secret (those the user grants it).
#[tokio::test]
async fn the_addon_managers_account_holds_nothing_beyond_upstreams_addon_manager() {
    let hub = common::hub().await;
    apply_roles(
        &hub,
        vec![
            clusteradm::apply::to_dynamic(&hub::addon_manager_cluster_role()),
            clusteradm::apply::to_dynamic(&hub::addon_manager_cluster_role_binding()),
        ],
    )
    .await;
    let baseline = baseline(&hub).await;
    let upstream = upstream_rules(&["cluster-manager__hub__addon-manager__clusterrole.yaml"]);
    let sa = (
        "open-cluster-management-hub",
        clusteradm::api::names::ADDON_MANAGER_SA,
    );
    let ours = common::eventually(
        "the add-on manager's role in effect",
        std::time::Duration::from_secs(30),
        || {
            let (hub, baseline) = (hub.clone(), baseline.clone());
            async move {
                let ours = effective(&hub, sa, &["default"], &baseline).await;
                ours.iter()
                    .any(|r| r.resource == "rolebindings")
                    .then_some(ours)
            }
        },
    )
    .await;
    let extra = beyond("add-on manager", &ours, &upstream);
    assert!(extra.is_empty(), "beyond upstream's: {extra:#?}");
    assert!(!ours.iter().any(|r| r.resource == "secrets"), "{ours:#?}");
    // Binding is all it writes of RBAC: no role of its own making, no `bind` or `escalate`; and
    // it makes no identity (no ServiceAccount written, no token requested).
    assert!(
        !ours
            .iter()
            .any(|r| r.resource == "roles" || r.verb == "bind" || r.verb == "escalate"),
        "{ours:#?}"
    );
    assert!(
        !ours
            .iter()
            .any(|r| r.resource.starts_with("serviceaccounts")
                && !["get", "list", "watch"].contains(&r.verb.as_str())),
        "{ours:#?}"
    );
}

#[tokio::test]
async fn our_agent_holds_nothing_beyond_upstreams_agents_on_the_managed_cluster() {
    use clusteradm::operator::klusterlet::{InProcess, desired, validate};
    let managed = common::managed().await;
    let name = common::unique("rights");
    let klusterlet: clusteradm::api::operator::Klusterlet =
        serde_json::from_value(serde_json::json!({
            "apiVersion": "operator.open-cluster-management.io/v1", "kind": "Klusterlet",
            "metadata": {"name": name},
            "spec": {
                "clusterName": name,
                "namespace": name,
                "registrationImagePullSpec": "example.com/clusteradm:v1",
                "workImagePullSpec": "example.com/clusteradm:v1",
            },
        }))
        .unwrap();
    let v = validate::validate(&klusterlet).unwrap();
    let d = desired::build(&v, InProcess::default());
    // The roles and bindings only (no Deployment: no pod is wanted here).
    let rbac = |o: &kube::api::DynamicObject| {
        let kind = o
            .types
            .as_ref()
            .map(|t| t.kind.as_str())
            .unwrap_or_default();
        matches!(
            kind,
            "Namespace"
                | "ServiceAccount"
                | "ClusterRole"
                | "ClusterRoleBinding"
                | "Role"
                | "RoleBinding"
        )
    };
    let objects: Vec<_> = d
        .managed_objects()
        .into_iter()
        .chain(d.management_objects())
        .filter(rbac)
        .collect();
    apply_roles(&managed, objects.clone()).await;
    let baseline = baseline(&managed).await;
    // Upstream's agents' roles, the built-in `admin` it binds, and what the aggregate role
    // gathers on this cluster (upstream's aggregates the same label).
    let mut upstream = upstream_rules(&[
        "klusterlet__managed__klusterlet-registration-clusterrole.yaml",
        "klusterlet__managed__klusterlet-registration-clusterrole-addon-management.yaml",
        "klusterlet__managed__klusterlet-work-clusterrole.yaml",
        "klusterlet__managed__klusterlet-work-clusterrole-execution.yaml",
        "klusterlet__management__klusterlet-registration-clusterrole-addon-management.yaml",
    ]);
    let roles = Api::<ClusterRole>::all(managed.clone());
    upstream.extend(roles.get("admin").await.unwrap().rules.unwrap_or_default());
    let aggregated = roles
        .list(&ListParams::default().labels("open-cluster-management.io/aggregate-to-work=true"))
        .await
        .unwrap();
    upstream.extend(
        aggregated
            .items
            .into_iter()
            .flat_map(|r| r.rules.unwrap_or_default()),
    );
    // Its namespace's own Roles (leases, its secrets, events): upstream's management Roles hold
    // the same, in the agent namespace only.
    // Default mode: upstream's two identities, whose rights together are compared.
    let mut ours = BTreeSet::new();
    for (agent, does) in [("registration", "nodes"), ("work", "appliedmanifestworks")] {
        let sa = (name.as_str(), format!("{name}-{agent}-sa"));
        let rights = common::eventually(
            "the agent's roles in effect",
            std::time::Duration::from_secs(30),
            || {
                let (managed, baseline, sa) = (managed.clone(), baseline.clone(), sa.clone());
                async move {
                    let ours =
                        effective(&managed, (sa.0, &sa.1), &["default", sa.0], &baseline).await;
                    ours.iter().any(|r| r.resource == does).then_some(ours)
                }
            },
        )
        .await;
        ours.extend(rights);
    }
    let extra = beyond("agent", &ours, &upstream);
    for o in &objects {
        let kind = &o.types.as_ref().unwrap().kind;
        if kind == "ClusterRole" || kind == "ClusterRoleBinding" {
            let plural = format!("{}s", kind.to_lowercase());
            delete_rbac(&managed, &plural, o.metadata.name.as_deref().unwrap()).await;
        }
    }
    let _ = Api::<k8s_openapi::api::core::v1::Namespace>::all(managed.clone())
        .delete(&name, &DeleteParams::default())
        .await;
    assert!(
        extra.is_empty(),
        "the agent holds beyond upstream's: {extra:#?}"
    );
}

#[tokio::test]
async fn the_bootstrap_credential_holds_nothing_beyond_upstreams_bootstrap_role() {
    // Our bootstrap role as init renders it (the template has no variables).
    let extra = template_role_beyond_upstream(
        "bootstrap",
        "hub-bootstrap/00-clusterrole.yaml.j2",
        "certificatesigningrequests",
        "cluster-manager-chart__bootstrap_cluster_role.yaml",
    )
    .await;
    assert!(
        extra.is_empty(),
        "the bootstrap credential holds beyond upstream's: {extra:#?}"
    );
}

#[tokio::test]
async fn the_grpc_servers_role_holds_nothing_beyond_upstreams_grpc_server() {
    let extra = template_role_beyond_upstream(
        "grpc server",
        "grpc-server/clusterrole.yaml",
        "subjectaccessreviews",
        "cluster-manager__hub__grpc-server__clusterrole.yaml",
    )
    .await;
    assert!(
        extra.is_empty(),
        "the gRPC server holds beyond upstream's: {extra:#?}"
    );
}

/// The rights the ClusterRole in `templates/<template>` gives (bound to a fresh ServiceAccount
/// under a name of the test's; `witness`, a resource it grants, tells it is in effect) beyond
/// upstream's role file `upstream` and the listed ones.
async fn template_role_beyond_upstream(
    identity: &str,
    template: &str,
    witness: &str,
    upstream: &str,
) -> Vec<Right> {
    let hub = common::hub().await;
    let path = format!("{}/templates/{template}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let role: ClusterRole = serde_yaml::from_str(&text).unwrap();
    let name = common::unique(&format!("rights-{}", identity.replace(' ', "-")));
    let ours = effective_as_bound(&hub, role, &name, &["default"], witness).await;
    beyond(identity, &ours, &upstream_rules(&[upstream]))
}

/// With upstream's images our operator deploys upstream's components: each is given no right
/// the matching upstream role does not hold (read from the rendered roles, no cluster needed).
#[test]
fn upstreams_components_from_our_operator_hold_no_more_than_upstreams_roles() {
    use clusteradm::operator::cluster_manager::desired::Component;
    use clusteradm::operator::cluster_manager::desired::rbac::rules;
    let mut beyond_upstream = Vec::new();
    for c in Component::ALL {
        let file = match c {
            Component::RegistrationController => {
                "cluster-manager__hub__registration__clusterrole.yaml"
            }
            Component::RegistrationWebhook => {
                "cluster-manager__hub__registration__webhook-clusterrole.yaml"
            }
            Component::WorkWebhook => "cluster-manager__hub__work__webhook-clusterrole.yaml",
            Component::PlacementController => "cluster-manager__hub__placement__clusterrole.yaml",
            Component::AddonManager => "cluster-manager__hub__addon-manager__clusterrole.yaml",
            Component::WorkController => "cluster-manager__hub__work__clusterrole.yaml",
            // Upstream gives its add-on webhook no role; ours has none either.
            Component::AddonWebhook => {
                assert!(rules(c).is_empty());
                continue;
            }
        };
        let upstream = upstream_rules(&[file]);
        let ours: Vec<ResourceRule> = rules(c)
            .into_iter()
            .map(|r| ResourceRule {
                api_groups: r.api_groups,
                resources: r.resources,
                resource_names: r.resource_names,
                verbs: r.verbs,
            })
            .collect();
        for right in rights_of(&ours) {
            if !granted(&right, &upstream) && !patch_for_update(&right, &upstream) {
                beyond_upstream.push(format!(
                    "{c:?}: {} {}/{}",
                    right.verb, right.group, right.resource
                ));
            }
        }
    }
    assert!(beyond_upstream.is_empty(), "{beyond_upstream:#?}");
}

/// Our operators' roles as `init --image` and `join --image` deploy them, each bound under a name
/// of this test's to a ServiceAccount of its own: `(identity, role)`.
fn our_operator_roles() -> Vec<(&'static str, ClusterRole)> {
    use clusteradm::install::{hub as init, klusterlet as join};
    let role = |objects: Vec<kube::api::DynamicObject>, name: &str| -> ClusterRole {
        let object = objects
            .into_iter()
            .find(|o| {
                o.types.as_ref().is_some_and(|t| t.kind == "ClusterRole")
                    && o.metadata.name.as_deref() == Some(name)
            })
            .unwrap_or_else(|| panic!("the operator's ClusterRole {name}"));
        serde_json::from_value(serde_json::to_value(object).unwrap()).unwrap()
    };
    let ours = "registry.example/clusteradm:v1";
    let hub = init::plan(&init::InitOptions {
        single_image: Some(ours.into()),
        ..init::InitOptions::default()
    })
    .unwrap();
    let klusterlet =
        join::operator_objects(ours, true, &join::OperatorSettings::default()).unwrap();
    vec![
        ("cluster-manager operator", role(hub, "cluster-manager")),
        ("klusterlet operator", role(klusterlet, "klusterlet")),
    ]
}

/// Binds `role` under `name` to ServiceAccount `default/name` and returns its effective rights
/// in `namespaces` once the API server applies it (they hold `witness`, a resource the role
/// grants), the role and binding removed again.
async fn effective_as_bound(
    hub: &kube::Client,
    mut role: ClusterRole,
    name: &str,
    namespaces: &[&str],
    witness: &str,
) -> BTreeSet<Right> {
    role.metadata = kube::api::ObjectMeta {
        name: Some(name.to_owned()),
        ..Default::default()
    };
    let apply = PatchParams::apply("it-rights").force();
    Api::<ClusterRole>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding: k8s_openapi::api::rbac::v1::ClusterRoleBinding =
        serde_json::from_value(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
        }))
        .unwrap();
    Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(hub.clone())
        .patch(name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    let baseline = baseline(hub).await;
    let ours = common::eventually(
        "the role in effect",
        std::time::Duration::from_secs(30),
        || {
            let (hub, baseline) = (hub.clone(), baseline.clone());
            async move {
                let ours = effective(&hub, ("default", name), namespaces, &baseline).await;
                ours.iter().any(|r| r.resource == witness).then_some(ours)
            }
        },
    )
    .await;
    for plural in ["clusterrolebindings", "clusterroles"] {
        delete_rbac(hub, plural, name).await;
    }
    ours
}

/// Each operator holds Secrets only by the names of those it makes or reads (and `create`,
/// which names nothing), as upstream's operators do: not the bootstrap token's, not any other.
#[tokio::test]
async fn the_operators_hold_secrets_only_by_their_names() {
    let hub = common::hub().await;
    let namespaces = ["default", "kube-system", "open-cluster-management"];
    for (identity, role) in our_operator_roles() {
        let name = common::unique("rights-operator");
        let ours = effective_as_bound(&hub, role, &name, &namespaces, "deployments").await;
        let secrets: Vec<&Right> = ours.iter().filter(|r| r.resource == "secrets").collect();
        let known = match identity {
            "cluster-manager operator" => clusteradm::operator::cluster_manager::SECRETS,
            _ => clusteradm::operator::klusterlet::SECRETS,
        };
        let unnamed: Vec<&&Right> = secrets
            .iter()
            .filter(|r| r.verb != "create" && r.names.is_empty())
            .collect();
        assert!(
            unnamed.is_empty(),
            "{identity} holds Secrets by no name: {unnamed:#?}"
        );
        let foreign: Vec<&&Right> = secrets
            .iter()
            .filter(|r| r.names.iter().any(|n| !known.contains(&n.as_str())))
            .collect();
        assert!(
            foreign.is_empty(),
            "{identity} holds Secrets it never touches: {foreign:#?}"
        );
        assert!(
            secrets.iter().any(|r| r.verb == "create"),
            "{identity} may not create the Secrets it makes"
        );
        println!(
            "{identity}: {} rights, Secrets by {} names",
            ours.len(),
            known.len()
        );
    }
}

/// Our operators against upstream v1.3.1's operators' roles, which `../shared/reference/` does not
/// hold: `scripts/upstream/operator-rights` takes them from upstream's source into
/// `UPSTREAM_OPERATOR_RBAC` (`cluster-manager.yaml`, `klusterlet.yaml`) and runs this.
#[tokio::test]
#[ignore = "needs upstream's operator roles: scripts/upstream/operator-rights"]
async fn the_operators_hold_nothing_beyond_upstreams_operators() {
    let dir = std::env::var("UPSTREAM_OPERATOR_RBAC")
        .expect("UPSTREAM_OPERATOR_RBAC: a directory with upstream's operator roles");
    let hub = common::hub().await;
    let namespaces = [
        "default",
        "open-cluster-management",
        "open-cluster-management-hub",
    ];
    let mut extra = Vec::new();
    for (identity, role) in our_operator_roles() {
        let file = match identity {
            "cluster-manager operator" => "cluster-manager.yaml",
            _ => "klusterlet.yaml",
        };
        let upstream = rules_in(&format!("{dir}/{file}"));
        let name = common::unique("rights-operator");
        let ours = effective_as_bound(&hub, role, &name, &namespaces, "deployments").await;
        extra.extend(beyond(identity, &ours, &upstream).into_iter().map(|r| {
            format!(
                "{identity}: {} {}/{} {:?}",
                r.verb, r.group, r.resource, r.names
            )
        }));
    }
    assert!(extra.is_empty(), "beyond upstream's operators: {extra:#?}");
}
