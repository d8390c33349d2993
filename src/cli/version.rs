//! `clusteradm version`: the client's version, the API server's (unless `--client`) and the
//! default bundle version, in upstream's lines (`client\t\tversion\t:…`). It needs no cluster:
//! when the server cannot be asked, it says why on stderr and prints the rest.
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
    default_bundle_version: &'static str,
}

/// Prints the versions.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut versions = Versions {
        client_version: env!("CARGO_PKG_VERSION"),
        server_version: None,
        default_bundle_version: crate::api::names::DEFAULT_BUNDLE_VERSION,
    };
    if !args.client {
        let server = async { anyhow::Ok(ctx.kube().await?.server_version().await?.git_version) };
        match server.await {
            Ok(v) => versions.server_version = Some(v),
            Err(e) => ctx.printer.warn(format!(
                "server version unknown: {} (the client's needs no cluster; --client asks for it alone)",
                crate::runtime::report::chain(&*e)
            )),
        }
    }
    match args.output {
        Format::Table => {
            let mut lines = format!("client\t\tversion\t:{}\n", versions.client_version);
            if let Some(server) = &versions.server_version {
                lines.push_str(&format!("server release\tversion\t:{server}\n"));
            }
            lines.push_str(&format!(
                "default bundle\tversion\t:{}",
                versions.default_bundle_version
            ));
            crate::ui::stdout::println(lines)?;
        }
        format => print_value(&versions, format)?,
    }
    Ok(ExitCode::SUCCESS)
}
