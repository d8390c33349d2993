//! The edge where errors become what the user sees: the cause chain, `hint:` lines, and an exit
//! code (0 success, 1 a failure the user can act on, 2 a usage or internal error).
use std::process::ExitCode;

use console::Style;

/// Marks an error as a defect of this tool rather than of its input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("internal error (please report it): {0}")]
pub struct Internal(pub String);

/// A failure the user must act on, with the advice to print under it.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UserError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl UserError {
    /// A user error with a hint.
    #[must_use]
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// Turns "the server does not serve this resource at all" (a 404 without a Status body: the CRD is
/// missing) into a user error saying the cluster is not an OCM hub yet; other errors pass through.
#[must_use]
pub fn ocm_api_missing(err: kube::Error) -> anyhow::Error {
    match &err {
        kube::Error::Api(s) if s.code == 404 && s.reason != "NotFound" => UserError::new(
            "the cluster does not serve the OCM APIs: it is not an OCM hub (yet)",
            "run `clusteradm init` on it, and wait for the hub to be ready (`init --wait`)",
        )
        .into(),
        _ => err.into(),
    }
}

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
