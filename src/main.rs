//! Entry point: parse the command line, set up output, run, and map the result to an exit code.
use std::process::ExitCode;

use clap::FromArgMatches as _;
use clusteradm::cli::Cli;
use clusteradm::error;

fn main() -> ExitCode {
    // Upstream's spellings (`--a_b`, `-v 4`) first; then the derived parser as cobra's (switches
    // with `=true|false`, repeated flags, stray arguments).
    let argv = clusteradm::cli::argv::normalize(std::env::args_os());
    let matches = clusteradm::cli::cobra::command().get_matches_from(argv.args);
    let stray = clusteradm::cli::cobra::stray_arguments(&matches);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let printer = cli.global.printer();
    for warning in argv.warnings {
        printer.warn(warning);
    }
    if let Some((command, args)) = stray {
        printer.warn(format!(
            "`{command}` takes no arguments: {} ignored, as upstream's clusteradm ignores them",
            args.join(" ")
        ));
    }
    let long_running = matches!(
        cli.command,
        clusteradm::cli::Command::Controller(_) | clusteradm::cli::Command::Operator(_)
    );
    clusteradm::ui::logging::init(cli.global.verbose, long_running);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return error::report(&anyhow::Error::new(err).context("starting the async runtime"));
        }
    };
    match runtime.block_on(clusteradm::cli::run(cli, printer)) {
        Ok(code) => code,
        Err(err) => error::report(&err),
    }
}
