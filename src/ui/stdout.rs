//! Everything the commands print as their result goes through here, not `println!`: a closed
//! pipe (`clusteradm get works | head -1`) is then an error that goes up to `main`, which exits 0
//! as other Unix tools do (`crate::error::report`), instead of a panic.
use std::fmt::Display;
use std::io::Write as _;

/// Writes `text` to stdout as is.
pub fn print(text: impl Display) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()
}

/// Writes `text` and a newline to stdout.
pub fn println(text: impl Display) -> std::io::Result<()> {
    print(format_args!("{text}\n"))
}
