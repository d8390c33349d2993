//! Unit tests of the join plan: names, validation, and the objects planned per mode.
use super::*;
use crate::api::names::{agent_namespace, validate_cluster_name};

fn opts(hosted: bool, deploy_operator: bool) -> JoinOptions {
    JoinOptions {
        cluster_name: "c1".into(),
        klusterlet_name: if hosted {
            "klusterlet-hosted-abc123".into()
        } else {
            KLUSTERLET_NAME.into()
        },
        hosted,
        singleton: false,
        registry: "quay.io/open-cluster-management".into(),
        tag: "v1.3.1".into(),
        single_image: None,
        bootstrap_kubeconfig: "kubeconfig text".into(),
        external_managed_kubeconfig: hosted.then(|| b"managed".to_vec()),
        external_server_urls: vec!["https://managed:6443".into()],
        feature_gates: vec![("ClusterClaim".into(), true)],
        annotations: BTreeMap::from([(format!("{ANNOTATION_PREFIX}owner"), "me".into())]),
        client_cert_expiration_seconds: None,
        deploy_operator,
    }
}

use super::super::names;

#[test]
fn cluster_names_are_dns_labels() {
    for ok in ["c1", "a", "cluster-1", &"a".repeat(63)] {
        assert!(validate_cluster_name(ok).is_ok(), "{ok}");
    }
    for bad in ["", "C1", "-c", "c-", "c_1", "c.1", &"a".repeat(64)] {
        assert!(validate_cluster_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn annotations_get_the_agent_prefix() {
    let parsed = parse_annotations(&[
        "owner=me".into(),
        format!("{ANNOTATION_PREFIX}x=y"),
        "e=".into(),
    ])
    .unwrap();
    assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}owner")], "me");
    assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}x")], "y");
    assert_eq!(parsed[&format!("{ANNOTATION_PREFIX}e")], "");
    assert!(parse_annotations(&["novalue".into()]).is_err());
    assert!(parse_annotations(&["=v".into()]).is_err());
}

#[test]
fn hosted_names_are_random_and_valid() {
    let a = hosted_name();
    assert!(a.starts_with("klusterlet-hosted-") && a.len() == 24, "{a}");
    assert!(validate_cluster_name(&a).is_ok());
    assert_ne!(a, hosted_name());
}

#[test]
fn default_plan_is_upstreams_object_set() {
    let objects = plan(&opts(false, true)).unwrap();
    assert_eq!(
        names(&objects),
        [
            "CustomResourceDefinition/klusterlets.operator.open-cluster-management.io",
            "Namespace/open-cluster-management",
            "ServiceAccount/klusterlet",
            "ClusterRole/klusterlet",
            "ClusterRoleBinding/klusterlet",
            "Deployment/klusterlet",
            "Namespace/open-cluster-management-agent",
            "Secret/bootstrap-hub-kubeconfig",
            "Klusterlet/klusterlet",
        ]
    );
    let deployment = &objects[5];
    let container = &deployment.data["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["image"],
        "quay.io/open-cluster-management/registration-operator:v1.3.1"
    );
    assert_eq!(container["args"][0], "/registration-operator");
    assert_eq!(container["args"][1], "klusterlet");
    let secret = &objects[7];
    assert_eq!(
        secret.metadata.namespace.as_deref(),
        Some("open-cluster-management-agent")
    );
    assert_eq!(secret.data["data"]["kubeconfig"], "a3ViZWNvbmZpZyB0ZXh0");
    let spec = &objects[8].data["spec"];
    assert_eq!(spec["clusterName"], "c1");
    assert_eq!(spec["namespace"], "open-cluster-management-agent");
    assert_eq!(spec["deployOption"]["mode"], "Default");
    assert_eq!(spec["externalServerURLs"][0]["url"], "https://managed:6443");
    assert_eq!(
        spec["registrationImagePullSpec"],
        "quay.io/open-cluster-management/registration:v1.3.1"
    );
    assert_eq!(
        spec["workImagePullSpec"],
        "quay.io/open-cluster-management/work:v1.3.1"
    );
    assert_eq!(
        spec["registrationConfiguration"]["featureGates"][0]["feature"],
        "ClusterClaim"
    );
    assert_eq!(
        spec["registrationConfiguration"]["clusterAnnotations"]["agent.open-cluster-management.io/owner"],
        "me"
    );
}

#[test]
fn in_process_plan_has_no_operator_deployment() {
    let n = names(&plan(&opts(false, false)).unwrap());
    assert!(!n.iter().any(|n| n.starts_with("Deployment/")), "{n:?}");
    assert!(n.contains(&"Klusterlet/klusterlet".to_string()));
}

#[test]
fn hosted_plan_puts_secrets_in_the_klusterlet_namespace() {
    let objects = plan(&opts(true, true)).unwrap();
    let n = names(&objects);
    assert!(
        n.contains(&"Namespace/klusterlet-hosted-abc123".to_string()),
        "{n:?}"
    );
    for secret in [BOOTSTRAP_SECRET, EXTERNAL_MANAGED_SECRET] {
        let s = objects
            .iter()
            .find(|o| o.metadata.name.as_deref() == Some(secret))
            .unwrap();
        assert_eq!(
            s.metadata.namespace.as_deref(),
            Some("klusterlet-hosted-abc123")
        );
    }
    let k = objects.last().unwrap();
    assert_eq!(k.metadata.name.as_deref(), Some("klusterlet-hosted-abc123"));
    assert_eq!(k.data["spec"]["deployOption"]["mode"], "Hosted");
    assert_eq!(
        k.data["spec"]["namespace"],
        "open-cluster-management-klusterlet-hosted-abc123"
    );
}

#[test]
fn singleton_modes() {
    let mut o = opts(false, true);
    o.singleton = true;
    assert_eq!(
        klusterlet(&o).spec.deploy_option.unwrap().mode.as_deref(),
        Some(MODE_SINGLETON)
    );
    o.hosted = true;
    assert_eq!(
        klusterlet(&o).spec.deploy_option.unwrap().mode.as_deref(),
        Some(MODE_SINGLETON_HOSTED)
    );
}

#[test]
fn agent_namespaces() {
    assert_eq!(
        agent_namespace("klusterlet", None, false),
        "open-cluster-management-agent"
    );
    assert_eq!(
        agent_namespace("klusterlet", Some("open-cluster-management-x"), false),
        "open-cluster-management-x"
    );
    assert_eq!(
        agent_namespace(
            "klusterlet-hosted-a",
            Some("open-cluster-management-x"),
            true
        ),
        "klusterlet-hosted-a"
    );
}

#[test]
fn pins_and_proxy_urls() {
    assert!(validate_pin(&format!("sha256:{}", "aB".repeat(32))).is_ok());
    assert!(validate_pin("sha256:abc").is_err());
    assert!(validate_pin(&"a".repeat(64)).is_err());
    assert!(validate_proxy_url("http://proxy:3128").is_ok());
    assert!(validate_proxy_url("socks5://proxy:1080").is_err());
    assert!(validate_proxy_url("proxy").is_err());
}

/// Each template of the klusterlet operator's bundle, rendered alone with the values
/// `operator_objects` gives it, yields named objects.
#[test]
fn every_klusterlet_template_renders_objects_with_its_values() {
    let values = OperatorValues {
        namespace: OPERATOR_NAMESPACE,
        name: KLUSTERLET_OPERATOR,
        image: "quay.io/open-cluster-management/registration-operator:v1.3.1".into(),
        container: crate::install::OperatorContainer::new("klusterlet", false, &[]),
    };
    let names = render::bundle_templates("klusterlet-operator");
    assert!(!names.is_empty());
    for name in names {
        crate::render::tests::assert_renders_objects(name, &values);
    }
}
