//! The resources of the containers an operator runs, from upstream's `spec.resourceRequirement`
//! (ClusterManager and Klusterlet alike), and that field from `init`/`join`'s flags.
use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use ocm_api::operator::{ResourceQosClass, ResourceRequirement};

/// Class ResourceRequirement without its requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.resourceRequirement.type is ResourceRequirement but spec.resourceRequirement.resourceRequirements is missing"
)]
pub struct Missing;

/// The containers' resources: the Default class's small requests (upstream's) and limits that
/// keep a runaway from taking its node (upstream sets none; generous, as a hub's memory grows
/// with its fleet), none for BestEffort, or the given ones.
///
/// # Errors
/// Class ResourceRequirement with no requirements.
pub fn of(req: Option<&ResourceRequirement>) -> Result<Option<ResourceRequirements>, Missing> {
    match req.and_then(|r| r.type_).unwrap_or_default() {
        ResourceQosClass::Default => Ok(Some(ResourceRequirements {
            requests: Some(
                [
                    ("cpu".to_string(), Quantity("2m".into())),
                    ("memory".to_string(), Quantity("16Mi".into())),
                ]
                .into(),
            ),
            limits: Some(
                [
                    ("cpu".to_string(), Quantity("2".into())),
                    ("memory".to_string(), Quantity("2Gi".into())),
                ]
                .into(),
            ),
            ..Default::default()
        })),
        ResourceQosClass::BestEffort => Ok(None),
        ResourceQosClass::ResourceRequirement => req
            .and_then(|r| r.resource_requirements.clone())
            .map(Some)
            .ok_or(Missing),
    }
}

/// [`of`] as a container's `resources` JSON (`{}` for none).
///
/// # Errors
/// As [`of`].
pub fn json(req: Option<&ResourceRequirement>) -> Result<serde_json::Value, Missing> {
    Ok(of(req)?.map_or_else(
        || serde_json::json!({}),
        |r| serde_json::to_value(r).unwrap_or_default(),
    ))
}

/// `spec.resourceRequirement` from `--resource-qos-class`, `--resource-limits` and
/// `--resource-requests` (`name=quantity` pairs), by upstream's rules: limits or requests need
/// class ResourceRequirement (implied when no class is given), that class needs one of them, and
/// no request may exceed its limit.
///
/// # Errors
/// The rule broken, or a quantity that is not one.
pub fn from_flags(
    class: Option<ResourceQosClass>,
    limits: &[(String, String)],
    requests: &[(String, String)],
) -> Result<ResourceRequirement, String> {
    if limits.is_empty() && requests.is_empty() {
        let class = class.unwrap_or_default();
        if class == ResourceQosClass::ResourceRequirement {
            return Err(
                "--resource-qos-class ResourceRequirement needs --resource-limits or --resource-requests"
                    .into(),
            );
        }
        return Ok(ResourceRequirement {
            type_: Some(class),
            resource_requirements: None,
        });
    }
    if class.is_some_and(|c| c != ResourceQosClass::ResourceRequirement) {
        return Err(
            "--resource-limits and --resource-requests need --resource-qos-class ResourceRequirement"
                .into(),
        );
    }
    let list = |pairs: &[(String, String)], flag: &str| {
        pairs
            .iter()
            .map(|(name, value)| {
                ocm_api::quantity::parse_milli(value)
                    .map(|_| (name.clone(), Quantity(value.clone())))
                    .ok_or_else(|| format!("{flag}: {name}={value:?} is not a quantity (e.g. cpu=500m,memory=512Mi)"))
            })
            .collect::<Result<std::collections::BTreeMap<_, _>, _>>()
    };
    let (limits, requests) = (
        list(limits, "--resource-limits")?,
        list(requests, "--resource-requests")?,
    );
    for (name, request) in &requests {
        let Some(limit) = limits.get(name) else {
            continue;
        };
        if ocm_api::quantity::parse_milli(&request.0) > ocm_api::quantity::parse_milli(&limit.0) {
            return Err(format!(
                "the {name} request {} is more than its limit {}",
                request.0, limit.0
            ));
        }
    }
    let some = |m: std::collections::BTreeMap<String, Quantity>| (!m.is_empty()).then_some(m);
    Ok(ResourceRequirement {
        type_: Some(ResourceQosClass::ResourceRequirement),
        resource_requirements: Some(ResourceRequirements {
            limits: some(limits),
            requests: some(requests),
            ..Default::default()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).into(), (*b).into()))
            .collect()
    }

    #[test]
    fn flags_follow_upstreams_rules() {
        let best = from_flags(Some(ResourceQosClass::BestEffort), &[], &[]).unwrap();
        assert_eq!(of(Some(&best)), Ok(None));
        let given = from_flags(None, &pairs(&[("cpu", "1")]), &pairs(&[("cpu", "500m")])).unwrap();
        let r = of(Some(&given)).unwrap().unwrap();
        assert_eq!(r.limits.unwrap()["cpu"].0, "1");
        assert_eq!(r.requests.unwrap()["cpu"].0, "500m");
        assert!(from_flags(Some(ResourceQosClass::ResourceRequirement), &[], &[]).is_err());
        assert!(
            from_flags(
                Some(ResourceQosClass::Default),
                &pairs(&[("cpu", "1")]),
                &[]
            )
            .is_err()
        );
        assert!(from_flags(None, &pairs(&[("cpu", "lots")]), &[]).is_err());
        let more = from_flags(
            None,
            &pairs(&[("memory", "1Gi")]),
            &pairs(&[("memory", "2Gi")]),
        );
        assert!(more.unwrap_err().contains("more than its limit"));
    }

    #[test]
    fn the_default_class_asks_for_a_little() {
        let r = of(None).unwrap().unwrap();
        assert_eq!(r.requests.unwrap()["memory"].0, "16Mi");
        assert_eq!(
            json(Some(&ResourceRequirement {
                type_: Some(ResourceQosClass::BestEffort),
                resource_requirements: None
            })),
            Ok(serde_json::json!({}))
        );
    }
}
