//! The strict parallel codec: fixed-width compressed points, streamed in chunks of
//! [`CHUNK_POINTS`], each chunk decoded (and checked) or encoded by the workers at fixed
//! offsets, chunks read and written in file order.
//!
//! # Guarantees
//! - Bytes written never depend on the worker count; decoding returns the same points or the
//!   same error at every worker count: the first bad point in file order.
//! - Every decoded point is compressed, canonical (x < p, consistent flags), on the curve and in
//!   the prime-order subgroup ([`PointProblem`]).
//! - Memory while streaming a vector: two input chunks and one output chunk
//!   (`CHUNK_POINTS * (2 * size_of::<P::Bytes>() + size_of::<P>())`, 0.75 MiB for G1, 1.3 MiB
//!   for G2), plus the vectors being built: 96 bytes per G1 point and 192 per G2 point, allocated
//!   at their exact size when the input's length is known to cover them ([`Limits::file_len`]),
//!   else grown with the points actually read (a header that announces more points than the file
//!   holds allocates no more than the file).

mod point;
pub(crate) mod stream;

pub use point::{Compressed, KeyChecks, Point, PointProblem};
pub(crate) use stream::{
    HashingReader, HashingWriter, read_challenge, read_point, read_points, read_points_after,
    read_vector, write_challenge, write_points, write_vector,
};

/// Points per chunk of the streaming codec.
pub const CHUNK_POINTS: usize = 4096;

/// Points per block within a chunk: the unit a worker takes, and where it checks for a stop.
pub(crate) const BLOCK_POINTS: usize = 128;

/// Where in a file a point or a field sits, for errors: a vector and an index in it (`G1
/// Tau[5]`), or a single named value (`G2 Beta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The vector or value, as gnark names it (`G1 Tau`, `G1 AlphaTau`, `tau proof commitment`).
    pub name: &'static str,
    /// The index within the vector (in the mathematical numbering: `G1 Tau[1]` is the first
    /// point of that vector in the file, as `[tau^0]_1` is not stored), if it is one.
    pub index: Option<u64>,
}

impl Location {
    /// A single value.
    pub const fn value(name: &'static str) -> Self {
        Self { name, index: None }
    }

    /// Element `index` of a vector.
    pub const fn element(name: &'static str, index: u64) -> Self {
        Self {
            name,
            index: Some(index),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(index) => write!(f, "{}[{index}]", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// Why a file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A point failed a check.
    #[error("{location} at byte {offset}: {problem}")]
    Point {
        /// Which point.
        location: Location,
        /// Its first byte in the file.
        offset: u64,
        /// What is wrong with it.
        problem: PointProblem,
    },
    /// The file ended before a value it must hold.
    #[error("truncated: the file ends at byte {offset}, inside {location}")]
    Truncated {
        /// The value the file ended in or before.
        location: Location,
        /// The file's length.
        offset: u64,
    },
    /// Bytes follow the last value.
    #[error("trailing bytes after the end of the content at byte {offset}")]
    TrailingBytes {
        /// Where the content ended.
        offset: u64,
    },
    /// The domain size is not a power of two within the accepted range.
    #[error(
        "domain size N = {n} at byte {offset}: must be a power of two from {least} to 2^{max_power}"
    )]
    DomainSize {
        /// The size read.
        n: u64,
        /// Where it was read.
        offset: u64,
        /// The smallest size accepted: 2 for a phase 1 (gnark's smallest), 1 for a phase 2
        /// (a circuit of one constraint).
        least: u64,
        /// The largest power accepted ([`Limits::max_power`]).
        max_power: u32,
    },
    /// The domain size differs from the one expected.
    #[error("wrong power: the file is for 2^{found} (N = {n}), expected 2^{expected}", n = 1u64 << found)]
    WrongPower {
        /// The power read.
        found: u32,
        /// The power expected.
        expected: u32,
    },
    /// The challenge field's length is neither 0 (the initial object) nor 32 (a SHA-256).
    #[error("challenge at byte {offset}: length {len}, expected 0 or 32")]
    ChallengeLength {
        /// The length byte read.
        len: u8,
        /// Where it was read.
        offset: u64,
    },
    /// A count beyond what the format allows.
    #[error("{what} at byte {offset}: {count}, at most {max}")]
    TooMany {
        /// What is counted.
        what: &'static str,
        /// The count read.
        count: u64,
        /// The most accepted.
        max: u64,
        /// Where it was read.
        offset: u64,
    },
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A beacon delay of more iterations than a seal applies.
    #[error("{iterations} beacon iterations: at most {max} are applied (about seven minutes)")]
    TooManyIterations {
        /// The iterations asked for.
        iterations: u64,
        /// The most allowed.
        max: u64,
    },
    /// A worker stopped reporting progress, or panicked (a bug).
    #[error("worker failure: {0}")]
    Worker(String),
    /// Memory for a vector could not be allocated (the machine's or the process's limit): an
    /// error, never an abort.
    #[error("{what}: {refused}")]
    Memory {
        /// The vector (`G1 Tau`, `Z`, a transform's points).
        what: &'static str,
        /// The bytes refused (said in this message, not as its source, so it is said once).
        refused: lockstep_shard::memory::AllocError,
    },
}

/// The largest power any reader accepts, whatever [`Limits::max_power`] says (2^40 points
/// would be 300 TB of file).
pub const MAX_POWER: u32 = 40;

/// The largest power readers accept by default, and the largest a new ceremony may start with:
/// 28, files of 77 GB.
pub const DEFAULT_MAX_POWER: u32 = 28;

/// Bounds on what a reader accepts before allocating for it, and what it knows of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest domain size accepted, as a power of two (default [`DEFAULT_MAX_POWER`]: files
    /// of 77 GB; never above [`MAX_POWER`]).
    pub max_power: u32,
    /// The exact power expected, if known (a contribution must match its predecessor).
    pub power: Option<u32>,
    /// The input's length in bytes, if known (a file's). A vector the rest of the file can hold
    /// is then allocated once at its exact size; otherwise vectors grow chunk by chunk with the
    /// points actually read, so a header announcing more than the file holds costs nothing.
    pub file_len: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_power: DEFAULT_MAX_POWER,
            power: None,
            file_len: None,
        }
    }
}

impl Limits {
    /// Checks a domain size read at `offset` and returns its power.
    pub(crate) fn check_n(&self, n: u64, offset: u64) -> Result<u32, CodecError> {
        self.check_n_from(n, offset, 2)
    }

    /// [`check_n`](Self::check_n) with `least` the smallest size accepted (1 for a phase 2
    /// domain, where a circuit of one constraint has N = 1 as in gnark).
    pub(crate) fn check_n_from(&self, n: u64, offset: u64, least: u64) -> Result<u32, CodecError> {
        // Whatever the caller allows, 2N - 1 points must stay countable in a usize.
        let max_power = self.max_power.min(MAX_POWER).min(usize::BITS - 3);
        if n < least || !n.is_power_of_two() || n.trailing_zeros() > max_power {
            return Err(CodecError::DomainSize {
                n,
                offset,
                least,
                max_power,
            });
        }
        let found = n.trailing_zeros();
        match self.power {
            Some(expected) if expected != found => Err(CodecError::WrongPower { found, expected }),
            _ => Ok(found),
        }
    }
}

/// The length of a contribution's file made on a predecessor of `previous_len` bytes, in both
/// phases: the same layout, plus the 32-byte challenge when the predecessor is an initial object
/// (whose challenge field is empty; every contribution's holds its predecessor's hash).
pub fn contribution_len(previous_len: u64, previous_is_initial: bool) -> u64 {
    if previous_is_initial {
        previous_len + 32
    } else {
        previous_len
    }
}

#[cfg(test)]
mod contribution_len_tests {
    use lockstep_shard::{Control, Pool};

    use super::contribution_len;
    use crate::phase1::{self, Phase1, Secrets};

    fn written(object: &Phase1) -> (Vec<u8>, [u8; 32]) {
        let mut bytes = Vec::new();
        let hash = object
            .write(&Pool::current_thread(), &Control::new(), &mut bytes)
            .unwrap();
        (bytes, hash)
    }

    #[test]
    fn a_contribution_is_its_predecessors_length_plus_the_challenge_on_the_initial_object() {
        let initial = Phase1::initial(3).unwrap();
        let (bytes, hash) = written(&initial);
        let first = phase1::contribute_serial(initial, &hash, &Secrets::random(b"one"));
        let (first_bytes, first_hash) = written(&first);
        assert_eq!(
            first_bytes.len() as u64,
            contribution_len(bytes.len() as u64, true)
        );
        let second = phase1::contribute_serial(first, &first_hash, &Secrets::random(b"two"));
        let (second_bytes, _) = written(&second);
        assert_eq!(
            second_bytes.len() as u64,
            contribution_len(first_bytes.len() as u64, false)
        );
        assert_ne!(bytes.len(), first_bytes.len());
    }
}
