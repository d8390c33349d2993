//! Requests sent per cluster, a bounded number at a time. kube-rs speaks HTTP/1.1, one
//! connection per request in flight: a command naming 10,000 clusters that sent every request at
//! once would open 10,000 connections, past what this process and the API server may hold (its
//! connects then time out). Results keep the order of the requests.
use futures::{StreamExt as _, TryStreamExt as _};

/// Requests in flight at once.
pub const IN_FLIGHT: usize = 32;

/// Every future's result, in order, at most [`IN_FLIGHT`] running at once; the first error stops
/// the rest.
pub async fn try_all<T, E>(
    futures: impl IntoIterator<Item = impl Future<Output = Result<T, E>>>,
) -> Result<Vec<T>, E> {
    futures::stream::iter(futures)
        .buffered(IN_FLIGHT)
        .try_collect()
        .await
}

/// Every future's output, in order, at most [`IN_FLIGHT`] running at once.
pub async fn all<T>(futures: impl IntoIterator<Item = impl Future<Output = T>>) -> Vec<T> {
    futures::stream::iter(futures)
        .buffered(IN_FLIGHT)
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn keeps_order_and_never_runs_more_than_the_bound() {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = try_all((0..200).map(|i| {
            let (running, most) = (&running, &most);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, ()>(i)
            }
        }))
        .await
        .unwrap();
        assert_eq!(out, (0..200).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= IN_FLIGHT);
        assert!(most.load(Ordering::SeqCst) > 1, "they ran one at a time");
    }
}
