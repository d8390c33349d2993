//! Confirmation before destructive commands: asked only on a terminal. Elsewhere the command
//! proceeds, as upstream's (which never asks) does for the scripts written for it, and says so on
//! stderr; `-y` proceeds without asking or saying anything, and a script never blocks on a hidden
//! prompt.
//! Declining is one rule for every command: "nothing done", exit 1 — what was asked for did not
//! happen, so `clusteradm clean && next-step` stops.
use std::process::ExitCode;

use crate::ui::Printer;

/// Returns Ok(true) to proceed, Ok(false) when the user said no.
pub fn confirm(printer: &Printer, question: &str, yes: bool) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !printer.interactive() {
        printer.warn(format!(
            "no terminal to confirm on: proceeding, as upstream's clusteradm does ({question} pass -y to answer yes yourself)"
        ));
        return Ok(true);
    }
    ask(question)
}

/// Asks `question` on the terminal (default no), whatever `-y` says: for a trust decision only
/// the person at the terminal may answer.
pub fn ask(question: &str) -> anyhow::Result<bool> {
    Ok(dialoguer::Confirm::new()
        .with_prompt(question)
        .default(false)
        .interact()?)
}

/// What a command does when the user said no: tells them, and exits 1.
#[must_use]
pub fn declined(printer: &Printer) -> ExitCode {
    printer.info("nothing done");
    ExitCode::FAILURE
}
