//! Flags `init` and `join` share with upstream about the objects they apply: `--output-file`
//! (a copy of them, for GitOps or review), `--create-namespace` (`=false`: the namespaces must
//! exist already, e.g. made by a platform team with their own labels and quotas) and the
//! containers' resources (`--resource-qos-class`, `--resource-limits`, `--resource-requests`).
use std::path::PathBuf;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject};

use crate::error::UserError;

/// `--output-file` and `--create-namespace`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BundleArgs {
    /// Also write the objects applied to FILE, as a YAML stream (mode 0600: it may hold a
    /// credential, e.g. join's bootstrap token, which --dry-run's stdout redacts); with --dry-run,
    /// instead of applying them
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Create the namespaces the install needs; with =false they must exist already
    #[arg(long, default_value_t = true)]
    pub create_namespace: bool,
    /// QoS class of the operator's and its components' containers: Default (small requests),
    /// BestEffort (none) or ResourceRequirement (--resource-limits/--resource-requests)
    #[arg(long, value_enum, value_name = "CLASS")]
    pub resource_qos_class: Option<QosClass>,
    /// Limits of those containers, e.g. cpu=800m,memory=800Mi
    #[arg(long, value_delimiter = ',', value_parser = super::args::parse_pair, value_name = "NAME=QUANTITY")]
    pub resource_limits: Vec<(String, String)>,
    /// Requests of those containers, e.g. cpu=500m,memory=500Mi
    #[arg(long, value_delimiter = ',', value_parser = super::args::parse_pair, value_name = "NAME=QUANTITY")]
    pub resource_requests: Vec<(String, String)>,
    /// A JSON file overriding the --bundle-version's image versions, as upstream's:
    /// `{"ocm": "v1.3.0"}` (upstream's `policy_addon` and `app_addon` are read by `install hub-addon`)
    #[arg(long, value_name = "FILE")]
    pub bundle_version_overrides: Option<PathBuf>,
}

/// Upstream's version bundle file: the fields this project uses.
#[derive(Debug, Default, serde::Deserialize)]
struct VersionBundle {
    /// The OCM images' tag.
    ocm: Option<String>,
    /// The policy add-on's images' tag (`install hub-addon`).
    policy_addon: Option<String>,
    /// application-manager's images' tag (`install hub-addon`).
    app_addon: Option<String>,
}

/// `--resource-qos-class`, in upstream's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QosClass {
    /// Small requests (2m CPU, 16Mi memory) and generous limits (2 CPUs, 2Gi memory).
    #[value(name = "Default")]
    Default,
    /// No requests or limits.
    #[value(name = "BestEffort")]
    BestEffort,
    /// The requests and limits given.
    #[value(name = "ResourceRequirement")]
    ResourceRequirement,
}

impl BundleArgs {
    /// The OCM images' tag ([`image_tag`]).
    ///
    /// # Errors
    /// As [`image_tag`].
    pub fn image_tag(&self, bundle_version: &str) -> anyhow::Result<String> {
        image_tag(bundle_version, self.bundle_version_overrides.as_deref())
    }

    /// `spec.resourceRequirement` from the `--resource-*` flags; `None` when none is given.
    ///
    /// # Errors
    /// The flags break upstream's rules ([`crate::operator::resources::from_flags`]).
    pub fn resource_requirement(
        &self,
    ) -> anyhow::Result<Option<crate::api::operator::ResourceRequirement>> {
        use crate::api::operator::ResourceQosClass;
        if self.resource_qos_class.is_none()
            && self.resource_limits.is_empty()
            && self.resource_requests.is_empty()
        {
            return Ok(None);
        }
        let class = self.resource_qos_class.map(|c| match c {
            QosClass::Default => ResourceQosClass::Default,
            QosClass::BestEffort => ResourceQosClass::BestEffort,
            QosClass::ResourceRequirement => ResourceQosClass::ResourceRequirement,
        });
        crate::operator::resources::from_flags(
            class,
            &self.resource_limits,
            &self.resource_requests,
        )
        .map(Some)
        .map_err(|e| UserError::new(e, "e.g. --resource-requests cpu=500m,memory=512Mi").into())
    }

    /// `objects` without their Namespaces when those are not to be created; each one left out must
    /// exist on the cluster.
    ///
    /// # Errors
    /// A namespace left out does not exist, or the cluster could not be asked.
    pub async fn namespaces(
        &self,
        client: &kube::Client,
        mut objects: Vec<DynamicObject>,
    ) -> anyhow::Result<Vec<DynamicObject>> {
        if self.create_namespace {
            return Ok(objects);
        }
        let names = take_namespaces(&mut objects);
        let api: Api<Namespace> = Api::all(client.clone());
        for name in names {
            let found = api
                .get_opt(&name)
                .await
                .with_context(|| format!("reading namespace {name}"))?;
            if found.is_none() {
                return Err(UserError::new(
                    format!("namespace {name} does not exist and --create-namespace=false"),
                    format!("create it first (`kubectl create namespace {name}`), or drop --create-namespace=false"),
                )
                .into());
            }
        }
        Ok(objects)
    }

    /// `--dry-run`: `objects` to `--output-file` if given, else to stdout.
    ///
    /// # Errors
    /// The file or stdout could not be written.
    pub fn dry_run(&self, objects: &[DynamicObject]) -> anyhow::Result<()> {
        if self.output_file.is_some() {
            return self.write(objects);
        }
        let printed = crate::secrets::redact_kubeconfig_secrets(
            &crate::secrets::redact_pull_secrets(objects),
        );
        crate::ui::stdout::print(crate::apply::to_yaml(&printed)?)?;
        Ok(())
    }

    /// Writes `objects` to `--output-file`, if given.
    ///
    /// # Errors
    /// The file could not be written.
    pub fn write(&self, objects: &[DynamicObject]) -> anyhow::Result<()> {
        let Some(path) = &self.output_file else {
            return Ok(());
        };
        let text = crate::apply::to_yaml(objects)?;
        crate::kubeconfig::write_private(path, text.as_bytes())
            .with_context(|| format!("writing --output-file {}", path.display()))
    }
}

/// The OCM images' tag: `--bundle-version`'s, unless `--bundle-version-overrides` (`overrides`)
/// names another.
///
/// # Errors
/// An unknown bundle version, or an overrides file that cannot be read or is not the JSON object
/// upstream's is.
pub fn image_tag(
    bundle_version: &str,
    overrides: Option<&std::path::Path>,
) -> anyhow::Result<String> {
    let tag = crate::install::hub::image_tag(bundle_version)
        .map_err(|e| UserError::new(e, "see --help for --bundle-version"))?;
    let Some(path) = overrides else {
        return Ok(tag);
    };
    Ok(overridden_tag(path, "ocm", |b| b.ocm)?.unwrap_or(tag))
}

/// The hub add-on's tag an overrides file names (`policy_addon` or `app_addon`), if it names one.
///
/// # Errors
/// As [`image_tag`].
pub fn hub_addon_override(
    overrides: Option<&std::path::Path>,
    addon: crate::install::hub_addon::HubAddon,
) -> anyhow::Result<Option<String>> {
    use crate::install::hub_addon::HubAddon;
    overrides.map_or(Ok(None), |path| {
        overridden_tag(path, addon.override_field(), |b| match addon {
            HubAddon::PolicyFramework => b.policy_addon,
            HubAddon::ApplicationManager => b.app_addon,
        })
    })
}

/// The tag the overrides file at `path` gives in `field`, checked to be an image tag.
fn overridden_tag(
    path: &std::path::Path,
    field: &str,
    take: impl FnOnce(VersionBundle) -> Option<String>,
) -> anyhow::Result<Option<String>> {
    let hint = r#"the file is JSON, e.g. {"ocm": "v1.3.0"}"#;
    let text = crate::input::read_text(path, "--bundle-version-overrides")
        .map_err(|e| UserError::new(crate::runtime::report::chain(&e), hint))?;
    let bundle: VersionBundle = serde_json::from_str(&text).map_err(|e| {
        UserError::new(
            format!("--bundle-version-overrides {}: {e}", path.display()),
            hint,
        )
    })?;
    match take(bundle) {
        None => Ok(None),
        Some(tag) if crate::api::image::tag(&tag).is_ok() => Ok(Some(tag)),
        Some(tag) => Err(UserError::new(
            format!(
                "--bundle-version-overrides {}: \"{field}\" is {tag:?}, not an image tag",
                path.display()
            ),
            hint,
        )
        .into()),
    }
}

/// Removes the Namespaces from `objects`, returning their names.
fn take_namespaces(objects: &mut Vec<DynamicObject>) -> Vec<String> {
    let mut names = Vec::new();
    objects.retain(|o| {
        let is_namespace = o.types.as_ref().is_some_and(|t| t.kind == "Namespace");
        if is_namespace {
            names.extend(o.metadata.name.clone());
        }
        !is_namespace
    });
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overrides_files_ocm_version_is_the_tag() {
        let dir = std::env::temp_dir().join(format!("bundle-overrides-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            BundleArgs {
                bundle_version_overrides: Some(path),
                ..BundleArgs::default()
            }
        };
        let tag = |args: BundleArgs| args.image_tag("default").map_err(|e| e.to_string());
        assert_eq!(
            tag(file(
                "a.json",
                r#"{"ocm": "v1.2.0", "policy_addon": "v0.18.0"}"#
            )),
            Ok("v1.2.0".into())
        );
        assert_eq!(
            tag(file("b.json", r#"{"policy_addon": "v0.18.0"}"#)),
            Ok("v1.3.1".into())
        );
        assert!(
            tag(file("c.json", r#"{"ocm": "v1 ; rm"}"#))
                .unwrap_err()
                .contains("not an image tag")
        );
        assert!(tag(file("d.json", "ocm: v1")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn namespaces_are_taken_out_by_name() {
        let ns = crate::apply::to_dynamic(&Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some("a".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let cm = crate::apply::to_dynamic(&k8s_openapi::api::core::v1::ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some("b".into()),
                namespace: Some("a".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let mut objects = vec![ns, cm];
        assert_eq!(take_namespaces(&mut objects), ["a"]);
        assert_eq!(objects.len(), 1);
    }
}
