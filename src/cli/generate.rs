//! Hidden `clusteradm generate [--check]`: writes the files derived from code — the CRDs under
//! templates/crds/ (from src/api) and the completion scripts under completions/. `--check` writes
//! nothing and fails when a file is stale, so a test catches a forgotten regeneration.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap_complete::Shell;

use super::Ctx;

/// Flags of `generate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fail if a generated file is stale instead of writing it
    #[arg(long)]
    pub check: bool,
    /// The repository root
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// Every generated file: `(path relative to the repository root, contents)`.
pub fn files() -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for crd in crate::api::all_crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let text = format!(
            "# Generated from src/api by `clusteradm generate`; do not edit.\n{}",
            crate::yaml::to_string(&crd)?
        );
        out.push((
            PathBuf::from("templates/crds").join(format!("{name}.yaml")),
            text,
        ));
    }
    for (shell, file) in [
        (Shell::Bash, "clusteradm.bash"),
        (Shell::Zsh, "_clusteradm"),
        (Shell::Fish, "clusteradm.fish"),
    ] {
        out.push((
            PathBuf::from("completions").join(file),
            super::completion::script(shell),
        ));
    }
    Ok(out)
}

/// Writes the files, or with `check` lists the stale ones.
pub fn sync(root: &Path, check: bool) -> anyhow::Result<Vec<PathBuf>> {
    let mut stale = Vec::new();
    for (rel, text) in files()? {
        let path = root.join(&rel);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        stale.push(rel);
        if !check {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(stale)
}

/// Runs `generate`.
pub fn run(args: &Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let stale = sync(&args.root, args.check)?;
    if args.check && !stale.is_empty() {
        let list: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        bail!(
            "generated files are stale: {}; run `cargo run -- generate`",
            list.join(", ")
        );
    }
    for p in &stale {
        ctx.printer.done(format!("wrote {}", p.display()));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_files_are_fresh() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let stale = super::sync(root, true).unwrap();
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `cargo run -- generate`"
        );
    }
}
