//! Hosted mode on our image: `join --mode hosted` on the management cluster runs the cluster's
//! agent as pods on the management cluster's node, acting on a managed cluster that has no node
//! at all through the kubeconfig the operator mounts; works still apply there. The management
//! cluster is joined to the hub too (Default mode), so it can host the hosted cluster's add-ons
//! ([`hosted_addon`]). `unjoin` leaves nothing on either cluster.
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams};

use crate::fixture::condition_true;
use crate::fixture::{self, clusteradm, works};
use crate::fleet::{
    accept_until_available, assert_no_refusals, assert_nothing_left, assert_runs_locked_down,
    create_work, gone, leader, wait_work,
};
use crate::{common, hosted_addon};
use clusteradm::cli::controller::agent_lease;
use clusteradm::inprocess::klusterlet::Components;

/// How long the hosted cluster took from `join` to `Available`, and its add-on to run.
pub struct Hosted {
    /// `join --mode hosted` → ManagedCluster Available.
    pub join_to_available: Duration,
    /// Hosted add-on enabled → its pod Ready on the management node.
    pub addon_to_pod: Duration,
}

/// Joins the hosted cluster with `join_line` (init's join command, cluster name filled in by this
/// step), proves where its agent runs and that works apply, then unjoins it.
pub async fn join_work_and_leave(
    hub: &kube::Client,
    clusters: &Api<DynamicObject>,
    join_line: &str,
) -> Hosted {
    let env = fixture::env();
    let hosted_env = fixture::hosted_env();
    let management = common::client(&hosted_env.management).await;
    let hosted = common::client(&hosted_env.hosted).await;
    let management_kc = hosted_env.management.to_str().unwrap();
    let hosted_kc = hosted_env.hosted.to_str().unwrap();
    let cluster = common::unique("pods-hosted");

    // The management cluster, a managed cluster of the hub in its own right.
    let hosting = common::unique("pods-management");
    join_and_accept(
        clusters,
        join_line,
        &hosting,
        &["--kubeconfig", management_kc],
    )
    .await;

    let t = Instant::now();
    let hosted_mode = [
        "--mode",
        "hosted",
        "--managed-cluster-kubeconfig",
        hosted_kc,
        "--kubeconfig",
        management_kc,
    ];
    join_and_accept(clusters, join_line, &cluster, &hosted_mode).await;
    let join_to_available = t.elapsed();

    // The agent runs on the management cluster's node, in the Klusterlet's own namespace.
    let klusterlet = klusterlet_of(&management, &cluster).await;
    // Hosted mode: upstream's two Deployments; the work agent's leader applies the works.
    let agent = leader(&management, &klusterlet, &agent_lease(Components::Work)).await;
    assert_eq!(
        agent.spec.as_ref().unwrap().node_name.as_deref(),
        Some("management-node"),
        "the hosted cluster's agent runs on the management cluster's node"
    );
    assert_runs_locked_down(&agent, &env.image);
    // The managed cluster has no node: nothing can run there.
    let nodes = Api::<Node>::all(hosted.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(nodes.items.is_empty(), "the hosted cluster has nodes");

    // A work applies on the hosted cluster.
    let work_ns = common::unique("pods-hosted-work");
    create_work(hub, &cluster, "hosted", &work_ns, &[("applied", false)]).await;
    let work = wait_work(hub, &cluster, "hosted", |w| condition_true(w, "Available")).await;
    assert!(
        condition_true(&work, "Applied"),
        "{:?}",
        work.data["status"]
    );
    let applied = Api::<ConfigMap>::namespaced(hosted.clone(), &work_ns)
        .get("applied")
        .await
        .expect("the work's ConfigMap on the hosted cluster");
    assert_eq!(
        applied.data.unwrap().get("k").map(String::as_str),
        Some("v")
    );
    // An add-on of the hosted cluster, hosted on the management cluster.
    let addon_to_pod =
        hosted_addon::runs_on_the_hosting_node(hub, &management, &hosted, &cluster, &hosting).await;
    for agent in ["registration", "work"] {
        assert_no_refusals(
            "management",
            &format!("system:serviceaccount:{klusterlet}:{klusterlet}-{agent}-sa"),
        );
    }
    assert_no_refusals(
        "management",
        "system:serviceaccount:open-cluster-management:klusterlet",
    );
    agent_acts_as_itself(&management, &klusterlet, &agent).await;

    // Leave: the work removed by the agent, the Klusterlet unjoined, the cluster deleted.
    works(hub, &cluster)
        .delete("hosted", &DeleteParams::default())
        .await
        .unwrap();
    gone(&works(hub, &cluster), "hosted").await;
    // The hosted cluster first, keeping the operator the management cluster's own Klusterlet
    // still needs; then the management cluster, with the operator.
    for (name, purge) in [(&cluster, "false"), (&hosting, "true")] {
        let purge = format!("--purge-operator={purge}");
        let unjoin = ["unjoin", "--cluster-name", name, &purge, "--yes"];
        clusteradm(&[&unjoin[..], &["--kubeconfig", management_kc]].concat());
    }
    for name in [&cluster, &hosting] {
        clusters
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        gone(clusters, name).await;
    }
    assert_nothing_left(&management, "management").await;
    assert_nothing_left(&hosted, "hosted").await;
    let _ = Api::<Namespace>::all(hosted)
        .delete(&work_ns, &DeleteParams::default())
        .await;
    Hosted {
        join_to_available,
        addon_to_pod,
    }
}

/// Joins the cluster `extra` names (its `--kubeconfig`, a mode) to the hub as `name` with our
/// image, by init's `join_line`, and accepts it until it is Available.
async fn join_and_accept(
    clusters: &Api<DynamicObject>,
    join_line: &str,
    name: &str,
    extra: &[&str],
) {
    let image = fixture::env().image;
    let line = join_line.replace("<cluster_name>", name);
    let mut join: Vec<&str> = line.split_whitespace().skip(1).collect();
    join.extend(["--image", &image, "--wait"]);
    join.extend(extra);
    clusteradm(&join);
    accept_until_available(clusters, name).await;
}

/// The name of the Klusterlet on `management` that serves `cluster` (hosted Klusterlets get a
/// generated name, which is also their agents' namespace).
/// On the hosted cluster the agent acts as its own ServiceAccount there, through the kubeconfig
/// the operator minted for it, with only the RBAC rendered for it: never with the admin
/// kubeconfig the user gave the operator, which its pod does not mount.
async fn agent_acts_as_itself(management: &kube::Client, klusterlet: &str, agent: &Pod) {
    let managed_ns = managed_namespace_of(management, klusterlet).await;
    for agent in ["registration", "work"] {
        assert_no_refusals(
            "hosted",
            &format!("system:serviceaccount:{managed_ns}:{klusterlet}-{agent}-sa"),
        );
    }
    // The work agent's pod.
    let mounted = common::mounted_secrets(agent.spec.as_ref().unwrap());
    assert!(
        mounted.contains(&"external-managed-kubeconfig-work".to_string())
            && !mounted.contains(&"external-managed-kubeconfig".to_string()),
        "{mounted:?}"
    );
}

/// The Klusterlets of the management cluster.
fn klusterlets(management: &kube::Client) -> Api<DynamicObject> {
    fixture::cluster_scoped(
        management,
        "operator.open-cluster-management.io",
        "v1",
        "Klusterlet",
    )
}

/// The namespace of Klusterlet `name`'s agents on the managed cluster (`spec.namespace`).
async fn managed_namespace_of(management: &kube::Client, name: &str) -> String {
    let klusterlets = klusterlets(management);
    let k = klusterlets.get(name).await.unwrap();
    k.data["spec"]["namespace"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("open-cluster-management-agent")
        .to_owned()
}

async fn klusterlet_of(management: &kube::Client, cluster: &str) -> String {
    let klusterlets = klusterlets(management);
    klusterlets
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|k| k.data["spec"]["clusterName"] == cluster)
        .and_then(|k| k.metadata.name)
        .expect("a Klusterlet for the hosted cluster")
}
