//! The registration agent and the hub registration controller on the real control plane: CSR,
//! accept, signing by the real kube-controller-manager, the hub kubeconfig, heartbeats, RBAC,
//! rotation, deny, the lease monitor and a hub outage.
mod contract;
pub use ocm_test_support::registration as fixture;
mod outage;
mod settings;

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};

use clusteradm::api::cluster::{CLUSTER_CLEANUP_FINALIZER, CLUSTER_LEASE_NAME, ManagedCluster};
use clusteradm::api::work::ManifestWork;

use crate::common;
use fixture::{cert_client, condition, wait, wait_condition};

#[allow(clippy::needless_pass_by_value)] // takes the request's result as it comes
fn is_forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(ref s)) if s.code == 403)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_joins_after_accept_and_the_hub_grants_its_namespace() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-reg")).await;
    let c = agent.cluster().to_string();
    let hub = common::hub().await;

    let mc = Api::<ManagedCluster>::all(hub.clone())
        .get(&c)
        .await
        .unwrap();
    assert_eq!(
        condition(Some(&mc), "HubAcceptedManagedCluster").as_deref(),
        Some("True")
    );
    assert!(
        mc.metadata
            .finalizers
            .unwrap()
            .contains(&CLUSTER_CLEANUP_FINALIZER.to_string())
    );
    let status = mc.status.unwrap();
    assert!(
        status
            .version
            .unwrap()
            .kubernetes
            .unwrap()
            .starts_with("v1.")
    );
    assert_eq!(mc.spec.managed_cluster_client_configs.len(), 1);

    let secret = agent.hub_secret().await;
    let data = secret.data.clone().unwrap();
    for key in [
        "kubeconfig",
        "tls.crt",
        "tls.key",
        "cluster-name",
        "agent-name",
    ] {
        assert!(data.contains_key(key), "hub-kubeconfig-secret lacks {key}");
    }
    let agent_name = String::from_utf8(data["agent-name"].0.clone()).unwrap();
    let kubeconfig = String::from_utf8(data["kubeconfig"].0.clone()).unwrap();
    assert!(kubeconfig.contains("default-auth"), "{kubeconfig}");
    let me = cert_client(&secret).await;
    assert_eq!(
        common::whoami(&me).await.unwrap(),
        format!("system:open-cluster-management:{c}:{agent_name}")
    );
    // The kubeconfig itself works, as upstream agents would use it.
    let from_kubeconfig = common::client_from_yaml(&kubeconfig).await;
    Api::<ManagedCluster>::all(from_kubeconfig)
        .get(&c)
        .await
        .unwrap();

    // The hub made the namespace and the RBAC.
    let ns = Api::<Namespace>::all(hub.clone()).get(&c).await.unwrap();
    assert_eq!(
        ns.metadata.labels.unwrap()["open-cluster-management.io/cluster-name"],
        c
    );
    let name = format!("open-cluster-management:managedcluster:{c}");
    Api::<ClusterRole>::all(hub.clone())
        .get(&name)
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(hub.clone())
        .get(&name)
        .await
        .unwrap();
    let bindings = Api::<RoleBinding>::namespaced(hub.clone(), &c);
    bindings.get(&format!("{name}:registration")).await.unwrap();
    bindings.get(&format!("{name}:work")).await.unwrap();
    // The hub created the lease (upstream's holder identity and label); the agent renews it.
    let lease = Api::<Lease>::namespaced(me.clone(), &c)
        .get(CLUSTER_LEASE_NAME)
        .await
        .unwrap();
    assert_eq!(
        lease.metadata.labels.unwrap()["open-cluster-management.io/cluster-name"],
        c
    );
    let spec = lease.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(CLUSTER_LEASE_NAME));
    assert!(spec.renew_time.is_some());
    // The bindings refer to upstream's shared ClusterRoles.
    let registration = bindings.get(&format!("{name}:registration")).await.unwrap();
    assert_eq!(
        registration.role_ref.name,
        "open-cluster-management:managedcluster:registration"
    );

    // A second accept changes nothing and says so.
    let out = fixture::accept(&c).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("already accepted"));

    // Deleting the cluster removes its namespace and RBAC before the finalizer goes.
    agent.remove().await;
    assert!(
        Api::<ClusterRole>::all(hub.clone())
            .get_opt(&name)
            .await
            .unwrap()
            .is_none()
    );
    let ns = Api::<Namespace>::all(hub).get_opt(&c).await.unwrap();
    assert!(
        ns.is_none_or(|n| n.metadata.deletion_timestamp.is_some()),
        "namespace {c} remains"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_certificate_is_confined_to_its_own_cluster() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-rbac")).await;
    let c = agent.cluster().to_string();
    let me = cert_client(&agent.hub_secret().await).await;

    // Its own lease: read and updated, never patched or created (upstream's contract).
    let leases = Api::<Lease>::namespaced(me.clone(), &c);
    let lease = leases.get(CLUSTER_LEASE_NAME).await.unwrap();
    leases
        .replace(CLUSTER_LEASE_NAME, &PostParams::default(), &lease)
        .await
        .unwrap();
    let renew = Patch::Merge(serde_json::json!({"spec": {"renewTime": null}}));
    assert!(
        is_forbidden(
            leases
                .patch(CLUSTER_LEASE_NAME, &PatchParams::default(), &renew)
                .await
        ),
        "patch the lease"
    );
    let mut other = lease.clone();
    other.metadata = kube::api::ObjectMeta {
        name: Some("another-lease".into()),
        ..Default::default()
    };
    assert!(
        is_forbidden(leases.create(&PostParams::default(), &other).await),
        "create a lease"
    );
    // Its works: readable.
    Api::<ManifestWork>::namespaced(me.clone(), &c)
        .list(&ListParams::default())
        .await
        .unwrap();
    // Another namespace's leases and works, any secret, other clusters: forbidden.
    for other in ["default", "kube-system", "open-cluster-management"] {
        assert!(
            is_forbidden(
                Api::<Lease>::namespaced(me.clone(), other)
                    .list(&ListParams::default())
                    .await
            ),
            "leases in {other}"
        );
        assert!(
            is_forbidden(
                Api::<ManifestWork>::namespaced(me.clone(), other)
                    .list(&ListParams::default())
                    .await
            ),
            "works in {other}"
        );
        assert!(
            is_forbidden(
                Api::<Secret>::namespaced(me.clone(), other)
                    .list(&ListParams::default())
                    .await
            ),
            "secrets in {other}"
        );
    }
    assert!(
        is_forbidden(
            Api::<Secret>::namespaced(me.clone(), &c)
                .list(&ListParams::default())
                .await
        ),
        "secrets in own namespace"
    );
    assert!(is_forbidden(
        Api::<Secret>::all(me.clone())
            .list(&ListParams::default())
            .await
    ));
    assert!(
        is_forbidden(
            Api::<ManagedCluster>::all(me.clone())
                .list(&ListParams::default())
                .await
        ),
        "list all clusters"
    );
    assert!(is_forbidden(
        Api::<ManagedCluster>::all(me.clone())
            .get("some-other-cluster")
            .await
    ));
    // The agent may not create (or delete) works, even in its own namespace.
    let work: ManifestWork = serde_json::from_value(serde_json::json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "sneaky", "namespace": c}, "spec": {"workload": {"manifests": []}}
    }))
    .unwrap();
    let works = Api::<ManifestWork>::namespaced(me.clone(), &c);
    assert!(
        is_forbidden(works.create(&PostParams::default(), &work).await),
        "create a work"
    );
    // Nor accept itself.
    let patch = Patch::Merge(serde_json::json!({"spec": {"hubAcceptsClient": false}}));
    assert!(is_forbidden(
        Api::<ManagedCluster>::all(me)
            .patch(&c, &PatchParams::default(), &patch)
            .await
    ));
    agent.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_certificate_rotates_without_user_action() {
    let mut opts = fixture::options(common::managed().await, "it-rot");
    // 600 s is the API's minimum lifetime: rotate when less than 99 % of it remains instead.
    opts.settings.cert_expiration_seconds = Some(600);
    opts.rotation_threshold = 0.99;
    let agent = fixture::joined(opts).await;
    let first = agent.hub_secret().await;
    let first_cert = first.data.as_ref().unwrap()["tls.crt"].clone();
    let secrets: Api<Secret> = Api::namespaced(agent.opts.managed.clone(), &agent.opts.namespace);
    let rotated = wait(
        secrets,
        &agent.opts.hub_secret,
        "a rotated certificate",
        move |s: Option<&Secret>| {
            s.and_then(|s| s.data.as_ref())
                .is_some_and(|d| d.get("tls.crt") != Some(&first_cert))
        },
    )
    .await;
    // Same identity, new certificate, and it works.
    assert_eq!(
        rotated.data.as_ref().unwrap()["agent-name"],
        first.data.as_ref().unwrap()["agent-name"]
    );
    let me = cert_client(&rotated).await;
    assert_eq!(
        common::whoami(&me).await.unwrap(),
        common::whoami(&cert_client(&first).await).await.unwrap()
    );
    agent.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denying_revokes_the_agents_access() {
    let agent = fixture::joined(fixture::options(common::managed().await, "it-deny")).await;
    let c = agent.cluster().to_string();
    let me = cert_client(&agent.hub_secret().await).await;
    let leases = Api::<Lease>::namespaced(me.clone(), &c);
    leases.get(CLUSTER_LEASE_NAME).await.unwrap();

    let hub = common::hub().await;
    let patch = Patch::Merge(serde_json::json!({"spec": {"hubAcceptsClient": false}}));
    Api::<ManagedCluster>::all(hub.clone())
        .patch(&c, &PatchParams::default(), &patch)
        .await
        .unwrap();
    wait_condition(&c, "HubAcceptedManagedCluster", "False").await;
    common::eventually(
        "the lease to be out of reach",
        Duration::from_secs(20),
        || {
            let leases = leases.clone();
            async move { is_forbidden(leases.get(CLUSTER_LEASE_NAME).await).then_some(()) }
        },
    )
    .await;
    // As upstream's hub: a denied agent still reads its own ManagedCluster (to see it is
    // denied) and may not write it.
    let clusters = Api::<ManagedCluster>::all(me);
    let mine = clusters.get(&c).await.unwrap();
    assert!(is_forbidden(
        clusters
            .replace_status(&c, &PostParams::default(), &mine)
            .await
    ));
    assert!(is_forbidden(
        clusters.replace(&c, &PostParams::default(), &mine).await
    ));
    agent.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_cluster_becomes_unknown_after_five_lease_durations() {
    let mut agent = fixture::joined(fixture::options(common::managed().await, "it-lease")).await;
    let c = agent.cluster().to_string();
    agent.stop().await;
    let stopped = Instant::now();
    let api: Api<ManagedCluster> = Api::all(common::hub().await);
    let mc = fixture::wait_for(
        api,
        &c,
        "Available=Unknown",
        |mc: Option<&ManagedCluster>| {
            condition(mc, "ManagedClusterConditionAvailable").as_deref() == Some("Unknown")
        },
        Duration::from_secs(90),
    )
    .await;
    // 5 × 5 s after the last renewal, which was at most one lease duration before the stop.
    assert!(
        stopped.elapsed() >= Duration::from_secs(19),
        "marked after {:?}",
        stopped.elapsed()
    );
    let available = mc
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "ManagedClusterConditionAvailable")
        .unwrap();
    assert_eq!(available.reason, "ManagedClusterLeaseUpdateStopped");
    // Back: the agent's next heartbeat makes it available again, with no new accept.
    agent.resume();
    wait_condition(&c, "ManagedClusterConditionAvailable", "True").await;
    agent.remove().await;
}

/// A ManagedCluster named like a namespace that is not its own (made for something else, or a
/// system namespace) is never accepted into it: no label, no RBAC there, and deleting the cluster
/// leaves the namespace alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_never_takes_over_a_namespace_it_did_not_make_for_the_cluster() {
    // A cluster accepted normally, so the shared ClusterRoles exist.
    let normal = fixture::joined(fixture::options(common::managed().await, "it-normal")).await;
    let hub = common::hub().await;
    let taken = common::unique("it-taken");
    let namespaces = Api::<Namespace>::all(hub.clone());
    let ns: Namespace = serde_json::from_value(
        serde_json::json!({"metadata": {"name": taken, "labels": {"team": "payments"}}}),
    )
    .unwrap();
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let clusters = Api::<ManagedCluster>::all(hub.clone());
    for name in [taken.as_str(), "kube-node-lease", "work"] {
        let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name}, "spec": {"hubAcceptsClient": true}
        }))
        .unwrap();
        clusters.create(&PostParams::default(), &mc).await.unwrap();
        let mc = wait_condition(name, "HubAcceptedManagedCluster", "False").await;
        let reason = mc
            .status
            .unwrap()
            .conditions
            .into_iter()
            .find(|c| c.type_ == "HubAcceptedManagedCluster")
            .unwrap()
            .reason;
        assert_eq!(reason, "ClusterNamespaceConflict");
        let binding = format!("open-cluster-management:managedcluster:{name}:registration");
        assert!(
            Api::<RoleBinding>::namespaced(hub.clone(), name)
                .get_opt(&binding)
                .await
                .unwrap()
                .is_none(),
            "RBAC granted in namespace {name}"
        );
        clusters
            .delete(name, &kube::api::DeleteParams::default())
            .await
            .unwrap();
        common::eventually(
            &format!("ManagedCluster {name} to go"),
            Duration::from_secs(30),
            || {
                let clusters = clusters.clone();
                async move {
                    clusters
                        .get_opt(name)
                        .await
                        .unwrap()
                        .is_none()
                        .then_some(())
                }
            },
        )
        .await;
    }
    // A cluster named "work" did not touch the ClusterRole every cluster's work agent shares.
    let shared = Api::<ClusterRole>::all(hub.clone())
        .get("open-cluster-management:managedcluster:work")
        .await
        .unwrap();
    assert!(
        shared.rules.unwrap_or_default().iter().any(|r| r
            .resources
            .as_ref()
            .is_some_and(|res| res.iter().any(|x| x == "manifestworks"))),
        "the shared work ClusterRole was overwritten"
    );
    let after = namespaces.get(&taken).await.unwrap();
    assert!(
        after.metadata.deletion_timestamp.is_none(),
        "{taken} was deleted"
    );
    let labels = after.metadata.labels.unwrap();
    assert!(!labels.contains_key("open-cluster-management.io/cluster-name"));
    normal.remove().await;
    namespaces
        .delete(&taken, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// Join → Available stays within seconds, with the default 60 s lease: nothing in the agent waits
/// for a lease period when the hub's grant or the hub's own status writes race with it. Ten
/// joins in a row, each bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_joins_in_a_row_are_each_available_within_ten_seconds() {
    let token = fixture::hub().await;
    let bootstrap = common::hub_kubeconfig_with_token(&token);
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let mut opts = fixture::options(common::managed().await, "it-fast");
        opts.lease_duration_seconds = None;
        let started = Instant::now();
        let agent = fixture::start(opts, &bootstrap).await;
        fixture::accept(agent.cluster()).await;
        let c = agent.cluster().to_string();
        common::eventually(
            &format!("{c} to be Available within 10 s"),
            Duration::from_secs(10),
            || {
                let c = c.clone();
                async move {
                    let mc = Api::<ManagedCluster>::all(common::hub().await)
                        .get(&c)
                        .await
                        .ok()?;
                    (condition(Some(&mc), "ManagedClusterConditionAvailable").as_deref()
                        == Some("True"))
                    .then_some(())
                }
            },
        )
        .await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(10),
            "{c}: join to Available took {took:?}"
        );
        slowest = slowest.max(took);
        agent.remove().await;
    }
    eprintln!("slowest of 10 joins to Available: {slowest:?}");
}

/// A kubeconfig in a Secret is data anyone who may write Secrets there controls (any ManifestWork
/// author, through the work agent): its exec plugin must never run on the agent's host, nor a
/// file path be read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_from_a_secret_cannot_run_commands() {
    let (server, ca) = common::server_and_ca(&common::env().hub);
    let marker = std::env::temp_dir().join(common::unique("it-exec-marker"));
    let exec = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ['-c', 'touch {}'], interactiveMode: Never}}}}}}]\n\
         contexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\ncurrent-context: hub\n",
        marker.display()
    );
    let token_file = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: hub, cluster: {{server: '{server}', certificate-authority-data: {ca}}}}}]\n\
         users: [{{name: u, user: {{tokenFile: /etc/shadow}}}}]\n\
         contexts: [{{name: hub, context: {{cluster: hub, user: u}}}}]\ncurrent-context: hub\n"
    );
    for (text, field) in [(exec, "exec"), (token_file, "tokenFile")] {
        let err =
            clusteradm::agent::registration::bootstrap::client(&text, "bootstrap-hub-kubeconfig")
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string();
        assert!(err.contains(field), "{err}");
    }
    assert!(
        !marker.exists(),
        "the exec plugin of a Secret's kubeconfig ran"
    );
}

/// A ManagedCluster with no agent, accepted with `lease_seconds`, once the hub made its lease:
/// the clusters API, its name and its namespace's leases.
async fn accepted_without_agent(
    prefix: &str,
    lease_seconds: i32,
) -> (Api<ManagedCluster>, String, Api<Lease>) {
    fixture::hub().await;
    let hub = common::hub().await;
    let clusters = Api::<ManagedCluster>::all(hub.clone());
    let name = common::unique(prefix);
    let mc: ManagedCluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": name}, "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": lease_seconds}
    }))
    .unwrap();
    clusters.create(&PostParams::default(), &mc).await.unwrap();
    wait_condition(&name, "HubAcceptedManagedCluster", "True").await;
    let leases: Api<Lease> = Api::namespaced(hub, &name);
    wait(
        leases.clone(),
        CLUSTER_LEASE_NAME,
        "the cluster lease",
        |l: Option<&Lease>| l.is_some(),
    )
    .await;
    (clusters, name, leases)
}

/// A lease duration far past anything sensible (i32::MAX seconds) is bounded: five times it
/// would be centuries, so a silent agent would never be noticed; capped at a day, a lease six days
/// old makes the cluster `Unknown` for the usual reason. The hub controller keeps serving the
/// other clusters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absurd_lease_duration_degrades_only_its_cluster() {
    let (clusters, huge, leases) = accepted_without_agent("it-huge-lease", i32::MAX).await;
    // The agent last renewed six days ago (past the capped grace of five days) ...
    let six_days_ago = k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_hours(6 * 24),
    );
    leases
        .patch(
            CLUSTER_LEASE_NAME,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"renewTime": six_days_ago}})),
        )
        .await
        .unwrap();
    // ... and the next look at the cluster (a label wakes it) finds it silent. The hub reads the
    // lease from its own watch, which may see the renewal after the label: touched again until
    // it has.
    let unknown = |mc: Option<&ManagedCluster>| {
        condition(mc, "ManagedClusterConditionAvailable").as_deref() == Some("Unknown")
    };
    let mut degraded = None;
    for touch in 0..20 {
        clusters
            .patch(
                &huge,
                &PatchParams::default(),
                &Patch::Merge(
                    serde_json::json!({"metadata": {"labels": {"it-touched": touch.to_string()}}}),
                ),
            )
            .await
            .unwrap();
        let seen = tokio::time::timeout(
            Duration::from_secs(3),
            kube::runtime::wait::await_condition(clusters.clone(), &huge, unknown),
        )
        .await;
        if let Ok(Ok(Some(mc))) = seen {
            degraded = Some(mc);
            break;
        }
    }
    let degraded = degraded.expect("the silent cluster became Available=Unknown within a minute");
    let available = clusteradm::api::conditions::find(
        &degraded.status.as_ref().unwrap().conditions,
        "ManagedClusterConditionAvailable",
    )
    .unwrap();
    assert_eq!(available.reason, "ManagedClusterLeaseUpdateStopped");
    // The controller still serves others.
    let agent = fixture::joined(fixture::options(common::managed().await, "it-after-huge")).await;
    agent.remove().await;
    clusters
        .delete(&huge, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// Upstream's clock check: each renewal of a cluster's lease stamps the agent's clock, which the
/// hub compares with its own. An agent ten minutes ahead (five lease durations are 5 minutes) is
/// `ClockSynced=False`; its next renewal on time makes it `True` again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_from_a_skewed_clock_is_reported_out_of_sync_until_one_agrees() {
    let (clusters, name, leases) = accepted_without_agent("it-clock", 60).await;
    let renew = |offset: k8s_openapi::jiff::SignedDuration| {
        let stamp = k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
            k8s_openapi::jiff::Timestamp::now() + offset,
        );
        Patch::Merge(serde_json::json!({"spec": {"renewTime": stamp}}))
    };
    let params = PatchParams::default();
    leases
        .patch(
            CLUSTER_LEASE_NAME,
            &params,
            &renew(k8s_openapi::jiff::SignedDuration::from_mins(10)),
        )
        .await
        .unwrap();
    wait_condition(&name, "ManagedClusterConditionClockSynced", "False").await;
    let out = clusters.get(&name).await.unwrap();
    let clock = clusteradm::api::conditions::find(
        &out.status.as_ref().unwrap().conditions,
        "ManagedClusterConditionClockSynced",
    )
    .unwrap();
    assert_eq!(clock.reason, "ManagedClusterClockOutOfSync");
    leases
        .patch(
            CLUSTER_LEASE_NAME,
            &params,
            &renew(k8s_openapi::jiff::SignedDuration::ZERO),
        )
        .await
        .unwrap();
    wait_condition(&name, "ManagedClusterConditionClockSynced", "True").await;
    clusters
        .delete(&name, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// A Klusterlet that names no cluster: its agents register under the name stored with their hub
/// credential (so a restart keeps it), else under a new UUID, as upstream's agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_klusterlet_without_a_cluster_name_keeps_the_name_its_agent_stored() {
    use clusteradm::agent::registration::cluster_name::stored_or_new;
    let managed = common::managed().await;
    let ns = common::unique("it-noname");
    let namespaces: Api<Namespace> = Api::all(managed.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .unwrap();
    let first = stored_or_new(&managed, &ns, "hub-kubeconfig-secret")
        .await
        .unwrap();
    let second = stored_or_new(&managed, &ns, "hub-kubeconfig-secret")
        .await
        .unwrap();
    assert_ne!(first, second, "nothing stored: a new name each time");
    assert!(
        clusteradm::api::names::validate_cluster_name(&first).is_ok(),
        "{first}"
    );
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "hub-kubeconfig-secret"},
        "stringData": {"cluster-name": "stored-name"}
    }))
    .unwrap();
    Api::<Secret>::namespaced(managed.clone(), &ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    assert_eq!(
        stored_or_new(&managed, &ns, "hub-kubeconfig-secret")
            .await
            .unwrap(),
        "stored-name"
    );
    namespaces
        .delete(&ns, &kube::api::DeleteParams::default())
        .await
        .unwrap();
}

/// The agent waits for a missing bootstrap secret by watching it: written while the agent's
/// backoff is long (here after 12 s, when the next retry is seconds away), registration starts at
/// once. (Upstream's e2e "Update klusterlet CR namespace" copies the secret after the agent
/// starts and approves the CSR it expects a few seconds later.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bootstrap_secret_written_late_is_used_at_once() {
    let token = fixture::hub().await;
    let mut opts = fixture::options(common::managed().await, "it-late");
    opts.max_backoff = Duration::from_secs(60);
    let agent = fixture::start_with_secrets(opts, &[]).await;
    // The scenario, not a synchronisation: the secret arrives while the agent backs off
    // (jittered retries near 0, 1.5, 4.5, 10 and 19 s).
    tokio::time::sleep(Duration::from_secs(12)).await;
    let bootstrap = common::hub_kubeconfig_with_token(&token);
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": agent.opts.bootstrap_secret},
        "stringData": {"kubeconfig": bootstrap},
    }))
    .unwrap();
    Api::<Secret>::namespaced(agent.opts.managed.clone(), &agent.opts.namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let written = Instant::now();
    let clusters: Api<ManagedCluster> = Api::all(common::hub().await);
    common::eventually(
        "the cluster to register",
        Duration::from_secs(30),
        || async { clusters.get_opt(agent.cluster()).await.unwrap() },
    )
    .await;
    let took = written.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "registered {took:?} after the secret was written: the agent waited out its backoff"
    );
    agent.remove().await;
}
