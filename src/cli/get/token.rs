//! `clusteradm get token`: the join command again, printed as upstream's (`token=<token>`, then
//! `please log on spoke and run:` and the join command). A service-account token is issued fresh
//! each time (they expire); the bootstrap token is read back (it does not).
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use crate::cli::Ctx;
use crate::cli::init::JoinOutput;
use crate::error::UserError;
use crate::install::{cluster_info, credential, join_command::JoinCommand};

/// Flags of `get token`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token
    #[arg(long)]
    pub use_bootstrap_token: bool,
    /// Lifetime of a new service-account token
    #[arg(long, default_value = "1h", value_parser = crate::cli::args::parse_duration, value_name = "DURATION")]
    pub token_expiration: Duration,
    /// The hub API server URL for the join command [default: kube-public/cluster-info's, else the kubeconfig's]
    #[arg(long, value_name = "URL")]
    pub hub_apiserver: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value_t = JoinOutput::Text)]
    pub output: JoinOutput,
    /// Accepted for upstream's scripts; writes nothing, as upstream's `get token` does not
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<std::path::PathBuf>,
}

/// Runs `get token`.
pub async fn run(args: Args, ctx: &Ctx) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.hub_apiserver {
        crate::cli::init::validate_url(url)?;
    }
    crate::cli::ignored_output_file(ctx, args.output_file.as_deref());
    let kube = ctx.kube().await?;
    kube.server_version().await?;
    let ca_pem = cluster_info::hub_ca_pem(&kube.client, &kube.loaded.config).await?;
    let ca_cert_hash = crate::pki::ca_cert_hash(ca_pem.as_bytes()).context("reading the hub CA")?;
    let token = if args.use_bootstrap_token {
        credential::read_bootstrap_token(&kube.client).await?.ok_or_else(|| {
            UserError::new(
                "this hub has no bootstrap token (kube-system/bootstrap-token-ocmhub)",
                "run `clusteradm init --use-bootstrap-token`, or drop --use-bootstrap-token to get a service-account token",
            )
        })?
    } else {
        credential::issue_service_account_token(&kube.client, args.token_expiration, &ca_cert_hash)
            .await?
    };
    let hub_apiserver = match args.hub_apiserver {
        Some(url) => url,
        None => cluster_info::server(&kube.client)
            .await?
            .unwrap_or_else(|| kube.url()),
    };
    let join = JoinCommand {
        hub_token: token.value,
        hub_apiserver,
        ca_cert_hash,
        expires: token.expires,
    };
    match args.output {
        JoinOutput::Json => crate::ui::stdout::println(serde_json::to_string_pretty(&join)?)?,
        JoinOutput::Yaml => crate::ui::stdout::print(crate::yaml::to_string(&join)?)?,
        // Upstream's lines, which scripts read (`token=`), with our join command (it also pins
        // the hub's CA).
        JoinOutput::Text => {
            crate::ui::stdout::println(format!(
                "token={}\nplease log on spoke and run:\n{}",
                join.hub_token,
                join.command_line("<cluster_name>")
            ))?;
            if let Some(expires) = &join.expires {
                ctx.printer.info(format!("The token expires at {expires}."));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
