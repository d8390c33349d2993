//! Retry delays: exponential from a floor to a cap, with jitter so that a thousand agents that
//! lost the hub at the same moment do not all come back at the same moment. Built on `backon`
//! (the crate kube-runtime uses); a [`Backoff`] is reset after a success.
use std::time::Duration;

use backon::{BackoffBuilder as _, ExponentialBackoff, ExponentialBuilder};

/// Exponential backoff with jitter, capped, never giving up.
#[derive(Debug)]
pub struct Backoff {
    builder: ExponentialBuilder,
    current: ExponentialBackoff,
    cap: Duration,
}

impl Backoff {
    /// Delays from `floor`, doubling, up to `cap`. Each delay is the exponential step plus up to
    /// as much again of random jitter; the step stops at `cap / 2`, so steady-state retries are
    /// spread between half the cap and the cap.
    #[must_use]
    pub fn new(floor: Duration, cap: Duration) -> Self {
        let floor = floor.min(cap);
        let builder = ExponentialBuilder::default()
            .with_min_delay(floor)
            .with_max_delay((cap / 2).max(floor))
            .with_factor(2.0)
            .with_jitter()
            .without_max_times();
        Self {
            current: builder.build(),
            builder,
            cap,
        }
    }

    /// The usual retry backoff of a loop: from 1 s to `cap`.
    #[must_use]
    pub fn capped(cap: Duration) -> Self {
        Self::new(Duration::from_secs(1), cap)
    }

    /// The delay before the next retry.
    pub fn next_delay(&mut self) -> Duration {
        self.current.next().unwrap_or(self.cap).min(self.cap)
    }

    /// Back to the first delay (after a success).
    pub fn reset(&mut self) {
        self.current = self.builder.build();
    }
}

/// A watch's backoff (kube-runtime's `WatchStreamExt::backoff`): never gives up.
impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(self.next_delay())
    }
}

impl kube::runtime::utils::Backoff for Backoff {
    fn reset(&mut self) {
        Self::reset(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_the_cap_with_jitter_and_resets() {
        let floor = Duration::from_secs(1);
        let cap = Duration::from_secs(8);
        let mut b = Backoff::new(floor, cap);
        let delays: Vec<Duration> = (0..8).map(|_| b.next_delay()).collect();
        assert!(delays[0] >= floor && delays[0] <= floor * 2, "{delays:?}");
        assert!(delays.iter().all(|d| *d <= cap), "{delays:?}");
        assert!(delays[5..].iter().all(|d| *d >= cap / 2), "{delays:?}");
        b.reset();
        assert!(b.next_delay() <= floor * 2);
    }

    #[test]
    fn jitter_spreads_retries() {
        let firsts: std::collections::BTreeSet<Duration> = (0..20)
            .map(|_| Backoff::capped(Duration::from_secs(60)).next_delay())
            .collect();
        assert!(firsts.len() > 1, "20 backoffs all started at {firsts:?}");
    }
}
