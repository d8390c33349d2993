//! Unit tests of reading `create work` input.
use super::*;

#[test]
fn splits_documents_and_skips_empty_ones() {
    let text = "---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # next\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n---\n";
    let docs = documents(text);
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].0, 4);
    assert_eq!(docs[1].0, 8);
    let manifests = parse("f.yaml", text).unwrap();
    assert_eq!(manifests.len(), 2);
    assert_eq!(manifests[1]["kind"], "Secret");
}

#[test]
fn lists_are_expanded() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n";
    let manifests = parse("l.yaml", text).unwrap();
    assert_eq!(manifests.len(), 2);
    assert_eq!(manifests[1]["metadata"]["name"], "b");
    let bad = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, metadata: {name: b}}\n";
    let err = parse("l.yaml", bad).unwrap_err().to_string();
    assert_eq!(
        err,
        "l.yaml: document 1, list item 2: the manifest has no kind"
    );
}

#[test]
fn errors_name_file_and_document() {
    let no_kind = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n";
    assert_eq!(
        parse("dir/x.yaml", no_kind).unwrap_err().to_string(),
        "dir/x.yaml: document 2: the manifest has no kind"
    );
    let malformed = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [unclosed\n";
    let err = parse("m.yaml", malformed).unwrap_err().to_string();
    assert!(
        err.starts_with("m.yaml: document 2 (line 5) is not valid YAML"),
        "{err}"
    );
    let no_name = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {generateName: web-}\n";
    assert!(
        parse("n.yaml", no_name)
            .unwrap_err()
            .to_string()
            .contains("generateName")
    );
    assert!(
        parse("s.yaml", "just a string\n")
            .unwrap_err()
            .to_string()
            .contains("not a Kubernetes object")
    );
}

#[test]
fn validation() {
    use serde_json::json;
    assert!(
        validate(
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
        )
        .is_ok()
    );
    assert!(
        validate(&json!({"apiVersion": "a/b/c", "kind": "X", "metadata": {"name": "d"}}))
            .unwrap_err()
            .contains("[group/]version")
    );
    assert!(
        validate(&json!({"kind": "X", "metadata": {"name": "d"}}))
            .unwrap_err()
            .contains("apiVersion")
    );
    assert!(
        validate(&json!({"apiVersion": "v1", "kind": "ConfigMap"}))
            .unwrap_err()
            .contains("metadata.name")
    );
}

#[test]
fn size_limit() {
    let big = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "y".repeat(MAX_BYTES)}});
    let err = check_size(&[big]).unwrap_err().to_string();
    assert!(err.contains("over the 500 KiB"), "{err}");
    let small =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    assert!(check_size(&[small]).unwrap() < 100);
}

#[test]
fn directories_list_manifest_files_sorted() {
    let dir = std::env::temp_dir().join(format!("clusteradm-manifests-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for f in ["b.yaml", "a.yml", "c.json", "notes.txt"] {
        std::fs::write(dir.join(f), "").unwrap();
    }
    std::fs::write(sub.join("d.yaml"), "").unwrap();
    let names = |paths: Vec<PathBuf>| -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(
        names(files(std::slice::from_ref(&dir), false).unwrap()),
        ["a.yml", "b.yaml", "c.json"]
    );
    assert_eq!(
        names(files(std::slice::from_ref(&dir), true).unwrap()),
        ["a.yml", "b.yaml", "c.json", "sub/d.yaml"]
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(
        files(&[empty], false)
            .unwrap_err()
            .to_string()
            .contains("-R")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn work_is_namespaced_to_the_cluster() {
    let w = work("w", "c1", vec![serde_json::json!({"kind": "X"})]);
    assert_eq!(w.metadata.namespace.as_deref(), Some("c1"));
    assert_eq!(w.spec.workload.manifests.len(), 1);
}
