//! application-manager's hub side (multicloud-operators-subscription v0.16.0, the repository's
//! last release): the subscription controller (Subscriptions to clusters through ManifestWorks,
//! and the `application-manager` add-on's manager, which deploys its agent), the channel
//! controller, the placement-rule controller and the subscription-report controller
//! (`appsubsummary`), as upstream's clusteradm v0.11 installed them, under its names.
//!
//! Upstream bound one ServiceAccount to every verb on every resource for all four. Here each has
//! its own ServiceAccount and ClusterRole holding what it uses (read from the hub's audit log by
//! `LEARN_RIGHTS=1 scripts/addon-e2e application-manager`), with `watch` beside every `list`,
//! and its leader-election Lease by name in `kube-system`, where the four keep them. The two
//! ClusterRoles the subscription controller would otherwise write are installed here, so that it
//! only reads them: its agents' permission, which it may then `bind` (and nothing else), and
//! `subscription-admin` (with its empty binding), which it may not bind: that role hands out every
//! Secret.
use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::{
    account, bound_role, cluster_binding, cluster_management_addon, image, object,
    restricted_container, vendored,
};

/// The add-on's name, as `--names` and `addon enable` take it.
pub const APPLICATION_MANAGER: &str = "application-manager";
/// The image of the subscription, placement-rule and subscription-report controllers (and the
/// agent).
const SUBSCRIPTION_IMAGE: &str = "multicloud-operators-subscription";
/// The channel controller's image.
const CHANNEL_IMAGE: &str = "multicloud-operators-channel";
/// The subscription controller's Deployment (and upstream's one ServiceAccount).
pub const SUBSCRIPTION: &str = "multicluster-operators-subscription";
/// The ClusterRole of the add-on's agents on the hub, which the subscription controller binds in
/// each cluster's namespace.
const AGENT_PERMISSION: &str = "open-cluster-management:addons:application-manager";
/// The role the subscription controller checks its users against.
const SUBSCRIPTION_ADMIN: &str = "open-cluster-management:subscription-admin";

const CRDS: [&str; 5] = [
    include_str!("../../../templates/hub-addons/application-manager/crd-channels.yaml"),
    include_str!("../../../templates/hub-addons/application-manager/crd-helmreleases.yaml"),
    include_str!("../../../templates/hub-addons/application-manager/crd-subscriptions.yaml"),
    include_str!("../../../templates/hub-addons/application-manager/crd-subscriptionreports.yaml"),
    include_str!("../../../templates/hub-addons/application-manager/crd-subscriptionstatuses.yaml"),
];
const AGENT_PERMISSION_ROLE: &str = include_str!(
    "../../../templates/hub-addons/application-manager/clusterrole-agent-permission.yaml"
);
const SUBSCRIPTION_ADMIN_ROLE: &str = include_str!(
    "../../../templates/hub-addons/application-manager/clusterrole-subscription-admin.yaml"
);

/// One of the four controllers.
struct Controller {
    /// Its Deployment, ServiceAccount, ClusterRole and bindings.
    name: &'static str,
    image: &'static str,
    /// The command and its flags, `{image}` standing for the subscription image's reference.
    command: &'static [&'static str],
    port: u16,
    /// Its pods' label (upstream's Services select the subscription controller by `app`).
    pod_label: (&'static str, &'static str),
    /// Its leader-election Lease in `kube-system`.
    lease: &'static str,
    rules: fn() -> Value,
}

const CONTROLLERS: [Controller; 4] = [
    Controller {
        name: SUBSCRIPTION,
        image: SUBSCRIPTION_IMAGE,
        command: &[
            "/usr/local/bin/multicluster-operators-subscription",
            "--sync-interval=60",
            "--agent-image={image}",
        ],
        port: 8443,
        pod_label: ("app", "multicluster-operators-hub-subscription"),
        lease: "multicloud-operators-hub-subscription-leader.open-cluster-management.io",
        rules: subscription_rules,
    },
    Controller {
        name: "multicluster-operators-channel",
        image: CHANNEL_IMAGE,
        // --debug: no webhook (upstream's flags; its duplicate-channel check needs a Service).
        command: &[
            "/usr/local/bin/multicluster-operators-channel",
            "--alsologtostderr",
            "--debug=true",
        ],
        port: 7443,
        pod_label: ("name", "multicluster-operators-channel"),
        lease: "multicloud-operators-channel-leader.open-cluster-management.io",
        rules: channel_rules,
    },
    Controller {
        name: "multicluster-operators-placementrule",
        image: SUBSCRIPTION_IMAGE,
        command: &["/usr/local/bin/multicluster-operators-placementrule"],
        port: 6443,
        pod_label: ("name", "multicluster-operators-placementrule"),
        lease: "multicloud-operators-placementrule-leader.open-cluster-management.io",
        rules: placement_rule_rules,
    },
    Controller {
        name: "multicluster-operators-appsub-summary",
        image: SUBSCRIPTION_IMAGE,
        command: &["/usr/local/bin/appsubsummary", "--v=1"],
        port: 9443,
        pod_label: ("name", "multicluster-operators-appsub-summary"),
        lease: "multicloud-operators-appsubsummary-leader.open-cluster-management.io",
        rules: report_rules,
    },
];

/// The images' tag of a `--bundle-version` (upstream clusteradm v0.11's bundles; v0.16.0, the
/// last release, for every later OCM version).
pub(super) fn tag(bundle_version: &str) -> Option<&'static str> {
    let bare = bundle_version.trim_start_matches('v');
    Some(match bare {
        "latest" => "latest",
        "0.14.0" => "v0.14.0",
        "0.15.0" | "0.15.1" | "0.15.2" => "v0.15.0",
        "default" | "" | "0.16.0" | "0.16.1" => "v0.16.0",
        _ if bare.starts_with("1.") => "v0.16.0",
        _ => return None,
    })
}

/// The four controllers, their roles, the add-on's CRDs and its ClusterManagementAddOn, in
/// `namespace`, with images of `tag`.
pub(super) fn plan(namespace: &str, tag: &str) -> Result<Vec<DynamicObject>, String> {
    let mut objects = Vec::new();
    for crd in CRDS {
        objects.push(vendored(crd, None)?);
    }
    objects.push(vendored(super::policy::PLACEMENT_RULES_CRD, None)?);
    objects.push(vendored(AGENT_PERMISSION_ROLE, None)?);
    objects.push(vendored(SUBSCRIPTION_ADMIN_ROLE, None)?);
    objects.push(object(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": SUBSCRIPTION_ADMIN},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SUBSCRIPTION_ADMIN},
    })));
    // Upstream's marker: an empty configuration the subscription controller looks for.
    objects.push(object(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "ocm-mutating-webhook"},
    })));
    for controller in &CONTROLLERS {
        objects.push(account(controller.name, namespace));
        objects.push(object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": controller.name},
            "rules": (controller.rules)(),
        })));
        objects.push(cluster_binding(
            controller.name,
            controller.name,
            controller.name,
            namespace,
        ));
        let leader_election = format!("{}-leader-election", controller.name);
        objects.extend(bound_role(
            (&leader_election, &leader_election),
            "kube-system",
            &lease_rules(controller.lease),
            controller.name,
            namespace,
        ));
        objects.push(object(deployment(controller, namespace, tag)));
    }
    objects.push(object(subscription_service(namespace)));
    objects.push(object(cluster_management_addon(
        APPLICATION_MANAGER,
        "Application Manager",
        "Synchronizes applications on the managed clusters from the hub.",
    )));
    Ok(objects)
}

fn deployment(controller: &Controller, namespace: &str, tag: &str) -> Value {
    let subscription_image = image(SUBSCRIPTION_IMAGE, tag);
    let command: Vec<String> = controller
        .command
        .iter()
        .map(|arg| arg.replace("{image}", &subscription_image))
        .collect();
    let (key, value) = controller.pod_label;
    let mut env = vec![
        json!({"name": "WATCH_NAMESPACE", "value": ""}),
        json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}),
        json!({"name": "OPERATOR_NAME", "value": controller.name}),
    ];
    if controller.name == SUBSCRIPTION {
        env.push(json!({"name": "DEPLOYMENT_LABEL", "value": SUBSCRIPTION}));
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": controller.name, "namespace": namespace, "labels": {"name": controller.name}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {key: value}},
            "template": {
                "metadata": {"labels": {key: value}},
                "spec": {
                    "serviceAccountName": controller.name,
                    "containers": [{
                        "name": controller.name,
                        "image": image(controller.image, tag),
                        "imagePullPolicy": "IfNotPresent",
                        "command": command,
                        "ports": [{"containerPort": controller.port}],
                        "env": env,
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "securityContext": restricted_container(),
                    }],
                },
            },
        },
    })
}

/// Upstream's Service of the subscription controller.
fn subscription_service(namespace: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SUBSCRIPTION, "namespace": namespace, "labels": {"name": SUBSCRIPTION}},
        "spec": {
            "ports": [{"port": 8443, "protocol": "TCP", "targetPort": 8443}],
            "selector": {"app": "multicluster-operators-hub-subscription"},
            "type": "ClusterIP",
        },
    })
}

/// A rule: its API groups, resources and verbs.
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];
const APPS: &str = "apps.open-cluster-management.io";

/// Leader election: the Lease by name (create cannot be limited by name), and its Events.
fn lease_rules(lease: &str) -> Value {
    json!([
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [lease],
         "verbs": ["get", "update", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ])
}

// The rules: what each controller used in `LEARN_RIGHTS=1 scripts/addon-e2e application-manager`
// (install, enable, a Helm chart delivered, updated and removed, disable), with `watch` beside
// every `list`, and what its work needs that the run did not reach (said where).

fn subscription_rules() -> Value {
    json!([
        rule(
            &[APPS],
            &["subscriptions"],
            &["get", "list", "watch", "update", "patch"]
        ),
        rule(&[APPS], &["subscriptions/status"], &["update", "patch"]),
        // placementrules: Subscriptions placed by a PlacementRule (the run used a Placement).
        rule(
            &[APPS],
            &[
                "channels",
                "helmreleases",
                "subscriptionstatuses",
                "placementrules"
            ],
            READ
        ),
        rule(&[APPS], &["subscriptionreports"], WRITE),
        rule(
            &["cluster.open-cluster-management.io"],
            &["managedclusters", "placementdecisions"],
            READ
        ),
        rule(
            &["work.open-cluster-management.io"],
            &["manifestworks"],
            WRITE
        ),
        // The add-on manager (the Go addon-framework): its add-ons' status, and their finalizers
        // on disable.
        rule(
            &["addon.open-cluster-management.io"],
            &["clustermanagementaddons", "addondeploymentconfigs"],
            READ
        ),
        rule(
            &["addon.open-cluster-management.io"],
            &["managedclusteraddons"],
            &["get", "list", "watch", "update", "patch"]
        ),
        rule(
            &["addon.open-cluster-management.io"],
            &["managedclusteraddons/status"],
            &["update", "patch"]
        ),
        rule(
            &["addon.open-cluster-management.io"],
            &["managedclusteraddons/finalizers"],
            &["update"]
        ),
        // Its agents' CSRs, which upstream's hub leaves to it (ours approves them first).
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests"],
            READ
        ),
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests/approval"],
            &["update"]
        ),
        json!({"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
               "resourceNames": ["kubernetes.io/kube-apiserver-client"], "verbs": ["approve"]}),
        // Its agents' permission, bound in each cluster's namespace.
        rule(&["rbac.authorization.k8s.io"], &["rolebindings"], WRITE),
        rule(
            &["rbac.authorization.k8s.io"],
            &["clusterroles", "clusterrolebindings"],
            READ
        ),
        json!({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
               "resourceNames": [AGENT_PERMISSION], "verbs": ["bind"]}),
        rule(
            &["admissionregistration.k8s.io"],
            &["mutatingwebhookconfigurations"],
            READ
        ),
        rule(&[""], &["configmaps"], READ),
        json!({"apiGroups": [""], "resources": ["services"], "resourceNames": [SUBSCRIPTION], "verbs": ["get"]}),
        rule(&[""], &["events"], &["create", "patch"]),
    ])
}

fn channel_rules() -> Value {
    json!([
        rule(&[APPS], &["channels", "channels/status"], READ),
        // It grants the agents of every cluster read of each channel's namespace (channels, and
        // the Secrets and ConfigMaps of their credentials): it must hold that itself.
        rule(&[""], &["secrets", "configmaps"], READ),
        rule(
            &["rbac.authorization.k8s.io"],
            &["roles", "rolebindings"],
            WRITE
        ),
        rule(
            &["cluster.open-cluster-management.io"],
            &["managedclusters"],
            READ
        ),
        // It looks for a MultiClusterHub (none on OCM): a refusal would be logged every time.
        rule(
            &["operator.open-cluster-management.io"],
            &["multiclusterhubs"],
            READ
        ),
        rule(&[""], &["events"], &["create", "patch"]),
    ])
}

fn placement_rule_rules() -> Value {
    json!([
        // Its work (the run placed by a Placement, so it only listed them).
        rule(
            &[APPS],
            &["placementrules"],
            &["get", "list", "watch", "update", "patch"]
        ),
        rule(&[APPS], &["placementrules/status"], &["update", "patch"]),
        rule(
            &["cluster.open-cluster-management.io"],
            &["managedclusters"],
            READ
        ),
        rule(&[""], &["events"], &["create", "patch"]),
    ])
}

fn report_rules() -> Value {
    json!([
        // The clusters' reports summed into each application's.
        rule(&[APPS], &["subscriptionreports"], WRITE),
        rule(&[APPS], &["subscriptions"], READ),
        rule(&[""], &["events"], &["create", "patch"]),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_application_manager_is_upstreams_objects_under_upstreams_names() {
        let objects = plan("ocm", "v0.16.0").unwrap();
        let names = crate::install::names(&objects);
        for expected in [
            "CustomResourceDefinition/subscriptions.apps.open-cluster-management.io",
            "CustomResourceDefinition/channels.apps.open-cluster-management.io",
            "CustomResourceDefinition/placementrules.apps.open-cluster-management.io",
            "ClusterRole/open-cluster-management:addons:application-manager",
            "ClusterRole/open-cluster-management:subscription-admin",
            "Deployment/multicluster-operators-subscription",
            "Deployment/multicluster-operators-channel",
            "Deployment/multicluster-operators-placementrule",
            "Deployment/multicluster-operators-appsub-summary",
            "ClusterManagementAddOn/application-manager",
        ] {
            assert!(
                names.contains(&expected.to_string()),
                "{expected} in {names:?}"
            );
        }
        let text = serde_json::to_string(&objects).unwrap();
        assert!(text.contains(
            "--agent-image=quay.io/open-cluster-management/multicloud-operators-subscription:v0.16.0"
        ));
        assert!(
            text.contains("quay.io/open-cluster-management/multicloud-operators-channel:v0.16.0")
        );
    }

    #[test]
    fn no_controller_holds_a_wildcard_or_may_bind_subscription_admin() {
        for controller in &CONTROLLERS {
            let rules = (controller.rules)();
            let text = rules.to_string();
            assert!(!text.contains('*'), "{}: {text}", controller.name);
            for rule in rules.as_array().unwrap() {
                let verbs = rule["verbs"].as_array().unwrap();
                if verbs.iter().any(|v| v == "list") {
                    assert!(
                        verbs.iter().any(|v| v == "watch"),
                        "{}: {rule}",
                        controller.name
                    );
                }
                if verbs.iter().any(|v| v == "bind" || v == "escalate") {
                    assert_eq!(
                        rule["resourceNames"],
                        json!([AGENT_PERMISSION]),
                        "{}",
                        controller.name
                    );
                }
            }
        }
    }
}
