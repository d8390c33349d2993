//! `clusteradm version`: the client's version and, unless `--client`, the API server's.
use std::process::ExitCode;

use serde::Serialize;

use super::Ctx;
use crate::ui::output::{Format, print_value};

/// Flags of `version`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the client version; do not contact the cluster
    #[arg(long)]
    pub client: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Versions {
    client_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<String>,
}

/// Prints the versions.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut versions = Versions {
        client_version: env!("CARGO_PKG_VERSION"),
        server_version: None,
    };
    if !args.client {
        let kube = ctx.kube().await?;
        versions.server_version = Some(kube.server_version().await?.git_version);
    }
    match args.output {
        Format::Table => {
            crate::ui::stdout::println(format_args!(
                "client version: {}",
                versions.client_version
            ))?;
            if let Some(server) = &versions.server_version {
                crate::ui::stdout::println(format_args!("server version: {server}"))?;
            }
        }
        format => print_value(&versions, format)?,
    }
    Ok(ExitCode::SUCCESS)
}
