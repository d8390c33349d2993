//! Token-based add-on registration (upstream's `authType: token`): the names, labels, conditions
//! and limits the hub's token infrastructure controller and the agent's token driver share, as
//! upstream v1.3.1 spells them.

/// Label on the ServiceAccount, Role and RoleBinding the hub makes for an add-on's token.
pub const INFRASTRUCTURE_LABEL: &str = "addon.open-cluster-management.io/token-infrastructure";
/// The add-on those objects are for (upstream's key, not [`super::ADDON_NAME_LABEL`]).
pub const NAME_LABEL: &str = "addon.open-cluster-management.io/name";
/// The hub's condition on a ManagedClusterAddOn: the ServiceAccount is there. Its message carries
/// the ServiceAccount's UID ([`ready_message`]), which the agent checks its token against.
pub const INFRASTRUCTURE_READY: &str = "TokenInfrastructureReady";
/// Reason of a true [`INFRASTRUCTURE_READY`].
pub const INFRASTRUCTURE_READY_REASON: &str = "TokenInfrastructureReady";
/// Reason of a false [`INFRASTRUCTURE_READY`].
pub const INFRASTRUCTURE_APPLY_FAILED: &str = "TokenInfrastructureApplyFailed";
/// The agent's condition on a ManagedClusterAddOn each time it stores a new token.
pub const REFRESHED: &str = "TokenRefreshed";
/// Reason of a true [`REFRESHED`].
pub const REFRESHED_REASON: &str = "AddonTokenRefreshed";
/// Reason of a false [`REFRESHED`].
pub const CREATION_FAILED: &str = "TokenCreationFailed";
/// The driver an agent declares in the add-on's status for token registration.
pub const DRIVER: &str = "token";
/// The key of the token in the add-on's `<addon>-hub-kubeconfig` secret; its kubeconfig reads
/// it as a file beside itself.
pub const SECRET_KEY: &str = "token";
/// A token's lifetime when the Klusterlet names none: a year, as upstream's agent asks.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 31_536_000;
/// The shortest lifetime upstream's agent accepts (and the API server's minimum).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// A token is renewed when less than this share of its lifetime is left, as upstream's.
pub const REFRESH_THRESHOLD: f64 = 0.2;

/// The ServiceAccount whose tokens the add-on's agent uses: `<addon>-agent` in the cluster's
/// namespace.
#[must_use]
pub fn service_account(addon: &str) -> String {
    format!("{addon}-agent")
}

/// The Role (and its RoleBinding) that lets the cluster's agent request those tokens.
#[must_use]
pub fn role(addon: &str) -> String {
    format!("{addon}-token-role")
}

/// The user the hub sees for such a token: the add-on's registered subject under token auth.
#[must_use]
pub fn user(cluster: &str, addon: &str) -> String {
    format!("system:serviceaccount:{cluster}:{}", service_account(addon))
}

/// Upstream's message of a true [`INFRASTRUCTURE_READY`]; upstream's agent parses the UID from it.
#[must_use]
pub fn ready_message(cluster: &str, addon: &str, uid: &str) -> String {
    format!(
        "ServiceAccount {cluster}/{} (UID: {uid}) is ready",
        service_account(addon)
    )
}

/// The ServiceAccount UID in a [`ready_message`], as upstream's agent reads it.
#[must_use]
pub fn uid_in(message: &str) -> Option<&str> {
    let start = message.find("UID: ")? + "UID: ".len();
    let len = message[start..].find(')')?;
    Some(&message[start..start + len]).filter(|uid| !uid.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_the_ready_message_are_upstreams() {
        assert_eq!(service_account("hello"), "hello-agent");
        assert_eq!(role("hello"), "hello-token-role");
        assert_eq!(user("c1", "hello"), "system:serviceaccount:c1:hello-agent");
        let message = ready_message("c1", "hello", "1234-abcd");
        assert_eq!(
            message,
            "ServiceAccount c1/hello-agent (UID: 1234-abcd) is ready"
        );
        assert_eq!(uid_in(&message), Some("1234-abcd"));
        assert_eq!(uid_in("ServiceAccount c1/x (UID: ) is ready"), None);
        assert_eq!(uid_in("no uid here"), None);
        assert_eq!(uid_in("UID: unterminated"), None);
    }
}
