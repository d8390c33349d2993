//! Every internal link of the README, the changelog and the book (`docs/src`) leads somewhere: the
//! file exists, the heading it names exists, a book page links only inside the book (the built
//! book holds nothing else), and every page is in the book's table of contents.
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The anchor mdBook (and GitHub) give a heading: lowercase, spaces to `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The text outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            // Drop inline code: every other backtick-delimited part.
            for (i, part) in line.split('`').enumerate() {
                if i % 2 == 0 {
                    out.push_str(part);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The anchors of a page's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            let heading = line.trim_start_matches('#').trim();
            out.insert(anchor(&heading.replace('`', "")));
        }
    }
    out
}

/// The targets of `[text](target)` links and images.
fn targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every broken link of `file` (relative to `root`).
fn broken(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let in_book = file.starts_with("docs/src");
    let mut out = Vec::new();
    for target in targets(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else {
            normal(&file.parent().unwrap_or(Path::new("")).join(path))
        };
        let problem = if !root.join(&linked).exists() {
            Some("no such file")
        } else if in_book && !linked.starts_with("docs/src") {
            Some("outside the book")
        } else if !fragment.is_empty()
            && !anchors(&std::fs::read_to_string(root.join(&linked)).unwrap_or_default())
                .contains(fragment)
        {
            Some("no such heading")
        } else {
            None
        };
        if let Some(problem) = problem {
            out.push(format!("{}: ({target}): {problem}", file.display()));
        }
    }
    out
}

/// The Markdown pages under `dir` (relative to `root`).
fn pages(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let path = dir.join(entry.unwrap().file_name());
        if root.join(&path).is_dir() {
            pages(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn every_internal_link_leads_somewhere_and_every_page_is_in_the_book() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    let mut book = Vec::new();
    pages(root, Path::new("docs/src"), &mut book);
    files.extend(book.iter().cloned());
    let problems: Vec<String> = files.iter().flat_map(|f| broken(root, f)).collect();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );

    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = targets(&summary).into_iter().collect();
    let orphans: Vec<_> = book
        .iter()
        .filter_map(|p| p.strip_prefix("docs/src").ok())
        .map(|p| p.display().to_string())
        .filter(|p| p != "SUMMARY.md" && !listed.contains(p))
        .collect();
    assert!(
        orphans.is_empty(),
        "pages missing from docs/src/SUMMARY.md: {orphans:?}"
    );
}

#[test]
fn anchors_are_mdbooks() {
    assert_eq!(
        anchor("Compatibility with upstream's clusteradm"),
        "compatibility-with-upstreams-clusteradm"
    );
    assert_eq!(
        anchor("Pods: our image on real nodes"),
        "pods-our-image-on-real-nodes"
    );
}
