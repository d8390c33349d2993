//! Confirmation before destructive commands: asked only on a terminal; elsewhere `--yes` is
//! required, so a script never blocks on a hidden prompt nor deletes without being told to.
//! Declining is one rule for every command: "nothing done", exit 1 — what was asked for did not
//! happen, so `clusteradm clean && next-step` stops.
use std::process::ExitCode;

use crate::error::UserError;
use crate::ui::Printer;

/// Returns Ok(true) to proceed, Ok(false) when the user said no.
pub fn confirm(printer: &Printer, question: &str, yes: bool) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !printer.interactive() {
        return Err(UserError::new(
            format!("refusing to proceed without confirmation: {question}"),
            "stdin is not a terminal; pass -y/--yes to confirm",
        )
        .into());
    }
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
