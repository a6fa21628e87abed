//! The errors of the PSI engine.
//!
//! Messages name what is wrong in the engine's own terms (messages, elements, rates, counts),
//! never a command-line flag or a file: a front end adds those as context.

/// Which message a decoding error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// A starter's `ServerSetup`.
    Setup,
    /// A joiner's `Request`.
    Request,
    /// A starter's `Response`.
    Response,
}

impl std::fmt::Display for MessageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Setup => "setup",
            Self::Request => "request",
            Self::Response => "response",
        })
    }
}

/// Why an encoded curve point was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointError {
    /// Not 33 bytes long (every element is a 33-byte compressed SEC1 point).
    #[error("is {0} bytes long, not 33 (a compressed P-256 point)")]
    Length(u64),
    /// The first byte is 0x00: the encoding of the point at infinity.
    #[error("is the point at infinity")]
    Infinity,
    /// The first byte is neither 0x02 nor 0x03.
    #[error("starts with 0x{0:02x}, not 0x02 or 0x03 (compressed points only)")]
    Prefix(u8),
    /// The x coordinate is not below the field prime (a non-canonical encoding).
    #[error("has an x coordinate outside the field")]
    NonCanonical,
    /// No point of the curve has this x coordinate.
    #[error("is not on the P-256 curve")]
    NotOnCurve,
}

/// A false-positive rate as people write one: `1e-9`, `0.01`, `1.5`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rate(pub(crate) f64);

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x != 0.0 && x.is_finite() && x.abs() < 1e-3 {
            write!(f, "{x:e}")
        } else {
            write!(f, "{x}")
        }
    }
}

/// Everything that can go wrong in the PSI engine. Every variant names what is wrong; none is
/// a panic, and none hides a wrong answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PsiError {
    /// A key is zero or not below the group order n.
    #[error("the key is out of range: it must be a big-endian integer in [1, n) of P-256")]
    KeyOutOfRange,
    /// A key longer than 32 bytes after its leading zero bytes.
    #[error("the key is {0} bytes long after leading zeros; a P-256 key has at most 32")]
    KeyTooLong(usize),
    /// The key 1 or n - 1: masking with it publishes the hashed values (up to a sign).
    #[error(
        "the key is {0}, a weak key: masking with it would publish the hashed values themselves"
    )]
    WeakKey(&'static str),
    /// The operating system's random number generator failed.
    #[error("could not draw a random key: {0}")]
    Randomness(String),
    /// A false-positive rate outside (0, 1).
    #[error("the false-positive rate must be in (0, 1), got {}", Rate(*.0))]
    FalsePositiveRate(f64),
    /// The joiner count of a setup is zero.
    #[error("the joiner count must be at least 1")]
    JoinerCount,
    /// A GCS setup whose hash range, `max(joiner count, starter count) * joiner count / fpr`,
    /// does not fit OpenMined's signed 64-bit field.
    #[error(
        "a GCS setup of {elements} elements for {joiner_count} joiner elements at false-positive \
         rate {} needs a hash range beyond 2^63, which OpenMined's message cannot carry; the \
         smallest rate that works at this size is {}, and a raw or Bloom setup has no such limit",
        Rate(*.fpr), Rate(*.smallest_fpr)
    )]
    GcsTooLarge {
        /// max(joiner count, starter set size).
        elements: u64,
        /// The joiner count the rate is corrected by.
        joiner_count: u64,
        /// The false-positive rate asked for.
        fpr: f64,
        /// The smallest rate (two significant digits, rounded up) that fits.
        smallest_fpr: f64,
    },
    /// A GCS or Bloom setup too large to describe or to hold (the rate is too small for the
    /// set sizes).
    #[error(
        "a {format} setup of {elements} elements at corrected false-positive rate {} is too \
         large to build; use a larger rate or a raw setup",
        Rate(*.fpr)
    )]
    SetupTooLarge {
        /// `gcs` or `bloom`.
        format: &'static str,
        /// max(joiner count, starter set size).
        elements: u64,
        /// The corrected false-positive rate (the rate divided by the joiner count).
        fpr: f64,
    },
    /// An empty input set.
    #[error("the {0} set is empty")]
    EmptySet(&'static str),
    /// A message that is not a valid protobuf of its type.
    #[error("the {kind} message is not valid protobuf: {reason}")]
    Protobuf {
        /// The message.
        kind: MessageKind,
        /// The decoder's explanation.
        reason: String,
    },
    /// The bytes are a message of another type (told by their first fields).
    #[error("this is a {found} message, not a {expected}")]
    WrongMessage {
        /// The message asked for.
        expected: MessageKind,
        /// The message the bytes are.
        found: MessageKind,
    },
    /// A message with more elements than the caller allows.
    #[error("the {kind} message holds more than {limit} elements, the most allowed here")]
    TooManyElements {
        /// The message.
        kind: MessageKind,
        /// The limit.
        limit: u64,
    },
    /// Reading a message's bytes failed.
    #[error("could not read the {kind} message")]
    Read {
        /// The message.
        kind: MessageKind,
        /// The reader's error.
        #[source]
        source: std::io::Error,
    },
    /// An element of a message that is not a valid point.
    #[error("element {index} of the {kind} message {reason}")]
    Element {
        /// The message.
        kind: MessageKind,
        /// The element's index in the message.
        index: usize,
        /// What is wrong with it.
        reason: PointError,
    },
    /// A structurally invalid setup (unsorted raw elements, impossible GCS or Bloom parameters,
    /// a truncated Golomb code, no data structure at all).
    #[error("the setup message is invalid: {0}")]
    InvalidSetup(String),
    /// The request asks for the intersection where the starter answers size-only requests, or
    /// the other way round.
    #[error(
        "the request is {request}, but this starter answers {starter} requests only; both parties must agree on the mode"
    )]
    ModeMismatch {
        /// The request's mode.
        request: crate::Mode,
        /// The starter's mode.
        starter: crate::Mode,
    },
    /// A joiner in size-only mode asked for the intersection itself.
    #[error(
        "this joiner made a size-only request: the response reveals the intersection size only"
    )]
    SizeOnly,
    /// A response whose length differs from the request's.
    #[error("the response holds {response} elements but the request had {request}")]
    ResponseLength {
        /// Elements in the response.
        response: usize,
        /// Elements in the request.
        request: usize,
    },
    /// A request whose length differs from the joiner's element count.
    #[error("the request holds {request} elements but the joiner has {expected}")]
    RequestLength {
        /// Elements in the request.
        request: usize,
        /// The joiner's element count.
        expected: usize,
    },
    /// The intersection itself was asked of a response to a size-only request.
    #[error("the request was size-only: its response reveals the intersection size only")]
    SizeOnlyRequest,
    /// A response read without its request, too short to tell a size-only (sorted) response
    /// from a revealing one by its order.
    #[error(
        "a response of {0} elements cannot be told from a size-only response by its order \
         (8 are needed): the request is needed to read it"
    )]
    ResponseOrderUnknown(usize),
    /// A response sorted by bytes, read as if it kept the request's order.
    #[error(
        "the response is sorted by bytes: it answers a size-only request and reveals the intersection size only"
    )]
    ResponseSorted,
    /// The association table needs a raw setup.
    #[error("the association table needs a raw setup; this setup is {0}")]
    NotRaw(&'static str),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A worker panicked (a bug in lockstep): the run failed as a whole.
    #[error("a worker panicked at input position {position}: {message}")]
    WorkerPanic {
        /// The input position being processed.
        position: usize,
        /// The panic message.
        message: String,
    },
    /// A runtime failure of a kind the engine does not expect (the runtime's error is
    /// `non_exhaustive`).
    #[error("the parallel runtime failed: {0}")]
    Runtime(String),
    /// A backend failure that input cannot cause (OpenSSL refusing an allocation, say).
    #[error("the {backend} backend failed: {message}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Its message.
        message: String,
    },
}

impl PsiError {
    /// A stable code for the kind of failure, the same in every front end (the npm package's
    /// errors carry it as `code`):
    ///
    /// - `PSI_KEY`: a key that cannot be used (out of range, too long, weak);
    /// - `PSI_PARAMS`: setup parameters out of range (rate, joiner count);
    /// - `PSI_LIMIT`: a setup too large to build or carry, or a message with more elements than
    ///   the caller allows;
    /// - `PSI_INPUT`: the party's own records give nothing to work with;
    /// - `PSI_MESSAGE`: a message that is not what it claims (bad protobuf, another message's
    ///   type, an element off the curve, an invalid setup);
    /// - `PSI_ROUND`: a well-formed message that does not belong to this round (another mode,
    ///   another length, a size-only answer read for rows, a setup of another format);
    /// - `PSI_CANCELLED`: the run was cancelled;
    /// - `PSI_INTERNAL`: a failure input cannot cause (randomness, a worker's panic, the runtime,
    ///   a backend).
    pub fn code(&self) -> &'static str {
        match self {
            Self::KeyOutOfRange | Self::KeyTooLong(_) | Self::WeakKey(_) => "PSI_KEY",
            Self::FalsePositiveRate(_) | Self::JoinerCount => "PSI_PARAMS",
            Self::GcsTooLarge { .. }
            | Self::SetupTooLarge { .. }
            | Self::TooManyElements { .. } => "PSI_LIMIT",
            Self::EmptySet(_) => "PSI_INPUT",
            Self::Protobuf { .. }
            | Self::WrongMessage { .. }
            | Self::Read { .. }
            | Self::Element { .. }
            | Self::InvalidSetup(_) => "PSI_MESSAGE",
            Self::ModeMismatch { .. }
            | Self::SizeOnly
            | Self::ResponseLength { .. }
            | Self::RequestLength { .. }
            | Self::SizeOnlyRequest
            | Self::ResponseOrderUnknown(_)
            | Self::ResponseSorted
            | Self::NotRaw(_) => "PSI_ROUND",
            Self::Cancelled => "PSI_CANCELLED",
            Self::Randomness(_)
            | Self::WorkerPanic { .. }
            | Self::Runtime(_)
            | Self::Backend { .. } => "PSI_INTERNAL",
        }
    }
}

/// Maps a multiplication failure on a message's element to the engine's error.
pub(crate) fn element_error(
    kind: MessageKind,
    index: usize,
    error: crate::backend::CipherError,
) -> PsiError {
    match error {
        crate::backend::CipherError::Point(reason) => PsiError::Element {
            kind,
            index,
            reason,
        },
        crate::backend::CipherError::Backend(error) => error,
    }
}

impl From<lockstep_shard::Error<PsiError>> for PsiError {
    fn from(error: lockstep_shard::Error<PsiError>) -> Self {
        match error {
            lockstep_shard::Error::Task { source, .. } => source,
            lockstep_shard::Error::Panic { position, message } => {
                Self::WorkerPanic { position, message }
            }
            lockstep_shard::Error::Cancelled => Self::Cancelled,
            other => Self::Runtime(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rate;

    #[test]
    fn rates_print_as_people_write_them() {
        assert_eq!(Rate(1e-9).to_string(), "1e-9");
        assert_eq!(Rate(1.7e-9).to_string(), "1.7e-9");
        assert_eq!(Rate(0.01).to_string(), "0.01");
        assert_eq!(Rate(1.5).to_string(), "1.5");
        assert_eq!(Rate(0.0).to_string(), "0");
        assert_eq!(Rate(f64::NAN).to_string(), "NaN");
    }
}
