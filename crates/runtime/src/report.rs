//! One line for an error and its causes, for logs: `what failed: why: root cause`. kube's errors
//! repeat their cause in their own text and an API error's useful part is the Status message, so
//! both are folded rather than printed twice.
use std::error::Error;

/// `err` and its causes on one line.
#[must_use]
pub fn chain(err: &(dyn Error + 'static)) -> String {
    let mut out = describe(err);
    let mut cause = err.source();
    while let Some(c) = cause {
        let text = describe(c);
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        if c.downcast_ref::<kube::Error>().is_some() {
            break; // its Status says all there is
        }
        cause = c.source();
    }
    out
}

/// An anyhow error's chain on one line.
#[must_use]
pub fn anyhow_chain(err: &anyhow::Error) -> String {
    chain(err.as_ref())
}

/// One error without its causes; an API error as its Status message and reason.
#[must_use]
pub fn describe(err: &(dyn Error + 'static)) -> String {
    match err.downcast_ref::<kube::Error>() {
        Some(kube::Error::Api(s)) => format!("{} ({})", s.message, s.reason),
        _ => err.to_string(),
    }
}

/// One result of a kube-runtime controller's run.
pub type ControllerResult<K, E, Q> = Result<
    (
        kube::runtime::reflector::ObjectRef<K>,
        kube::runtime::controller::Action,
    ),
    kube::runtime::controller::Error<E, Q>,
>;

/// Counts one result of `controller` in its metrics (reconciles, errors, queue depth); the
/// [`crate::controller::Runner`] logs it.
pub fn record<K, E, Q>(controller: &str, result: &ControllerResult<K, E, Q>)
where
    K: kube::Resource,
{
    use kube::runtime::controller::Error as Failure;
    let failed = matches!(result, Err(Failure::ReconcilerFailed(..)));
    if !matches!(result, Err(Failure::ObjectNotFound(_))) {
        crate::metrics::reconciled(controller, failed);
    }
    let (namespace, name) = match result {
        Ok((obj, _)) => (obj.namespace.as_deref(), obj.name.as_str()),
        Err(Failure::ReconcilerFailed(_, obj) | Failure::ObjectNotFound(obj)) => {
            (obj.namespace.as_deref(), obj.name.as_str())
        }
        Err(_) => return,
    };
    crate::queue_depth::reconciled(controller, namespace, name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading ManagedCluster c1")]
    struct Reading(#[source] kube::Error);

    #[test]
    fn api_errors_show_their_status_message_once() {
        let status =
            kube::core::Status::failure("managedclusters \"c1\" is forbidden", "Forbidden")
                .with_code(403);
        let err = Reading(kube::Error::Api(Box::new(status)));
        assert_eq!(
            chain(&err),
            "reading ManagedCluster c1: managedclusters \"c1\" is forbidden (Forbidden)"
        );
    }
}
