//! Bounded reads of the files a user names on the command line (`-f`, `--ca-file`,
//! `--kubeconfig`, `--hub-kubeconfig`, `--config-file`, ...). A path may name `/dev/zero`, a pipe
//! fed forever or a huge file by mistake, and a plain `read_to_string` would fill memory before
//! any check could say what is wrong; so every such file is read through [`read`] (or
//! [`bounded`] for stdin) and stops at [`MAX_FILE_BYTES`]. A directory read with `-R` is bounded
//! too, by [`MAX_TREE_ENTRIES`] and [`MAX_TREE_BYTES`]: symbolic links can make a small tree
//! look exponentially large (k links per level give k^depth paths), which no loop check catches.
//! Pure std: no other module of the crate.
use std::io::Read as _;
use std::path::Path;

/// The most bytes read from one file or stdin: four times the 500 KiB a ManifestWork may hold
/// (YAML may be larger than the JSON it becomes), far more than any kubeconfig, CA bundle or
/// docker config needs.
pub const MAX_FILE_BYTES: u64 = 2000 * 1024;
/// The most directory entries (files and directories, each path a symbolic link leads to
/// counted again) walked for the `-f` inputs of one command.
pub const MAX_TREE_ENTRIES: usize = 10_000;
/// The most bytes read in all for the `-f` inputs of one command (16 MiB): eight full-size
/// files, still far above what one command can send.
pub const MAX_TREE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Opening or reading failed.
    #[error("cannot read {what} {path}")]
    Read {
        /// The flag that names the file, e.g. `--ca-file`.
        what: String,
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{what} {path} is over {} KiB, the most clusteradm reads from one file", MAX_FILE_BYTES / 1024)]
    TooLarge {
        /// The flag that names the file.
        what: String,
        /// The path.
        path: String,
    },
    /// The file should be text and is not UTF-8.
    #[error("{what} {path} is not UTF-8 text")]
    NotText {
        /// The flag that names the file.
        what: String,
        /// The path.
        path: String,
    },
}

/// Reads at most `limit` bytes of `input`: `Ok(None)` when there was more.
pub fn bounded(input: impl std::io::Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    input
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Reads the file `path`, named by flag `what`, up to [`MAX_FILE_BYTES`].
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    let read_err = |source| Error::Read {
        what: what.to_string(),
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    bounded(file, MAX_FILE_BYTES)
        .map_err(read_err)?
        .ok_or_else(|| Error::TooLarge {
            what: what.to_string(),
            path: path.display().to_string(),
        })
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, what: &str) -> Result<String, Error> {
    String::from_utf8(read(path, what)?).map_err(|_| Error::NotText {
        what: what.to_string(),
        path: path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_stops_one_byte_past_the_limit() {
        assert_eq!(bounded(&b"abc"[..], 3).unwrap(), Some(b"abc".to_vec()));
        assert_eq!(bounded(&b"abcd"[..], 3).unwrap(), None);
        assert_eq!(bounded(std::io::repeat(0), 10).unwrap(), None);
    }

    #[test]
    fn an_oversized_file_behind_a_file_flag_is_refused() {
        let path = std::env::temp_dir().join(format!(
            "clusteradm-input-oversized-{}.pem",
            std::process::id()
        ));
        let size = usize::try_from(MAX_FILE_BYTES).unwrap() + 1;
        std::fs::write(&path, vec![b'a'; size]).unwrap();
        let err = read_text(&path, "--ca-file").unwrap_err().to_string();
        std::fs::write(&path, b"PEM").unwrap();
        let small = read_text(&path, "--ca-file").unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(err.starts_with("--ca-file "), "{err}");
        assert!(err.contains("over 2000 KiB"), "{err}");
        assert_eq!(small, "PEM");
        let zero = read(Path::new("/dev/zero"), "--config-file").unwrap_err();
        assert!(matches!(zero, Error::TooLarge { .. }), "{zero}");
    }

    #[test]
    fn a_missing_file_names_the_flag() {
        let err = read(Path::new("/nonexistent/clusteradm"), "--hub-kubeconfig").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read --hub-kubeconfig /nonexistent/clusteradm"),
            "{err}"
        );
    }
}
