//! Checks the generated CRDs against upstream's (the CRDs of `open-cluster-management.io/api` kept
//! in `../shared/reference/ocm-api/`): every field path, its type, the `required` lists, list and map
//! merge semantics, validation keywords (enums, defaults, patterns, lengths, bounds, CEL rules),
//! scope and the status subresource must agree, so upstream agents and hubs read what we write and
//! the other way round. Extra fields fail too (upstream would prune them), and so does a description
//! copied from upstream. Also checks each generated CRD is a structural schema.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

const UPSTREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/reference/ocm-api"
);

/// Every `*.crd.yaml` under `dir` as JSON, with the file it came from.
fn upstream_crds(dir: &Path) -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(".crd.yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let docs = crate::yaml::from_str_multi(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.extend(docs.into_iter().map(|doc| (path.clone(), doc)));
            }
        }
    }
    out
}

/// The version entry named `version` of a CRD, if it is served.
fn served<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == version && v["served"] == true)
}

/// What a schema node holds, with the two extension markers counted as types of their own.
fn kind_of(node: &Value) -> String {
    if node["x-kubernetes-int-or-string"] == true {
        return "int-or-string".into();
    }
    let type_ = node["type"].as_str().unwrap_or("<none>");
    if node["x-kubernetes-preserve-unknown-fields"] == true {
        format!("{type_}+preserve-unknown-fields")
    } else {
        type_.into()
    }
}

fn string_set(value: &Value) -> BTreeSet<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Merge semantics of a node for server-side apply, with the apiserver's defaults filled in.
fn merge_semantics(node: &Value) -> String {
    match node["type"].as_str() {
        Some("array") => {
            let list = node["x-kubernetes-list-type"].as_str().unwrap_or("atomic");
            format!(
                "list-type {list} keys {:?}",
                string_set(&node["x-kubernetes-list-map-keys"])
            )
        }
        Some("object") => format!(
            "map-type {}",
            node["x-kubernetes-map-type"].as_str().unwrap_or("granular")
        ),
        _ => String::new(),
    }
}

/// Validation keywords that must agree, so both CRDs accept and default the same objects.
const FACETS: [&str; 12] = [
    "enum",
    "default",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "nullable",
    "x-kubernetes-embedded-resource",
];

/// A keyword value with numbers compared by value (`65535` equals `65535.0`).
fn normalize(value: &Value) -> Value {
    match value.as_f64() {
        Some(n) if value.is_number() => serde_json::json!(n),
        _ => value.clone(),
    }
}

/// Compares the schema `ours` with `up` at `path`, recording every disagreement in `errors`.
fn compare(path: &str, up: &Value, ours: &Value, errors: &mut Vec<String>) {
    let (up_kind, our_kind) = (kind_of(up), kind_of(ours));
    if up_kind != our_kind {
        errors.push(format!(
            "{path}: type is {up_kind} upstream but {our_kind} here"
        ));
        return;
    }
    let (up_req, our_req) = (string_set(&up["required"]), string_set(&ours["required"]));
    if up_req != our_req {
        errors.push(format!(
            "{path}: required is {up_req:?} upstream but {our_req:?} here"
        ));
    }
    let (up_merge, our_merge) = (merge_semantics(up), merge_semantics(ours));
    if up_merge != our_merge {
        errors.push(format!("{path}: {up_merge} upstream but {our_merge} here"));
    }
    for facet in FACETS {
        let (up_facet, our_facet) = (normalize(&up[facet]), normalize(&ours[facet]));
        if up_facet != our_facet {
            errors.push(format!(
                "{path}: {facet} is {up_facet} upstream but {our_facet} here"
            ));
        }
    }
    let rules = |node: &Value| -> Vec<Value> {
        node["x-kubernetes-validations"]
            .as_array()
            .map(|a| a.iter().map(|r| r["rule"].clone()).collect())
            .unwrap_or_default()
    };
    if rules(up) != rules(ours) {
        errors.push(format!(
            "{path}: CEL rules are {:?} upstream but {:?} here",
            rules(up),
            rules(ours)
        ));
    }
    if up.get("description").is_some() && up["description"] == ours["description"] {
        errors.push(format!(
            "{path}: description copied from upstream; write our own"
        ));
    }
    if up["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    let empty = serde_json::Map::new();
    let up_props = up["properties"].as_object().unwrap_or(&empty);
    let our_props = ours["properties"].as_object().unwrap_or(&empty);
    for (name, up_prop) in up_props {
        match our_props.get(name) {
            Some(our_prop) => compare(&format!("{path}.{name}"), up_prop, our_prop, errors),
            None => errors.push(format!(
                "{path}.{name}: missing here ({} upstream)",
                kind_of(up_prop)
            )),
        }
    }
    for name in our_props
        .keys()
        .filter(|name| !up_props.contains_key(*name))
    {
        errors.push(format!(
            "{path}.{name}: not in upstream (the apiserver would prune it there)"
        ));
    }
    for (key, step) in [("items", "[]"), ("additionalProperties", "{}")] {
        match (
            up.get(key).filter(|v| v.is_object()),
            ours.get(key).filter(|v| v.is_object()),
        ) {
            (Some(up_child), Some(our_child)) => {
                compare(&format!("{path}{step}"), up_child, our_child, errors);
            }
            (Some(_), None) => errors.push(format!("{path}{step}: missing here")),
            (None, Some(_)) => errors.push(format!("{path}{step}: not in upstream")),
            (None, None) => {}
        }
    }
}

/// Every disagreement between one of our CRDs and the upstream CRDs of the same name.
fn mismatches(ours: &CustomResourceDefinition, upstream: &[(PathBuf, Value)]) -> Vec<String> {
    let ours = serde_json::to_value(ours).unwrap();
    let name = ours["metadata"]["name"].as_str().unwrap();
    let mut errors = Vec::new();
    for version in ours["spec"]["versions"].as_array().unwrap() {
        let v = version["name"].as_str().unwrap();
        let candidates: Vec<_> = upstream
            .iter()
            .filter(|(_, crd)| crd["metadata"]["name"] == name)
            .filter_map(|(file, crd)| served(crd, v).map(|up| (file, crd, up)))
            .collect();
        if candidates.is_empty() {
            errors.push(format!("{name} {v}: no upstream CRD serves this version"));
        }
        for (file, crd, up) in candidates {
            let at = format!(
                "{name} {v} (vs {})",
                file.strip_prefix(UPSTREAM).unwrap_or(file).display()
            );
            if crd["spec"]["scope"] != ours["spec"]["scope"] {
                errors.push(format!(
                    "{at}: scope is {} upstream but {} here",
                    crd["spec"]["scope"], ours["spec"]["scope"]
                ));
            }
            let (up_status, our_status) = (
                up["subresources"]["status"].is_object(),
                version["subresources"]["status"].is_object(),
            );
            if up_status != our_status {
                errors.push(format!(
                    "{at}: status subresource is {up_status} upstream but {our_status} here"
                ));
            }
            let mut schema_errors = Vec::new();
            let schema = |v: &Value| v["schema"]["openAPIV3Schema"].clone();
            compare("", &schema(up), &schema(version), &mut schema_errors);
            errors.extend(schema_errors.into_iter().map(|e| format!("{at}: {e}")));
        }
    }
    errors
}

#[test]
fn generated_crds_match_upstream() {
    let dir = Path::new(UPSTREAM);
    // The oracle is a prerequisite: without it this test fails rather than passing unchecked.
    assert!(
        dir.is_dir(),
        "the upstream CRDs are absent from {}: clone the project next to shared/",
        dir.display()
    );
    let upstream = upstream_crds(dir);
    assert!(
        !upstream.is_empty(),
        "no *.crd.yaml under {}",
        dir.display()
    );
    // The ClusterInventory's and the About API's CRDs are SIG-Multicluster's, not in OCM's API
    // reference: their shapes are checked by `cluster_profile_crd_has_the_inventorys_shape` and
    // `cluster_property_crd_has_the_about_apis_shape`.
    let errors: Vec<String> = super::all_crds()
        .iter()
        .filter(|crd| {
            let name = crd.metadata.name.as_deref();
            name != Some(super::inventory::CRD_NAME) && name != Some(super::about::CRD_NAME)
        })
        .flat_map(|crd| mismatches(crd, &upstream))
        .collect();
    assert!(
        errors.is_empty(),
        "{} mismatches with upstream CRDs:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

/// Structural-schema rules the apiserver enforces, at `path` and below.
fn structural_errors(path: &str, node: &Value, errors: &mut Vec<String>) {
    let int_or_string = node["x-kubernetes-int-or-string"] == true;
    if node["type"].as_str().is_none()
        && !int_or_string
        && node["x-kubernetes-preserve-unknown-fields"] != true
    {
        errors.push(format!("{path}: no type"));
    }
    for key in ["oneOf", "allOf", "not", "$ref", "definitions", "$defs"] {
        if node.get(key).is_some() {
            errors.push(format!("{path}: has {key}"));
        }
    }
    if node.get("anyOf").is_some() && !int_or_string {
        errors.push(format!("{path}: anyOf outside an int-or-string"));
    }
    if node["additionalProperties"].is_object() && node["properties"].is_object() {
        errors.push(format!("{path}: both properties and additionalProperties"));
    }
    if node["x-kubernetes-list-type"] == "map" {
        let required = string_set(&node["items"]["required"]);
        for key in string_set(&node["x-kubernetes-list-map-keys"]) {
            if !required.contains(key) && node["items"]["properties"][key].get("default").is_none()
            {
                errors.push(format!(
                    "{path}: list-map key {key} is neither required nor defaulted"
                ));
            }
        }
    }
    if let Some(props) = node["properties"].as_object() {
        for (name, prop) in props {
            structural_errors(&format!("{path}.{name}"), prop, errors);
        }
    }
    for (key, step) in [("items", "[]"), ("additionalProperties", "{}")] {
        if let Some(child) = node.get(key).filter(|v| v.is_object()) {
            structural_errors(&format!("{path}{step}"), child, errors);
        }
    }
}

#[test]
fn generated_crds_are_structural() {
    let mut errors = Vec::new();
    for crd in super::all_crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let text = crate::yaml::to_string(&crd).unwrap();
        let parsed: CustomResourceDefinition =
            crate::yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed, crd, "{name}: YAML round trip changed the CRD");
        for version in &parsed.spec.versions {
            let schema = version
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref());
            let schema =
                serde_json::to_value(schema.unwrap_or_else(|| panic!("{name}: no schema")))
                    .unwrap();
            let mut found = Vec::new();
            structural_errors("", &schema, &mut found);
            errors.extend(
                found
                    .into_iter()
                    .map(|e| format!("{name} {}: {e}", version.name)),
            );
        }
    }
    assert!(
        errors.is_empty(),
        "non-structural CRD schemas:\n{}",
        errors.join("\n")
    );
}

#[test]
fn install_order_and_groups() {
    let names = |crds: Vec<CustomResourceDefinition>| -> Vec<String> {
        crds.into_iter().filter_map(|c| c.metadata.name).collect()
    };
    let all = names(super::all_crds());
    assert_eq!(all.len(), 18);
    assert_eq!(
        all.iter().collect::<BTreeSet<_>>().len(),
        18,
        "duplicate CRDs: {all:?}"
    );
    assert!(
        !names(super::hub_crds())
            .iter()
            .any(|n| n.starts_with("clustermanagers."))
    );
    assert_eq!(
        names(super::managed_crds()),
        [
            "appliedmanifestworks.work.open-cluster-management.io",
            "clusterclaims.cluster.open-cluster-management.io"
        ]
    );
}

#[test]
fn comparison_reports_every_kind_of_mismatch() {
    let up = serde_json::json!({"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "enum": ["X", "Y"]},
        "b": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
              "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}}},
        "c": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "d": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"deep": {"type": "string"}}},
        "e": {"type": "integer", "maximum": 10, "default": 1},
    }});
    let ours = serde_json::json!({"type": "object", "properties": {
        "a": {"type": "string", "enum": ["X"]},
        "b": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}}},
        "c": {"type": "string"},
        "d": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "e": {"type": "integer", "maximum": 10.0, "default": 1},
        "extra": {"type": "string"},
    }});
    let mut errors = Vec::new();
    compare("", &up, &ours, &mut errors);
    let expected = [
        ": required",
        ".a: enum",
        ".b: list-type map",
        ".b[]: required",
        ".b[].k: type",
        ".c: type is int-or-string",
        ".extra: not in upstream",
    ];
    for want in expected {
        assert!(
            errors.iter().any(|e| e.starts_with(want)),
            "no error starting {want:?} in {errors:#?}"
        );
    }
    assert_eq!(
        errors.len(),
        expected.len(),
        "unexpected errors: {errors:#?}"
    );
}

#[test]
fn cluster_profile_crd_has_the_inventorys_shape() {
    let crd = serde_json::to_value(super::cluster_profile_crd()).unwrap();
    assert_eq!(crd["metadata"]["name"], super::inventory::CRD_NAME);
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v1alpha1");
    assert!(version["subresources"]["status"].is_object());
    let schema = &version["schema"]["openAPIV3Schema"];
    assert_eq!(schema["required"], serde_json::json!(["spec"]));
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["clusterManager"]));
    assert_eq!(
        spec["properties"]["clusterManager"]["x-kubernetes-validations"][0]["rule"],
        "self == oldSelf"
    );
    let status = &schema["properties"]["status"]["properties"];
    let cluster = &status["accessProviders"]["items"]["properties"]["cluster"];
    assert_eq!(cluster["required"], serde_json::json!(["server"]));
    assert_eq!(
        cluster["properties"]["certificate-authority-data"]["format"],
        "byte"
    );
    assert_eq!(
        status["credentialProviders"]["items"],
        status["accessProviders"]["items"]
    );
    assert_eq!(
        status["properties"]["items"]["required"],
        serde_json::json!(["name", "value"])
    );
}

#[test]
fn cluster_property_crd_has_the_about_apis_shape() {
    let crd = serde_json::to_value(super::cluster_property_crd()).unwrap();
    assert_eq!(crd["metadata"]["name"], super::about::CRD_NAME);
    assert_eq!(crd["spec"]["scope"], "Cluster");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v1alpha1");
    assert!(version["subresources"]["status"].is_object());
    let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["value"]));
    assert_eq!(spec["properties"]["value"]["minLength"], 1);
}
