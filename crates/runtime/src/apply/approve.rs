//! A CSR's approval, as every approver here writes it (`accept`, the hub registration controller,
//! the add-on registration controller): the `approval` subresource gets an `Approved=True`
//! condition with the approver's reason and message.
/// Approves a CSR (the `approval` subresource) with an `Approved=True` condition.
pub async fn approve_csr(
    client: &kube::Client,
    name: &str,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    use k8s_openapi::api::certificates::v1::{
        CertificateSigningRequest, CertificateSigningRequestCondition,
    };
    let api: kube::Api<CertificateSigningRequest> = kube::Api::all(client.clone());
    // A read and an update (guarded by the resourceVersion), as upstream's approvers do: RBAC
    // grants `update` on `certificatesigningrequests/approval`, not `patch`.
    let mut csr = api.get(name).await?;
    let now =
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    let conditions = csr
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    // Approved meanwhile (by another approver, or this one from an older copy of the store): a
    // second condition of the type would be refused as a duplicate.
    if conditions.iter().any(|c| c.type_ == "Approved") {
        return Ok(());
    }
    conditions.push(CertificateSigningRequestCondition {
        type_: "Approved".into(),
        status: "True".into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_update_time: Some(now.clone()),
        last_transition_time: Some(now),
    });
    api.replace_subresource("approval", name, &kube::api::PostParams::default(), &csr)
        .await
        .map(|_| ())
}
