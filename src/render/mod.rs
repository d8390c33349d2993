//! Templates are data: `templates/<bundle>/*.yaml.j2`, embedded at compile time
//! ([`embedded::TEMPLATES`]), rendered by minijinja with strict undefined behaviour from a typed,
//! serialisable value per bundle. Rendering returns errors and never panics; every rendered
//! document is parsed into a [`DynamicObject`] before anything is applied.
pub mod embedded;

use std::sync::LazyLock;

use kube::api::DynamicObject;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// A template that does not render or does not produce Kubernetes objects: a defect of this
/// tool, not of the user's input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No templates under `templates/<bundle>/`.
    #[error("no templates for bundle {0}")]
    NoBundle(String),
    /// minijinja failed (syntax, or a value the template needs is missing).
    #[error("rendering template {name} failed")]
    Template {
        /// Template path under templates/.
        name: String,
        /// minijinja's error (line and cause).
        #[source]
        source: minijinja::Error,
    },
    /// The rendered text is not YAML of Kubernetes objects.
    #[error("template {name} did not render to Kubernetes objects")]
    Parse {
        /// Template path under templates/.
        name: String,
        /// Why not.
        #[source]
        source: anyhow::Error,
    },
}

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    for (name, source) in embedded::TEMPLATES {
        // A syntax error surfaces as a render error of that template (see `render_bundle`).
        let _ = env.add_template(name, source);
    }
    env
});

/// Names of the templates of a bundle, in file-name order.
#[must_use]
pub fn bundle_templates(bundle: &str) -> Vec<&'static str> {
    let prefix = format!("{bundle}/");
    let mut names: Vec<&'static str> = embedded::TEMPLATES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    names.sort_unstable();
    names
}

/// Renders every template of `bundle` with `values` and parses the result into objects.
pub fn render_bundle<V: Serialize>(bundle: &str, values: &V) -> Result<Vec<DynamicObject>, Error> {
    let names = bundle_templates(bundle);
    if names.is_empty() {
        return Err(Error::NoBundle(bundle.to_string()));
    }
    let mut objects = Vec::new();
    for name in names {
        let text = render_one(name, values)?;
        let parsed = crate::apply::parse_objects(&text, name).map_err(|source| Error::Parse {
            name: name.to_string(),
            source,
        })?;
        objects.extend(parsed);
    }
    Ok(objects)
}

/// Renders one template to text.
pub fn render_one<V: Serialize>(name: &str, values: &V) -> Result<String, Error> {
    let template = ENV.get_template(name).map_err(|source| Error::Template {
        name: name.to_string(),
        source,
    })?;
    template.render(values).map_err(|source| Error::Template {
        name: name.to_string(),
        source,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn strict_undefined_is_an_error_not_an_empty_string() {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.add_template("t", "name: {{ missing }}").unwrap();
        assert!(
            env.get_template("t")
                .unwrap()
                .render(serde_json::json!({}))
                .is_err()
        );
    }

    #[test]
    fn unknown_bundle_is_an_error() {
        assert!(matches!(
            render_bundle("no-such-bundle", &()),
            Err(Error::NoBundle(_))
        ));
    }

    /// Only that each template parses: rendering each with its bundle's real values is tested
    /// where those values are built (`install::hub`, `install::klusterlet`), through
    /// [`assert_renders_objects`].
    #[test]
    fn every_embedded_template_parses() {
        for (name, _) in embedded::TEMPLATES {
            assert!(ENV.get_template(name).is_ok(), "{name} does not parse");
        }
    }

    /// Renders template `name` alone with `values` and checks that it yields at least one object,
    /// each with a kind and a name; returns how many.
    pub(crate) fn assert_renders_objects<V: Serialize>(name: &str, values: &V) -> usize {
        let text = render_one(name, values).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let objects = crate::apply::parse_objects(&text, name)
            .unwrap_or_else(|e| panic!("{name} rendered no objects: {e:#}"));
        assert!(!objects.is_empty(), "{name} rendered no objects");
        for o in &objects {
            assert!(
                o.types.as_ref().is_some_and(|t| !t.kind.is_empty()),
                "{name}: an object without kind"
            );
            assert!(
                o.metadata.name.as_deref().is_some_and(|n| !n.is_empty()),
                "{name}: an object without name"
            );
        }
        objects.len()
    }

    #[test]
    fn every_file_under_templates_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut on_disk = Vec::new();
        collect(&root, &root, &mut on_disk);
        let embedded: Vec<&str> = embedded::TEMPLATES.iter().map(|(n, _)| *n).collect();
        for file in on_disk {
            assert!(
                embedded.contains(&file.as_str()),
                "templates/{file} is not listed in src/render/embedded.rs"
            );
        }
    }

    fn collect(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                collect(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "j2") {
                out.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
}
