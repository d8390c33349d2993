//! The template table: every `templates/**/*.j2` file, embedded at compile time. A unit test in
//! the parent module fails when a file on disk is missing here.

/// `(path under templates/, contents)`.
pub static TEMPLATES: &[(&str, &str)] = &[];
