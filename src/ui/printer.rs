//! Where messages go. Data goes to stdout; progress, status lines, warnings and prompts go to
//! stderr, so `clusteradm ... -o yaml > file` stays clean.
use std::io::IsTerminal;
use std::time::Duration;

use console::Style;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Decides colour and progress once, from flags, environment and whether stderr is a terminal.
#[derive(Debug, Clone)]
pub struct Printer {
    quiet: bool,
    color: bool,
    progress: bool,
}

/// `--color` values, as in cargo and uv.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl Printer {
    /// Builds a printer. Progress bars appear only on a stderr TTY and never with `-q`, `-v` or
    /// `RUST_LOG`, where they would interleave with logs.
    #[must_use]
    pub fn new(quiet: bool, verbose: u8, color: ColorChoice) -> Self {
        let tty =
            std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb");
        let env_set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if env_set("NO_COLOR") => false,
            ColorChoice::Auto if env_set("FORCE_COLOR") || env_set("CLICOLOR_FORCE") => true,
            ColorChoice::Auto => tty,
        };
        console::set_colors_enabled_stderr(color);
        console::set_colors_enabled(color && std::io::stdout().is_terminal());
        let progress = tty && !quiet && verbose == 0 && std::env::var_os("RUST_LOG").is_none();
        Self {
            quiet,
            color,
            progress,
        }
    }

    /// Whether stderr output is coloured.
    #[must_use]
    pub fn color(&self) -> bool {
        self.color
    }

    /// A status line on stderr (suppressed by `-q`).
    pub fn info(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", msg.as_ref());
        }
    }

    /// A line marking something done, with a green tick when colour is on.
    pub fn done(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!(
                "{} {}",
                Style::new().green().for_stderr().apply_to("✓"),
                msg.as_ref()
            );
        }
    }

    /// A warning on stderr; shown even with `-q`.
    pub fn warn(&self, msg: impl AsRef<str>) {
        eprintln!(
            "{} {}",
            Style::new()
                .yellow()
                .bold()
                .for_stderr()
                .apply_to("warning:"),
            msg.as_ref()
        );
    }

    /// A spinner with a message; hidden unless progress is enabled. Finish it with
    /// [`ProgressBar::finish_and_clear`].
    #[must_use]
    pub fn spinner(&self, msg: impl Into<String>) -> ProgressBar {
        let target = if self.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("static template"),
        );
        bar.set_message(msg.into());
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    }

    /// Whether prompts may be shown: stdin and stderr are terminals.
    #[must_use]
    pub fn interactive(&self) -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}
