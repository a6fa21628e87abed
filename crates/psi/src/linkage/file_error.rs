//! How reading or writing a record file or a linkage file fails, line and field named, never a
//! user's data beyond a short quote.

use super::LinkageError;

/// A record file or linkage file that cannot be read or written. It never names the file: a
/// front end names it with [`in_file`](Self::in_file), so every front end says the same.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// Reading failed: the source's error, or a line longer than [`MAX_LINE`](super::MAX_LINE).
    #[error(transparent)]
    Read(std::io::Error),
    /// Writing failed.
    #[error(transparent)]
    Write(std::io::Error),
    /// Malformed CSV, with its record, line and byte position (never its content).
    #[error(transparent)]
    Csv(csv::Error),
    /// A CSV record file without even a header row.
    #[error("the file is empty; a CSV input needs a header row naming its columns")]
    EmptyCsv,
    /// No row has a key: nothing to intersect.
    #[error("no row has a non-empty key; nothing to intersect")]
    NoKeys,
    /// A key that cannot be taken, a permutation that cannot be one.
    #[error(transparent)]
    Linkage(#[from] LinkageError),
    /// The first line is not the format's.
    #[error("is not a file `lockstep {writer}` writes (its first line is not {magic:?})")]
    NotThisFormat {
        /// The command that writes the format: `psi setup --permutation-out`.
        writer: &'static str,
        /// The first line it writes.
        magic: &'static str,
    },
    /// More `#` lines than a file of the format holds.
    #[error("more than {0} lines starting with #")]
    LongPreamble(usize),
    /// A `# name: value` line the format needs is missing.
    #[error("the line \"# {0}: ...\" is missing")]
    MissingField(&'static str),
    /// A `# name: value` line's value is not of its kind.
    #[error("{field} {value} is not what it should be")]
    BadField {
        /// The field's name.
        field: &'static str,
        /// Its value, quoted and shortened.
        value: String,
    },
    /// The data's header row is not the format's.
    #[error("the columns must be {0}")]
    Columns(String),
    /// A data row with another number of fields than the format's.
    #[error("data row {line} has {found} fields, not {expected}")]
    RowFields {
        /// The 1-based data row.
        line: usize,
        /// Its fields.
        found: usize,
        /// The format's fields.
        expected: usize,
    },
    /// A data row's field that must be a number is not.
    #[error("data row {line}: {field} {value} is not a number")]
    NotANumber {
        /// The 1-based data row.
        line: usize,
        /// The column.
        field: &'static str,
        /// The field, quoted and shortened.
        value: String,
    },
    /// A 1-based row number of 0.
    #[error("data row {line}: {field} 0 (rows count from 1)")]
    RowZero {
        /// The 1-based data row.
        line: usize,
        /// The column.
        field: &'static str,
    },
}

impl FileError {
    /// This error as a front end shows it for the file it names `file`: `reading FILE: ...` for
    /// a read failure, `writing FILE: ...` for a write failure, `FILE: ...` otherwise.
    pub fn in_file(self, file: impl Into<String>) -> InFile {
        InFile {
            file: file.into(),
            error: self,
        }
    }

    /// A CSV writer's failure: its I/O error as a write failure.
    pub(crate) fn from_csv_write(error: csv::Error) -> Self {
        if error.is_io_error()
            && let csv::ErrorKind::Io(io) = error.into_kind()
        {
            return Self::Write(io);
        }
        Self::Write(std::io::Error::other("the CSV writer failed"))
    }
}

/// A [`FileError`] with the file it is about, as every front end shows it. Its message is the
/// whole story (`reading FILE: line 4 is longer than ...`), so it has no further source.
#[derive(Debug)]
pub struct InFile {
    file: String,
    error: FileError,
}

impl std::error::Error for InFile {}

impl InFile {
    /// The file, as the front end named it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// What went wrong.
    pub fn error(&self) -> &FileError {
        &self.error
    }
}

impl std::fmt::Display for InFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (file, error) = (&self.file, &self.error);
        match error {
            FileError::Read(_) | FileError::Csv(_) => write!(f, "reading {file}: {error}"),
            FileError::Write(_) => write!(f, "writing {file}: {error}"),
            // "x.csv is not a file `lockstep ...` writes".
            FileError::NotThisFormat { .. } => write!(f, "{file} {error}"),
            _ => write!(f, "{file}: {error}"),
        }
    }
}
