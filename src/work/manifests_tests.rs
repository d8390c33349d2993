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

/// A "diamond" under a fresh temp dir: levels `0..=depth`, each holding `m.yaml` and (but the
/// last) `k` symbolic links to the next level, so the last level is reached by k^depth paths.
/// `bottom` is the last level's `m.yaml`. Returns the temp dir and level 0.
fn diamond(name: &str, k: usize, depth: usize, bottom: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("clusteradm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for level in 0..=depth {
        let here = dir.join(level.to_string());
        std::fs::create_dir_all(&here).unwrap();
        let manifest = if level == depth {
            bottom.to_string()
        } else {
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: l{level}}}\n")
        };
        std::fs::write(here.join("m.yaml"), manifest).unwrap();
        if level < depth {
            for link in 0..k {
                let target = dir.join((level + 1).to_string());
                std::os::unix::fs::symlink(target, here.join(format!("link{link}"))).unwrap();
            }
        }
    }
    let top = dir.join("0");
    (dir, top)
}

#[test]
fn a_diamond_of_symlinked_directories_is_refused_at_the_entry_limit() {
    // 3 links a level, 12 levels: 3^12 paths to the bottom, no loop.
    let (dir, top) = diamond("diamond-entries", 3, 12, "");
    let shallow = files(std::slice::from_ref(&top), false);
    let deep = read_all(std::slice::from_ref(&top), true);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(shallow.unwrap().len(), 1);
    let err = deep.unwrap_err();
    assert!(matches!(err, Error::TooManyEntries { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "more than {MAX_TREE_ENTRIES} files and directories"
        )),
        "{message}"
    );
    assert!(message.contains("10000"), "{message}");
}

#[test]
fn a_diamond_is_refused_at_the_total_byte_limit() {
    // 2 links a level, 4 levels: 16 paths to one file of nearly MAX_INPUT_BYTES, over 16 MiB.
    let size = usize::try_from(MAX_INPUT_BYTES).unwrap() - 1024;
    let big = format!("# {}\n", "x".repeat(size));
    let (dir, top) = diamond("diamond-bytes", 2, 4, &big);
    let result = read_all(std::slice::from_ref(&top), true);
    std::fs::remove_dir_all(&dir).unwrap();
    let message = result.unwrap_err().to_string();
    assert!(message.contains("over 16 MiB"), "{message}");
    assert_eq!(MAX_TREE_BYTES, 16 * 1024 * 1024);
}
