//! What our hub pod's identity may do, checked by the hub's own authorizer with its ClusterRole
//! applied as the operator renders it: no Secret anywhere (upstream's add-on manager holds none,
//! its registration controller two named ones), and the one impersonation it needs, of upstream's
//! add-on manager's ServiceAccount, whose rights the user grants.
use clusteradm::operator::cluster_manager::desired::hub;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, Patch, PatchParams, PostParams};

use crate::common;

const CLUSTER: &str = "cluster.open-cluster-management.io";
const ADDON: &str = "addon.open-cluster-management.io";
const WORK: &str = "work.open-cluster-management.io";
const HUB_SA: &str = "system:serviceaccount:open-cluster-management-hub:cluster-manager-hub-sa";

async fn may(
    hub: &kube::Client,
    verb: &str,
    (group, resource): (&str, &str),
    namespace: &str,
    name: Option<&str>,
) -> bool {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(HUB_SA.into()),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                "system:serviceaccounts:open-cluster-management-hub".into(),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.split('/').next().unwrap_or_default().into()),
                subresource: resource.split_once('/').map(|(_, sub)| sub.into()),
                namespace: Some(namespace.into()),
                name: name.map(Into::into),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<SubjectAccessReview>::all(hub.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap()
        .allowed
}

#[tokio::test]
async fn the_hub_pod_may_touch_no_secret_and_impersonate_only_the_addon_managers_account() {
    let hub = common::hub().await;
    let apply = PatchParams::apply("it-hub-rights").force();
    let role = hub::cluster_role();
    Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(hub.clone())
        .patch(hub::CLUSTER_ROLE, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding = hub::cluster_role_binding();
    Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(hub.clone())
        .patch(hub::CLUSTER_ROLE, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    common::eventually(
        "the hub role to take effect",
        std::time::Duration::from_secs(30),
        || async {
            may(&hub, "list", (CLUSTER, "managedclusters"), "", None)
                .await
                .then_some(())
        },
    )
    .await;
    no_secret_and_no_token(&hub).await;
    // The user's objects: read (and what the controllers write: status, a finalizer), never
    // created or deleted.
    for (verb, resource, namespace) in [
        ("create", (ADDON, "clustermanagementaddons"), ""),
        ("delete", (ADDON, "clustermanagementaddons"), ""),
        ("update", (ADDON, "clustermanagementaddons"), ""),
        ("create", (WORK, "manifestworkreplicasets"), "default"),
        ("delete", (WORK, "manifestworkreplicasets"), "default"),
        ("create", (CLUSTER, "placements"), "default"),
        ("delete", (CLUSTER, "placements"), "default"),
        ("create", (CLUSTER, "managedclustersetbindings"), "default"),
        ("delete", (CLUSTER, "managedclustersetbindings"), "default"),
    ] {
        assert!(
            !may(&hub, verb, resource, namespace, None).await,
            "the hub pod may {verb} {resource:?}"
        );
    }
    for (verb, resource, namespace) in [
        ("list", (ADDON, "clustermanagementaddons"), ""),
        ("patch", (WORK, "manifestworkreplicasets"), "default"),
        ("create", (CLUSTER, "placementdecisions"), "default"),
        ("create", (CLUSTER, "managedclustersets"), ""),
        ("create", (ADDON, "managedclusteraddons"), "default"),
        // /metrics authenticates and authorises its callers.
        ("create", ("authentication.k8s.io", "tokenreviews"), ""),
        (
            "create",
            ("authorization.k8s.io", "subjectaccessreviews"),
            "",
        ),
    ] {
        assert!(
            may(&hub, verb, resource, namespace, None).await,
            "the hub pod may not {verb} {resource:?}, which its controllers do"
        );
    }
    // One impersonation: upstream's add-on manager, to read a signing CA the user granted it.
    assert!(
        may(
            &hub,
            "impersonate",
            ("", "serviceaccounts"),
            "open-cluster-management-hub",
            Some("addon-manager-controller-sa"),
        )
        .await
    );
    assert!(
        !may(
            &hub,
            "impersonate",
            ("", "serviceaccounts"),
            "kube-system",
            Some("default")
        )
        .await,
        "the hub pod may impersonate another ServiceAccount"
    );
    // Leave the hub as found (lifecycle's clean checks what OCM leaves behind).
    let dp = kube::api::DeleteParams::default();
    let _ = Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(hub.clone())
        .delete(hub::CLUSTER_ROLE, &dp)
        .await;
    let _ = Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(hub)
        .delete(hub::CLUSTER_ROLE, &dp)
        .await;
}

/// No Secret: not the bootstrap token's, not to mint a service-account token, not its own
/// namespace's; and no ServiceAccount token: add-ons' token infrastructure, which grants clusters
/// the right to request their add-ons' tokens, is the operator's to make (it holds `escalate`).
async fn no_secret_and_no_token(hub: &kube::Client) {
    for (verb, namespace, name) in [
        ("get", "kube-system", Some("bootstrap-token-ocmhub")),
        ("list", "kube-system", None),
        ("create", "kube-system", None),
        ("get", "open-cluster-management-hub", None),
        ("watch", "", None),
    ] {
        assert!(
            !may(hub, verb, ("", "secrets"), namespace, name).await,
            "the hub pod may {verb} secrets in {namespace:?} ({name:?})"
        );
    }
    for namespace in ["kube-system", "cluster1"] {
        assert!(
            !may(
                hub,
                "create",
                ("", "serviceaccounts/token"),
                namespace,
                None
            )
            .await,
            "the hub pod may mint ServiceAccount tokens in {namespace}"
        );
    }
}
