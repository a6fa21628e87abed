//! The one error of the files layer: what went wrong, said as the user named the file, and what
//! kind of failure it is (a front end maps [`ErrorKind::Usage`] to its usage exit code).

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The command cannot run as given: an output names an input or another output, or `-`
    /// where standard output is not allowed. Always raised before any work and any write.
    Usage,
    /// A file is refused for what it is: a directory or device where a file or pipe is taken,
    /// a key file open to others or of the wrong length, an input larger than it can be.
    Refused,
    /// Reading, writing, creating or renaming failed (the source is the operating system's
    /// error).
    Io,
}

/// A files-layer failure: its [`kind`](Self::kind), a message naming the file as the command
/// line gave it, and, for I/O failures, the operating system's error as its source.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<std::io::Error>,
}

impl Error {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn refused(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Refused,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(message: impl Into<String>, source: std::io::Error) -> Self {
        Self {
            kind: ErrorKind::Io,
            message: message.into(),
            source: Some(source),
        }
    }
}

/// Adds a message to an I/O result: `result.or_io(|| format!("reading {path}"))`.
pub(crate) trait OrIo<T> {
    fn or_io(self, message: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T> OrIo<T> for std::io::Result<T> {
    fn or_io(self, message: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|source| Error::io(message(), source))
    }
}
