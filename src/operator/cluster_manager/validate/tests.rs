//! Unit tests of the validate step.
use super::*;
use crate::operator::cluster_manager::test_support::cluster_manager;

#[test]
fn an_empty_spec_gets_upstream_defaults() {
    let v = validate(&cluster_manager("spec: {}")).unwrap();
    assert_eq!(v.registration_image, DEFAULT_REGISTRATION_IMAGE);
    assert_eq!(v.placement_image, DEFAULT_PLACEMENT_IMAGE);
    assert_eq!(v.registration_webhook.port, 9443);
    assert!(v.invalid_gates.is_empty());
    assert_eq!(
        v.resources.unwrap().requests.unwrap()["memory"],
        Quantity("16Mi".into())
    );
}

#[test]
fn known_gates_become_flags_and_unknown_ones_are_reported() {
    let v = validate(&cluster_manager(
        "spec:
  registrationConfiguration:
    featureGates: [{feature: DefaultClusterSet, mode: Enable}, {feature: ManifestWorkReplicaSet, mode: Enable}]
  workConfiguration:
    featureGates: [{feature: ManifestWorkReplicaSet, mode: Enable}, {feature: NilExecutorValidating}]",
    ))
    .unwrap();
    assert_eq!(
        v.registration_gates,
        ["--feature-gates=DefaultClusterSet=true"]
    );
    assert_eq!(
        v.work_gates,
        [
            "--feature-gates=ManifestWorkReplicaSet=true",
            "--feature-gates=NilExecutorValidating=false"
        ]
    );
    assert_eq!(v.invalid_gates, ["registration: ManifestWorkReplicaSet"]);
}

#[test]
fn hosted_mode_and_empty_images_are_rejected() {
    let err = validate(&cluster_manager("spec: {deployOption: {mode: Hosted}}")).unwrap_err();
    assert_eq!(err.reason(), "UnsupportedDeployMode");
    let err = validate(&cluster_manager("spec: {placementImagePullSpec: ''}")).unwrap_err();
    assert!(err.to_string().contains("placementImagePullSpec"), "{err}");
}

#[test]
fn best_effort_has_no_resources() {
    let v = validate(&cluster_manager(
        "spec: {resourceRequirement: {type: BestEffort}}",
    ))
    .unwrap();
    assert_eq!(v.resources, None);
    assert!(
        validate(&cluster_manager(
            "spec: {resourceRequirement: {type: ResourceRequirement}}"
        ))
        .is_err()
    );
}

#[test]
fn the_admission_annotation_picks_webhooks_or_policies() {
    let with = |value: &str| {
        let mut cm = cluster_manager("spec: {}");
        cm.metadata.annotations = Some([(ADMISSION_ANNOTATION.into(), value.into())].into());
        validate(&cm)
    };
    assert_eq!(
        validate(&cluster_manager("spec: {}")).unwrap().admission,
        Admission::Webhooks
    );
    assert_eq!(with("policies").unwrap().admission, Admission::Policies);
    assert_eq!(with("webhooks").unwrap().admission, Admission::Webhooks);
    let err = with("both").unwrap_err();
    assert_eq!(err.reason(), "InvalidSpec");
    assert!(err.to_string().contains("\"both\""), "{err}");
}
