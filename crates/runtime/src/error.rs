//! Errors the user acts on ([`UserError`], with a hint) and defects of this tool ([`Internal`]);
//! the command line prints them (exit codes 1 and 2).

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
