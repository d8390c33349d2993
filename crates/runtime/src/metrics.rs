//! The process's Prometheus metrics, in one registry: what every controller reports through
//! [`crate::controller::Runner`] (through [`crate::report::record`]), its queue depth
//! ([`crate::queue_depth`]), and what the work agent measures per apply.
//! Served as text at `/metrics` by [`crate::probes`].
use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The label naming a controller.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabel {
    /// The controller's name, as its log lines give it.
    pub controller: String,
}

/// Every metric of this process.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<ControllerLabel, Counter>,
    errors: Family<ControllerLabel, Counter>,
    queue_depth: Family<ControllerLabel, Gauge>,
    work_apply: Histogram,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("clusteradm");
    let reconciles = Family::<ControllerLabel, Counter>::default();
    let errors = Family::<ControllerLabel, Counter>::default();
    let queue_depth = Family::<ControllerLabel, Gauge>::default();
    // 1 ms to ~16 s: one manifest on a near API server to a large work on a slow one.
    let work_apply = Histogram::new(exponential_buckets(0.001, 2.0, 15));
    registry.register(
        "reconciles",
        "Reconciles finished, by controller",
        reconciles.clone(),
    );
    registry.register(
        "reconcile_errors",
        "Reconciles that failed, by controller",
        errors.clone(),
    );
    registry.register(
        "queue_depth",
        "Objects changed since the controller last reconciled them",
        queue_depth.clone(),
    );
    registry.register(
        "work_apply_seconds",
        "Time to apply one ManifestWork's manifests",
        work_apply.clone(),
    );
    Metrics {
        registry,
        reconciles,
        errors,
        queue_depth,
        work_apply,
    }
});

/// Counts one reconcile of `controller`, and whether it failed.
pub fn reconciled(controller: &str, failed: bool) {
    let label = ControllerLabel {
        controller: controller.to_owned(),
    };
    METRICS.reconciles.get_or_create(&label).inc();
    if failed {
        METRICS.errors.get_or_create(&label).inc();
    }
}

/// Records how long one ManifestWork's apply took.
pub fn work_applied(seconds: f64) {
    METRICS.work_apply.observe(seconds);
}

/// The metrics in Prometheus' text format (queue depths as of now).
#[must_use]
pub fn text() -> String {
    for (controller, depth) in crate::queue_depth::depths() {
        METRICS
            .queue_depth
            .get_or_create(&ControllerLabel { controller })
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &METRICS.registry)
        .expect("writing to a String cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconciles_and_errors_are_counted_per_controller() {
        reconciled("metrics-test", false);
        reconciled("metrics-test", true);
        let text = text();
        assert!(
            text.contains("clusteradm_reconciles_total{controller=\"metrics-test\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("clusteradm_reconcile_errors_total{controller=\"metrics-test\"} 1"),
            "{text}"
        );
        assert!(text.contains("# TYPE clusteradm_work_apply_seconds histogram"));
    }
}
