//! `-o table|yaml|json`: machine output of Kubernetes objects, without `managedFields`.
use serde::Serialize;

/// The output formats every getter supports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A human-readable table.
    #[default]
    Table,
    /// YAML (a list is printed as a `kind: List`).
    Yaml,
    /// JSON (a list is printed as a `kind: List`).
    Json,
    /// Upstream clusteradm's tree (`get clusters`; the other getters print their table).
    Tree,
}

impl Format {
    /// YAML or JSON: the objects themselves, not a view of them.
    #[must_use]
    pub fn is_objects(self) -> bool {
        matches!(self, Self::Yaml | Self::Json)
    }
}

/// Prints objects as YAML or JSON on stdout: one object alone, several as a `v1/List` as kubectl
/// does. `managedFields` are dropped: they are noise to a reader.
pub fn print_objects<T: Serialize>(objects: &[T], format: Format) -> anyhow::Result<()> {
    let mut values = objects
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()?;
    for v in &mut values {
        if let Some(meta) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.remove("managedFields");
        }
    }
    let doc = if values.len() == 1 {
        values.remove(0)
    } else {
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": values})
    };
    print_value(&doc, format)
}

/// Prints one value as YAML or JSON on stdout (tables are the caller's job).
pub fn print_value<T: Serialize>(value: &T, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => crate::ui::stdout::println(serde_json::to_string_pretty(value)?)?,
        Format::Yaml | Format::Table | Format::Tree => {
            crate::ui::stdout::print(crate::yaml::to_string(value)?)?;
        }
    }
    Ok(())
}
