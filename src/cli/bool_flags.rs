//! Switches as cobra (upstream clusteradm's flag library) takes them: `--wait`, `--wait=true` and
//! `--wait=false` all work, so upstream scripts that spell a boolean out run unchanged. clap's
//! switches refuse a value; [`command`] turns every one of them, in every subcommand, into an
//! optional `=true|false` value. The value must follow `=`, as cobra's must: `--wait false`
//! stays a switch and a stray argument.
use clap::{ArgAction, CommandFactory as _};

use super::Cli;

/// The command line of `clusteradm`, with cobra's switches.
#[must_use]
pub fn command() -> clap::Command {
    cobra_switches(Cli::command())
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
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in subcommands {
        cmd = cmd.mut_subcommand(name, cobra_switches);
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
        // As cobra: a value needs the `=`; anything else is not a boolean.
        assert!(parse(&["clusteradm", "init", "--wait", "false"]).is_err());
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
