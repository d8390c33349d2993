//! Spellings upstream's command line takes that clap does not, rewritten before parsing so that
//! upstream scripts run unchanged:
//! - a flag name with `_` for `-` (`--cluster_name`): upstream's pflag normalises it and warns;
//! - klog's numeric verbosity (`-v 4`, `-v=4`, `-v4`, `--v=4`, `--v 4`): here `-v` counts
//!   (`-v` info, `-vv` debug, `-vvv` trace), so a level becomes that many `-v`, at most three.
//!
//! Arguments after `--` are left alone.
use std::ffi::OsString;

/// The highest verbosity this CLI distinguishes (`-vvv`, trace).
const MOST_VERBOSE: usize = 3;

/// The arguments to parse, and a warning for each spelling that was rewritten where upstream
/// warns too.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Normalized {
    /// The arguments, program name first.
    pub args: Vec<OsString>,
    /// Messages for stderr.
    pub warnings: Vec<String>,
}

/// Rewrites `args` (program name first).
#[must_use]
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Normalized {
    let mut out = Normalized::default();
    let mut args = args.into_iter().peekable();
    out.args.extend(args.next());
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            out.args.push(arg);
            continue;
        };
        if text == "--" {
            out.args.push(arg);
            out.args.extend(args);
            break;
        }
        let level = match verbosity(text) {
            Verbosity::Level(n) => Some(n),
            Verbosity::LevelNext => match args.peek().and_then(|a| a.to_str()).map(str::parse) {
                Some(Ok(n)) => {
                    args.next();
                    Some(n)
                }
                _ => None,
            },
            Verbosity::NotIt => None,
        };
        if let Some(n) = level {
            out.args.extend(std::iter::repeat_n(
                OsString::from("-v"),
                n.min(MOST_VERBOSE),
            ));
            continue;
        }
        if text == "--v" {
            // `--v` with no number: as `-v`.
            out.args.push("-v".into());
            continue;
        }
        match with_dashes(text) {
            Some(fixed) => {
                out.warnings.push(format!(
                    "using an underscore in a flag name is not supported. {} has been converted to {}.",
                    name_of(text),
                    name_of(&fixed)
                ));
                out.args.push(fixed.into());
            }
            None => out.args.push(arg),
        }
    }
    out
}

enum Verbosity {
    Level(usize),
    /// `-v`/`--v` whose level may be the next argument.
    LevelNext,
    NotIt,
}

fn verbosity(arg: &str) -> Verbosity {
    let value = if let Some(v) = arg.strip_prefix("--v=") {
        v
    } else if let Some(v) = arg.strip_prefix("-v=") {
        v
    } else if arg == "-v" || arg == "--v" {
        return Verbosity::LevelNext;
    } else if let Some(v) = arg.strip_prefix("-v")
        && !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit())
    {
        v
    } else {
        return Verbosity::NotIt;
    };
    value.parse().map_or(Verbosity::NotIt, Verbosity::Level)
}

/// `--a_b[=v]` as `--a-b[=v]`; `None` when the name has no `_`.
fn with_dashes(arg: &str) -> Option<String> {
    let rest = arg.strip_prefix("--")?;
    let (name, value) = match rest.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (rest, None),
    };
    if !name.contains('_') {
        return None;
    }
    let name = name.replace('_', "-");
    Some(match value {
        Some(v) => format!("--{name}={v}"),
        None => format!("--{name}"),
    })
}

fn name_of(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> (Vec<String>, Vec<String>) {
        let n = normalize(
            std::iter::once("clusteradm")
                .chain(args.iter().copied())
                .map(OsString::from),
        );
        let args = n.args[1..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (args, n.warnings)
    }

    #[test]
    fn klog_levels_become_counted_v() {
        for spelled in [
            &["-v", "2"][..],
            &["-v=2"],
            &["-v2"],
            &["--v=2"],
            &["--v", "2"],
        ] {
            assert_eq!(run(spelled).0, ["-v", "-v"], "{spelled:?}");
        }
        assert_eq!(run(&["--v=9"]).0, ["-v", "-v", "-v"]);
        assert!(run(&["--v=0"]).0.is_empty());
        assert_eq!(run(&["-vv"]).0, ["-vv"], "counted spelling kept");
        assert_eq!(
            run(&["-v", "get", "clusters"]).0,
            ["-v", "get", "clusters"],
            "a -v before a word is a switch"
        );
    }

    #[test]
    fn underscores_in_flag_names_become_dashes_with_a_warning() {
        let (args, warnings) = run(&["join", "--cluster_name=c_1", "--hub_token", "t_1"]);
        assert_eq!(args, ["join", "--cluster-name=c_1", "--hub-token", "t_1"]);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("--cluster_name has been converted to --cluster-name"));
    }

    #[test]
    fn nothing_after_double_dash_changes() {
        let (args, warnings) = run(&["--", "--a_b", "-v", "3"]);
        assert_eq!(args, ["--", "--a_b", "-v", "3"]);
        assert!(warnings.is_empty());
    }
}
