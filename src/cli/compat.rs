//! Upstream clusteradm v1.3.1's command line (its commands and flag names, read from its
//! `--help`), checked against ours: every upstream command and flag is taken here, or listed in
//! [`DIFFERENCES`] with why. The README's compatibility table is rendered from this
//! ([`table`], written by `clusteradm generate`), and a test fails when an upstream flag is
//! neither taken nor explained, or an explanation names a flag that is taken after all.
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Upstream v1.3.1's commands (`""` is the root: the options every command takes), each with its
/// flags; `a|b` is one flag with two names. kubectl's `config` and `plugin` subcommands, which
/// upstream embeds, are listed by their parent only.
pub const UPSTREAM: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "--add-dir-header",
            "--alsologtostderr",
            "--alsologtostderrthreshold",
            "--context",
            "--dry-run",
            "--kubeconfig",
            "--legacy-stderr-threshold-behavior",
            "--log-backtrace-at",
            "--log-dir",
            "--log-file",
            "--log-file-max-size",
            "--logtostderr",
            "--match-server-version",
            "--one-output",
            "--skip-headers",
            "--skip-log-headers",
            "--stderrthreshold",
            "--timeout",
            "--v|-v",
            "--vmodule",
        ],
    ),
    ("create", &[]),
    ("create clusterset", &[]),
    (
        "create placement",
        &[
            "--clustersets",
            "--count",
            "--label-selectors",
            "--namespace",
            "--overwrite",
            "--prioritizers",
        ],
    ),
    ("create sampleapp", &["--output-file"]),
    (
        "create work",
        &[
            "--cluster|-c",
            "--clusters",
            "--filename|-f",
            "--overwrite",
            "--placement",
            "--recursive|-R",
            "--replicaset|-r",
        ],
    ),
    ("delete", &[]),
    ("delete clusterset", &[]),
    ("delete token", &[]),
    ("delete work", &["--cluster|-c", "--clusters", "--force"]),
    ("get", &[]),
    ("get addon", &["--cluster|-c", "--clusters", "--output|-o"]),
    ("get clusters", &["--clusterset", "--output|-o"]),
    ("get clustersets", &["--output|-o"]),
    ("get hub-info", &[]),
    ("get klusterlet-info", &[]),
    ("get placements", &["--namespace|-n", "--output|-o"]),
    (
        "get token",
        &["--output|-o", "--output-file", "--use-bootstrap-token"],
    ),
    ("get works", &["--cluster|-c", "--clusters", "--output|-o"]),
    ("install", &[]),
    (
        "install hub-addon",
        &[
            "--bundle-version",
            "--bundle-version-overrides",
            "--create-namespace",
            "--names",
            "--namespace",
            "--output-file",
        ],
    ),
    ("uninstall", &[]),
    ("uninstall hub-addon", &["--names", "--namespace"]),
    ("upgrade", &[]),
    (
        "upgrade clustermanager",
        &[
            "--bundle-version",
            "--bundle-version-overrides",
            "--cluster-manager-values-file",
            "--image-registry",
            "--wait",
        ],
    ),
    (
        "upgrade klusterlet",
        &[
            "--bundle-version",
            "--bundle-version-overrides",
            "--image-registry",
            "--klusterlet-values-file",
            "--wait",
        ],
    ),
    ("version", &[]),
    (
        "accept",
        &[
            "--cluster|-c",
            "--clusters",
            "--requesters",
            "--skip-approve-check",
            "--wait",
        ],
    ),
    ("clean", &["--name", "--output-file", "--purge-operator"]),
    (
        "init",
        &[
            "--auto-approved-arn-patterns",
            "--auto-approved-csr-identities",
            "--auto-approved-grpc-identities",
            "--aws-resource-tags",
            "--bundle-version",
            "--bundle-version-overrides",
            "--cluster-manager-values-file",
            "--create-namespace",
            "--enable-sync-labels",
            "--feature-gates",
            "--force",
            "--grpc-endpoint-type",
            "--grpc-server",
            "--hub-cluster-arn",
            "--image-pull-credential-file",
            "--image-registry",
            "--output|-o",
            "--output-file",
            "--output-join-command-file",
            "--registration-drivers",
            "--resource-limits",
            "--resource-qos-class",
            "--resource-requests",
            "--set",
            "--set-file",
            "--set-json",
            "--set-literal",
            "--set-string",
            "--singleton-name",
            "--use-bootstrap-token",
            "--values|-f",
            "--wait",
        ],
    ),
    (
        "join",
        &[
            "--addon-kubeclient-registration-auth",
            "--addon-token-expiration-seconds",
            "--bundle-version",
            "--bundle-version-overrides",
            "--ca-file",
            "--capi-cluster-name",
            "--capi-import",
            "--capi-kubeconfig",
            "--client-cert-expiration-seconds",
            "--cluster-name",
            "--create-namespace",
            "--enable-sync-labels",
            "--feature-gates",
            "--force-internal-endpoint-lookup",
            "--force-internal-endpoint-lookup-managed",
            "--grpc-ca-file",
            "--grpc-server",
            "--hub-apiserver",
            "--hub-cluster-arn",
            "--hub-token",
            "--image-pull-credential-file",
            "--image-registry",
            "--klusterlet-annotation",
            "--klusterlet-values-file",
            "--managed-cluster-arn",
            "--managed-cluster-kubeconfig",
            "--mode|-m",
            "--output-file",
            "--proxy-ca-file",
            "--proxy-url",
            "--registration-auth",
            "--resource-limits",
            "--resource-qos-class",
            "--resource-requests",
            "--singleton",
            "--wait",
        ],
    ),
    (
        "unjoin",
        &["--cluster-name", "--output-file", "--purge-operator"],
    ),
    ("addon", &[]),
    (
        "addon create",
        &[
            "--cluster-role-bind",
            "--filename|-f",
            "--hub-registration",
            "--labels",
            "--overwrite",
            "--placement-ref",
            "--recursive|-R",
            "--version",
        ],
    ),
    ("addon disable", &["--cluster|-c", "--clusters", "--names"]),
    (
        "addon enable",
        &[
            "--annotate",
            "--cluster|-c",
            "--clusters",
            "--config-file",
            "--labels",
            "--names",
            "--namespace|-n",
            "--output-file",
        ],
    ),
    ("clusterset", &[]),
    ("clusterset bind", &["--namespace"]),
    ("clusterset set", &["--clusters", "--namespaces"]),
    ("clusterset unbind", &["--namespace"]),
    ("proxy", &[]),
    (
        "proxy health",
        &[
            "--cluster|-c",
            "--clusters",
            "--in-cluster-proxy-cert-lookup",
            "--proxy-ca-cert",
            "--proxy-cert",
            "--proxy-key",
            "--proxy-server-host",
            "--proxy-server-port",
        ],
    ),
    (
        "proxy kubectl",
        &[
            "--args",
            "--cluster|-c",
            "--clusters",
            "--interactive-mode|-i",
            "--sa",
        ],
    ),
    ("config", &[]),
    ("plugin", &[]),
];

/// Why upstream's Helm-values flags are not taken.
const HELM_VALUES: &str = "Helm's value flags: here `--cluster-manager-values-file` takes a values file and flags set the rest; our own charts (`templates/charts/`) take Helm's flags with `helm install`";
/// Why `upgrade` takes no values file.
const UPGRADE_VALUES: &str = "an upgrade here changes the images and keeps every other setting; re-run `init`/`join` with the values file to change the others";

/// Upstream commands and flags this CLI does not take as upstream does: `(command, flag, why)`.
/// An empty flag is the command itself.
pub const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "",
        "--add-dir-header",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--alsologtostderr",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--alsologtostderrthreshold",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--legacy-stderr-threshold-behavior",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--log-backtrace-at",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--log-dir",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--log-file",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--log-file-max-size",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--logtostderr",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--one-output",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--skip-headers",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--skip-log-headers",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--stderrthreshold",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--vmodule",
        "klog's log plumbing: logs go to stderr here (`-v`, `RUST_LOG`)",
    ),
    (
        "",
        "--match-server-version",
        "not taken: versions are checked by `version` and `get hub-info`",
    ),
    (
        "",
        "--v|-v",
        "`-v N`/`--v=N` as klog's, mapped onto three levels (1 info, 2 debug, 3+ trace); `-vvv` also works",
    ),
    (
        "create sampleapp",
        "",
        "upstream's v1.3.1 sample is an Argo CD ApplicationSet, which needs Argo CD (not part of this project); `install hub-addon --names application-manager` installs the subscription add-on its earlier samples used",
    ),
    ("create sampleapp", "--output-file", "with the command"),
    (
        "get clusters",
        "--output|-o",
        "`tree`, upstream's default, on request; the default is a table, as kubectl's (`yaml`, `json` too)",
    ),
    (
        "get token",
        "--output-file",
        "taken and writes nothing, as upstream's (a warning says so)",
    ),
    (
        "clean",
        "--output-file",
        "taken and writes nothing, as upstream's (a warning says so)",
    ),
    (
        "unjoin",
        "--output-file",
        "taken and writes nothing, as upstream's (a warning says so)",
    ),
    (
        "clean",
        "--name",
        "only `cluster-manager`, the one name upstream's operator reconciles; another is refused",
    ),
    (
        "install hub-addon",
        "--names",
        "governance-policy-framework as upstream's, and application-manager as upstream's v0.11 (v1.x dropped it); argocd and argocd-agent, Helm charts upstream's downloads at install time, are refused with the `helm` commands that install them",
    ),
    (
        "upgrade clustermanager",
        "--cluster-manager-values-file",
        UPGRADE_VALUES,
    ),
    (
        "upgrade klusterlet",
        "--klusterlet-values-file",
        UPGRADE_VALUES,
    ),
    (
        "config",
        "",
        "kubectl's `config`, which upstream embeds: use `kubectl config` (same kubeconfig files)",
    ),
    (
        "plugin",
        "",
        "kubectl's `plugin`, which upstream embeds: use `kubectl plugin list`",
    ),
    (
        "init",
        "--registration-drivers",
        "`awsirsa` and `grpc` (with `--hub-cluster-arn`, `--aws-resource-tags`, `--auto-approved-arn-patterns`, `--auto-approved-grpc-identities`, `--grpc-server`, `--grpc-endpoint-type`) are written into the ClusterManager as upstream's for upstream's images, and refused with `--in-process` or `--image`: our components implement `csr`",
    ),
    ("init", "--values|-f", HELM_VALUES),
    ("init", "--set", HELM_VALUES),
    ("init", "--set-file", HELM_VALUES),
    ("init", "--set-json", HELM_VALUES),
    ("init", "--set-literal", HELM_VALUES),
    ("init", "--set-string", HELM_VALUES),
    (
        "init",
        "--singleton-name",
        "deprecated upstream (the singleton hub); not taken",
    ),
    (
        "join",
        "--capi-cluster-name",
        "Cluster API import is out of scope (needs Cluster API on the hub)",
    ),
    (
        "join",
        "--capi-import",
        "Cluster API import is out of scope (needs Cluster API on the hub)",
    ),
    (
        "join",
        "--capi-kubeconfig",
        "Cluster API import is out of scope (needs Cluster API on the hub)",
    ),
    (
        "join",
        "--grpc-ca-file",
        "the gRPC registration driver is not implemented (the CSR driver is)",
    ),
    (
        "join",
        "--grpc-server",
        "the gRPC registration driver is not implemented (the CSR driver is)",
    ),
    (
        "join",
        "--hub-cluster-arn",
        "read with `--registration-auth awsirsa` only (refused with another driver, where upstream ignores it); a malformed ARN is refused before anything is applied",
    ),
    (
        "join",
        "--registration-auth",
        "`awsirsa` is written into the Klusterlet as upstream's for upstream's images and refused with `--in-process` or `--image` (our agents register by CSR); `grpc` is not implemented and refused",
    ),
];

/// How this CLI takes one upstream command or flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Taken as upstream takes it.
    Same,
    /// Taken, with a difference (the why).
    Differs(&'static str),
    /// Not taken (the why).
    Missing(&'static str),
    /// Not taken and not explained: the test below fails on it.
    Unexplained,
}

/// Our command at `path` (space-separated; `""` the root), if there is one.
fn our_command<'a>(root: &'a clap::Command, path: &str) -> Option<&'a clap::Command> {
    let mut cmd = root;
    for word in path.split_whitespace() {
        cmd = cmd
            .get_subcommands()
            .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))?;
    }
    Some(cmd)
}

/// Every flag name `cmd` takes (`--long`, its aliases, `-s`), with the root's global ones and the
/// spellings [`super::argv`] rewrites.
fn flag_names(root: &clap::Command, cmd: &clap::Command) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = ["--v".to_owned()].into();
    let globals = root.get_arguments().filter(|a| a.is_global_set());
    for arg in cmd.get_arguments().chain(globals) {
        names.extend(arg.get_long().map(|l| format!("--{l}")));
        names.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(|a| format!("--{a}")),
        );
        names.extend(arg.get_short().map(|s| format!("-{s}")));
    }
    names
}

fn explained(command: &str, flag: &str) -> Option<&'static str> {
    DIFFERENCES
        .iter()
        .find(|(c, f, _)| *c == command && *f == flag)
        .map(|(_, _, why)| *why)
}

/// How upstream's `command` and each of its flags are taken here: `(flag, support)`, the command
/// itself first with flag `""`.
#[must_use]
pub fn support(
    root: &clap::Command,
    command: &str,
    flags: &[&'static str],
) -> Vec<(&'static str, Support)> {
    let Some(ours) = our_command(root, command) else {
        let why = explained(command, "");
        let missing = why.map_or(Support::Unexplained, Support::Missing);
        let mut out = vec![("", missing.clone())];
        out.extend(flags.iter().map(|f| {
            (
                *f,
                explained(command, f).map_or(missing.clone(), Support::Missing),
            )
        }));
        return out;
    };
    let names = flag_names(root, ours);
    let mut out = vec![("", Support::Same)];
    for flag in flags {
        let taken = flag.split('|').all(|n| names.contains(n));
        let status = match (taken, explained(command, flag)) {
            (true, None) => Support::Same,
            (true, Some(why)) => Support::Differs(why),
            (false, Some(why)) => Support::Missing(why),
            (false, None) => Support::Unexplained,
        };
        out.push((flag, status));
    }
    out
}

/// `(commands taken, commands)` and `(flags taken, flags)` of upstream's, the root's options
/// counted as flags.
#[must_use]
pub fn counts(root: &clap::Command) -> ((usize, usize), (usize, usize)) {
    let (mut commands, mut flags) = ((0, 0), (0, 0));
    for (command, upstream_flags) in UPSTREAM {
        for (flag, s) in support(root, command, upstream_flags) {
            let taken = matches!(s, Support::Same | Support::Differs(_));
            let counter = if flag.is_empty() {
                &mut commands
            } else {
                &mut flags
            };
            if flag.is_empty() && command.is_empty() {
                continue;
            }
            counter.1 += 1;
            counter.0 += usize::from(taken);
        }
    }
    (commands, flags)
}

/// The README's compatibility table: a row per upstream command, its flags taken as upstream's,
/// and each difference with why.
#[must_use]
pub fn table(root: &clap::Command) -> String {
    let ((c_taken, c_all), (f_taken, f_all)) = counts(root);
    let mut out = format!(
        "Upstream v1.3.1's commands taken here: {c_taken} of {c_all}; their flags and options: {f_taken} of {f_all}.\n\n\
         | upstream command | flags taken as upstream's | differs (⚠️ taken otherwise, ❌ not taken): why |\n| --- | --- | --- |\n"
    );
    for (command, flags) in UPSTREAM {
        let rows = support(root, command, flags);
        let same: Vec<String> = rows
            .iter()
            .filter(|(f, s)| !f.is_empty() && *s == Support::Same)
            .map(|(f, _)| format!("`{}`", f.replace('|', "` `")))
            .collect();
        // A command not taken: its flags go with it, unless one says more. Flags with the same
        // answer share a line.
        let command_missing = rows[0].1 != Support::Same;
        let mut differs: Vec<(&str, &str, Vec<String>)> = Vec::new();
        for (flag, s) in &rows {
            if command_missing && !flag.is_empty() && explained(command, flag).is_none() {
                continue;
            }
            let what = if flag.is_empty() {
                "the command".to_owned()
            } else {
                format!("`{}`", flag.replace('|', "` `"))
            };
            let (mark, why) = match s {
                Support::Same => continue,
                Support::Differs(why) => ("⚠️", *why),
                Support::Missing(why) => ("❌", *why),
                Support::Unexplained => ("❌", "(unexplained)"),
            };
            match differs.iter_mut().find(|(m, w, _)| *m == mark && *w == why) {
                Some((_, _, whats)) => whats.push(what),
                None => differs.push((mark, why, vec![what])),
            }
        }
        let differs: Vec<String> = differs
            .into_iter()
            .map(|(mark, why, whats)| format!("{mark} {}: {why}", whats.join(" ")))
            .collect();
        let name = if command.is_empty() {
            "(every command)".to_owned()
        } else {
            format!("`{command}`")
        };
        let same = if same.is_empty() && differs.is_empty() {
            "✅".to_owned()
        } else {
            same.join(" ")
        };
        let _ = writeln!(out, "| {name} | {same} | {} |", differs.join("<br>"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_upstream_command_and_flag_is_taken_or_explained() {
        let root = super::super::cobra::command();
        let mut unexplained = Vec::new();
        for (command, flags) in UPSTREAM {
            for (flag, s) in support(&root, command, flags) {
                if s == Support::Unexplained {
                    unexplained.push(format!("{command} {flag}"));
                }
            }
        }
        assert!(
            unexplained.is_empty(),
            "upstream's, neither taken nor in DIFFERENCES: {unexplained:#?}"
        );
    }

    #[test]
    fn every_difference_names_an_upstream_flag_and_not_yet_means_not_taken() {
        let root = super::super::cobra::command();
        for (command, flag, why) in DIFFERENCES {
            let (_, flags) = UPSTREAM
                .iter()
                .find(|(c, _)| c == command)
                .unwrap_or_else(|| panic!("{command:?} is not an upstream command"));
            assert!(
                flag.is_empty() || flags.contains(flag),
                "{command} {flag} is not upstream's"
            );
            if why.starts_with("not yet") {
                let s = support(&root, command, &[flag]);
                let status = if flag.is_empty() { &s[0].1 } else { &s[1].1 };
                assert!(
                    matches!(status, Support::Missing(_)),
                    "{command} {flag} is taken now: drop it from DIFFERENCES"
                );
            }
        }
    }

    #[test]
    fn the_upstream_spellings_the_table_claims_parse() {
        use clap::FromArgMatches as _;
        let argv = super::super::argv::normalize(
            [
                "clusteradm",
                "--v=2",
                "addon",
                "disable",
                "--names",
                "a",
                "-c",
                "c1",
                "--cluster",
                "c2",
            ]
            .map(std::ffi::OsString::from),
        );
        let matches = super::super::cobra::command()
            .try_get_matches_from(argv.args)
            .unwrap();
        let cli = super::super::Cli::from_arg_matches(&matches).unwrap();
        assert_eq!(cli.global.verbose, 2);
        let super::super::Command::Addon(addon) = cli.command else {
            panic!()
        };
        let super::super::addon::What::Disable(d) = addon.what else {
            panic!()
        };
        assert_eq!(d.clusters, ["c1", "c2"]);
    }
}
