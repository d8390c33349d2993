//! The book's command reference (`docs/src/reference/commands.md`), written by `generate` from the
//! clap command itself: every visible command with its description, usage and flags, so the page
//! cannot drift from what the binary takes.
use std::fmt::Write as _;

use clap::Command;

/// The whole page.
#[must_use]
pub fn page(root: &Command) -> String {
    let mut out = String::from(
        "# Command reference\n\n<!-- generated from the command line by `clusteradm generate`; do not edit -->\n\n\
         Every command also takes the global flags listed under `clusteradm`. \
         Task-by-task explanations are in the [Commands](../commands.md) pages.\n",
    );
    let mut root = root.clone().bin_name("clusteradm");
    root.build();
    section(&mut out, &root, "clusteradm");
    out
}

/// One command's section, then its subcommands'.
fn section(out: &mut String, cmd: &Command, path: &str) {
    let _ = write!(out, "\n## {path}\n\n");
    if let Some(about) = cmd.get_long_about().or_else(|| cmd.get_about()) {
        let _ = writeln!(out, "{}\n", one_paragraph(&about.to_string()));
    }
    if cmd.get_subcommands().all(Command::is_hide_set) {
        let usage = cmd.clone().render_usage().to_string();
        let usage = usage.trim_start_matches("Usage: ").trim();
        let _ = writeln!(out, "```text\n{usage}\n```\n");
    }
    flags(out, cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        section(out, sub, &format!("{path} {}", sub.get_name()));
    }
}

/// The command's own arguments as a table (globals are listed once, under the root).
fn flags(out: &mut String, cmd: &Command) {
    let own: Vec<_> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && (!a.is_global_set() || cmd.get_name() == "clusteradm"))
        .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        .collect();
    if own.is_empty() {
        return;
    }
    out.push_str("| flag | what |\n| --- | --- |\n");
    for arg in own {
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), Some(short)) => format!("`-{short}`, `--{long}`"),
            (Some(long), None) => format!("`--{long}`"),
            (None, Some(short)) => format!("`-{short}`"),
            (None, None) => format!("`{}`", arg.get_id().as_str().to_uppercase()),
        };
        let help = arg
            .get_long_help()
            .or_else(|| arg.get_help())
            .map(|h| one_paragraph(&h.to_string()))
            .unwrap_or_default();
        let default: Vec<_> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .filter(|v| !v.is_empty() && v != "false")
            .collect();
        let default = if default.is_empty() || arg.is_hide_default_value_set() {
            String::new()
        } else {
            format!(" (default `{}`)", default.join(","))
        };
        let _ = writeln!(out, "| {name} | {}{default} |", cell(&help));
    }
    out.push('\n');
}

/// Text on one line: clap wraps nothing here, but help may hold line breaks.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_visible_command_has_a_section_with_its_flags() {
        let page = super::page(&crate::cli::cobra::completion_command());
        for heading in [
            "## clusteradm init",
            "## clusteradm get works",
            "## clusteradm join",
        ] {
            assert!(page.contains(&format!("{heading}\n")), "{heading} missing");
        }
        assert!(page.contains("`--hub-token`"), "join's flags missing");
        assert!(
            !page.contains("## clusteradm generate"),
            "a hidden command is listed"
        );
    }
}
