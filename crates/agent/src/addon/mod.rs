//! The managed cluster's side of add-on registration, as upstream's registration agent does it:
//! for each identity a ManagedClusterAddOn in the cluster's namespace on the hub registers (one
//! per signer), a key, a CSR (`generateName: addon-<cluster>-<addon>-`, labels cluster-name and
//! addon-name, the registered subject or upstream's default) sent with the cluster agent's own
//! credential, and once the hub signs it a secret in the add-on's install namespace on the
//! managed cluster (for a Hosted add-on, one naming a hosting cluster, on the cluster this agent
//! runs on, where the add-on's agent runs too): for the hub's client signer
//! `<addon>-hub-kubeconfig` (a kubeconfig for the hub with that identity, `tls.crt`, `tls.key`
//! and `cluster-name`), for a custom signer
//! `<addon>-<signer>-client-cert` (`tls.crt`, `tls.key`). The certificate is renewed when 20 % of
//! its lifetime is left (by default: [`AddonOptions::renewal`]); the secret is deleted when the
//! add-on goes.
//!
//! It also reports each add-on's health from its lease ([`health`]), and with `example_agents`
//! runs the example add-on's agent ([`helloworld`]). Both are controllers on one watch of the
//! cluster's ManagedClusterAddOns on the hub.
pub mod health;
pub mod helloworld;
mod rotated;
pub mod token;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::registration::bootstrap::KUBECONFIG_KEY;
use crate::registration::csr;
use crate::registration::rotate;
use crate::registration::secret::{CLUSTER_NAME_KEY, HubCredential, TLS_CRT_KEY, TLS_KEY_KEY};
use ocm_api::addon::{ADDON_NAME_LABEL, ManagedClusterAddOn};
use ocm_api::cluster::CLUSTER_NAME_LABEL;
use ocm_api::names::CLIENT_SIGNER;
use ocm_api::operator::AddOnAuthType;
use ocm_runtime::controller::Runner;
use ocm_runtime::identity::addon::{AddonSubject, subject};
use ocm_runtime::informers::Informers;
use ocm_runtime::{Backoff, Shutdown};

const FIELD_MANAGER: &str = "clusteradm-addon-registration";

/// What add-on registration needs: both clusters and the agent's own hub endpoint.
#[derive(Clone)]
pub struct AddonOptions {
    /// Hub client with the cluster agent's credential.
    pub hub: Client,
    /// Client of the managed cluster.
    pub managed: Client,
    /// Client of the cluster this agent runs on (the managed cluster outside Hosted mode): a
    /// Hosted add-on's agent runs there too, so its secrets and Lease are there.
    pub management: Client,
    /// The cluster's name on the hub.
    pub cluster: String,
    /// Hub URL, for the add-on's kubeconfig.
    pub server: String,
    /// Hub CA (base64 PEM), for the add-on's kubeconfig.
    pub ca_data: String,
    /// Run the agent of the example add-on ([`helloworld`]) in this process once its identity
    /// is stored, as `join --in-process` runs every agent.
    pub example_agents: bool,
    /// How long the add-ons' certificates are asked to last, and when they are renewed.
    pub renewal: rotate::Renewal,
    /// Whether add-ons' hub clients get certificates or ServiceAccount tokens ([`token`]).
    pub auth: token::Auth,
}

/// One identity an add-on's agent needs: whom, from which signer, and where its secret goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wanted {
    addon: String,
    namespace: String,
    secret: String,
    signer: String,
    subject: AddonSubject,
    /// The add-on is Hosted: its agent runs where this agent does, not on the managed cluster.
    hosted: bool,
    /// How the credential is obtained.
    via: Via,
}

/// How an identity's credential is obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Via {
    /// A certificate from a CSR.
    Certificate,
    /// A token of the add-on's ServiceAccount on the hub ([`token`]), once the hub's
    /// `TokenInfrastructureReady` names its UID (`None`: not yet).
    Token { uid: Option<String> },
}

impl Wanted {
    /// Every identity `mca` registers, one per signer: the hub's client signer's secret is a
    /// kubeconfig `<addon>-hub-kubeconfig`; another signer's is a certificate and key,
    /// `<addon>-<signer, / as ->-client-cert` (upstream's names).
    fn all(mca: &ManagedClusterAddOn, cluster: &str, auth: token::Auth) -> Vec<Self> {
        let Some(status) = mca.status.as_ref() else {
            return Vec::new();
        };
        let addon = mca.name_any();
        let namespace = mca.install_namespace();
        let hosted = mca.hosting_cluster().is_some();
        let mut out: Vec<Self> = Vec::new();
        for registration in &status.registrations {
            let signer = registration.signer_name.clone();
            if signer.is_empty() || out.iter().any(|w| w.signer == signer) {
                continue;
            }
            let secret = if signer == CLIENT_SIGNER {
                format!("{addon}-hub-kubeconfig")
            } else {
                format!("{addon}-{}-client-cert", signer.replace('/', "-"))
            };
            let by_token = signer == CLIENT_SIGNER && auth.driver == AddOnAuthType::Token;
            let (subject, via) = if by_token {
                let user = ocm_api::addon::token::user(cluster, &addon);
                let uid = token::ready_uid(mca);
                (
                    AddonSubject {
                        user,
                        groups: Vec::new(),
                        organization_units: Vec::new(),
                    },
                    Via::Token { uid },
                )
            } else {
                (subject(registration, cluster, &addon), Via::Certificate)
            };
            out.push(Self {
                secret,
                subject,
                addon: addon.clone(),
                namespace: namespace.clone(),
                signer,
                hosted,
                via,
            });
        }
        out
    }

    /// Whether this identity is a client of the hub's API server (a kubeconfig).
    fn hub_client(&self) -> bool {
        self.signer == CLIENT_SIGNER
    }

    /// The cluster its secret goes to: where the add-on's agent runs, as upstream's.
    fn secrets(&self, opts: &AddonOptions) -> Api<Secret> {
        Api::namespaced(where_agent_runs(opts, self.hosted).clone(), &self.namespace)
    }
}

/// The cluster an add-on's agent runs on: the managed one, or for a Hosted add-on the one this
/// agent runs on (the hosting cluster, which upstream expects to be this Klusterlet's management
/// cluster).
fn where_agent_runs(opts: &AddonOptions, hosted: bool) -> &Client {
    if hosted {
        &opts.management
    } else {
        &opts.managed
    }
}

/// The name the registration controller reports its results and metrics under.
const CONTROLLER: &str = "add-on registration agent";

/// Keeps every registered add-on identity of the cluster, and reports each add-on's health,
/// until `shutdown` is cancelled: two controllers over one watch of the cluster's add-ons.
pub async fn run(opts: AddonOptions, shutdown: Shutdown) {
    let informers = Informers::namespaced(opts.hub.clone(), &opts.cluster);
    let registration = registration(&opts, &informers, shutdown.clone());
    let health = health::run_with(&opts, &informers, shutdown.clone());
    tokio::join!(registration, health, informers.run(shutdown));
}

/// What the registration controller keeps: each add-on's identities, and the token that stops
/// their keepers.
struct Registration {
    opts: AddonOptions,
    addons: Store<ManagedClusterAddOn>,
    kept: Mutex<HashMap<String, (Vec<Wanted>, Shutdown)>>,
    shutdown: Shutdown,
}

/// The controller that keeps one task per registered identity ([`keep`]) and deletes an
/// identity's secret once its add-on no longer registers it.
fn registration(
    opts: &AddonOptions,
    informers: &Informers,
    shutdown: Shutdown,
) -> impl Future<Output = ()> + Send + 'static {
    let (addons, changes) = informers.feed::<ManagedClusterAddOn>();
    let controller = Controller::for_shared_stream(changes, addons.clone())
        // Woken by its deletion, a gone add-on is found missing: see `on_gone`.
        .watches_shared_stream(informers.deletions::<ManagedClusterAddOn>(), |mca| {
            Some(ObjectRef::from_obj(&*mca))
        });
    let ctx = Arc::new(Registration {
        opts: opts.clone(),
        addons,
        kept: Mutex::default(),
        shutdown: shutdown.clone(),
    });
    let gone = ctx.clone();
    Runner::new(CONTROLLER, controller)
        .on_gone(move |mca| {
            let ctx = gone.clone();
            async move { ctx.release(&mca.name).await }
        })
        .run(reconcile_registration, ctx, shutdown)
}

async fn reconcile_registration(
    mca: Arc<ManagedClusterAddOn>,
    ctx: Arc<Registration>,
) -> Result<Action, kube::Error> {
    // An add-on deleted while the watch was down is relisted, not reported deleted.
    let known: HashSet<String> = ctx.addons.state().iter().map(|a| a.name_any()).collect();
    let vanished: Vec<String> = ctx
        .lock()
        .keys()
        .filter(|k| !known.contains(*k))
        .cloned()
        .collect();
    for name in vanished {
        ctx.release(&name).await;
    }
    let name = mca.name_any();
    // The driver first: the hub makes a token's ServiceAccount only once it is declared.
    if token::declare(&ctx.opts.hub, &mca, &ctx.opts.cluster, ctx.opts.auth).await? {
        return Ok(Action::await_change());
    }
    let wanted = Wanted::all(&mca, &ctx.opts.cluster, ctx.opts.auth);
    if ctx.lock().get(&name).map(|(w, _)| w) == Some(&wanted) {
        return Ok(Action::await_change());
    }
    let old = ctx.lock().remove(&name);
    if let Some((old, token)) = old {
        token.cancel();
        let dropped: Vec<Wanted> = old
            .into_iter()
            .filter(|o| {
                !wanted.iter().any(|w| {
                    w.secret == o.secret && w.namespace == o.namespace && w.hosted == o.hosted
                })
            })
            .collect();
        forget(&ctx.opts, &dropped).await;
    }
    if !wanted.is_empty() {
        let token = ctx.shutdown.child_token();
        for w in &wanted {
            tokio::spawn(keep(ctx.opts.clone(), w.clone(), token.child_token()));
        }
        ctx.lock().insert(name, (wanted, token));
    }
    Ok(Action::await_change())
}

impl Registration {
    /// Stops keeping add-on `name`'s identities and deletes their secrets.
    async fn release(&self, name: &str) {
        let old = self.lock().remove(name);
        if let Some((old, token)) = old {
            token.cancel();
            forget(&self.opts, &old).await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Vec<Wanted>, Shutdown)>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Deletes the identities' secrets: the add-on is gone, so is its right to the hub.
async fn forget(opts: &AddonOptions, wanted: &[Wanted]) {
    for w in wanted {
        forget_one(opts, w).await;
    }
}

async fn forget_one(opts: &AddonOptions, wanted: &Wanted) {
    match wanted
        .secrets(opts)
        .delete(&wanted.secret, &DeleteParams::default())
        .await
    {
        Ok(_) => {
            tracing::info!(addon = %wanted.addon, "deleted {}/{}", wanted.namespace, wanted.secret);
        }
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => {
            tracing::warn!(addon = %wanted.addon, "deleting {}/{}: {e}", wanted.namespace, wanted.secret);
        }
    }
}

/// Keeps one identity: a valid certificate in its secret, renewed before it expires.
async fn keep(opts: AddonOptions, wanted: Wanted, token: Shutdown) {
    if wanted.via == (Via::Token { uid: None }) {
        // Kept again, with the UID, once the hub's condition names it.
        tracing::info!(cluster = %opts.cluster, addon = %wanted.addon, "waiting for the hub's token infrastructure");
        return;
    }
    let mut backoff = Backoff::capped(Duration::from_secs(300));
    // The example add-on's agent, while it runs here: restarted with each new credential.
    let mut example: Option<Shutdown> = None;
    // `issue` returns early when cancelled: never send another CSR after that.
    while !token.is_cancelled() {
        let wait = match renew_at(&opts, &wanted).await {
            Ok(Some(at)) => {
                // A Hosted add-on's agent needs its own kubeconfig of the managed cluster: only
                // its Deployment runs it.
                if example.is_none()
                    && opts.example_agents
                    && !wanted.hosted
                    && wanted.hub_client()
                    && wanted.addon == helloworld::NAME
                {
                    example = start_example(&opts, &wanted, &token).await;
                }
                Duration::from_secs(
                    u64::try_from(at - ocm_runtime::pki::now_seconds())
                        .unwrap_or(0)
                        .max(5),
                )
            }
            Ok(None) => match issue(&opts, &wanted, &token).await {
                Ok(()) => {
                    backoff.reset();
                    if let Some(old) = example.take() {
                        old.cancel();
                    }
                    continue;
                }
                Err(e) => {
                    let delay = backoff.next_delay();
                    tracing::warn!(cluster = %opts.cluster, addon = %wanted.addon, "registering the add-on: {e:#}; retrying in {delay:?}");
                    delay
                }
            },
            Err(e) => {
                tracing::warn!(cluster = %opts.cluster, addon = %wanted.addon, "reading the add-on's secret: {e}");
                backoff.next_delay()
            }
        };
        tokio::select! {
            () = token.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// Starts the example add-on's agent with the identity in its secret; `None` if it cannot yet.
async fn start_example(opts: &AddonOptions, wanted: &Wanted, token: &Shutdown) -> Option<Shutdown> {
    use ocm_runtime::client::{self as kubeconfig_client, Origin, Timeouts};
    let secret = wanted.secrets(opts).get_opt(&wanted.secret).await.ok()??;
    // A token's kubeconfig names a file beside it, which this process does not have.
    let kubeconfig = match ocm_runtime::secrets::field(&secret, ocm_api::addon::token::SECRET_KEY) {
        Some(t) => token::kubeconfig(&opts.server, &opts.ca_data, &token::TokenIn::Inline(&t)),
        None => ocm_runtime::secrets::field(&secret, KUBECONFIG_KEY)?,
    };
    let source = format!("secret {}/{}", wanted.namespace, wanted.secret);
    let hub = match kubeconfig_client::from_kubeconfig(
        &kubeconfig,
        Origin::Cluster,
        &source,
        Timeouts::LOOP,
    )
    .await
    {
        Ok(hub) => hub,
        Err(e) => {
            tracing::warn!(addon = %wanted.addon, "the add-on's kubeconfig: {e}");
            return None;
        }
    };
    let child = token.child_token();
    let managed = helloworld::managed_client(&opts.managed, &wanted.namespace);
    let agent = helloworld::Options {
        hub,
        local: managed.clone(),
        managed,
        cluster: opts.cluster.clone(),
        addon: wanted.addon.clone(),
        namespace: wanted.namespace.clone(),
    };
    tracing::info!(cluster = %opts.cluster, addon = %wanted.addon, "running the add-on's agent in-process");
    tokio::spawn(helloworld::run(agent, child.clone()));
    Some(child)
}

/// When the stored credential is due for renewal, or `None` when there is none to keep.
async fn renew_at(opts: &AddonOptions, wanted: &Wanted) -> Result<Option<i64>, kube::Error> {
    let Some(secret) = wanted.secrets(opts).get_opt(&wanted.secret).await? else {
        return Ok(None);
    };
    if let Via::Token { uid: Some(uid) } = &wanted.via {
        let stored = ocm_runtime::secrets::field(&secret, ocm_api::addon::token::SECRET_KEY);
        let now = ocm_runtime::pki::now_seconds();
        return Ok(token::renew_at(stored.as_deref(), uid, now));
    }
    let Some(cert) = ocm_runtime::secrets::field(&secret, TLS_CRT_KEY) else {
        return Ok(None);
    };
    let Ok(validity) = rotate::validity(cert.as_bytes()) else {
        return Ok(None);
    };
    if common_name(cert.as_bytes()).as_deref() != Some(wanted.subject.user.as_str()) {
        return Ok(None);
    }
    let due = rotate::rotation_due(validity, opts.renewal.threshold);
    Ok((due > ocm_runtime::pki::now_seconds()).then_some(due))
}

/// The CN of the first certificate of a PEM bundle.
fn common_name(pem: &[u8]) -> Option<String> {
    let der = ocm_runtime::pki::certificates_der(pem)
        .ok()?
        .into_iter()
        .next()?;
    let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
    let cn = cert
        .subject()
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_string();
    Some(cn)
}

/// A PEM request for `subject`, signed by `key`.
pub fn request_pem(
    subject: &AddonSubject,
    addon: &str,
    key: &rcgen::KeyPair,
) -> anyhow::Result<String> {
    let dns = vec![format!("{addon}.addon.open-cluster-management.io")];
    Ok(csr::subject_request(
        &subject.user,
        &subject.groups,
        &subject.organization_units,
        dns,
        key,
    )?)
}

/// The CSR object for the add-on's request to `signer`, as upstream names and labels it.
#[must_use]
pub fn csr_object(
    cluster: &str,
    addon: &str,
    signer: &str,
    pem: &str,
    expiration_seconds: Option<i32>,
) -> CertificateSigningRequest {
    let mut csr = csr::object(cluster, pem, expiration_seconds);
    csr.spec.signer_name = signer.to_string();
    csr.metadata.generate_name = Some(format!("addon-{cluster}-{addon}-"));
    csr.metadata.labels = Some(BTreeMap::from([
        (CLUSTER_NAME_LABEL.to_string(), cluster.to_string()),
        (ADDON_NAME_LABEL.to_string(), addon.to_string()),
    ]));
    csr
}

/// Obtains the identity's credential and stores it.
async fn issue(opts: &AddonOptions, wanted: &Wanted, token: &Shutdown) -> anyhow::Result<()> {
    match &wanted.via {
        Via::Certificate => issue_certificate(opts, wanted, token).await,
        Via::Token { .. } => issue_token(opts, wanted).await,
    }
}

/// Asks the hub for a token of the add-on's ServiceAccount, stores it with a kubeconfig that
/// reads it, and reports it on the add-on.
async fn issue_token(opts: &AddonOptions, wanted: &Wanted) -> anyhow::Result<()> {
    let issued = token::request(
        &opts.hub,
        &opts.cluster,
        &wanted.addon,
        opts.auth.expiration_seconds,
    )
    .await;
    let jwt = match issued {
        Ok(jwt) => jwt,
        Err(e) => {
            let refused = token::refused(&e.to_string());
            let _ = rotated::set_condition(&opts.hub, &opts.cluster, &wanted.addon, refused).await;
            return Err(anyhow::anyhow!(e).context("requesting the add-on's token"));
        }
    };
    let kubeconfig = token::kubeconfig(&opts.server, &opts.ca_data, &token::TokenIn::File);
    let data = vec![
        (KUBECONFIG_KEY, kubeconfig),
        (ocm_api::addon::token::SECRET_KEY, jwt.clone()),
        (CLUSTER_NAME_KEY, opts.cluster.clone()),
    ];
    store(opts, wanted, data).await?;
    tracing::info!(cluster = %opts.cluster, addon = %wanted.addon, "add-on token stored in {}/{}", wanted.namespace, wanted.secret);
    if let Err(e) = rotated::set_condition(
        &opts.hub,
        &opts.cluster,
        &wanted.addon,
        token::refreshed(&jwt),
    )
    .await
    {
        tracing::warn!(cluster = %opts.cluster, addon = %wanted.addon, "reporting the add-on's new token: {e}");
    }
    Ok(())
}

/// Sends a CSR for the identity, waits until the hub signs it, and stores it.
async fn issue_certificate(
    opts: &AddonOptions,
    wanted: &Wanted,
    token: &Shutdown,
) -> anyhow::Result<()> {
    let key = rcgen::KeyPair::generate()?;
    let pem = request_pem(&wanted.subject, &wanted.addon, &key)?;
    let api: Api<CertificateSigningRequest> = Api::all(opts.hub.clone());
    let created = api
        .create(
            &PostParams::default(),
            &csr_object(
                &opts.cluster,
                &wanted.addon,
                &wanted.signer,
                &pem,
                opts.renewal.expiration_seconds,
            ),
        )
        .await?;
    let name = created.name_any();
    tracing::info!(cluster = %opts.cluster, addon = %wanted.addon, csr = %name, "waiting for the hub to sign the add-on's CSR");
    let cert = tokio::select! {
        r = csr::wait_signed(api, &name) => r?,
        () = token.cancelled() => return Ok(()),
    };
    let credential = HubCredential {
        server: opts.server.clone(),
        ca_data: opts.ca_data.clone(),
        cert_pem: cert,
        key_pem: key.serialize_pem(),
        cluster: opts.cluster.clone(),
        agent: wanted.addon.clone(),
    };
    let mut data = vec![
        (TLS_CRT_KEY, credential.cert_pem.clone()),
        (TLS_KEY_KEY, credential.key_pem.clone()),
    ];
    if wanted.hub_client() {
        data.push((KUBECONFIG_KEY, credential.kubeconfig()));
        data.push((CLUSTER_NAME_KEY, credential.cluster.clone()));
    }
    store(opts, wanted, data).await?;
    tracing::info!(cluster = %opts.cluster, addon = %wanted.addon, "add-on credential stored in {}/{}", wanted.namespace, wanted.secret);
    if let Err(e) = rotated::report(
        &opts.hub,
        &opts.cluster,
        &wanted.addon,
        &credential.cert_pem,
    )
    .await
    {
        tracing::warn!(cluster = %opts.cluster, addon = %wanted.addon, "reporting the add-on's new certificate: {e}");
    }
    Ok(())
}

/// Writes the secret (and its namespace on the managed cluster, if the add-on's manifests have
/// not made it yet; on a hosting cluster the add-on's hosting manifests make it, as upstream's
/// agent may not create namespaces there).
async fn store(
    opts: &AddonOptions,
    wanted: &Wanted,
    data: Vec<(&str, String)>,
) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(opts.managed.clone());
    if !wanted.hosted && namespaces.get_opt(&wanted.namespace).await?.is_none() {
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(wanted.namespace.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        match namespaces.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Applied whole by one field manager: what this write leaves out (a certificate replaced
    // by a token, or the reverse) is removed from the secret.
    let data: BTreeMap<String, ByteString> = data
        .into_iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())))
        .collect();
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": wanted.secret, "namespace": wanted.namespace},
        "type": "Opaque",
        "data": data,
    });
    wanted
        .secrets(opts)
        .patch(
            &wanted.secret,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&secret),
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::addon::{
        DEFAULT_INSTALL_NAMESPACE, ManagedClusterAddOnSpec, ManagedClusterAddOnStatus,
        RegistrationConfig,
    };
    use ocm_runtime::identity::addon::{default_group, default_user};

    #[test]
    fn the_request_carries_the_registered_subject() {
        let key = rcgen::KeyPair::generate().unwrap();
        let subject = AddonSubject {
            user: default_user("c1", "hello"),
            groups: vec![default_group("c1", "hello"), "system:authenticated".into()],
            organization_units: vec!["team-a".into(), "ops".into()],
        };
        let pem = request_pem(&subject, "hello", &key).unwrap();
        let parsed = ocm_runtime::identity::parse_request(pem.as_bytes()).unwrap();
        assert_eq!(parsed.common_name, subject.user);
        assert_eq!(parsed.organizations, subject.groups);
        // A custom signer's organization units are asked for, as upstream's agent asks.
        let (_, block) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
        let (_, request) = <x509_parser::certification_request::X509CertificationRequest as x509_parser::prelude::FromDer<_>>::from_der(&block.contents).unwrap();
        let units: Vec<&str> = request
            .certification_request_info
            .subject
            .iter_organizational_unit()
            .map(|u| u.as_str().unwrap())
            .collect();
        assert_eq!(units, ["team-a", "ops"]);
        let csr = csr_object("c1", "hello", CLIENT_SIGNER, &pem, None);
        assert_eq!(
            csr.metadata.generate_name.as_deref(),
            Some("addon-c1-hello-")
        );
        assert_eq!(csr.metadata.labels.unwrap()[ADDON_NAME_LABEL], "hello");
        assert_eq!(csr.spec.signer_name, CLIENT_SIGNER);
    }

    #[test]
    fn each_registered_signer_gets_its_secret_in_the_install_namespace() {
        let mut mca = ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default());
        assert!(Wanted::all(&mca, "c1", token::Auth::default()).is_empty());
        let registration = |signer: &str| RegistrationConfig {
            signer_name: signer.into(),
            subject: None,
        };
        mca.status = Some(ManagedClusterAddOnStatus {
            registrations: vec![
                registration("example.com/other"),
                registration(CLIENT_SIGNER),
                registration(CLIENT_SIGNER),
            ],
            ..ManagedClusterAddOnStatus::default()
        });
        let wanted = Wanted::all(&mca, "c1", token::Auth::default());
        let secrets: Vec<&str> = wanted.iter().map(|w| w.secret.as_str()).collect();
        assert_eq!(
            secrets,
            [
                "hello-example.com-other-client-cert",
                "hello-hub-kubeconfig"
            ]
        );
        assert!(
            wanted
                .iter()
                .all(|w| w.namespace == DEFAULT_INSTALL_NAMESPACE)
        );
        assert!(!wanted[0].hub_client() && wanted[1].hub_client());
        mca.spec.install_namespace = Some("addons".into());
        assert_eq!(
            Wanted::all(&mca, "c1", token::Auth::default())[0].namespace,
            "addons"
        );
        // Under the token driver the hub client waits for the hub's ServiceAccount; a custom
        // signer's identity is still a certificate.
        let by_token = token::Auth {
            driver: AddOnAuthType::Token,
            ..token::Auth::default()
        };
        let wanted = Wanted::all(&mca, "c1", by_token);
        assert_eq!(wanted[0].via, Via::Certificate);
        assert_eq!(wanted[1].via, Via::Token { uid: None });
        assert_eq!(
            wanted[1].subject.user,
            "system:serviceaccount:c1:hello-agent"
        );
    }
}
