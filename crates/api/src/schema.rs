//! `schema_with` helpers for fields whose derived schema would not fit a CRD as is.
//!
//! k8s-openapi types carry the Kubernetes reference text as `description`s; our CRDs carry only our
//! own docs, so [`plain`] strips them. The other helpers add the markers the apiserver needs
//! (`x-kubernetes-*`) where a Rust type cannot express them.
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

/// The schema of `T` with every `description` removed, at any depth.
pub fn plain<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.subschema_for::<T>();
    if let Some(map) = schema.as_object_mut() {
        map.remove("description");
        map.values_mut().for_each(strip_descriptions);
    }
    schema
}

fn strip_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("description");
            map.values_mut().for_each(strip_descriptions);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// Inserts `key: value` into a schema object (no-op on boolean schemas).
pub(crate) fn insert(schema: &mut Schema, key: &str, value: Value) {
    if let Some(map) = schema.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
}

/// Base64 bytes (`k8s_openapi::ByteString`), which has no schema of its own.
pub fn bytes(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "string", "format": "byte" })
}

/// An integer or a string (`IntOrString`), e.g. a count or a percentage.
pub fn int_or_string(generator: &mut SchemaGenerator) -> Schema {
    plain::<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>(generator)
}

/// A timestamp (`metav1.Time`).
pub fn time(generator: &mut SchemaGenerator) -> Schema {
    plain::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>(generator)
}

/// A resource-name to quantity map (capacity, limits).
pub fn quantities(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = plain::<
        std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >(generator);
    if let Some(values) = schema.get_mut("additionalProperties") {
        values["pattern"] = json!(QUANTITY);
    }
    schema
}

/// Pod tolerations.
pub fn tolerations(generator: &mut SchemaGenerator) -> Schema {
    plain::<Vec<k8s_openapi::api::core::v1::Toleration>>(generator)
}

/// A label selector, replaced as a whole by server-side apply.
pub fn label_selector(generator: &mut SchemaGenerator) -> Schema {
    let mut schema =
        plain::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(generator);
    insert(&mut schema, "x-kubernetes-map-type", json!("atomic"));
    schema
}

/// Label-selector-style requirements (`key`, `operator`, `values`).
pub fn selector_requirements(generator: &mut SchemaGenerator) -> Schema {
    plain::<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement>>(
        generator,
    )
}

/// Container resource requirements, with `claims` keyed by name.
pub fn resource_requirements(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = plain::<k8s_openapi::api::core::v1::ResourceRequirements>(generator);
    if let Some(claims) = schema
        .as_object_mut()
        .and_then(|s| s.get_mut("properties"))
        .and_then(|p| p.get_mut("claims"))
    {
        claims["x-kubernetes-list-type"] = json!("map");
        claims["x-kubernetes-list-map-keys"] = json!(["name"]);
    }
    for map in ["limits", "requests"] {
        if let Some(values) = schema.pointer_mut(&format!("/properties/{map}/additionalProperties"))
        {
            values["pattern"] = json!(QUANTITY);
        }
    }
    schema
}

/// A list of whole Kubernetes objects kept verbatim (ManifestWork manifests).
pub fn embedded_objects(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true,
        },
    })
}

/// Any JSON object, kept as written (a kubeconfig extension).
pub fn free_object(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// A DNS label (namespace and cluster names).
pub const DNS_LABEL: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// A DNS subdomain (service account names).
pub const DNS_SUBDOMAIN: &str =
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$";
/// A host name.
pub const HOSTNAME: &str = r"^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$";
/// An IPv4 address.
pub const IPV4: &str =
    r"^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$";
/// The ARN of an EKS cluster.
pub const EKS_ARN: &str = r"^arn:aws:eks:([a-zA-Z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9-]+)$";
/// A label-style key with an optional DNS prefix (taint keys, condition types).
pub const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";
/// A Go-style duration in hours, minutes and seconds (`1h30m`).
pub const DURATION: &str = r"^([0-9]+(s|m|h))+$";

/// A duration of Go's duration form (`90s`, `5m`, `1h30m`, Go's `1h0m0s`); `None` for any
/// other text, or one too long to count.
#[must_use]
pub fn go_duration(text: &str) -> Option<std::time::Duration> {
    let mut total: u64 = 0;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(scale)?)?;
        rest = &rest[unit..];
    }
    Some(std::time::Duration::from_secs(total))
}
/// A resource quantity (`500m`, `2Gi`).
pub const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
/// A count or a percentage up to 100% (rollout budgets).
pub const COUNT_OR_PERCENT: &str = r"^((100|[0-9]{1,2})%|[0-9]+)$";
/// A rollout deadline (`10m`) or `None`.
pub const DEADLINE: &str = r"^(([0-9])+[h|m|s])|None$";

/// A count (Go `int`): an integer without a format.
pub fn count(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "integer" })
}

/// Drops the `default` serde's `#[serde(default)]` puts in a schema where upstream has none.
pub fn no_default(schema: &mut Schema) {
    if let Some(map) = schema.as_object_mut() {
        map.remove("default");
    }
}

/// Drops the `default`s a container-level `#[serde(default)]` puts on every property.
pub fn no_property_defaults(schema: &mut Schema) {
    if let Some(props) = schema
        .as_object_mut()
        .and_then(|m| m.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        props
            .values_mut()
            .filter_map(Value::as_object_mut)
            .for_each(|p| {
                p.remove("default");
            });
    }
}

/// Adds `field` to a schema's `required` list.
pub fn require(schema: &mut Schema, field: &str) {
    if let Some(map) = schema.as_object_mut() {
        let required = map.entry("required").or_insert_with(|| json!([]));
        if let Some(list) = required.as_array_mut() {
            list.push(json!(field));
        }
    }
}
