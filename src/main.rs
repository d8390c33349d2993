//! Entry point: parse the command line, set up output, run, and map the result to an exit code.
use std::process::ExitCode;

use clap::FromArgMatches as _;
use clusteradm::cli::Cli;
use clusteradm::error;

fn main() -> ExitCode {
    // The derived parser, with switches that also take `=true|false` as upstream's (cobra) do.
    let cli = Cli::from_arg_matches(&clusteradm::cli::bool_flags::command().get_matches())
        .unwrap_or_else(|e| e.exit());
    let printer = cli.global.printer();
    clusteradm::ui::logging::init(cli.global.verbose);
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
