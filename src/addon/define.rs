//! An add-on defined by a template, as upstream's `addon create` makes it: the
//! ClusterManagementAddOn (lifecycle `addon-manager`, its default config the AddOnTemplate,
//! installed by hand or by a placement) and the AddOnTemplate `NAME-VERSION`.
//!
//! The files hold either the agent's manifests alone (upstream's form; the request's hub
//! registration and cluster role then describe its hub identity), or one whole
//! `kind: AddOnTemplate` with its own registrations, beside the hub Roles and ClusterRoles those
//! registrations bind (applied on the hub). [`plan`] reads and checks everything before
//! [`apply`] writes anything: a template that does not parse names its line and field, and
//! nothing is created.
use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt as _};
use serde_json::Value;

use crate::api::addon::{
    ADDON_TEMPLATES, AddOnTemplate, AddOnTemplateSpec, ClusterManagementAddOn,
    ClusterManagementAddOnSpec, ConfigMeta, ConfigReferent, CurrentClusterBinding,
    HEALTH_PROBE_FIELDS_ANNOTATION, HEALTH_PROBER_ANNOTATION, HealthProber, HubPermission,
    HubPermissionType, InstallStrategy, InstallStrategyType, KubeClientRegistration,
    LIFECYCLE_ADDON_MANAGER, LIFECYCLE_ANNOTATION, PlacementStrategy, RegistrationSpec,
    RegistrationType,
};
use crate::api::work::{ManifestWorkSpec, ManifestsTemplate};
use crate::error::UserError;
use crate::hub::addon::template::GROUP;
use crate::hub::addon::template::probe::Fields;
use crate::work::manifests;

/// What the user asks for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The add-on's name.
    pub name: String,
    /// Its version: the template is `NAME-VERSION`.
    pub version: String,
    /// Files or directories with the agent's manifests, or with an AddOnTemplate.
    pub files: Vec<PathBuf>,
    /// Look into subdirectories of directories.
    pub recursive: bool,
    /// Give the agent an identity on the hub (upstream's form only).
    pub hub_registration: bool,
    /// A ClusterRole that identity is bound to in its cluster's namespace.
    pub cluster_role_bind: Option<String>,
    /// Labels of both objects.
    pub labels: BTreeMap<String, String>,
    /// The placement (namespace, name) whose clusters get the add-on; by hand if `None`.
    pub placement: Option<(String, String)>,
}

/// What [`apply`] writes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The add-on.
    pub addon: ClusterManagementAddOn,
    /// Its template.
    pub template: AddOnTemplate,
    /// Hub Roles and ClusterRoles beside a whole template.
    pub hub_roles: Vec<Value>,
}

impl Plan {
    /// Every object, as the API server would be sent it (for `--dry-run`).
    pub fn objects(&self) -> Result<Vec<Value>, serde_json::Error> {
        let mut out = vec![
            serde_json::to_value(&self.addon)?,
            serde_json::to_value(&self.template)?,
        ];
        out.extend(self.hub_roles.iter().cloned());
        Ok(out)
    }
}

/// Reads and checks the files into the objects to write; writes nothing.
pub fn plan(request: &Request) -> anyhow::Result<Plan> {
    let template_name = format!("{}-{}", request.name, request.version);
    let read = read(request)?;
    let mut template = AddOnTemplate::new(&template_name, read.template);
    template.metadata.annotations = read.annotations;
    let mut addon = addon(&request.name, &template_name, request.placement.as_ref());
    addon.metadata.annotations = Some(
        [(
            LIFECYCLE_ANNOTATION.to_string(),
            LIFECYCLE_ADDON_MANAGER.to_string(),
        )]
        .into(),
    );
    if !request.labels.is_empty() {
        addon.metadata.labels = Some(request.labels.clone());
        template.metadata.labels = Some(request.labels.clone());
    }
    Ok(Plan {
        addon,
        template,
        hub_roles: read.hub_roles,
    })
}

/// Writes the plan: the hub roles, then the add-on and its template, each created, or replaced
/// with `overwrite`. Returns what became of each, as upstream says it (`… is created`).
pub async fn apply(
    client: &Client,
    plan: &Plan,
    overwrite: bool,
    timeout: std::time::Duration,
) -> anyhow::Result<Vec<String>> {
    let mut said = Vec::new();
    if !plan.hub_roles.is_empty() {
        said.extend(apply_roles(client, &plan.hub_roles, timeout).await?);
    }
    said.push(
        write(
            &Api::<ClusterManagementAddOn>::all(client.clone()),
            &plan.addon,
            "ClusterManagementAddon",
            overwrite,
            |a, b| a.spec == b.spec,
        )
        .await?,
    );
    said.push(
        write(
            &Api::<AddOnTemplate>::all(client.clone()),
            &plan.template,
            "AddonTemplate",
            overwrite,
            |a, b| {
                let probers = |t: &AddOnTemplate| {
                    [HEALTH_PROBER_ANNOTATION, HEALTH_PROBE_FIELDS_ANNOTATION]
                        .map(|key| t.annotations().get(key).cloned())
                };
                a.spec == b.spec && probers(a) == probers(b)
            },
        )
        .await?,
    );
    Ok(said)
}

/// What the files hold, checked.
struct Read {
    template: AddOnTemplateSpec,
    /// The whole template's annotations (its health prober, say).
    annotations: Option<std::collections::BTreeMap<String, String>>,
    /// Hub Roles and ClusterRoles beside a whole template.
    hub_roles: Vec<Value>,
}

fn user(message: String, hint: &str) -> anyhow::Error {
    UserError::new(message, hint).into()
}

/// Every document of the files: the agent's manifests (with their file names), the template if
/// one is given, and the hub roles beside it.
type Documents = (Vec<(String, Value)>, Option<AddOnTemplate>, Vec<Value>);

/// Reads the files into the template's spec, or fails naming the file, line and field.
fn read(request: &Request) -> anyhow::Result<Read> {
    match read_documents(request)? {
        (found, Some(template), hub_roles) => from_template(request, template, &found, hub_roles),
        (found, None, _) => from_manifests(request, found),
    }
}

fn read_documents(request: &Request) -> anyhow::Result<Documents> {
    let bad_file =
        |e: manifests::Error| user(crate::runtime::report::chain(&e), "check the -f paths");
    let mut manifests_found = Vec::new();
    let mut template: Option<AddOnTemplate> = None;
    let mut hub_roles = Vec::new();
    for (source, text) in
        manifests::read_all(&request.files, request.recursive).map_err(bad_file)?
    {
        for (line, doc) in manifests::documents(&text) {
            // Where the parser stopped, counted from the top of the file.
            let at = |e: &crate::yaml::Error| e.location().map_or(line, |(l, _)| line + l - 1);
            let value: Value = crate::yaml::from_str(&doc).map_err(|e| {
                user(
                    format!("{source}: line {}: not valid YAML: {}", at(&e), e.message()),
                    "fix the YAML",
                )
            })?;
            if value["kind"] == "AddOnTemplate" {
                let parsed: AddOnTemplate = crate::yaml::from_str(&doc).map_err(|e| {
                    user(
                        format!(
                            "{source}: line {}: not a valid AddOnTemplate: {}",
                            at(&e),
                            e.message()
                        ),
                        "see `kubectl explain addontemplate.spec` on the hub for the fields",
                    )
                })?;
                if template.replace(parsed).is_some() {
                    return Err(user(
                        format!("{source}: a second AddOnTemplate"),
                        "give one template per add-on",
                    ));
                }
            } else {
                manifests::validate(&value).map_err(|p| {
                    user(
                        format!("{source}: line {line}: {p}"),
                        "every manifest needs apiVersion, kind and metadata.name",
                    )
                })?;
                if is_rbac_role(&value) {
                    hub_roles.push(value.clone());
                }
                manifests_found.push((source.clone(), value));
            }
        }
    }
    Ok((manifests_found, template, hub_roles))
}

/// A Role or ClusterRole: beside a whole template, a hub role its registrations bind.
fn is_rbac_role(manifest: &Value) -> bool {
    matches!(manifest["kind"].as_str(), Some("Role" | "ClusterRole"))
        && manifest["apiVersion"] == "rbac.authorization.k8s.io/v1"
}

/// The spec of a whole AddOnTemplate, with only hub roles beside it.
fn from_template(
    request: &Request,
    t: AddOnTemplate,
    manifests_found: &[(String, Value)],
    hub_roles: Vec<Value>,
) -> anyhow::Result<Read> {
    if let Some((source, m)) = manifests_found.iter().find(|(_, m)| !is_rbac_role(m)) {
        return Err(user(
            format!(
                "{source}: {} {} beside an AddOnTemplate: only the hub Roles and ClusterRoles its registrations bind may come with it",
                m["kind"].as_str().unwrap_or("?"),
                m["metadata"]["name"].as_str().unwrap_or("?")
            ),
            "put the agent's manifests in the template's spec.agentSpec.workload.manifests",
        ));
    }
    if request.hub_registration {
        return Err(user(
            "--hub-registration with an AddOnTemplate: the template's own registrations are used"
                .into(),
            "drop the flag, or write the registration in the template",
        ));
    }
    if !t.spec.addon_name.is_empty() && t.spec.addon_name != request.name {
        return Err(user(
            format!(
                "the AddOnTemplate is for add-on {:?}, not {:?}",
                t.spec.addon_name, request.name
            ),
            "name the add-on as its template's spec.addonName does",
        ));
    }
    let prober = HealthProber::of(&t).map_err(|why| {
        user(
            format!("the AddOnTemplate's {why}"),
            "fix the annotation, or drop it for the default (WorkloadAvailability)",
        )
    })?;
    if prober == HealthProber::WorkField {
        // Placeholders are filled in per cluster, after parsing: left as they are here.
        Fields::parse(
            &t.annotations()[HEALTH_PROBE_FIELDS_ANNOTATION],
            str::to_owned,
        )
        .map_err(|why| {
            user(
                format!("the AddOnTemplate's {why}"),
                "write the fields as a YAML list of {resourceIdentifier, probeRules, healthyWhen}",
            )
        })?;
    }
    let annotations = t.metadata.annotations;
    let mut spec = t.spec;
    spec.addon_name.clone_from(&request.name);
    check_registrations(&spec)?;
    Ok(Read {
        template: spec,
        annotations,
        hub_roles,
    })
}

/// The spec of upstream's form: the agent's manifests, the identity from the flags.
fn from_manifests(
    request: &Request,
    manifests_found: Vec<(String, Value)>,
) -> anyhow::Result<Read> {
    if manifests_found.is_empty() {
        return Err(user(
            "no manifests in the files given".into(),
            "check the -f paths",
        ));
    }
    let registration = request.hub_registration.then(|| RegistrationSpec {
        type_: RegistrationType::KubeClient,
        kube_client: Some(KubeClientRegistration {
            hub_permissions: request
                .cluster_role_bind
                .iter()
                .map(|role| HubPermission {
                    type_: HubPermissionType::CurrentCluster,
                    current_cluster: Some(CurrentClusterBinding {
                        cluster_role_name: role.clone(),
                    }),
                    single_namespace: None,
                })
                .collect(),
        }),
        custom_signer: None,
    });
    Ok(Read {
        template: AddOnTemplateSpec {
            addon_name: request.name.clone(),
            agent_spec: ManifestWorkSpec {
                workload: ManifestsTemplate {
                    manifests: manifests_found.into_iter().map(|(_, m)| m).collect(),
                },
                ..ManifestWorkSpec::default()
            },
            registration: registration.into_iter().collect(),
        },
        annotations: None,
        hub_roles: Vec::new(),
    })
}

/// Each registration carries the settings of its type.
fn check_registrations(spec: &AddOnTemplateSpec) -> anyhow::Result<()> {
    for (i, r) in spec.registration.iter().enumerate() {
        let missing = match r.type_ {
            RegistrationType::KubeClient => r.kube_client.as_ref().and_then(|k| {
                k.hub_permissions
                    .iter()
                    .enumerate()
                    .find_map(|(j, p)| match p.type_ {
                        HubPermissionType::CurrentCluster if p.current_cluster.is_none() => {
                            Some(format!("kubeClient.hubPermissions[{j}].currentCluster"))
                        }
                        HubPermissionType::SingleNamespace if p.single_namespace.is_none() => {
                            Some(format!("kubeClient.hubPermissions[{j}].singleNamespace"))
                        }
                        _ => None,
                    })
            }),
            RegistrationType::CustomSigner => r
                .custom_signer
                .is_none()
                .then(|| "customSigner".to_string()),
        };
        if let Some(field) = missing {
            return Err(user(
                format!("spec.registration[{i}].{field} is required for this type"),
                "add it to the template",
            ));
        }
    }
    Ok(())
}

/// The ClusterManagementAddOn `name`: its default config the template, installed by hand or on
/// the clusters of `placement`.
fn addon(
    name: &str,
    template_name: &str,
    placement: Option<&(String, String)>,
) -> ClusterManagementAddOn {
    ClusterManagementAddOn::new(
        name,
        ClusterManagementAddOnSpec {
            supported_configs: vec![ConfigMeta {
                group: GROUP.into(),
                resource: ADDON_TEMPLATES.into(),
                default_config: Some(ConfigReferent {
                    namespace: None,
                    name: template_name.to_string(),
                }),
            }],
            install_strategy: Some(match placement {
                None => InstallStrategy {
                    type_: Some(InstallStrategyType::Manual),
                    placements: Vec::new(),
                },
                Some((namespace, name)) => InstallStrategy {
                    type_: Some(InstallStrategyType::Placements),
                    placements: vec![PlacementStrategy {
                        namespace: namespace.clone(),
                        name: name.clone(),
                        ..PlacementStrategy::default()
                    }],
                },
            }),
            ..ClusterManagementAddOnSpec::default()
        },
    )
}

/// Creates `object`, or replaces it with `overwrite`; says which, as upstream does.
async fn write<K>(
    api: &Api<K>,
    object: &K,
    kind: &str,
    overwrite: bool,
    same: impl Fn(&K, &K) -> bool,
) -> anyhow::Result<String>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = object.name_any();
    let existing = api
        .get_opt(&name)
        .await
        .map_err(crate::error::ocm_api_missing)
        .with_context(|| format!("reading {kind} {name}"))?;
    let Some(existing) = existing else {
        api.create(&PostParams::default(), object)
            .await
            .with_context(|| format!("creating {kind} {name}"))?;
        return Ok(format!("{kind} {name} is created"));
    };
    if same(&existing, object) {
        return Ok(format!("{kind} {name} is unchanged"));
    }
    if !overwrite {
        return Ok(format!(
            "{kind} {name} is not updated when overwrite is disabled (pass --overwrite to replace it)"
        ));
    }
    let mut replacement = object.clone();
    replacement
        .meta_mut()
        .resource_version
        .clone_from(&existing.meta().resource_version);
    api.replace(&name, &PostParams::default(), &replacement)
        .await
        .with_context(|| format!("replacing {kind} {name}"))?;
    Ok(format!("{kind} {name} is updated"))
}

/// Applies the hub Roles and ClusterRoles that came with the template (a Role without a
/// namespace goes to `default`), with the project's apply engine; says what each became.
async fn apply_roles(
    client: &Client,
    roles: &[Value],
    timeout: std::time::Duration,
) -> anyhow::Result<Vec<String>> {
    let objects = roles
        .iter()
        .map(|role| {
            let mut role = role.clone();
            if role["kind"] == "Role" && !role["metadata"]["namespace"].is_string() {
                role["metadata"]["namespace"] = "default".into();
            }
            crate::apply::to_dynamic(&role)
        })
        .collect();
    let report = crate::apply::Applier::new(client.clone(), timeout)
        .apply(objects)
        .await
        .context("applying the hub roles")?;
    Ok(report
        .applied
        .iter()
        .map(|a| format!("{} {} is {}", a.object.kind, a.object.name, a.change))
        .collect())
}
