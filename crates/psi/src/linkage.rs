//! Record linkage over the protocol: from rows to keys to setup positions and back, and the
//! files a round reads and writes. Every front end (the CLI, wasm, Node) goes through this
//! module, so the same records and keys give the same bytes everywhere.
//!
//! The protocol matches distinct byte strings; people match rows of files. This module is the
//! bridge. It reads and writes through `Read` and `Write` only: opening paths, and the rules of
//! which paths may be written, are the front end's (`lockstep-files` natively).
//!
//! - [`Records`]: record files (CSV with a header, or one value per line), the rules they are
//!   read by (byte-order mark, blank lines, quoting, lines of at most [`MAX_LINE`], 1-based row
//!   numbers), and matched rows written back out.
//! - [`KeySpec`] / [`KeyColumns`]: which fields of a row form its key, and how (exact bytes,
//!   normalized text, or an unambiguous composite of several columns).
//! - [`KeyTable`]: every row's key grouped into distinct keys (each masked once, so duplicate
//!   rows neither reveal their count nor lose their match), with the rows left out for an empty
//!   key, the row count, and a [`Digest`] of the key column that later proves the same rows are
//!   being resolved.
//! - [`Party`], [`setup`], [`request`], [`intersect`], [`write_resolved`]: a round step by step,
//!   over a party's distinct keys ([`round`](mod@round)).
//! - [`Permutation`]: the starter's map from raw-setup positions to its own rows, with the
//!   digests of its key column and of the setup message. It is the starter's alone.
//! - [`Pairs`]: what the joiner sends back after a raw round: each matched joiner row with its
//!   key's number (among the matched keys) and setup position, its row and key counts, and the
//!   setup's digest.
//! - [`write_permutation`], [`read_permutation`], [`write_pairs`], [`read_pairs`]: the two
//!   linkage files' format ([`link_files`](mod@link_files)).
//! - [`resolve`]: pairs through the permutation to `(joiner row, starter row)` pairs, refusing
//!   an input that is not the one the setup was made from and pairs no honest joiner could send.
//! - [`FileError`]: how reading or writing those files fails, naming line and field;
//!   [`FileError::in_file`] adds the file as every front end shows it.
//!
//! Rows and indexes are 0-based in this API; files and messages show rows 1-based.

mod digest;
mod file_error;
mod keys;
pub mod link_files;
pub(crate) mod pairs;
pub(crate) mod permutation;
pub(crate) mod records;
pub mod round;

pub use digest::{Digest, DigestingReader, DigestingWriter};
pub use file_error::{FileError, InFile};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use keys::KeyDigest;
pub use keys::{KeyColumns, KeySpec, KeyTable, KeyTableBuilder, normalize};
pub use link_files::{read_pairs, read_permutation, write_pairs, write_permutation};
pub use pairs::{Pair, Pairs, RowPair, resolve};
pub use permutation::Permutation;
pub use records::{KeyReader, LineLimit, MAX_LINE, Records};
pub use round::{
    Intersection, Learn, LinkedSetup, MatchedRow, Party, intersect, intersect_unmasked, plain_join,
    request, setup, setup_from_masked, write_resolved,
};

/// Errors of record linkage. Each names what is wrong in terms of rows, columns, keys and
/// positions; a front end adds the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkageError {
    /// A key column is not in the header.
    #[error("no column named {column}; the header has {header}")]
    MissingColumn {
        /// The column asked for (quoted, shortened to 200 bytes).
        column: String,
        /// The header's columns, quoted and comma-separated, shortened to 200 bytes.
        header: String,
    },
    /// A key column's name appears more than once in the header.
    #[error(
        "the header names column {column} twice (columns {first} and {second}): the key would be ambiguous"
    )]
    DuplicateColumn {
        /// The column (quoted, shortened to 200 bytes).
        column: String,
        /// Its first 1-based column number.
        first: usize,
        /// Its second.
        second: usize,
    },
    /// A key is asked of no columns.
    #[error("a key needs at least one column")]
    NoColumns,
    /// A row without a field for a key column.
    #[error("row {row} has no field for column {column}")]
    MissingField {
        /// The 1-based data row.
        row: usize,
        /// The column (quoted, shortened).
        column: String,
    },
    /// Normalization needs UTF-8 text.
    #[error("row {row}, column {column} is not UTF-8 text, which normalization needs")]
    NotUtf8 {
        /// The 1-based data row.
        row: usize,
        /// The column (quoted, shortened).
        column: String,
    },
    /// Text that should be a digest is not 64 hexadecimal digits.
    #[error("{0} is not a SHA-256 digest (64 hexadecimal digits)")]
    NotADigest(String),
    /// A permutation that cannot describe a raw setup over a table.
    #[error("the permutation is invalid: {0}")]
    InvalidPermutation(String),
    /// The input has another number of rows than the one the setup was made from.
    #[error(
        "the input has {now} rows, but the setup was made from {then}: it is not the input the permutation was made from"
    )]
    RowCountChanged {
        /// Rows when the setup was made.
        then: usize,
        /// Rows now.
        now: usize,
    },
    /// The input's keys differ from those the setup was made from.
    #[error(
        "the input's keys are not those the setup was made from: rows reordered, keys edited, \
         another file, or other key columns or normalization"
    )]
    KeysChanged,
    /// The pairs answer another setup than the permutation's.
    #[error(
        "the pairs answer the setup with SHA-256 {pairs}, but the permutation was made with the setup {permutation}"
    )]
    OtherSetup {
        /// The permutation's setup digest.
        permutation: Digest,
        /// The pairs' setup digest.
        pairs: Digest,
    },
    /// A pair's setup position is not a position of the setup.
    #[error("pair {pair}: setup position {position} is outside the setup's {positions} positions")]
    PositionOutOfRange {
        /// The 1-based pair number.
        pair: usize,
        /// The position.
        position: usize,
        /// The setup's positions.
        positions: usize,
    },
    /// A pair's joiner row is beyond the joiner's row count.
    #[error("pair {pair}: joiner row {row} is beyond the joiner's {rows} rows")]
    JoinerRowOutOfRange {
        /// The 1-based pair number.
        pair: usize,
        /// The 1-based joiner row.
        row: usize,
        /// The joiner's rows.
        rows: usize,
    },
    /// A pair's joiner key number is beyond the joiner's key count.
    #[error("pair {pair}: joiner key {key} is beyond the joiner's {keys} keys")]
    JoinerKeyOutOfRange {
        /// The 1-based pair number.
        pair: usize,
        /// The key's number.
        key: usize,
        /// The joiner's distinct keys.
        keys: usize,
    },
    /// Two joiner keys claim one setup position, which holds one distinct starter key.
    #[error(
        "pair {pair}: setup position {position} is claimed by joiner keys {first} and {second}; \
         it holds one key, so no honest joiner matches it twice"
    )]
    PositionClaimedTwice {
        /// The 1-based pair number of the second claim.
        pair: usize,
        /// The position.
        position: usize,
        /// The first claiming key number.
        first: usize,
        /// The second.
        second: usize,
    },
    /// One joiner key claims two setup positions, which hold distinct starter keys.
    #[error(
        "pair {pair}: joiner key {key} claims setup positions {first} and {second}; positions \
         hold distinct keys, so no honest joiner matches one key twice"
    )]
    KeyAtTwoPositions {
        /// The 1-based pair number of the second claim.
        pair: usize,
        /// The key's number.
        key: usize,
        /// The first position.
        first: usize,
        /// The second.
        second: usize,
    },
    /// A joiner row listed twice.
    #[error("pair {pair}: joiner row {row} is listed twice")]
    RowListedTwice {
        /// The 1-based pair number of the second listing.
        pair: usize,
        /// The 1-based row.
        row: usize,
    },
}

/// At most `max` bytes of `text` (cut at a character boundary), with `…` when cut: error text
/// never echoes a whole header or row of a user's file.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// The longest excerpt of a user's data an error shows.
pub(crate) const EXCERPT_BYTES: usize = 200;

/// `bytes` as a quoted string for an error message, at most 200 bytes long (only that much of
/// `bytes` is looked at, however long it is): how every error quotes a user's data.
pub fn quoted(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    let text = format!("{:?}", String::from_utf8_lossy(head));
    if text.len() > EXCERPT_BYTES {
        excerpt(&text, EXCERPT_BYTES)
    } else if head.len() < bytes.len() {
        text + "…"
    } else {
        text
    }
}

/// Items quoted and comma-separated, at most [`EXCERPT_BYTES`] long, built only as far as shown.
pub(crate) fn quoted_list<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut list = String::new();
    for item in items {
        if !list.is_empty() {
            list.push_str(", ");
        }
        list.push_str(&quoted(item));
        if list.len() > EXCERPT_BYTES {
            return excerpt(&list, EXCERPT_BYTES);
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_cut_at_characters() {
        assert_eq!(excerpt("short", 200), "short");
        assert_eq!(excerpt("abcdef", 3), "abc…");
        // "é" is two bytes: a cut inside it moves back.
        assert_eq!(excerpt("aéb", 2), "a…");
        assert!(quoted(&[b'x'; 50_000_000]).len() <= 200 + "…".len());
        assert_eq!(quoted(b"id"), "\"id\"");
        let many: Vec<&[u8]> = vec![b"column"; 1_000_000];
        let list = quoted_list(many);
        assert!(
            list.len() <= 200 + "…".len() && list.ends_with('…'),
            "{list}"
        );
    }
}
