//! Usage errors: a command line that cannot be run as given (conflicting or impossible flags,
//! an output that would overwrite an input). They exit with code 2, as clap's own do, and are
//! raised before any work or any write.

/// A command line that cannot be run as given; `main` exits with code 2 for it.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns early with a [`UsageError`] made from a format string.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::usage::UsageError(format!($($arg)*)).into())
    };
}
pub(crate) use usage;

/// Whether `error` (or anything in its chain) is a usage error: ours, or the files layer's
/// (an output over an input, `-` where standard output is not allowed).
pub(crate) fn is_usage(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.is::<UsageError>()
            || e.downcast_ref::<lockstep_files::Error>()
                .is_some_and(|e| e.kind() == lockstep_files::ErrorKind::Usage)
    })
}
