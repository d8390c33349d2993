//! Terminal output: the [`printer::Printer`] for messages and progress on stderr, machine output
//! (`-o yaml|json`) and tables on stdout, and logging set-up.

pub mod logging;
pub mod output;
pub mod printer;
pub mod prompt;
pub mod stdout;
pub mod table;
pub mod tree;

pub use printer::Printer;
