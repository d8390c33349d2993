//! Cluster capacity: the sum of the nodes' `cpu` and `memory` capacity and allocatable, added up
//! exactly in milli-units ([`ocm_api::quantity`]).
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use ocm_api::quantity::{format_milli, parse_milli};

/// The resources summed over nodes (upstream reports these).
pub const RESOURCES: [&str; 2] = ["cpu", "memory"];

/// Sums the [`RESOURCES`] of `quantities` over nodes (unparseable values are skipped).
#[must_use]
pub fn sum<'a>(
    per_node: impl IntoIterator<Item = &'a BTreeMap<String, Quantity>>,
) -> BTreeMap<String, Quantity> {
    let mut totals: BTreeMap<String, i128> = BTreeMap::new();
    for quantities in per_node {
        for name in RESOURCES {
            if let Some(v) = quantities.get(name).and_then(|q| parse_milli(&q.0)) {
                *totals.entry(name.to_string()).or_default() += v;
            }
        }
    }
    totals
        .into_iter()
        .map(|(k, v)| (k, Quantity(format_milli(v))))
        .collect()
}

/// Capacity and allocatable summed over `nodes`.
#[must_use]
pub fn of_nodes(nodes: &[Node]) -> (BTreeMap<String, Quantity>, BTreeMap<String, Quantity>) {
    let status = || nodes.iter().filter_map(|n| n.status.as_ref());
    (
        sum(status().filter_map(|s| s.capacity.as_ref())),
        sum(status().filter_map(|s| s.allocatable.as_ref())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_nodes() {
        let node = |cpu: &str, mem: &str| {
            BTreeMap::from([
                ("cpu".to_string(), Quantity(cpu.into())),
                ("memory".to_string(), Quantity(mem.into())),
                ("pods".to_string(), Quantity("110".into())),
            ])
        };
        let a = node("3800m", "16303456Ki");
        let b = node("2", "1Gi");
        let total = sum([&a, &b]);
        assert_eq!(total["cpu"].0, "5800m");
        assert_eq!(
            total["memory"].0,
            (16_303_456_i64 * 1024 + (1 << 30)).to_string()
        );
        assert!(!total.contains_key("pods"));
        assert!(sum([]).is_empty());
    }
}
