//! Logging to stderr via `tracing`: `RUST_LOG` wins, otherwise `-v` raises the level of our own
//! crates (the CLI's and the controllers' it links). A command that runs controllers for good (a
//! pod's `controller` or `operator`) logs warnings by default, so that a pod's log says why it
//! retries; a one-shot command logs nothing unless asked.
use tracing_subscriber::EnvFilter;

/// Our crates, whose events `-v` shows.
const CRATES: [&str; 5] = [
    "clusteradm",
    "ocm_hub",
    "ocm_agent",
    "ocm_operator",
    "ocm_runtime",
];

/// Installs the global subscriber once; `verbose` is the number of `-v`s, `long_running` whether
/// the command runs controllers until stopped.
pub fn init(verbose: u8, long_running: bool) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(directives(verbose, long_running)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// The filter for `verbose` `-v`s.
fn directives(verbose: u8, long_running: bool) -> String {
    let (ours, kube) = match verbose {
        0 if long_running => ("warn", None),
        0 => return "off".into(),
        1 => ("info", None),
        2 => ("debug", Some("info")),
        _ => ("trace", Some("debug")),
    };
    let mut out: Vec<String> = CRATES.iter().map(|c| format!("{c}={ours}")).collect();
    if let Some(kube) = kube {
        out.push(format!("kube={kube}"));
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::directives;

    #[test]
    fn one_shot_commands_are_quiet_and_controllers_warn() {
        assert_eq!(directives(0, false), "off");
        assert!(directives(0, true).contains("ocm_hub=warn"));
        let v = directives(1, false);
        assert!(
            v.contains("clusteradm=info") && v.contains("ocm_agent=info"),
            "{v}"
        );
        assert!(directives(2, true).contains("kube=info"));
    }
}
