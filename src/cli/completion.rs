//! `clusteradm completion <shell>`: completion scripts generated from the clap definition. The
//! same scripts are committed under completions/ (see `generate`).
use std::process::ExitCode;

use clap_complete::Shell;

/// Flags of `completion`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to generate for
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// The completion script for one shell.
#[must_use]
pub fn script(shell: Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(
        shell,
        &mut super::cobra::completion_command(),
        "clusteradm",
        &mut buf,
    );
    String::from_utf8(buf).expect("completion scripts are UTF-8")
}

/// Prints the script.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let shell: Shell = args.shell.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    crate::ui::stdout::print(script(shell))?;
    Ok(ExitCode::SUCCESS)
}
