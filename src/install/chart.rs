//! Helm charts of what `init` and `join` install, for teams that deploy with Helm or Argo CD.
//! They are not written by hand: `clusteradm generate` builds them from the same plans the
//! commands apply ([`super::hub::plan`], [`super::klusterlet::plan`]). A value a flag sets is
//! planted in the plan as a sentinel (plain YAML, which the templates take unquoted) and written
//! as a Helm expression (`Hole`); a flag that
//! changes an object's shape is planned both ways and written as `if`/`else` (`Switch`). So
//! `helm template` with some values gives exactly the objects the command gives with the matching
//! flags (`tests/it/chart.rs` checks it for both charts).
use std::collections::BTreeMap;
use std::fmt::Write as _;

use kube::api::DynamicObject;

use super::hub::InitOptions;
use super::klusterlet::JoinOptions;
use crate::api::names::{DEFAULT_BUNDLE_VERSION, DEFAULT_REGISTRY};

/// A value a flag sets: planted in the plan as `sentinel`, written as the Helm `expression`.
struct Hole {
    sentinel: &'static str,
    expression: fn() -> String,
}

/// `{{ value }}`, refused at render time (Helm's `fail`) unless it matches `pattern`: an image
/// value that is not an image (a newline and a document in a tag) never reaches the YAML.
fn checked(value: &str, pattern: &str, name: &str) -> String {
    let refusal = format!("{name} is not an image value (the OCI reference grammar)");
    format!(
        "{{{{ if not (regexMatch {pattern:?} (toString {value})) }}}}{{{{ fail {refusal:?} }}}}{{{{ end }}}}{{{{ {value} }}}}"
    )
}

/// A flag that changes an object's shape, as the Helm condition that stands for it.
type Switch = &'static str;

/// A chart: `(path under the chart's directory, contents)`.
pub struct Chart {
    /// The chart's name (its directory).
    pub name: &'static str,
    /// Its files.
    pub files: Vec<(String, String)>,
}

const HEADER: &str = "# Generated from the plans of `clusteradm init`/`join` by `clusteradm generate`; do not edit.\n";

const REGISTRY: Hole = Hole {
    sentinel: "helmhole-registry",
    expression: || {
        checked(
            ".Values.images.registry",
            &crate::api::image::REGISTRY_PATTERN,
            "images.registry",
        )
    },
};
const TAG: Hole = Hole {
    sentinel: "helmhole-tag",
    expression: || {
        checked(
            ".Values.images.tag",
            &crate::api::image::TAG_PATTERN,
            "images.tag",
        )
    },
};
const IMAGE: Hole = Hole {
    sentinel: "helmhole-image",
    expression: || {
        checked(
            ".Values.image",
            &crate::api::image::REFERENCE_PATTERN,
            "image",
        )
    },
};
const PULL: Hole = Hole {
    sentinel: "helmhole-pull",
    expression: || "{{ .Values.imagePullCredential | default \"{}\" | b64enc }}".into(),
};
const CLUSTER: Hole = Hole {
    sentinel: "helmhole-cluster",
    expression: || "{{ required \"clusterName is required\" .Values.clusterName }}".into(),
};
const SERVER: Hole = Hole {
    sentinel: "helmhole-server",
    expression: || "{{ .Values.externalServerURL }}".into(),
};
const BOOTSTRAP: Hole = Hole {
    sentinel: "helmhole-bootstrap",
    expression: || {
        "{{ required \"bootstrapHubKubeconfig is required\" .Values.bootstrapHubKubeconfig | b64enc }}"
            .into()
    },
};

const OURS: Switch = ".Values.image";
const SYNC_LABELS: Switch = ".Values.enableSyncLabels";
const SINGLETON: Switch = "eq .Values.mode \"Singleton\"";
const SERVER_KNOWN: Switch = ".Values.externalServerURL";

/// The values both charts share, with the defaults the commands have.
fn common_values() -> String {
    format!(
        "{HEADER}images:
  # --image-registry
  registry: {DEFAULT_REGISTRY}
  # --bundle-version
  tag: v{DEFAULT_BUNDLE_VERSION}
# --image: our image for the operator and every component; empty for upstream's images.
image: \"\"
# --enable-sync-labels: the operator copies the CR's labels to everything it makes.
enableSyncLabels: false
# --image-pull-credential-file: a docker config JSON (--set-file imagePullCredential=FILE).
imagePullCredential: \"\"
"
    )
}

fn chart_yaml(name: &str, description: &str) -> String {
    format!(
        "{HEADER}apiVersion: v2\nname: {name}\ndescription: {description}\ntype: application\nversion: {}\nappVersion: \"{DEFAULT_BUNDLE_VERSION}\"\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The hub chart: what `init` applies (the ServiceAccount bootstrap credential, the default).
pub fn cluster_manager() -> anyhow::Result<Chart> {
    let plan = |on: &[bool]| {
        let mut objects = super::hub::plan(&InitOptions {
            registry: REGISTRY.sentinel.into(),
            tag: TAG.sentinel.into(),
            single_image: on[0].then(|| IMAGE.sentinel.into()),
            sync_labels: on[1],
            ..InitOptions::default()
        })?;
        plant(
            &mut objects,
            "Secret",
            "/data/.dockerconfigjson",
            PULL.sentinel,
        );
        Ok(objects)
    };
    let mut files = templated(plan, &[OURS, SYNC_LABELS], &[REGISTRY, TAG, IMAGE, PULL])?;
    files.push((
        "Chart.yaml".into(),
        chart_yaml(
            "cluster-manager",
            "An OCM hub, as `clusteradm init` installs it",
        ),
    ));
    files.push(("values.yaml".into(), common_values()));
    Ok(Chart {
        name: "cluster-manager",
        files,
    })
}

/// The managed-cluster chart: what `join` applies, in Default or Singleton mode.
pub fn klusterlet() -> anyhow::Result<Chart> {
    let plan = |on: &[bool]| {
        let mut objects = super::klusterlet::plan(&JoinOptions {
            cluster_name: CLUSTER.sentinel.into(),
            klusterlet_name: crate::api::operator::KLUSTERLET_NAME.into(),
            hosted: false,
            singleton: on[2],
            registry: REGISTRY.sentinel.into(),
            tag: TAG.sentinel.into(),
            single_image: on[0].then(|| IMAGE.sentinel.into()),
            bootstrap_kubeconfig: String::new(),
            external_managed_kubeconfig: None,
            external_server_urls: if on[3] {
                vec![SERVER.sentinel.into()]
            } else {
                vec![]
            },
            feature_gates: vec![],
            annotations: BTreeMap::new(),
            client_cert_expiration_seconds: None,
            addon_driver: None,
            registration_driver: None,
            deploy_operator: true,
            resource_requirement: None,
            image_pull_credential: None,
            sync_labels: on[1],
            spec_overlay: None,
            operator_pod: crate::install::operator_pod::OperatorPod::default(),
            create_klusterlet: true,
            multi_hub_kubeconfigs: Vec::new(),
        })?;
        plant(
            &mut objects,
            "Secret",
            "/data/.dockerconfigjson",
            PULL.sentinel,
        );
        plant(
            &mut objects,
            "Secret",
            "/data/kubeconfig",
            BOOTSTRAP.sentinel,
        );
        Ok(objects)
    };
    let holes = [REGISTRY, TAG, IMAGE, PULL, CLUSTER, SERVER, BOOTSTRAP];
    let mut files = templated(plan, &[OURS, SYNC_LABELS, SINGLETON, SERVER_KNOWN], &holes)?;
    files.push((
        "Chart.yaml".into(),
        chart_yaml(
            "klusterlet",
            "An OCM managed cluster, as `clusteradm join` joins it",
        ),
    ));
    let values = format!(
        "{}# --cluster-name (required)
clusterName: \"\"
# The managed cluster's API server as the hub should know it (join reads it from the managed
# cluster's kube-public/cluster-info; empty: the hub does not learn it).
externalServerURL: \"\"
# The kubeconfig the agent first reaches the hub with (required; --set-file
# bootstrapHubKubeconfig=FILE): `clusteradm join --dry-run` prints it in its bootstrap Secret.
bootstrapHubKubeconfig: \"\"
# Default, or Singleton (--singleton: one agent instead of two).
mode: Default
",
        common_values()
    );
    files.push(("values.yaml".into(), values));
    Ok(Chart {
        name: "klusterlet",
        files,
    })
}

/// Puts `sentinel` at `pointer` in each object of `kind` that has that field.
fn plant(objects: &mut [DynamicObject], kind: &str, pointer: &str, sentinel: &str) {
    for o in objects {
        if o.types.as_ref().is_some_and(|t| t.kind == kind)
            && let Some(v) = o.data.pointer_mut(pointer)
        {
            *v = serde_json::Value::String(sentinel.into());
        }
    }
}

/// The chart's CRDs (`crds/`, which Helm installs first) and templates (`templates/`), from the
/// plan made for every combination of `switches`.
fn templated(
    plan: impl Fn(&[bool]) -> anyhow::Result<Vec<DynamicObject>>,
    switches: &[Switch],
    holes: &[Hole],
) -> anyhow::Result<Vec<(String, String)>> {
    let combinations: Vec<Vec<bool>> = (0..1usize << switches.len())
        .map(|mask| {
            (0..switches.len())
                .map(|bit| mask & (1 << bit) != 0)
                .collect()
        })
        .collect();
    let plans = combinations
        .iter()
        .map(|on| plan(on))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let key = |o: &DynamicObject| {
        let kind = o.types.as_ref().map_or("", |t| t.kind.as_str()).to_string();
        (kind, o.metadata.name.clone().unwrap_or_default())
    };
    let keys: Vec<_> = plans[0].iter().map(key).collect();
    // A switch changes objects, never which objects: one file per object.
    anyhow::ensure!(
        plans
            .iter()
            .all(|p| p.iter().map(key).eq(keys.iter().cloned())),
        "a switch of the chart changed the set of planned objects"
    );
    let mut files = Vec::new();
    for (i, (kind, name)) in keys.iter().enumerate() {
        let texts = plans
            .iter()
            .map(|p| Ok(fill(&crate::yaml::to_string(&p[i])?, holes)))
            .collect::<anyhow::Result<Vec<String>>>()?;
        if kind == "CustomResourceDefinition" {
            anyhow::ensure!(texts.iter().all(|t| *t == texts[0]), "CRD {name} varies");
            files.push((format!("crds/{name}.yaml"), format!("{HEADER}{}", texts[0])));
        } else {
            let body = choose(&texts, switches, 0, 0);
            let file = format!(
                "templates/{i:02}-{}-{}.yaml",
                kind.to_lowercase(),
                name.replace(':', "-")
            );
            files.push((file, format!("{HEADER}{body}")));
        }
    }
    Ok(files)
}

/// The serialized object with every hole's sentinel replaced by its Helm expression.
fn fill(text: &str, holes: &[Hole]) -> String {
    holes.iter().fold(text.to_string(), |t, h| {
        t.replace(h.sentinel, &(h.expression)())
    })
}

/// The text for the combinations whose switches below `bit` are `fixed` (a bit mask): one text
/// where they all agree, else an `if` on switch `bit` over the two halves.
fn choose(texts: &[String], switches: &[Switch], bit: usize, fixed: usize) -> String {
    let low = (1usize << bit) - 1;
    let mut agreeing = (0..texts.len())
        .filter(|m| m & low == fixed)
        .map(|m| &texts[m]);
    let first = agreeing.next().cloned().unwrap_or_default();
    if agreeing.all(|t| *t == first) {
        return first;
    }
    let on = choose(texts, switches, bit + 1, fixed | (1 << bit));
    let off = choose(texts, switches, bit + 1, fixed);
    if on == off {
        return on;
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "{{{{- if {} }}}}\n{on}{{{{- else }}}}\n{off}{{{{- end }}}}\n",
        switches[bit]
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_differs_is_conditional() {
        // Index = mask: bit 0 is switch A, bit 1 switch B; only A matters.
        let texts = ["a: 0\n", "a: 1\n", "a: 0\n", "a: 1\n"].map(String::from);
        assert_eq!(
            choose(&texts, &[".A", ".B"], 0, 0),
            "{{- if .A }}\na: 1\n{{- else }}\na: 0\n{{- end }}\n"
        );
        // Only B matters: A's split is dropped, though the texts differ across A's halves' keys.
        let b_only = ["b: 0\n", "b: 0\n", "b: 1\n", "b: 1\n"].map(String::from);
        assert_eq!(
            choose(&b_only, &[".A", ".B"], 0, 0),
            "{{- if .B }}\nb: 1\n{{- else }}\nb: 0\n{{- end }}\n"
        );
        let same = ["x\n", "x\n"].map(String::from);
        assert_eq!(choose(&same, &[".A"], 0, 0), "x\n");
    }

    #[test]
    fn both_charts_have_every_object_of_their_command_and_no_sentinel_left() {
        for chart in [cluster_manager().unwrap(), klusterlet().unwrap()] {
            let text: String = chart.files.iter().map(|(_, t)| t.as_str()).collect();
            assert!(
                !text.contains("helmhole-"),
                "{}: a sentinel left",
                chart.name
            );
            let names: Vec<&str> = chart.files.iter().map(|(p, _)| p.as_str()).collect();
            assert!(names.contains(&"Chart.yaml") && names.contains(&"values.yaml"));
            assert!(names.iter().any(|p| p.starts_with("crds/")), "{names:?}");
            assert!(
                names.iter().any(|p| p.contains("-deployment-")),
                "{}: {names:?}",
                chart.name
            );
        }
    }
}
