//! What this project does with every spec field of every kind it serves: the Klusterlet, the
//! ClusterManager and the ManifestWork a platform team configures its fleet with, and the
//! clusters, sets, placements, replica sets and add-ons it runs. A field is honoured as
//! upstream's components honour it, or refused with a message where it is set — never accepted
//! and silently dropped (there is no third way to list a field). Each entry names the test that proves it;
//! an entry covers its field and everything under it, unless a longer entry says otherwise.
//!
//! The tests below walk the CRDs generated from our types and fail for a field no entry covers,
//! an entry that names no field, and a proof that names no test. `clusteradm generate` renders
//! [`table`] into the README.

use std::fmt::Write as _;

/// What happens to a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// Works as upstream's components make it work.
    Honoured,
    /// Refused where it is set, with the field named (a condition or a CLI error).
    Refused,
}

/// One field (and what is under it) of one kind.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The kind.
    pub kind: &'static str,
    /// The path from `spec`, `[]` for a list's items.
    pub path: &'static str,
    /// What happens to it.
    pub treatment: Treatment,
    /// What it does here.
    pub note: &'static str,
    /// The test that proves it.
    pub proof: &'static str,
}

const fn honoured(
    kind: &'static str,
    path: &'static str,
    note: &'static str,
    proof: &'static str,
) -> Field {
    Field {
        kind,
        path,
        treatment: Treatment::Honoured,
        note,
        proof,
    }
}

const fn refused(
    kind: &'static str,
    path: &'static str,
    note: &'static str,
    proof: &'static str,
) -> Field {
    Field {
        kind,
        path,
        treatment: Treatment::Refused,
        note,
        proof,
    }
}

const K: &str = "Klusterlet";
const CM: &str = "ClusterManager";
const MW: &str = "ManifestWork";
const MC: &str = "ManagedCluster";
const MCS: &str = "ManagedClusterSet";
const MCSB: &str = "ManagedClusterSetBinding";
const PL: &str = "Placement";
const MWRS: &str = "ManifestWorkReplicaSet";
const AMW: &str = "AppliedManifestWork";
const CC: &str = "ClusterClaim";
const CPROP: &str = "ClusterProperty";
const PROF: &str = "ClusterProfile";
const ADC: &str = "AddOnDeploymentConfig";
const AT: &str = "AddOnTemplate";
const CMA: &str = "ClusterManagementAddOn";
const MCA: &str = "ManagedClusterAddOn";

/// Every field, by kind and path.
pub const FIELDS: &[Field] = &[
    // Klusterlet
    honoured(
        K,
        "spec.clusterName",
        "the name the agents register under; none: the name stored with the hub credential, else a new one",
        "a_klusterlet_without_a_cluster_name_keeps_the_name_its_agent_stored",
    ),
    honoured(
        K,
        "spec.namespace",
        "the agents' namespace on the managed cluster",
        "hosted_agents_run_in_the_klusterlet_namespace",
    ),
    honoured(
        K,
        "spec.deployOption.mode",
        "Default, Singleton, Hosted, SingletonHosted",
        "hosted_mode_runs_the_agents_on_the_management_cluster",
    ),
    honoured(
        K,
        "spec.registrationImagePullSpec",
        "registration agent image (the same as workImagePullSpec: our one agent)",
        "default_mode_deploys_both_agents_with_upstream_names",
    ),
    honoured(
        K,
        "spec.workImagePullSpec",
        "work agent image",
        "default_mode_deploys_both_agents_with_upstream_names",
    ),
    honoured(
        K,
        "spec.imagePullSpec",
        "the Singleton agent's image",
        "singleton_mode_deploys_one_agent",
    ),
    honoured(
        K,
        "spec.externalServerURLs",
        "reported in the ManagedCluster's client configs, with the cluster's CA unless a caBundle is given",
        "the_klusterlets_registration_settings_reach_the_managed_cluster_on_the_hub",
    ),
    honoured(
        K,
        "spec.hubApiServerHostAlias",
        "a hosts entry in every agent pod",
        "placement_priority_host_alias_and_rates_reach_every_agent_pod",
    ),
    honoured(
        K,
        "spec.nodePlacement",
        "node selector and tolerations of every agent pod",
        "placement_priority_host_alias_and_rates_reach_every_agent_pod",
    ),
    honoured(
        K,
        "spec.priorityClassName",
        "priority class of every agent pod",
        "placement_priority_host_alias_and_rates_reach_every_agent_pod",
    ),
    honoured(
        K,
        "spec.resourceRequirement",
        "requests and limits of every agent container",
        "the_loop_installs_the_agents_and_unjoin_removes_everything",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.featureGates",
        "the registration agent's gates (unknown ones reported)",
        "the_cluster_property_gate_installs_the_about_api_and_reaches_our_agent",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.clientCertExpirationSeconds",
        "requested lifetime of the hub client certificate",
        "the_certificate_rotates_without_user_action",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.clusterAnnotations",
        "put on the ManagedCluster the agent creates (agent.open-cluster-management.io keys only, as upstream)",
        "the_klusterlets_registration_settings_reach_the_managed_cluster_on_the_hub",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.clusterLabels",
        "put on the ManagedCluster our agent creates; refused with upstream's images, whose agents do not act on it",
        "the_klusterlets_registration_settings_reach_the_managed_cluster_on_the_hub",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.clusterClaimConfiguration",
        "how many custom claims are reported; which suffixes are reserved",
        "the_klusterlets_registration_settings_reach_the_managed_cluster_on_the_hub",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.kubeAPIQPS",
        "the registration agent's request rate to the managed cluster (our one agent: the larger of both agents')",
        "a_rate_limited_client_waits_its_window_and_an_unlimited_one_does_not",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.kubeAPIBurst",
        "likewise, its burst",
        "assert_placement_and_rates_reach_the_agents",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.bootstrapKubeConfigs",
        "MultipleHubs: the hubs to choose from and the timeout",
        "multiple_hubs_reach_the_agents_as_each_image_takes_them",
    ),
    refused(
        K,
        "spec.registrationConfiguration.registrationDriver",
        "anything but csr is refused on the Klusterlet (the agents here register with a CSR)",
        "fields_no_deployed_agent_acts_on_are_refused_with_the_field_named",
    ),
    honoured(
        K,
        "spec.registrationConfiguration.addOnKubeClientRegistrationDriver",
        "csr or token, for our agent and upstream's (a token lifetime under 600 s is refused)",
        "the_addon_driver_reaches_our_agent_and_a_short_token_is_refused",
    ),
    honoured(
        K,
        "spec.workConfiguration.featureGates",
        "the work agent's gates",
        "without_the_cache_gate_every_resync_asks_again",
    ),
    honoured(
        K,
        "spec.workConfiguration.appliedManifestWorkEvictionGracePeriod",
        "how long records of works the hub no longer has are kept before their resources go",
        "records_of_another_hub_are_evicted_after_the_grace_period_not_before",
    ),
    honoured(
        K,
        "spec.workConfiguration.statusSyncInterval",
        "how often feedback and condition rules are read again",
        "feedback_follows_the_status_sync_interval",
    ),
    honoured(
        K,
        "spec.workConfiguration.kubeAPIQPS",
        "the work agent's request rate to the managed cluster",
        "registration_and_rate_settings_become_upstreams_flags_for_each_agent",
    ),
    honoured(
        K,
        "spec.workConfiguration.kubeAPIBurst",
        "likewise, its burst",
        "registration_and_rate_settings_become_upstreams_flags_for_each_agent",
    ),
    honoured(
        K,
        "spec.workConfiguration.hubKubeAPIQPS",
        "the work agent's request rate to the hub",
        "assert_placement_and_rates_reach_the_agents",
    ),
    honoured(
        K,
        "spec.workConfiguration.hubKubeAPIBurst",
        "likewise, its burst",
        "registration_and_rate_settings_become_upstreams_flags_for_each_agent",
    ),
    // ClusterManager
    honoured(
        CM,
        "spec.registrationImagePullSpec",
        "registration controller and webhook image (one image for all three: our hub pod)",
        "default_mode_deploys_every_component_with_the_images_of_the_spec",
    ),
    honoured(
        CM,
        "spec.workImagePullSpec",
        "work webhook image",
        "default_mode_deploys_every_component_with_the_images_of_the_spec",
    ),
    honoured(
        CM,
        "spec.placementImagePullSpec",
        "placement controller image",
        "default_mode_deploys_every_component_with_the_images_of_the_spec",
    ),
    honoured(
        CM,
        "spec.addOnManagerImagePullSpec",
        "with upstream's images, the image of upstream's add-on manager and add-on webhook, which the operator deploys as upstream's does; with our image the hub pod runs both",
        "upstreams_addon_manager_addon_webhook_and_work_controller_follow_their_gates",
    ),
    honoured(
        CM,
        "spec.nodePlacement",
        "node selector and tolerations of every hub pod",
        "placement_resources_and_webhook_ports_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.resourceRequirement",
        "requests and limits of every hub container",
        "placement_resources_and_webhook_ports_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.deployOption.mode",
        "Default; Hosted with our image: the hub pods on the management cluster, acting on the hub through Secret cluster-manager/external-hub-kubeconfig (upstream's component images named to our operator: UnsupportedDeployMode; upstream's operator, which `init --mode hosted` without `--image` deploys, hosts them)",
        "a_hosted_hub_is_split_between_the_hub_and_the_management_cluster",
    ),
    honoured(
        CM,
        "spec.deployOption.hosted",
        "where the hub's API server reaches the hub pods' webhooks: an IP (the Service's Endpoints), a DNS name (ExternalName); left out, the hub pods' own addresses",
        "no_address_means_the_pods_own_an_ip_an_endpoint_and_a_name_an_external_name",
    ),
    refused(
        CM,
        "spec.deployOption.hosted.registrationWebhookConfiguration.bindConfiguration",
        "our hub pods serve every webhook on the pod network, port 9443",
        "what_one_pod_cannot_serve_is_refused_by_its_field",
    ),
    refused(
        CM,
        "spec.deployOption.hosted.workWebhookConfiguration.bindConfiguration",
        "likewise; the work webhook's address must be the registration webhook's",
        "what_one_pod_cannot_serve_is_refused_by_its_field",
    ),
    honoured(
        CM,
        "spec.deployOption.default.registrationWebhookConfiguration",
        "the webhook's ports",
        "placement_resources_and_webhook_ports_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.deployOption.default.workWebhookConfiguration",
        "the webhook's ports",
        "placement_resources_and_webhook_ports_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.deployOption.default.registrationWebhookConfiguration.bindConfiguration.hostNetwork",
        "the webhook pod on its node's network (upstream's images; refused with ours)",
        "awsirsa_settings_and_host_network_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.deployOption.default.workWebhookConfiguration.bindConfiguration.hostNetwork",
        "likewise",
        "awsirsa_settings_and_host_network_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.deployOption.default.addonWebhookConfiguration",
        "with upstream's images, the ports and host network of upstream's add-on webhook (the add-on API's conversion); refused with our image, whose hub pod converts",
        "upstreams_addon_manager_addon_webhook_and_work_controller_follow_their_gates",
    ),
    honoured(
        CM,
        "spec.registrationConfiguration.autoApproveUsers",
        "approved without accept (ManagedClusterAutoApproval)",
        "deployments_carry_upstream_labels_args_and_gates",
    ),
    honoured(
        CM,
        "spec.registrationConfiguration.featureGates",
        "the registration components' gates",
        "known_gates_become_flags_and_unknown_ones_are_reported",
    ),
    refused(
        CM,
        "spec.registrationConfiguration.importerConfiguration",
        "the cluster importer is not deployed",
        "fields_nothing_here_acts_on_are_refused_with_the_field_named",
    ),
    honoured(
        CM,
        "spec.registrationConfiguration.registrationDrivers[].authType",
        "csr; awsirsa with upstream's images (refused with ours); grpc refused",
        "awsirsa_settings_and_host_network_reach_upstreams_pods",
    ),
    honoured(
        CM,
        "spec.registrationConfiguration.registrationDrivers[].csr",
        "its identities are approved over autoApproveUsers",
        "the_csr_drivers_identities_are_approved_over_auto_approve_users",
    ),
    honoured(
        CM,
        "spec.registrationConfiguration.registrationDrivers[].awsirsa",
        "ARN, patterns and tags passed to upstream's registration controller",
        "awsirsa_settings_and_host_network_reach_upstreams_pods",
    ),
    refused(
        CM,
        "spec.registrationConfiguration.registrationDrivers[].grpc",
        "the grpc driver is refused (no gRPC server)",
        "fields_nothing_here_acts_on_are_refused_with_the_field_named",
    ),
    honoured(
        CM,
        "spec.workConfiguration.featureGates",
        "the work components' gates; with upstream's images ManifestWorkReplicaSet also deploys upstream's work controller",
        "the_nil_executor_gate_reaches_the_manifest_work_policy",
    ),
    refused(
        CM,
        "spec.workConfiguration.workDriver",
        "kube only; mqtt and grpc are refused",
        "fields_nothing_here_acts_on_are_refused_with_the_field_named",
    ),
    honoured(
        CM,
        "spec.placementConfiguration.featureGates",
        "the placement controller's gates",
        "known_gates_become_flags_and_unknown_ones_are_reported",
    ),
    honoured(
        CM,
        "spec.addOnManagerConfiguration.featureGates",
        "the add-on manager's gates; with upstream's images AddonManagement (on by default) deploys upstream's add-on manager",
        "the_addon_manager_acts_only_with_its_gate_on",
    ),
    refused(
        CM,
        "spec.serverConfiguration",
        "the gRPC server is not deployed",
        "fields_nothing_here_acts_on_are_refused_with_the_field_named",
    ),
    // ManifestWork
    honoured(
        MW,
        "spec.workload.manifests",
        "applied, updated and removed with the work",
        "overwrite_updates_a_dropped_manifest_is_deleted_and_delete_removes_all",
    ),
    honoured(
        MW,
        "spec.deleteOption",
        "Foreground, Orphan, SelectivelyOrphan",
        "orphan_and_selectively_orphan_leave_resources_behind",
    ),
    honoured(
        MW,
        "spec.deleteOption.ttlSecondsAfterFinished",
        "a completed work is deleted after it (CleanUpCompletedManifestWork)",
        "a_completed_work_goes_after_its_ttl_and_others_stay",
    ),
    honoured(
        MW,
        "spec.executor",
        "the agent applies as this ServiceAccount, with its rights only",
        "the_executor_may_not_escalate_through_a_role_binding",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].resourceIdentifier",
        "which manifest a config is for",
        "feedback_reports_values_keeps_them_fresh_and_names_a_bad_path",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].feedbackRules",
        "WellKnownStatus and JSON paths fed back",
        "feedback_reports_values_keeps_them_fresh_and_names_a_bad_path",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].feedbackScrapeType",
        "Poll: feedback read every statusSyncInterval; Watch: the object is watched and its feedback read again on every change",
        "watched_feedback_arrives_without_waiting_for_the_status_sync",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].conditionRules",
        "WellKnownConditions and CEL rules set conditions",
        "rule_conditions_are_set_aggregated_and_dropped_with_their_rule",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].updateStrategy.type",
        "Update, CreateOnly, ServerSideApply, ReadOnly",
        "read_only_reports_an_object_it_never_writes",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].updateStrategy.serverSideApply",
        "field manager and force",
        "server_side_apply_reports_a_conflict_unless_forced_and_applies_as_its_field_manager",
    ),
    honoured(
        MW,
        "spec.manifestConfigs[].updateStrategy.serverSideApply.ignoreFields",
        "fields left to the managed cluster (OnSpokePresent, OnSpokeChange)",
        "an_ignored_field_is_left_to_the_cluster_and_the_others_are_reverted",
    ),
    refused(
        MW,
        "spec.manifestConfigs[].updateStrategy.serverSideApply.ignoreFields[].jqPathExpressions",
        "refused in the manifest's Applied condition; use jsonPaths or jsonPointers",
        "an_ignored_path_the_agent_cannot_follow_is_refused_in_the_manifests_condition",
    ),
    honoured(
        MC,
        "spec.hubAcceptsClient",
        "accept: the hub approves the cluster's CSRs, grants its namespace and RBAC; false revokes them",
        "denying_revokes_the_agents_access",
    ),
    honoured(
        MC,
        "spec.leaseDurationSeconds",
        "the agent renews its lease this often; the hub marks the cluster Unknown after five durations (capped at a day)",
        "an_absurd_lease_duration_degrades_only_its_cluster",
    ),
    honoured(
        MC,
        "spec.managedClusterClientConfigs",
        "written by the agent from the Klusterlet's externalServerURLs; URLs checked by admission",
        "cluster_names_and_client_urls_are_checked_for_everyone",
    ),
    honoured(
        MC,
        "spec.taints",
        "the hub's availability taints set and timed; placements select only tolerating clusters",
        "a_taint_time_is_the_hubs_and_is_renewed_when_the_taint_changes",
    ),
    honoured(
        MCS,
        "spec.clusterSelector",
        "ExclusiveClusterSetLabel or a LabelSelector decides the set's members, reported in its status",
        "the_hub_keeps_the_builtin_sets_and_reports_membership_and_binding",
    ),
    honoured(
        MCS,
        "spec.managedNamespaces",
        "created on every member cluster, labelled, reported; released when the cluster leaves",
        "a_sets_namespaces_are_created_labelled_reported_then_released_when_the_cluster_leaves",
    ),
    honoured(
        MCSB,
        "spec.clusterSet",
        "binds the set to the namespace (named after it, needs bind), reported Bound",
        "a_binding_is_named_after_its_set_and_needs_bind",
    ),
    honoured(
        PL,
        "spec.clusterSets",
        "limits the placement to these bound sets",
        "sets_must_be_bound_and_intersect",
    ),
    honoured(
        PL,
        "spec.numberOfClusters",
        "how many clusters are selected; fewer is reported",
        "a_placement_follows_labels_count_prioritizers_and_availability",
    ),
    honoured(
        PL,
        "spec.predicates",
        "label selectors, ORed between predicates and ANDed within one",
        "predicates_are_ored_and_selectors_within_one_anded",
    ),
    honoured(
        PL,
        "spec.predicates[].requiredClusterSelector.claimSelector",
        "selects on the clusters' reported ClusterClaims",
        "a_claim_on_the_managed_cluster_selects_it",
    ),
    honoured(
        PL,
        "spec.predicates[].requiredClusterSelector.celSelector",
        "CEL over the cluster (and its scores), with a cost budget; one that does not compile is reported",
        "a_cel_selector_picks_and_one_that_does_not_compile_is_misconfigured",
    ),
    honoured(
        PL,
        "spec.prioritizerPolicy",
        "Additive (Balance and Steady) or Exact; built-in prioritizers with weights",
        "prioritizers_rank_and_number_of_clusters_cuts",
    ),
    honoured(
        PL,
        "spec.prioritizerPolicy.configurations[].scoreCoordinate.addOn",
        "AddOnPlacementScores rank clusters until they expire",
        "addon_scores_and_spread_shape_decisions",
    ),
    honoured(
        PL,
        "spec.spreadPolicy",
        "clusters spread over topology keys within maxSkew; whenUnsatisfiable as upstream",
        "spread_keeps_skew_within_max_skew",
    ),
    honoured(
        PL,
        "spec.tolerations",
        "taints tolerated, for tolerationSeconds when given",
        "taints_need_tolerations_until_they_run_out",
    ),
    honoured(
        PL,
        "spec.decisionStrategy",
        "decisions split into named groups by selector and clustersPerDecisionGroup, labelled as upstream's",
        "decision_groups_and_unsatisfiable_placements_are_reported",
    ),
    honoured(
        PL,
        "spec.sortBy",
        "ClusterName (default): decisions by name, no score recorded, as upstream's; Score: best first, ties by name, each with its score (upstream v1.3.1 ignores it)",
        "sort_by_score_orders_and_records_scores_and_holds_a_rescore_to_the_rate_limit",
    ),
    honoured(
        PL,
        "spec.scoreRateLimit",
        "under sortBy Score, new scores that choose no other cluster are written at most once per this period (default 1m); new clusters at once",
        "sort_by_score_orders_and_records_scores_and_holds_a_rescore_to_the_rate_limit",
    ),
    honoured(
        MWRS,
        "spec.manifestWorkTemplate",
        "copied into a ManifestWork per selected cluster (its fields as the ManifestWork's, above)",
        "a_replica_set_follows_its_placement_and_cleans_up",
    ),
    honoured(
        MWRS,
        "spec.placementRefs[].name",
        "the placements whose decisions get the works",
        "a_replica_set_follows_its_placement_and_cleans_up",
    ),
    honoured(
        MWRS,
        "spec.placementRefs[].rolloutStrategy",
        "All, Progressive and ProgressivePerGroup, with maxConcurrency, mandatory groups, minSuccessTime, progressDeadline, maxFailures",
        "a_progressive_rollout_waits_for_each_cluster",
    ),
    honoured(
        MWRS,
        "spec.placementRefs[].rolloutStrategy.progressivePerGroup",
        "one decision group at a time, mandatory groups first",
        "per_group_waits_for_each_group_and_mandatory_groups_go_first",
    ),
    honoured(
        MWRS,
        "spec.cascadeDeletionPolicy",
        "Foreground keeps the set until its works are gone; Background lets it go at once",
        "a_foreground_set_waits_for_its_works_and_a_background_one_does_not",
    ),
    honoured(
        AMW,
        "spec",
        "written by the work agent: the hub's hash and the agent's id decide which records it keeps, evicts after the grace period, or leaves to another hub's agent",
        "records_of_another_hub_are_evicted_after_the_grace_period_not_before",
    ),
    honoured(
        CC,
        "spec.value",
        "reported in the ManagedCluster's status.clusterClaims (with ClusterClaim on), selectable by placements",
        "a_claim_on_the_managed_cluster_selects_it",
    ),
    honoured(
        CPROP,
        "spec.value",
        "reported in the ManagedCluster's status.clusterClaims with the ClusterProperty gate",
        "properties_are_reported_with_the_gate_and_not_without",
    ),
    honoured(
        PROF,
        "spec",
        "written by the hub from the bound cluster (ClusterProfile gate): the cluster manager's name and the display name",
        "profiles_follow_bound_sets_while_the_gate_is_on",
    ),
    honoured(
        ADC,
        "spec.agentInstallNamespace",
        "the agent's namespace: namespaced manifests, binding subjects, {{INSTALL_NAMESPACE}} and the add-on's status",
        "a_deployment_config_fills_and_moves_the_template",
    ),
    honoured(
        ADC,
        "spec.customizedVariables",
        "{{NAME}} values in the template's manifests (the built-ins win); a change re-renders the work",
        "a_deployment_config_fills_and_moves_the_template",
    ),
    honoured(
        ADC,
        "spec.nodePlacement",
        "node selector and tolerations of the template's Deployments and DaemonSets",
        "namespace_placement_and_mirrors_are_applied",
    ),
    honoured(
        ADC,
        "spec.proxyConfig",
        "proxy environment of the agent's containers; the CA in a ConfigMap they mount",
        "a_deployment_config_fills_and_moves_the_template",
    ),
    honoured(
        ADC,
        "spec.proxyConfig.httpProxy",
        "HTTP_PROXY and http_proxy of the agent's containers",
        "proxy_and_resources_reach_the_matching_containers",
    ),
    honoured(
        ADC,
        "spec.proxyConfig.noProxy",
        "NO_PROXY and no_proxy of the agent's containers",
        "proxy_and_resources_reach_the_matching_containers",
    ),
    honoured(
        ADC,
        "spec.registries",
        "image mirrors of the agent's containers, over the cluster's image-registries annotation",
        "a_clusters_image_mirrors_reach_its_addon_below_a_config",
    ),
    honoured(
        ADC,
        "spec.registries[].source",
        "the image prefix a mirror replaces; none: the mirror takes the image's last segment",
        "mirrors_rewrite_images_as_upstreams_override_does",
    ),
    honoured(
        ADC,
        "spec.resourceRequirements",
        "resources of the containers a containerID pattern matches (the last match wins)",
        "a_deployment_config_fills_and_moves_the_template",
    ),
    honoured(
        ADC,
        "spec.resourceRequirements[].resources.limits",
        "limits of the matched containers",
        "proxy_and_resources_reach_the_matching_containers",
    ),
    honoured(
        ADC,
        "spec.resourceRequirements[].resources.claims",
        "resource claims of the matching containers, with their requests and limits",
        "proxy_and_resources_reach_the_matching_containers",
    ),
    // AddOnTemplate
    honoured(
        AT,
        "spec.addonName",
        "a template change re-renders that add-on's clusters' works; addon create refuses another add-on's template",
        "a_templates_name_work_options_and_namespaced_permission_reach_the_hub",
    ),
    honoured(
        AT,
        "spec.agentSpec.workload.manifests",
        "rendered per cluster into the deploy work addon-<name>-deploy-0",
        "the_helloworld_template_addon_runs_end_to_end",
    ),
    honoured(
        AT,
        "spec.agentSpec.manifestConfigs",
        "copied to the deploy work, the health feedback rules joined to its entry per resource",
        "feedback_joins_the_templates_own_entry_for_a_resource",
    ),
    refused(
        AT,
        "spec.agentSpec.manifestConfigs[].updateStrategy.serverSideApply.ignoreFields[].jqPathExpressions",
        "copied to the deploy work, whose agent refuses it in the manifest's Applied condition",
        "an_ignored_path_the_agent_cannot_follow_is_refused_in_the_manifests_condition",
    ),
    honoured(
        AT,
        "spec.agentSpec.deleteOption",
        "copied to the deploy work (upstream's template agent drops it and takes orphaning from object annotations only)",
        "a_templates_name_work_options_and_namespaced_permission_reach_the_hub",
    ),
    honoured(
        AT,
        "spec.agentSpec.executor",
        "copied to the deploy work (upstream's template agent drops it): the agent applies as that identity",
        "a_templates_name_work_options_and_namespaced_permission_reach_the_hub",
    ),
    honoured(
        AT,
        "spec.registration[].type",
        "KubeClient: a hub kubeconfig; CustomSigner: a certificate signed with the template's CA",
        "a_custom_signer_is_signed_with_the_templates_ca",
    ),
    honoured(
        AT,
        "spec.registration[].customSigner",
        "the agent's CSR to this signer is approved and signed here with the CA secret",
        "a_custom_signer_is_signed_with_the_templates_ca",
    ),
    honoured(
        AT,
        "spec.registration[].customSigner.signingCA.namespace",
        "the CA secret is read there instead of the hub namespace, as the add-on manager's identity",
        "a_custom_signer_is_signed_with_the_templates_ca",
    ),
    honoured(
        AT,
        "spec.registration[].customSigner.subject",
        "the registered subject: CN, O and OU of the certificate the agent asks for and the hub signs",
        "a_custom_signer_is_signed_with_the_templates_ca",
    ),
    honoured(
        AT,
        "spec.registration[].customSigner.subject.organizationUnit",
        "asked for as the OUs of the agent's certificate request, as upstream's agent asks",
        "the_request_carries_the_registered_subject",
    ),
    honoured(
        AT,
        "spec.registration[].kubeClient.hubPermissions",
        "a RoleBinding for the agent's user, owned by the add-on, in the cluster's namespace",
        "the_helloworld_template_addon_runs_end_to_end",
    ),
    honoured(
        AT,
        "spec.registration[].kubeClient.hubPermissions[].singleNamespace",
        "a RoleBinding of roleRef in that namespace for the agent's user and groups, every cluster's agent included (upstream's)",
        "a_templates_name_work_options_and_namespaced_permission_reach_the_hub",
    ),
    // ClusterManagementAddOn
    honoured(
        CMA,
        "spec.addOnConfiguration",
        "deprecated upstream, whose controllers ignore it: stored and shown as kubectl's CRD NAME column, dropped in v1beta1",
        "an_addons_meta_and_crd_name_are_what_kubectl_shows",
    ),
    honoured(
        CMA,
        "spec.addOnMeta",
        "descriptive, as upstream's: stored and shown as kubectl's DISPLAY NAME column",
        "an_addons_meta_and_crd_name_are_what_kubectl_shows",
    ),
    honoured(
        CMA,
        "spec.installStrategy",
        "Placements: the add-on on each cluster its placements decide, removed when undecided; Manual: by hand",
        "a_placements_strategy_installs_on_decided_clusters_only",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].configs",
        "configs of the placement's clusters, over the defaults (by group and resource)",
        "a_placements_configs_and_an_addons_own_override_the_default",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].configs[].namespace",
        "finds a namespaced config (an AddOnDeploymentConfig) for the placement's clusters",
        "configs_named_with_their_namespace_by_a_placement_or_a_cluster_fill_the_template",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy",
        "how config changes reach the placement's clusters: All, Progressive, ProgressivePerGroup",
        "a_new_version_rolls_out_one_cluster_at_a_time",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.all",
        "every cluster at once; progressDeadline counts the late as timed out; minSuccessTime and maxFailures hold nothing back under All, as upstream's",
        "under_all_a_progress_deadline_times_out_the_late_and_holds_back_no_one",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.maxConcurrency",
        "clusters in flight at once: a count or a percentage",
        "a_new_version_rolls_out_one_cluster_at_a_time",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.progressDeadline",
        "a cluster in flight longer counts as timed out, a failure",
        "an_addon_under_way_counts_as_progressing_and_one_past_its_deadline_as_timed_out",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.minSuccessTime",
        "a succeeded cluster stays in flight this long (soak)",
        "progressive_keeps_max_concurrency_in_flight",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.maxFailures",
        "failures tolerated before the rollout stops",
        "a_failure_past_the_deadline_stops_the_rollout",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.mandatoryDecisionGroups",
        "decision groups (by name) rolled out first, no failure allowed",
        "per_group_waits_for_each_group_and_mandatory_groups_go_first",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressive.mandatoryDecisionGroups[].groupIndex",
        "a mandatory group named by its index goes first (the rollout library add-ons and replica sets share)",
        "per_group_waits_for_each_group_and_mandatory_groups_go_first",
    ),
    honoured(
        CMA,
        "spec.installStrategy.placements[].rolloutStrategy.progressivePerGroup",
        "one decision group at a time, mandatory groups first (the rollout library add-ons and replica sets share)",
        "per_group_waits_for_each_group_and_mandatory_groups_go_first",
    ),
    honoured(
        CMA,
        "spec.supportedConfigs",
        "the default AddOnTemplate and AddOnDeploymentConfig of the add-on's clusters",
        "a_deployment_config_fills_and_moves_the_template",
    ),
    // ManagedClusterAddOn
    honoured(
        MCA,
        "spec.installNamespace",
        "where the agent's hub credentials are written and its lease read, unless the hub's status names one",
        "each_registered_signer_gets_its_secret_in_the_install_namespace",
    ),
    honoured(
        MCA,
        "spec.configs",
        "this cluster's configs, over the placement's and the add-on's defaults (by group and resource)",
        "a_placements_configs_and_an_addons_own_override_the_default",
    ),
    honoured(
        MCA,
        "spec.configs[].namespace",
        "finds a namespaced config (an AddOnDeploymentConfig) for this cluster, over the placement's and the default",
        "configs_named_with_their_namespace_by_a_placement_or_a_cluster_fill_the_template",
    ),
];

/// The entry that decides `path` of `kind`: the longest that is it or above it.
#[must_use]
pub fn entry(kind: &str, path: &str) -> Option<&'static Field> {
    FIELDS
        .iter()
        .filter(|f| f.kind == kind && covers(f.path, path))
        .max_by_key(|f| f.path.len())
}

fn covers(entry: &str, path: &str) -> bool {
    path == entry
        || path
            .strip_prefix(entry)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
}

/// The README's field table.
#[must_use]
pub fn table() -> String {
    let mut out = String::from("| kind | field | here | proven by |\n| --- | --- | --- | --- |\n");
    for f in FIELDS {
        let mark = match f.treatment {
            Treatment::Honoured => "✅",
            Treatment::Refused => "⛔ refused:",
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {mark} {} | `{}` |",
            f.kind,
            f.path.trim_start_matches("spec."),
            f.note,
            f.proof
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// The leaf fields of `kind`'s spec in the CRD generated from our types: fields with no
    /// fields under them (a map such as `nodeSelector` is one field).
    fn leaves(kind: &str) -> Vec<String> {
        let crd = crate::all_crds()
            .into_iter()
            .find(|c| c.spec.names.kind == kind)
            .unwrap_or_else(|| panic!("no CRD of {kind}"));
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .expect("a storage version");
        let schema = serde_json::to_value(&version.schema).unwrap();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
        let mut out = Vec::new();
        // Kinds with no spec (decisions and scores are status only) have no field to say about.
        if !spec.is_null() {
            walk(spec, "spec", &mut out);
        }
        out
    }

    fn walk(node: &Value, path: &str, out: &mut Vec<String>) {
        let mut deeper = false;
        if let Some(props) = node["properties"].as_object() {
            for (name, child) in props {
                walk(child, &format!("{path}.{name}"), out);
                deeper = true;
            }
        }
        if node["items"]["properties"].is_object() {
            walk(&node["items"], &format!("{path}[]"), out);
            deeper = true;
        }
        if !deeper {
            out.push(path.to_owned());
        }
    }

    #[test]
    fn every_field_is_honoured_or_refused() {
        let mut missing = Vec::new();
        for kind in crate::all_crds().iter().map(|c| c.spec.names.kind.clone()) {
            for path in leaves(&kind) {
                if entry(&kind, &path).is_none() {
                    missing.push(format!("{kind} {path}"));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "fields nothing says what happens to (add each to FIELDS, with the test that proves it):\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn every_entry_names_a_field_and_every_proof_a_test() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut sources = String::new();
        for dir in ["src", "tests", "crates"] {
            read_all(&root.join(dir), &mut sources);
        }
        for f in FIELDS {
            assert!(
                leaves(f.kind).iter().any(|leaf| covers(f.path, leaf)),
                "{} {} is no field of the generated CRD",
                f.kind,
                f.path
            );
            assert!(
                sources.contains(&format!("fn {}(", f.proof)),
                "{} {}: no test {}",
                f.kind,
                f.path,
                f.proof
            );
        }
    }

    fn read_all(dir: &std::path::Path, into: &mut String) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                read_all(&path, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                into.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
}
