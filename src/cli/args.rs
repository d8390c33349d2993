//! Flags shared by every command (flattened into each, as kubectl's global flags).
use std::path::PathBuf;
use std::time::Duration;

use crate::kubeconfig::Selection;
use crate::ui::Printer;
use crate::ui::printer::ColorChoice;

/// Global flags.
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]
    #[arg(long, global = true, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use [default: the current context]
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// How long to wait for the cluster, e.g. `300`, `90s`, `5m`
    #[arg(long, global = true, value_name = "DURATION", default_value = "300", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Print what would be applied instead of applying it
    #[arg(long, global = true)]
    pub dry_run: bool,

    /// More log output on stderr (-v info, -vv debug, -vvv trace; klog's `-v N`/`--v=N` too)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only errors and warnings on stderr
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When to colour output
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

impl GlobalArgs {
    /// The printer these flags ask for.
    #[must_use]
    pub fn printer(&self) -> Printer {
        Printer::new(self.quiet, self.verbose, self.color)
    }

    /// The kubeconfig selection of `--kubeconfig`/`--context`.
    #[must_use]
    pub fn selection(&self) -> Selection {
        Selection {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
        }
    }
}

/// The longest duration accepted: longer ones are typos, and would overflow a deadline.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// `name=value`, as cobra's string-to-string flags take it.
///
/// # Errors
/// No `=`, or an empty name.
pub fn parse_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("{text:?} is not name=value")),
    }
}

/// Parses `300` (seconds, as upstream clusteradm), `90s`, `5m` or `1h`, up to [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 300, 90s, 5m, 1h"))?;
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("invalid duration unit in {text:?}: use s, m or h")),
    };
    n.checked_mul(scale)
        .filter(|secs| *secs <= MAX_DURATION.as_secs())
        .map(Duration::from_secs)
        .ok_or_else(|| format!("duration {text:?} is too long: at most 8760h (a year)"))
}

/// Refuses a registration driver other than `csr`, saying why (`--registration-drivers` of
/// `init`, `--registration-auth` of `join`).
///
/// # Errors
/// A driver other than `csr`.
pub fn check_registration_drivers(drivers: &[String], flag: &str) -> anyhow::Result<()> {
    for driver in drivers.iter().map(|d| d.trim()).filter(|d| !d.is_empty()) {
        let why = match driver {
            "csr" => continue,
            "awsirsa" => "AWS IRSA registration needs an EKS hub and AWS credentials",
            "grpc" => "the gRPC registration driver is not implemented",
            _ => "upstream's drivers are csr, awsirsa and grpc",
        };
        return Err(crate::error::UserError::new(
            format!("{flag}: driver {driver:?} is not supported: {why}"),
            format!("drop {flag}, or pass {flag} csr (clusters register with CSRs)"),
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_duration("8760h"), Ok(MAX_DURATION));
        assert!(parse_duration("8761h").unwrap_err().contains("too long"));
        assert!(parse_duration("999999999999999999h").is_err());
        assert!(parse_duration("99999999999999999999").is_err());
    }
}
