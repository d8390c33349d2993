//! Build (pure): from a validated Klusterlet to the typed objects that make its agents, split by
//! the cluster they belong on. One file per kind of object; no I/O, so every mode is unit-tested.
//!
//! - managed cluster: the managed CRDs, the agents' ClusterRoles and bindings (and, Hosted, the
//!   agents' namespace and identities there);
//! - management cluster (the managed cluster itself outside Hosted modes): the agent namespace,
//!   the agents' ServiceAccounts, Roles and Deployments.
mod crd;
mod deployment;
mod namespace;
mod rbac;
pub mod service_account;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::DynamicObject;

use super::InProcess;
use super::validate::Validated;
use ocm_runtime::apply::to_dynamic;

pub use rbac::{registration_cluster_role, work_cluster_role, work_execution_cluster_role};
pub use service_account::Workload;

/// Label on every object built for a Klusterlet, naming it (for watches and cleanup).
pub const KLUSTERLET_LABEL: &str = "operator.open-cluster-management.io/klusterlet";

/// Objects for one cluster, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Objects {
    /// Namespaces.
    pub namespaces: Vec<Namespace>,
    /// CustomResourceDefinitions.
    pub crds: Vec<CustomResourceDefinition>,
    /// ServiceAccounts.
    pub service_accounts: Vec<ServiceAccount>,
    /// Secrets (the image pull secret's copy).
    pub secrets: Vec<Secret>,
    /// ClusterRoles.
    pub cluster_roles: Vec<ClusterRole>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// Roles.
    pub roles: Vec<Role>,
    /// RoleBindings.
    pub role_bindings: Vec<RoleBinding>,
    /// Deployments.
    pub deployments: Vec<Deployment>,
}

impl Objects {
    /// Every object, as the apply engine takes them (it orders them by kind).
    #[must_use]
    pub fn to_dynamic(&self) -> Vec<DynamicObject> {
        let mut out: Vec<DynamicObject> = Vec::new();
        out.extend(self.namespaces.iter().map(to_dynamic));
        out.extend(self.crds.iter().map(to_dynamic));
        out.extend(self.service_accounts.iter().map(to_dynamic));
        out.extend(self.secrets.iter().map(to_dynamic));
        out.extend(self.cluster_roles.iter().map(to_dynamic));
        out.extend(self.cluster_role_bindings.iter().map(to_dynamic));
        out.extend(self.roles.iter().map(to_dynamic));
        out.extend(self.role_bindings.iter().map(to_dynamic));
        out.extend(self.deployments.iter().map(to_dynamic));
        out
    }
}

/// What a Klusterlet should produce.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    /// Objects on the managed cluster.
    pub managed: Objects,
    /// Objects where the agents run: the management cluster (Hosted) or the managed cluster.
    pub management: Objects,
    /// The Klusterlet's labels every object carries (`--enable-sync-labels`).
    pub synced_labels: std::collections::BTreeMap<String, String>,
}

impl Desired {
    /// The objects of the managed cluster, labelled.
    #[must_use]
    pub fn managed_objects(&self) -> Vec<DynamicObject> {
        self.labelled(&self.managed)
    }

    /// The objects of the cluster the agents run on, labelled.
    #[must_use]
    pub fn management_objects(&self) -> Vec<DynamicObject> {
        self.labelled(&self.management)
    }

    fn labelled(&self, objects: &Objects) -> Vec<DynamicObject> {
        let mut out = objects.to_dynamic();
        crate::sync_labels::stamp(&mut out, &self.synced_labels);
        out
    }

    /// The operator namespace's image pull secret, copied to the agent namespace and named by
    /// the agents' ServiceAccounts and pods, as upstream's operator does.
    pub fn pull_with(&mut self, v: &Validated, source: &Secret) {
        let m = &mut self.management;
        m.secrets.push(crate::pull_secret::copy(
            source,
            &v.agent_namespace,
            meta(v, ocm_api::names::IMAGE_PULL_SECRET, None),
        ));
        crate::pull_secret::attach_to_accounts(&mut m.service_accounts);
        crate::pull_secret::attach_to_pods(&mut m.deployments);
    }
}

/// Metadata of a built object: its name, namespace and [`KLUSTERLET_LABEL`].
pub(crate) fn meta(v: &Validated, name: &str, namespace: Option<&str>) -> kube::api::ObjectMeta {
    kube::api::ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(std::collections::BTreeMap::from([(
            KLUSTERLET_LABEL.to_string(),
            v.name.clone(),
        )])),
        ..Default::default()
    }
}

/// The name of a Deployment of an agent, for status.
#[must_use]
pub fn deployment_name(v: &Validated, agent: Agent) -> String {
    match (v.singleton, agent) {
        (true, _) => format!("{}-agent", v.name),
        (false, Agent::Registration) => format!("{}-registration-agent", v.name),
        (false, Agent::Work) => format!("{}-work-agent", v.name),
    }
}

/// One of the two agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Registers the cluster and keeps its hub credential.
    Registration,
    /// Applies ManifestWorks.
    Work,
}

/// Builds everything a Klusterlet should produce. Agents that run in this process get no
/// ServiceAccount and no Deployment; in Singleton modes the combined agent is deployed only when
/// neither agent runs in this process.
#[must_use]
pub fn build(v: &Validated, in_process: InProcess) -> Desired {
    let mut managed = Objects {
        crds: crd::managed(v),
        ..Objects::default()
    };
    managed.namespaces.push(namespace::addon());
    let mut management = Objects::default();
    management
        .namespaces
        .push(namespace::namespace(v, &v.agent_namespace));
    let deployed = service_account::deployed_agents(v, in_process);
    // In Default modes the management cluster is the managed one.
    management.service_accounts =
        service_account::agents(v, &v.agent_namespace, &deployed, !v.hosted);
    if v.hosted {
        // The agents' identities on the managed cluster, which the managed-side bindings name.
        managed
            .namespaces
            .push(namespace::namespace(v, &v.managed_namespace));
        managed.service_accounts =
            service_account::agents(v, &v.managed_namespace, &deployed, true);
    }
    let subjects_namespace = if v.hosted {
        &v.managed_namespace
    } else {
        &v.agent_namespace
    };
    (managed.cluster_roles, managed.cluster_role_bindings) = rbac::managed(v, subjects_namespace);
    (management.roles, management.role_bindings) = rbac::management(v);
    let (role, binding) = rbac::addon_management(v, "management:", &v.agent_namespace);
    management.cluster_roles.push(role);
    management.cluster_role_bindings.push(binding);
    if v.hosted {
        // The other add-ons' secrets, on the managed cluster, as its account there.
        let (role, binding) = rbac::addon_management(v, "", subjects_namespace);
        managed.cluster_roles.push(role);
        managed.cluster_role_bindings.push(binding);
    }
    management.deployments = deployment::agents(v, &deployed);
    Desired {
        managed,
        management,
        synced_labels: std::collections::BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of the build step: the objects of each mode, from minimal Klusterlet fixtures.
    use super::*;
    use crate::klusterlet::validate::test_support::{EVERY_AGENT_FIELD, klusterlet};
    use crate::klusterlet::validate::validate;

    fn built(spec: &str, in_process: InProcess) -> Desired {
        build(&validate(&klusterlet(spec)).unwrap(), in_process)
    }

    fn names<T: kube::Resource>(list: &[T]) -> Vec<String> {
        list.iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    o.meta().namespace.as_deref().unwrap_or(""),
                    o.meta().name.as_deref().unwrap()
                )
            })
            .collect()
    }

    fn pod(d: &Deployment) -> &k8s_openapi::api::core::v1::PodSpec {
        d.spec.as_ref().unwrap().template.spec.as_ref().unwrap()
    }

    fn args(d: &Deployment) -> Vec<String> {
        pod(d).containers[0].args.clone().unwrap()
    }

    #[test]
    fn the_cluster_property_gate_installs_the_about_api_and_reaches_our_agent() {
        let gated = "{clusterName: c1, registrationImagePullSpec: 'r.example/clusteradm:v1', workImagePullSpec: 'r.example/clusteradm:v1', imagePullSpec: 'r.example/clusteradm:v1', registrationConfiguration: {featureGates: [{feature: ClusterProperty, mode: Enable}]}}";
        let d = built(gated, InProcess::default());
        assert!(names(&d.managed.crds).contains(&format!("/{}", ocm_api::about::CRD_NAME)));
        let agent_args = args(&d.management.deployments[0]);
        assert!(
            agent_args.contains(&"--feature-gates=ClusterProperty=true".to_string()),
            "{agent_args:?}"
        );
        let plain = built("{clusterName: c1}", InProcess::default());
        assert!(!names(&plain.managed.crds).contains(&format!("/{}", ocm_api::about::CRD_NAME)));
    }

    #[test]
    fn aws_irsa_reaches_upstreams_registering_agents_as_upstreams_operator_writes_it() {
        use crate::klusterlet::aws_irsa::ROLE_ANNOTATION;
        let role =
            "arn:aws:iam::123456789012:role/ocm-managed-cluster-7f8141296c75f2871e3d030f85c35692";
        let irsa = "registrationConfiguration: {registrationDriver: {authType: awsirsa, awsIrsa: {hubClusterArn: 'arn:aws:eks:us-west-2:123456789012:cluster/hub-cluster1', managedClusterArn: 'arn:aws:eks:us-west-2:123456789012:cluster/managed-cluster1'}}}";
        for (mode, registering) in [
            ("Default", "klusterlet-registration-agent"),
            ("Singleton", "klusterlet-agent"),
            ("Hosted", "klusterlet-registration-agent"),
        ] {
            let d = built(
                &format!("{{clusterName: c1, deployOption: {{mode: {mode}}}, {irsa}}}"),
                InProcess::default(),
            );
            for dep in &d.management.deployments {
                let pod = pod(dep);
                let app = &pod.containers[0].name;
                let a = args(dep);
                if app == registering {
                    assert!(
                        a.contains(&"--registration-auth=awsirsa".to_owned()),
                        "{a:?}"
                    );
                    assert!(
                        a.contains(
                            &"--managed-cluster-role-suffix=7f8141296c75f2871e3d030f85c35692"
                                .to_owned()
                        )
                    );
                    let init = &pod.init_containers.as_ref().unwrap()[0];
                    assert_eq!(init.image.as_deref(), Some("amazon/aws-cli:latest"));
                    let mounts: Vec<&str> = pod.containers[0]
                        .volume_mounts
                        .iter()
                        .flatten()
                        .map(|m| m.mount_path.as_str())
                        .collect();
                    assert!(
                        mounts.contains(&"/.aws") && mounts.contains(&"/awscli"),
                        "{mounts:?}"
                    );
                } else {
                    assert!(!a.iter().any(|f| f.contains("arn")), "{app}: {a:?}");
                    assert!(pod.init_containers.is_none());
                }
            }
            // The role on the managed cluster's accounts (the management cluster's in
            // Default modes); never on a Hosted mode's management-side ones.
            let annotated = |list: &[ServiceAccount]| {
                list.iter().all(|sa| {
                    sa.metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(ROLE_ANNOTATION))
                        .map(String::as_str)
                        == Some(role)
                })
            };
            let hosted = mode == "Hosted";
            assert!(
                annotated(&d.managed.service_accounts) && !d.management.service_accounts.is_empty()
            );
            assert_eq!(annotated(&d.management.service_accounts), !hosted, "{mode}");
        }
        // Without it: no trace.
        let plain = built("{clusterName: c1}", InProcess::default());
        assert!(
            plain
                .management
                .service_accounts
                .iter()
                .all(|sa| sa.metadata.annotations.is_none())
        );
        assert!(
            plain
                .management
                .deployments
                .iter()
                .all(|d| pod(d).init_containers.is_none())
        );
    }

    #[test]
    fn the_work_configurations_durations_reach_the_work_agent_of_either_image() {
        let work = "workConfiguration: {appliedManifestWorkEvictionGracePeriod: 90m, statusSyncInterval: 30s}";
        let flag = "--appliedmanifestwork-eviction-grace-period=90m".to_string();
        let sync = "--status-sync-interval=30s".to_string();
        // Upstream's: the work agent takes it, the registration agent does not.
        let d = built(
            &format!("{{clusterName: c1, {work}}}"),
            InProcess::default(),
        );
        let by_name = |name: &str| {
            d.management
                .deployments
                .iter()
                .find(|dep| {
                    dep.metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.ends_with(name))
                })
                .map(args)
                .unwrap()
        };
        assert!(by_name("-work-agent").contains(&flag));
        assert!(by_name("-work-agent").contains(&sync));
        assert!(!by_name("-registration-agent").contains(&flag));
        assert!(!by_name("-registration-agent").contains(&sync));
        // Ours: its work agent, and in Singleton mode the one agent.
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1', workImagePullSpec: 'r.example/clusteradm:v1', imagePullSpec: 'r.example/clusteradm:v1'";
        for mode in ["Default", "Singleton"] {
            let d = built(
                &format!("{{clusterName: c1, deployOption: {{mode: {mode}}}, {ours}, {work}}}"),
                InProcess::default(),
            );
            let agents: Vec<Vec<String>> = d.management.deployments.iter().map(args).collect();
            let working: Vec<&Vec<String>> = agents
                .iter()
                .filter(|a| !a.contains(&"--components=registration".to_owned()))
                .collect();
            assert_eq!(working.len(), 1, "{agents:?}");
            assert!(working[0].contains(&flag) && working[0].contains(&sync));
            assert!(
                agents
                    .iter()
                    .filter(|a| a.contains(&"--components=registration".to_owned()))
                    .all(|a| !a.contains(&flag)),
                "{agents:?}"
            );
        }
        // Unset: no flag, the agent's default.
        let d = built("{clusterName: c1}", InProcess::default());
        assert!(d.management.deployments.iter().all(|dep| {
            !args(dep)
                .iter()
                .any(|a| a.contains("eviction") || a.contains("status-sync"))
        }));
    }

    #[test]
    fn multiple_hubs_reach_the_agents_as_each_image_takes_them() {
        let hubs = "registrationConfiguration: {featureGates: [{feature: MultipleHubs, mode: Enable}], bootstrapKubeConfigs: {type: LocalSecrets, localSecretsConfig: {kubeConfigSecrets: [{name: h1}, {name: h2}], hubConnectionTimeoutSeconds: 200}}}";
        // Upstream's agent: each secret mounted at /spoke/<name>, one flag per file.
        let d = built(
            &format!("{{clusterName: c1, {hubs}}}"),
            InProcess::default(),
        );
        let registration = &d.management.deployments[0];
        let a = args(registration);
        assert!(
            a.contains(&"--bootstrap-kubeconfigs=/spoke/h1/kubeconfig".to_string()),
            "{a:?}"
        );
        assert!(
            a.contains(&"--bootstrap-kubeconfigs=/spoke/h2/kubeconfig".to_string()),
            "{a:?}"
        );
        assert!(
            a.contains(&"--hub-connection-timeout-seconds=200".to_string()),
            "{a:?}"
        );
        assert!(
            !a.iter().any(|x| x.starts_with("--bootstrap-kubeconfig=")),
            "{a:?}"
        );
        let volumes = serde_json::to_value(&pod(registration).volumes).unwrap();
        assert_eq!(volumes[0]["secret"]["secretName"], "h1");
        assert_eq!(volumes[1]["secret"]["secretName"], "h2");
        // Ours: the secrets by name (read through the API), none mounted.
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1', workImagePullSpec: 'r.example/clusteradm:v1', imagePullSpec: 'r.example/clusteradm:v1'";
        let d = built(
            &format!("{{clusterName: c1, {ours}, {hubs}}}"),
            InProcess::default(),
        );
        let agent = &d.management.deployments[0];
        let a = args(agent);
        assert!(
            a.contains(&"--bootstrap-kubeconfig-secrets=h1,h2".to_string()),
            "{a:?}"
        );
        assert!(
            a.contains(&"--hub-connection-timeout-seconds=200".to_string()),
            "{a:?}"
        );
        let volumes = serde_json::to_string(&pod(agent).volumes).unwrap();
        assert!(
            !volumes.contains("bootstrap") && !volumes.contains("\"h1\""),
            "{volumes}"
        );
    }

    #[test]
    fn default_mode_deploys_both_agents_with_upstream_names() {
        let d = built(
            "{clusterName: c1, externalServerURLs: [{url: 'https://m:6443'}]}",
            InProcess::default(),
        );
        assert_eq!(
            names(&d.management.namespaces),
            ["/open-cluster-management-agent"]
        );
        assert_eq!(
            names(&d.management.deployments),
            [
                "open-cluster-management-agent/klusterlet-registration-agent",
                "open-cluster-management-agent/klusterlet-work-agent"
            ]
        );
        assert_eq!(
            names(&d.management.service_accounts),
            [
                "open-cluster-management-agent/klusterlet-registration-sa",
                "open-cluster-management-agent/klusterlet-work-sa"
            ]
        );
        assert_eq!(
            names(&d.managed.cluster_roles),
            [
                "/open-cluster-management:klusterlet-registration:agent",
                "/open-cluster-management:klusterlet-work:agent",
                "/open-cluster-management:klusterlet-work:execution",
                "/open-cluster-management:klusterlet-work:aggregate",
            ]
        );
        assert!(
            names(&d.managed.cluster_role_bindings)
                .contains(&"/open-cluster-management:klusterlet-work:execution-admin".to_string())
        );
        assert_eq!(
            names(&d.managed.crds),
            [
                "/appliedmanifestworks.work.open-cluster-management.io",
                "/clusterclaims.cluster.open-cluster-management.io"
            ]
        );
        assert_eq!(
            names(&d.managed.namespaces),
            ["/open-cluster-management-agent-addon"],
            "the agent namespace is the managed namespace; the add-on namespace is ensured"
        );
        let reg = args(&d.management.deployments[0]);
        assert_eq!(
            reg,
            [
                "/registration",
                "agent",
                "--spoke-cluster-name=c1",
                "--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig",
                "--spoke-external-server-urls=https://m:6443",
                "--disable-leader-election",
                "--terminate-on-files=/spoke/hub-kubeconfig/kubeconfig",
            ]
        );
        let work = args(&d.management.deployments[1]);
        assert_eq!(
            &work[..4],
            [
                "/work",
                "agent",
                "--spoke-cluster-name=c1",
                "--hub-kubeconfig=/spoke/hub-kubeconfig/kubeconfig"
            ]
        );
        let image = pod(&d.management.deployments[1]).containers[0]
            .image
            .clone();
        assert_eq!(
            image.as_deref(),
            Some("quay.io/open-cluster-management/work:v1.3.1")
        );
    }

    #[test]
    fn in_process_agents_get_no_deployment_or_service_account() {
        let d = built(
            "clusterName: c1",
            InProcess {
                registration: true,
                work: false,
            },
        );
        assert_eq!(
            names(&d.management.deployments),
            ["open-cluster-management-agent/klusterlet-work-agent"]
        );
        assert_eq!(
            names(&d.management.service_accounts),
            ["open-cluster-management-agent/klusterlet-work-sa"]
        );
        let d = built(
            "clusterName: c1",
            InProcess {
                registration: true,
                work: true,
            },
        );
        assert!(d.management.deployments.is_empty() && d.management.service_accounts.is_empty());
        assert_eq!(
            d.managed.cluster_roles.len(),
            4,
            "RBAC stays: it costs nothing and allows switching back"
        );
    }

    #[test]
    fn the_work_agent_gets_upstreams_aggregated_role() {
        let d = built("clusterName: c1", InProcess::default());
        // Upstream's aggregation: the execution role and any labelled one, bound to the agent.
        let aggregate = &d.managed.cluster_roles[3];
        assert!(
            aggregate.rules.is_none(),
            "left to the aggregation controller"
        );
        assert_eq!(
            aggregate
                .aggregation_rule
                .as_ref()
                .unwrap()
                .cluster_role_selectors
                .as_ref()
                .unwrap()[0]
                .match_labels
                .as_ref()
                .unwrap()[rbac::AGGREGATE_TO_WORK],
            "true"
        );
        assert_eq!(
            d.managed.cluster_roles[2].metadata.labels.as_ref().unwrap()[rbac::AGGREGATE_TO_WORK],
            "true"
        );
        assert!(
            names(&d.managed.cluster_role_bindings)
                .contains(&"/open-cluster-management:klusterlet-work:aggregate".to_string())
        );
    }

    #[test]
    fn singleton_mode_deploys_one_agent() {
        let d = built(
            "{clusterName: c1, deployOption: {mode: Singleton}}",
            InProcess::default(),
        );
        assert_eq!(
            names(&d.management.deployments),
            ["open-cluster-management-agent/klusterlet-agent"]
        );
        assert_eq!(
            &args(&d.management.deployments[0])[..2],
            ["/registration-operator", "agent"]
        );
        let subjects: Vec<String> = d
            .managed
            .cluster_role_bindings
            .iter()
            .map(|b| b.subjects.as_ref().unwrap()[0].name.clone())
            .collect();
        assert!(
            subjects.iter().all(|s| s == "klusterlet-agent-sa"),
            "{subjects:?}"
        );
    }

    /// The operator's role grants Secrets only by the names in [`crate::klusterlet::SECRETS`]:
    /// every Secret it builds, or writes for a Hosted agent, in every mode, is one of them.
    #[test]
    fn every_secret_the_operator_writes_is_named_in_its_role() {
        use crate::klusterlet::SECRETS;
        use crate::klusterlet::managed_kubeconfig::secret_name;
        let source = Secret::default();
        for mode in ["Default", "Singleton", "Hosted", "SingletonHosted"] {
            let spec = format!("{{clusterName: c1, deployOption: {{mode: {mode}}}}}");
            let v = validate(&klusterlet(&spec)).unwrap();
            let mut d = build(&v, InProcess::default());
            d.pull_with(&v, &source);
            let secrets: Vec<_> = d
                .managed_objects()
                .into_iter()
                .chain(d.management_objects())
                .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "Secret"))
                .collect();
            assert!(!secrets.is_empty(), "{mode}: the pull secret's copy");
            for secret in secrets {
                let name = secret.metadata.name.unwrap();
                assert!(SECRETS.contains(&name.as_str()), "{mode}: {name}");
            }
        }
        for w in [Workload::Registration, Workload::Work, Workload::Singleton] {
            assert!(SECRETS.contains(&secret_name(w)), "{}", secret_name(w));
        }
    }

    #[test]
    fn hosted_mode_splits_the_clusters() {
        let d = built(
            "{clusterName: c1, namespace: open-cluster-management-x, deployOption: {mode: Hosted}}",
            InProcess::default(),
        );
        assert_eq!(names(&d.management.namespaces), ["/klusterlet"]);
        assert_eq!(
            names(&d.managed.namespaces),
            [
                "/open-cluster-management-agent-addon",
                "/open-cluster-management-x"
            ]
        );
        assert!(
            d.management
                .deployments
                .iter()
                .all(|dep| dep.metadata.namespace.as_deref() == Some("klusterlet"))
        );
        let reg = args(&d.management.deployments[0]);
        assert!(
            reg.contains(&"--spoke-kubeconfig=/spoke/config/kubeconfig".to_string()),
            "{reg:?}"
        );
        // Where the agents run, only the add-on ClusterRole: secrets and leases, bound to the agent
        // there (Hosted add-ons' agents run beside it).
        assert!(d.management.crds.is_empty());
        assert_eq!(
            names(&d.management.cluster_roles),
            ["/open-cluster-management:management:klusterlet-registration:addon-management"]
        );
        let addon_subject = &d.management.cluster_role_bindings[0]
            .subjects
            .as_ref()
            .unwrap()[0];
        assert_eq!(addon_subject.namespace.as_deref(), Some("klusterlet"));
        let subject = &d.managed.cluster_role_bindings[0]
            .subjects
            .as_ref()
            .unwrap()[0];
        assert_eq!(
            subject.namespace.as_deref(),
            Some("open-cluster-management-x")
        );
        // On the managed cluster, the add-ons' secrets there, for the registration account there
        // (upstream's managed-side role of that name).
        let addons = d
            .managed
            .cluster_role_bindings
            .iter()
            .find(|b| {
                b.role_ref.name
                    == "open-cluster-management:klusterlet-registration:addon-management"
            })
            .expect("the managed-side add-on-management binding");
        let subject = &addons.subjects.as_ref().unwrap()[0];
        assert_eq!(
            (subject.name.as_str(), subject.namespace.as_deref()),
            (
                "klusterlet-registration-sa",
                Some("open-cluster-management-x")
            )
        );
        assert!(
            names(&d.managed.cluster_roles).contains(
                &"/open-cluster-management:klusterlet-registration:addon-management".into()
            )
        );
    }

    #[test]
    fn every_object_is_labelled_and_converts() {
        let d = built("clusterName: c1", InProcess::default());
        for obj in d
            .managed
            .to_dynamic()
            .iter()
            .chain(d.management.to_dynamic().iter())
        {
            // Shared by every Klusterlet of the cluster: no one's label.
            if obj.types.as_ref().unwrap().kind == "CustomResourceDefinition"
                || obj.metadata.name.as_deref() == Some(ocm_api::names::ADDON_NAMESPACE)
            {
                continue;
            }
            assert_eq!(
                obj.metadata.labels.as_ref().unwrap()[KLUSTERLET_LABEL],
                "klusterlet",
                "{:?}",
                obj.metadata.name
            );
        }
    }

    #[test]
    fn every_rule_is_least_privilege() {
        for rule in registration_cluster_role()
            .iter()
            .chain(work_cluster_role().iter())
        {
            assert!(!rule.verbs.contains(&"*".to_string()));
            assert!(!rule.resources.as_ref().unwrap().contains(&"*".to_string()));
            assert!(
                !rule
                    .resources
                    .as_ref()
                    .unwrap()
                    .contains(&"secrets".to_string()),
                "no cluster-wide secrets"
            );
        }
    }

    #[test]
    fn our_image_in_default_mode_runs_upstreams_two_deployments_one_agent_each() {
        let d = built(
            "{clusterName: c1, registrationImagePullSpec: 'example.com/clusteradm:v1', workImagePullSpec: 'example.com/clusteradm:v1'}",
            InProcess::default(),
        );
        assert_eq!(
            names(&d.management.deployments),
            [
                "open-cluster-management-agent/klusterlet-registration-agent",
                "open-cluster-management-agent/klusterlet-work-agent"
            ]
        );
        let (registration, work) = (
            args(&d.management.deployments[0]),
            args(&d.management.deployments[1]),
        );
        assert!(registration.contains(&"--components=registration".to_owned()));
        assert!(work.contains(&"--components=work".to_owned()));
        for deployment in &d.management.deployments {
            let pod = pod(deployment);
            assert!(
                pod.service_account_name
                    .as_deref()
                    .is_some_and(|sa| sa.ends_with("-registration-sa") || sa.ends_with("-work-sa"))
            );
            assert_eq!(
                pod.containers[0].image.as_deref(),
                Some("example.com/clusteradm:v1")
            );
        }
    }

    #[test]
    fn our_image_in_singleton_mode_is_one_agent_deployment() {
        let d = built(
            "{clusterName: c1, deployOption: {mode: Singleton}, registrationImagePullSpec: 'example.com/clusteradm:v1', workImagePullSpec: 'example.com/clusteradm:v1'}",
            InProcess::default(),
        );
        assert_eq!(
            names(&d.management.deployments),
            ["open-cluster-management-agent/klusterlet-agent"]
        );
        let deployment = &d.management.deployments[0];
        assert_eq!(
            args(deployment),
            [
                "controller",
                "agent",
                "--cluster-name=c1",
                "--agent-namespace=open-cluster-management-agent",
                "--probe-address=0.0.0.0:8000",
                "--metrics-address=0.0.0.0:8443",
            ]
        );
        let spec = serde_json::to_value(pod(deployment)).unwrap();
        assert!(crate::pod_security::is_restricted(&spec), "{spec:#}");
        let agent_ns = &d.management.namespaces[0];
        assert_eq!(
            agent_ns.metadata.labels.as_ref().unwrap()[crate::pod_security::ENFORCE],
            "restricted"
        );
        let container = &pod(deployment).containers[0];
        assert_eq!(
            container.image.as_deref(),
            Some("example.com/clusteradm:v1")
        );
        assert!(container.liveness_probe.is_some() && container.readiness_probe.is_some());
    }

    #[test]
    fn our_hosted_agent_acts_on_the_mounted_managed_kubeconfig() {
        let d = built(
            "{clusterName: c1, deployOption: {mode: SingletonHosted}, registrationImagePullSpec: 'example.com/clusteradm:v1', workImagePullSpec: 'example.com/clusteradm:v1'}",
            InProcess::default(),
        );
        assert_eq!(
            names(&d.management.deployments),
            ["klusterlet/klusterlet-agent"]
        );
        let deployment = &d.management.deployments[0];
        assert!(
            args(deployment).contains(&"--managed-kubeconfig=/spoke/config/kubeconfig".to_string()),
            "{:?}",
            args(deployment)
        );
        // The agent's own kubeconfig (upstream's name), never the user's admin one.
        let secrets: Vec<_> = pod(deployment)
            .volumes
            .clone()
            .unwrap()
            .into_iter()
            .filter_map(|v| v.secret.and_then(|s| s.secret_name))
            .collect();
        assert!(
            secrets.contains(&"external-managed-kubeconfig-agent".to_string()),
            "{secrets:?}"
        );
        assert!(!secrets.contains(&ocm_api::names::EXTERNAL_MANAGED_SECRET.to_string()));
    }

    #[test]
    fn placement_priority_host_alias_and_rates_reach_every_agent_pod() {
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1'\nworkImagePullSpec: 'r.example/clusteradm:v1'\n";
        for spec in [
            EVERY_AGENT_FIELD.to_owned(),
            format!("{EVERY_AGENT_FIELD}{ours}"),
        ] {
            let d = built(&spec, InProcess::default());
            assert!(!d.management.deployments.is_empty());
            for deployment in &d.management.deployments {
                let pod = pod(deployment);
                assert_eq!(pod.node_selector.as_ref().unwrap()["zone"], "a");
                assert_eq!(
                    pod.tolerations.as_ref().unwrap()[0].key.as_deref(),
                    Some("dedicated")
                );
                assert_eq!(pod.priority_class_name.as_deref(), Some("agents-high"));
                let alias = &pod.host_aliases.as_ref().unwrap()[0];
                assert_eq!(alias.ip, "10.0.0.7");
                assert_eq!(
                    alias.hostnames.as_deref(),
                    Some(&["hub.example.com".to_string()][..])
                );
            }
        }
    }

    #[test]
    fn registration_and_rate_settings_become_upstreams_flags_for_each_agent() {
        let d = built(EVERY_AGENT_FIELD, InProcess::default());
        let by_suffix = |suffix: &str| {
            d.management
                .deployments
                .iter()
                .find(|dep| dep.metadata.name.as_deref().unwrap().ends_with(suffix))
                .map(args)
                .unwrap()
        };
        let registration = by_suffix("-registration-agent");
        for flag in [
            "--kube-api-qps=10",
            "--kube-api-burst=40",
            "--client-cert-expiration-seconds=3600",
            "--cluster-annotations=agent.open-cluster-management.io/zone=a",
            "--spoke-external-server-urls=https://c1.example.com:6443",
            "--max-custom-cluster-claims=5",
            "--reserved-cluster-claim-suffixes=.example.com",
            "--addon-kubeclient-registration-auth=csr",
        ] {
            assert!(
                registration.contains(&flag.to_owned()),
                "{flag} not in {registration:?}"
            );
        }
        let work = by_suffix("-work-agent");
        for flag in [
            "--kube-api-qps=30",
            "--kube-api-burst=20",
            "--hub-kube-api-qps=7",
            "--hub-kube-api-burst=9",
        ] {
            assert!(work.contains(&flag.to_owned()), "{flag} not in {work:?}");
        }
        assert!(!work.iter().any(|a| a.starts_with("--cluster-annotations")));
    }

    #[test]
    fn every_field_becomes_a_flag_of_our_agent() {
        let ours = "registrationImagePullSpec: 'r.example/clusteradm:v1'\nworkImagePullSpec: 'r.example/clusteradm:v1'\ndeployOption: {mode: Singleton}\n";
        let labelled = "registrationConfiguration:\n  clusterLabels: {env: prod}\n";
        let spec =
            format!("{EVERY_AGENT_FIELD}{ours}").replace("registrationConfiguration:\n", labelled);
        let d = built(&spec, InProcess::default());
        let agent_args = args(&d.management.deployments[0]);
        assert!(
            agent_args.contains(&"--cluster-labels=env=prod".to_owned()),
            "{agent_args:?}"
        );
        // The larger of the registration and work rates, as upstream's Singleton agent.
        assert!(
            agent_args.contains(&"--kube-api-qps=30".to_owned()),
            "{agent_args:?}"
        );
        assert!(agent_args.contains(&"--kube-api-burst=40".to_owned()));
        assert!(agent_args.contains(&"--hub-kube-api-qps=7".to_owned()));
        // The default add-on driver is left unsaid; tokens are passed on with their lifetime.
        assert!(!agent_args.iter().any(|a| a.starts_with("--addon-")));
        let by_token = format!("{EVERY_AGENT_FIELD}{ours}").replace(
            "{authType: csr}",
            "{authType: token, token: {expirationSeconds: 7200}}",
        );
        assert_ne!(by_token, format!("{EVERY_AGENT_FIELD}{ours}"));
        let d = built(&by_token, InProcess::default());
        let agent_args = args(&d.management.deployments[0]);
        for flag in [
            "--addon-kubeclient-registration-auth=token",
            "--addon-token-expiration-seconds=7200",
        ] {
            assert!(agent_args.contains(&flag.to_owned()), "{agent_args:?}");
        }
    }
}
