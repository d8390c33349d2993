//! Entry point: parse the command line, set up output, run, and map the result to an exit code.
use std::process::ExitCode;

use clap::Parser;
use clusteradm::cli::Cli;
use clusteradm::error;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
