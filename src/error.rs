//! The edge where errors become what the user sees: the cause chain, `hint:` lines, and an exit
//! code (0 success, 1 a failure the user can act on, 2 a usage or internal error).
use std::process::ExitCode;

use console::Style;

pub use ocm_runtime::error::{Internal, UserError, ocm_api_missing};

/// Prints the error and picks the exit code. Errors print even with `-q`.
#[must_use]
pub fn report(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS; // `clusteradm get works | head` is not an error
    }
    let red = Style::new().red().bold().for_stderr();
    let mut chain = err.chain();
    if let Some(top) = chain.next() {
        eprintln!("{} {top}", red.apply_to("error:"));
    }
    for cause in chain {
        eprintln!("  caused by: {cause}");
    }
    for hint in hints(err) {
        eprintln!(
            "{} {hint}",
            Style::new().cyan().bold().for_stderr().apply_to("hint:")
        );
    }
    ExitCode::from(exit_code(err))
}

/// 2 for internal errors, 1 for everything else.
#[must_use]
pub fn exit_code(err: &anyhow::Error) -> u8 {
    let internal = err
        .chain()
        .any(|e| e.is::<Internal>() || e.is::<crate::render::Error>());
    if internal { 2 } else { 1 }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<std::io::Error>())
        .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Advice for well-known failures, found anywhere in the cause chain.
#[must_use]
pub fn hints(err: &anyhow::Error) -> Vec<String> {
    let mut out = Vec::new();
    for cause in err.chain() {
        if let Some(user) = cause.downcast_ref::<UserError>() {
            out.extend(user.hint.clone());
        }
        if let Some(kube) = cause.downcast_ref::<kube::Error>() {
            out.extend(kube_hint(kube));
        }
        if let Some(kc) = cause.downcast_ref::<crate::kubeconfig::Error>() {
            out.extend(kc.hint());
        }
    }
    let text = format!("{err:#}");
    if out.is_empty()
        && (text.contains("UnknownIssuer") || text.contains("invalid peer certificate"))
    {
        out.push(
            "the server's certificate is not signed by the CA in the kubeconfig: check \
             certificate-authority(-data), or that --context points at the cluster you mean"
                .into(),
        );
    }
    if out.is_empty()
        && (text.contains("Connection refused") || text.contains("error trying to connect"))
    {
        out.push(
            "is the API server running and reachable? check --kubeconfig and --context".into(),
        );
    }
    out.dedup();
    out
}

fn kube_hint(err: &kube::Error) -> Option<String> {
    match err {
        kube::Error::Api(status) if status.code == 401 => {
            Some("the server rejected the credentials: they are invalid or expired".into())
        }
        kube::Error::Api(status) if status.code == 403 => Some(
            "the user in this kubeconfig lacks the rights for this; use a cluster-admin context"
                .into(),
        ),
        _ => None,
    }
}
