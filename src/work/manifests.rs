//! The input of `clusteradm create work`: files, directories (`*.yaml`, `*.yml`, `*.json`,
//! recursively with `-R`) and stdin (`-`), split into documents, `kind: List` expanded, and every
//! manifest validated before anything is sent — errors name the file and the document, so a typo
//! in the fifth file never leaves four works half-created.
//!
//! Reading is bounded ([`crate::input`]): each input by [`MAX_INPUT_BYTES`], all inputs of one
//! command by [`MAX_TREE_BYTES`] ([`read_all`]), and the walk by [`MAX_TREE_ENTRIES`], since
//! symbolic links can make a small tree look exponentially large without forming a loop.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::api::work::{ManifestWork, ManifestWorkSpec, ManifestsTemplate};
pub use crate::input::{MAX_TREE_BYTES, MAX_TREE_ENTRIES};

pub use crate::api::work::MAX_MANIFESTS_BYTES as MAX_BYTES;
/// The most bytes read from one input: YAML may be larger than the JSON it becomes (comments,
/// indentation), but nothing past this can fit in a work — `-f /dev/zero` stops here. The same
/// bound as every other file flag's ([`crate::input::MAX_FILE_BYTES`]).
pub const MAX_INPUT_BYTES: u64 = crate::input::MAX_FILE_BYTES;

/// Why the input cannot become a work.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A directory held no manifest files.
    #[error("{path} holds no *.yaml, *.yml or *.json files{}", if *.recursive { "" } else { " (use -R for subdirectories)" })]
    EmptyDir {
        /// The directory.
        path: String,
        /// Whether subdirectories were searched.
        recursive: bool,
    },
    /// A document is not valid YAML.
    #[error("{source_name}: document {document} (line {line}) is not valid YAML: {message}")]
    Yaml {
        /// File name (or `<stdin>`).
        source_name: String,
        /// 1-based document index within the file.
        document: usize,
        /// Line where the document starts.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A manifest lacks something it needs.
    #[error("{source_name}: document {document}{}: {problem}", .item.map(|i| format!(", list item {i}")).unwrap_or_default())]
    Invalid {
        /// File name (or `<stdin>`).
        source_name: String,
        /// 1-based document index within the file.
        document: usize,
        /// 1-based item index within a `kind: List`.
        item: Option<usize>,
        /// What is wrong.
        problem: String,
    },
    /// No manifest at all.
    #[error("no manifests in {0}")]
    Empty(String),
    /// An input larger than any work could hold.
    #[error("{path} is over {} KiB: no ManifestWork can hold it", MAX_INPUT_BYTES / 1024)]
    InputTooLarge {
        /// The path (or `-`).
        path: String,
    },
    /// A directory that contains itself through a symbolic link.
    #[error("{path} leads back to {ancestor} (a symbolic link loop)")]
    Loop {
        /// The directory reached again.
        path: String,
        /// Where it was first seen.
        ancestor: String,
    },
    /// The walk met more than [`MAX_TREE_ENTRIES`] files and directories.
    #[error(
        "{path} holds more than {MAX_TREE_ENTRIES} files and directories (each path through a symbolic link counted), the most clusteradm walks for one command"
    )]
    TooManyEntries {
        /// The `-f` argument being walked.
        path: String,
    },
    /// The inputs together are over [`MAX_TREE_BYTES`].
    #[error("the -f inputs are over {} MiB by {path}, the most clusteradm reads for one command", MAX_TREE_BYTES / 1024 / 1024)]
    TreeTooLarge {
        /// The input that went over.
        path: String,
    },
    /// Over the size limit.
    #[error("the manifests take {} KiB, over the {} KiB a ManifestWork may hold", .0.div_ceil(1024), MAX_BYTES / 1024)]
    TooLarge(usize),
}

/// Expands the `-f` arguments into files, directories in sorted order; `-` is stdin. At most
/// [`MAX_TREE_ENTRIES`] directory entries are walked in all.
pub fn files(paths: &[PathBuf], recursive: bool) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut walked = 0;
    for path in paths {
        if path.as_os_str() == "-" || !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let before = out.len();
        let mut walk_state = Walk {
            root: path,
            recursive,
            walked: &mut walked,
            ancestors: Vec::new(),
            out: &mut out,
        };
        walk_state.dir(path)?;
        if out.len() == before {
            return Err(Error::EmptyDir {
                path: path.display().to_string(),
                recursive,
            });
        }
    }
    Ok(out)
}

/// One `-f` directory being walked.
struct Walk<'a> {
    /// The `-f` argument, for messages.
    root: &'a Path,
    recursive: bool,
    /// Entries walked so far, for all `-f` arguments.
    walked: &'a mut usize,
    /// The directories (canonical) on the way here, so a symbolic link back to one of them is
    /// refused rather than followed forever.
    ancestors: Vec<PathBuf>,
    out: &'a mut Vec<PathBuf>,
}

impl Walk<'_> {
    /// Collects the manifest files under `dir`.
    fn dir(&mut self, dir: &Path) -> Result<(), Error> {
        let read_err = |source| Error::Read {
            path: dir.display().to_string(),
            source,
        };
        let canonical = std::fs::canonicalize(dir).map_err(read_err)?;
        if let Some(ancestor) = self.ancestors.iter().find(|a| **a == canonical) {
            return Err(Error::Loop {
                path: dir.display().to_string(),
                ancestor: ancestor.display().to_string(),
            });
        }
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read_err)? {
            *self.walked += 1;
            if *self.walked > MAX_TREE_ENTRIES {
                return Err(Error::TooManyEntries {
                    path: self.root.display().to_string(),
                });
            }
            entries.push(entry.map_err(read_err)?.path());
        }
        entries.sort();
        self.ancestors.push(canonical);
        for path in entries {
            if path.is_dir() {
                if self.recursive {
                    self.dir(&path)?;
                }
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ) {
                self.out.push(path);
            }
        }
        self.ancestors.pop();
        Ok(())
    }
}

/// Expands the `-f` arguments ([`files`]) and reads every input ([`read`]): `(name, text)` of
/// each, at most [`MAX_TREE_BYTES`] in all.
pub fn read_all(paths: &[PathBuf], recursive: bool) -> Result<Vec<(String, String)>, Error> {
    let mut left = MAX_TREE_BYTES;
    let mut out = Vec::new();
    for path in files(paths, recursive)? {
        let (name, text) = read(&path)?;
        left = left
            .checked_sub(text.len() as u64)
            .ok_or_else(|| Error::TreeTooLarge { path: name.clone() })?;
        out.push((name, text));
    }
    Ok(out)
}

/// Reads one input (`-` is stdin).
pub fn read(path: &Path) -> Result<(String, String), Error> {
    let read_err = |source| Error::Read {
        path: path.display().to_string(),
        source,
    };
    let text = if path.as_os_str() == "-" {
        text(std::io::stdin().lock(), path).map_err(read_err)?
    } else {
        text(std::fs::File::open(path).map_err(read_err)?, path).map_err(read_err)?
    };
    let text = text.map_err(|()| Error::InputTooLarge {
        path: path.display().to_string(),
    })?;
    let name = if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    };
    Ok((name, text))
}

/// Reads at most [`MAX_INPUT_BYTES`]: `Err(())` when there was more.
fn text(input: impl std::io::Read, path: &Path) -> std::io::Result<Result<String, ()>> {
    let Some(bytes) = crate::input::bounded(input, MAX_INPUT_BYTES)? else {
        return Ok(Err(()));
    };
    String::from_utf8(bytes).map(Ok).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not UTF-8 text", path.display()),
        )
    })
}

/// Splits a YAML stream at `---` lines; returns each non-empty document with its first line.
#[must_use]
pub fn documents(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        let separator = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if separator {
            docs.push((start, std::mem::take(&mut current)));
            start = i + 2;
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    docs.push((start, current));
    docs.retain(|(_, d)| {
        d.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    docs
}

/// Parses and validates the manifests of one file.
pub fn parse(source_name: &str, text: &str) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for (index, (line, doc)) in documents(text).into_iter().enumerate() {
        let document = index + 1;
        let value: Value = crate::yaml::from_str(&doc).map_err(|e| Error::Yaml {
            source_name: source_name.into(),
            document,
            line,
            message: e.to_string(),
        })?;
        let invalid = |item, problem| Error::Invalid {
            source_name: source_name.into(),
            document,
            item,
            problem,
        };
        if value.is_null() {
            continue;
        }
        validate(&value).map_err(|p| invalid(None, p))?;
        if value["kind"] == "List" {
            let items = value["items"]
                .as_array()
                .ok_or_else(|| invalid(None, "a List without items".into()))?;
            for (i, item) in items.iter().enumerate() {
                validate(item).map_err(|p| invalid(Some(i + 1), p))?;
                if item["kind"] == "List" {
                    return Err(invalid(
                        Some(i + 1),
                        "a List inside a List is not supported".into(),
                    ));
                }
                out.push(item.clone());
            }
        } else {
            out.push(value);
        }
    }
    Ok(out)
}

/// What a manifest must have: apiVersion (`[group/]version`), kind and metadata.name (Lists
/// need no name).
pub fn validate(manifest: &Value) -> Result<(), String> {
    if !manifest.is_object() {
        return Err(
            "not a Kubernetes object (a mapping with apiVersion, kind and metadata)".into(),
        );
    }
    let field = |name: &str| manifest[name].as_str().filter(|s| !s.trim().is_empty());
    let api_version = field("apiVersion").ok_or("the manifest has no apiVersion")?;
    let parts: Vec<&str> = api_version.split('/').collect();
    if parts.len() > 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "apiVersion {api_version:?} is not of the form [group/]version"
        ));
    }
    let kind = field("kind").ok_or("the manifest has no kind")?;
    if kind == "List" {
        return Ok(());
    }
    let name = manifest["metadata"]["name"]
        .as_str()
        .filter(|s| !s.is_empty());
    if name.is_none() {
        return Err(if manifest["metadata"]["generateName"].is_string() {
            format!(
                "{kind} uses metadata.generateName, which a ManifestWork cannot apply; set metadata.name"
            )
        } else {
            format!("{kind} has no metadata.name")
        });
    }
    Ok(())
}

/// Total size of the manifests as JSON; over [`MAX_BYTES`] is an error.
pub fn check_size(manifests: &[Value]) -> Result<usize, Error> {
    let size = manifests.iter().map(|m| m.to_string().len()).sum();
    if size > MAX_BYTES {
        return Err(Error::TooLarge(size));
    }
    Ok(size)
}

/// The ManifestWork `name` for cluster (namespace) `cluster`.
#[must_use]
pub fn work(name: &str, cluster: &str, manifests: Vec<Value>) -> ManifestWork {
    let mut work = ManifestWork::new(
        name,
        ManifestWorkSpec {
            workload: ManifestsTemplate { manifests },
            ..Default::default()
        },
    );
    work.metadata.namespace = Some(cluster.into());
    work
}

#[cfg(test)]
mod tests {
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
        let malformed =
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [unclosed\n";
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
}
