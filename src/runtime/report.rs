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

/// Logs one result of a kube-runtime controller named `controller`: a failed reconcile as a
/// warning naming the object, other failures as warnings, successes and vanished objects not.
pub fn controller_result<K, E, Q>(controller: &str, result: &ControllerResult<K, E, Q>)
where
    K: kube::Resource,
    E: Error + 'static,
    Q: Error + 'static,
{
    use kube::runtime::controller::Error as Failure;
    record(controller, result);
    match result {
        Ok(_) | Err(Failure::ObjectNotFound(_)) => {}
        Err(Failure::ReconcilerFailed(e, obj)) => {
            tracing::warn!(object = %obj, "{controller}: {}", chain(e));
        }
        Err(e) => tracing::warn!("{controller}: {}", chain(e)),
    }
}

/// Counts one result of `controller` in its metrics (reconciles, errors, queue depth) without
/// logging it: for controllers that log their results their own way.
pub fn record<K, E, Q>(controller: &str, result: &ControllerResult<K, E, Q>)
where
    K: kube::Resource,
{
    use kube::runtime::controller::Error as Failure;
    let failed = matches!(result, Err(Failure::ReconcilerFailed(..)));
    if !matches!(result, Err(Failure::ObjectNotFound(_))) {
        crate::runtime::metrics::reconciled(controller, failed);
    }
    let (namespace, name) = match result {
        Ok((obj, _)) => (obj.namespace.as_deref(), obj.name.as_str()),
        Err(Failure::ReconcilerFailed(_, obj) | Failure::ObjectNotFound(obj)) => {
            (obj.namespace.as_deref(), obj.name.as_str())
        }
        Err(_) => return,
    };
    crate::runtime::queue_depth::reconciled(controller, namespace, name);
}

/// The error policy of a controller whose every failure is retried after `delay`. It logs
/// nothing: [`controller_result`] already reports each failure, naming the controller and object.
pub fn requeue_after<K, E, C>(
    delay: std::time::Duration,
) -> impl Fn(std::sync::Arc<K>, &E, std::sync::Arc<C>) -> kube::runtime::controller::Action {
    move |_, _, _| kube::runtime::controller::Action::requeue(delay)
}

/// Drives a kube-runtime controller's `results` (logging each as [`controller_result`] does)
/// once `ready` — the stores it decides from having listed — until `shutdown` is cancelled:
/// deciding from a store that has not listed yet would undo what is there.
pub async fn drive_when_ready<K, E, Q>(
    controller: &str,
    ready: impl Future<Output = ()>,
    results: impl futures::Stream<
        Item = Result<
            (
                kube::runtime::reflector::ObjectRef<K>,
                kube::runtime::controller::Action,
            ),
            kube::runtime::controller::Error<E, Q>,
        >,
    >,
    shutdown: &crate::runtime::Shutdown,
) where
    K: kube::Resource,
    E: Error + 'static,
    Q: Error + 'static,
{
    use futures::StreamExt as _;
    let run = async {
        ready.await;
        results
            .for_each(|result| {
                controller_result(controller, &result);
                std::future::ready(())
            })
            .await;
    };
    tokio::select! {
        () = run => {}
        () = shutdown.cancelled() => {}
    }
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
