//! The command line as cobra (upstream clusteradm's flag library) takes it, so upstream's scripts
//! and harnesses run unchanged. [`command`] adjusts the derived clap command, in every
//! subcommand:
//! - **switches** take an optional `=true|false` (`--wait`, `--wait=true`, `--wait=false`); the
//!   value must follow `=`, as cobra's must (`--wait false` is a switch and a stray argument);
//! - **a repeated flag** takes its last value (`--bundle-version a --bundle-version b` is `b`),
//!   where clap would refuse it; lists (`--clusters a --clusters b`) still gather every value;
//! - **stray arguments** are taken by a command that declares none, as cobra's default does;
//!   [`stray_arguments`] finds them after parsing so that the caller can say they are ignored.
//!   Upstream's commands that refuse arguments ([`REFUSE_ARGUMENTS`]) refuse them here too.
use clap::{ArgAction, ArgMatches, CommandFactory as _};

use super::Cli;

/// The hidden argument that holds a leaf command's stray arguments.
const STRAY: &str = "cobra-stray-arguments";

/// Upstream's leaf commands that check for and refuse positional arguments
/// (`pkg/cmd/get/{clusterset,hubinfo,klusterletinfo}/exec.go`).
pub const REFUSE_ARGUMENTS: &[&str] = &["get clustersets", "get hub-info", "get klusterlet-info"];

/// The command line of `clusteradm`, as cobra takes it.
#[must_use]
pub fn command() -> clap::Command {
    as_cobra(Cli::command(), "", true)
}

/// [`command`] without the stray-argument slots, for shell completion: nothing there to complete.
#[must_use]
pub fn completion_command() -> clap::Command {
    as_cobra(Cli::command(), "", false)
}

/// The leaf command that took stray arguments (`"addon enable"`), and those arguments.
#[must_use]
pub fn stray_arguments(matches: &ArgMatches) -> Option<(String, Vec<String>)> {
    let mut path = Vec::new();
    let mut m = matches;
    while let Some((name, sub)) = m.subcommand() {
        path.push(name);
        m = sub;
    }
    let stray: Vec<String> = m
        .try_get_many::<String>(STRAY)
        .ok()
        .flatten()?
        .cloned()
        .collect();
    (!stray.is_empty()).then(|| (path.join(" "), stray))
}

fn as_cobra(mut cmd: clap::Command, path: &str, strays: bool) -> clap::Command {
    cmd = cobra_switches(cmd).args_override_self(true);
    let leaf = cmd.get_subcommands().next().is_none();
    let has_positionals = cmd.get_positionals().next().is_some();
    if strays && leaf && !has_positionals && !path.is_empty() && !REFUSE_ARGUMENTS.contains(&path) {
        cmd = cmd.arg(
            clap::Arg::new(STRAY)
                .num_args(0..)
                .action(ArgAction::Append)
                .hide(true),
        );
    }
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in subcommands {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(name, |s| as_cobra(s, &sub_path, strays));
    }
    cmd
}

fn cobra_switches(mut cmd: clap::Command) -> clap::Command {
    let switches: Vec<String> = cmd
        .get_arguments()
        .filter(|a| matches!(a.get_action(), ArgAction::SetTrue))
        .map(|a| a.get_id().to_string())
        .collect();
    for id in switches {
        cmd = cmd.mut_arg(id, |a| {
            // A switch defaults to false unless it says otherwise (`-R` of `addon create`).
            let a = if a.get_default_values().is_empty() {
                a.default_value("false")
            } else {
                a
            };
            a.action(ArgAction::Set)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true")
                .value_parser(clap::value_parser!(bool))
                .value_name("true|false")
                .hide_possible_values(true)
        });
    }
    cmd
}

#[cfg(test)]
mod tests {
    use clap::FromArgMatches as _;

    use super::*;
    use crate::cli::Command;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let matches = command().try_get_matches_from(args)?;
        Cli::from_arg_matches(&matches)
    }

    fn init_wait(args: &[&str]) -> bool {
        match parse(args).unwrap().command {
            Command::Init(a) => a.wait,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_switch_takes_true_or_false_after_an_equals_sign() {
        assert!(!init_wait(&["clusteradm", "init"]));
        assert!(init_wait(&["clusteradm", "init", "--wait"]));
        assert!(init_wait(&["clusteradm", "init", "--wait=true"]));
        assert!(!init_wait(&["clusteradm", "init", "--wait=false"]));
        // Global switches too, before or after the command.
        assert!(
            parse(&["clusteradm", "--dry-run=true", "init"])
                .unwrap()
                .global
                .dry_run
        );
        assert!(
            !parse(&["clusteradm", "init", "--dry-run=false"])
                .unwrap()
                .global
                .dry_run
        );
        // As cobra: a value needs the `=`; `--wait false` is a switch and a stray argument.
        assert!(init_wait(&["clusteradm", "init", "--wait", "false"]));
        assert!(parse(&["clusteradm", "init", "--wait=maybe"]).is_err());
    }

    #[test]
    fn a_switch_that_defaults_to_true_can_be_turned_off() {
        let recursive = |args: &[&str]| match parse(args).unwrap().command {
            Command::Addon(crate::cli::addon::Args {
                what: crate::cli::addon::What::Create(c),
            }) => c.recursive,
            other => panic!("{other:?}"),
        };
        let base = ["clusteradm", "addon", "create", "x", "-f", "f.yaml"];
        assert!(recursive(&base));
        assert!(!recursive(&[&base[..], &["-R=false"]].concat()));
    }

    #[test]
    fn a_repeated_flag_takes_its_last_value_and_a_list_every_value() {
        let cli = parse(&[
            "clusteradm",
            "--timeout",
            "10",
            "addon",
            "enable",
            "--names",
            "a",
            "--names",
            "b,c",
            "--clusters",
            "c1",
            "-n",
            "first",
            "--namespace",
            "second",
            "--timeout=20",
        ])
        .unwrap();
        assert_eq!(cli.global.timeout, std::time::Duration::from_secs(20));
        let Command::Addon(crate::cli::addon::Args {
            what: crate::cli::addon::What::Enable(e),
        }) = cli.command
        else {
            panic!()
        };
        assert_eq!(e.names, ["a", "b", "c"]);
        assert_eq!(e.namespace, "second");
        // A switch repeated: the last one.
        assert!(!init_wait(&[
            "clusteradm",
            "init",
            "--wait",
            "--wait=false"
        ]));
    }

    #[test]
    fn a_command_that_declares_no_argument_takes_stray_ones_as_cobra() {
        let argv = [
            "clusteradm",
            "addon",
            "enable",
            "helloworld",
            "--names",
            "helloworld",
            "--clusters",
            "c1",
        ];
        let matches = command().try_get_matches_from(argv).unwrap();
        assert!(Cli::from_arg_matches(&matches).is_ok());
        assert_eq!(
            stray_arguments(&matches),
            Some(("addon enable".to_owned(), vec!["helloworld".to_owned()]))
        );
        // None given: none found.
        let matches = command()
            .try_get_matches_from(["clusteradm", "init"])
            .unwrap();
        assert_eq!(stray_arguments(&matches), None);
        // A command with arguments of its own keeps its count; those upstream refuses refuse.
        assert!(parse(&["clusteradm", "get", "clustersets", "x"]).is_err());
        assert!(
            parse(&[
                "clusteradm",
                "create",
                "work",
                "a",
                "b",
                "-f",
                "x",
                "--clusters",
                "c"
            ])
            .is_err()
        );
        // A parent command still refuses an unknown subcommand.
        assert!(parse(&["clusteradm", "nosuchcommand"]).is_err());
        assert!(parse(&["clusteradm", "get", "nosuchthing"]).is_err());
    }

    #[test]
    fn every_upstream_refusal_names_a_command_of_ours() {
        let cmd = command();
        for path in REFUSE_ARGUMENTS {
            let mut c = &cmd;
            for name in path.split(' ') {
                c = c
                    .find_subcommand(name)
                    .unwrap_or_else(|| panic!("{path}: no {name}"));
            }
        }
    }

    #[test]
    fn no_switch_is_left_that_refuses_a_value() {
        fn check(cmd: &clap::Command, path: &str) {
            for a in cmd.get_arguments() {
                assert!(
                    !matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse),
                    "{path} --{}",
                    a.get_id()
                );
            }
            for sub in cmd.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        let mut cmd = command();
        cmd.build();
        check(&cmd, "clusteradm");
    }
}
