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

/// The versions, under the keys `-o json|yaml` prints (`clientVersion`, ...).
#[derive(Serialize)]
struct Versions {
    #[serde(rename = "clientVersion")]
    client: &'static str,
    #[serde(rename = "serverVersion", skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    #[serde(rename = "defaultBundleVersion")]
    default_bundle: &'static str,
}

/// Prints the versions.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let mut versions = Versions {
        client: env!("CARGO_PKG_VERSION"),
        server: None,
        default_bundle: crate::api::names::DEFAULT_BUNDLE_VERSION,
    };
    if !args.client {
        let server = async { anyhow::Ok(ctx.kube().await?.server_version().await?.git_version) };
        match server.await {
            Ok(v) => versions.server = Some(v),
            Err(e) => ctx.printer.warn(format!(
                "server version unknown: {} (the client's needs no cluster; --client asks for it alone)",
                crate::runtime::report::chain(&*e)
            )),
        }
    }
    match args.output {
        Format::Table => {
            let server = versions
                .server
                .as_ref()
                .map(|v| format!("server release\tversion\t:{v}\n"))
                .unwrap_or_default();
            crate::ui::stdout::println(format!(
                "client\t\tversion\t:{}\n{server}default bundle\tversion\t:{}",
                versions.client, versions.default_bundle
            ))?;
        }
        format => print_value(&versions, format)?,
    }
    Ok(ExitCode::SUCCESS)
}
