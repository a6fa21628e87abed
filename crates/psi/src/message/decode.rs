//! Streaming decoders of the three messages, for bytes from the other party.
//!
//! prost decodes a repeated `bytes` field into one heap vector per element (some 40 bytes of
//! bookkeeping whatever the element's length): a 90 MB request of 30 million one-byte elements
//! took 1.7 GB before its first element was looked at. These decoders read the wire format from
//! any [`Read`] instead and validate each element as it arrives, so a bad element fails after
//! the bytes before it and nothing more; elements go into one `Vec<Element>` of 33 bytes each
//! (35 on the wire), so memory stays below twice the input's size even as the vector grows. A
//! [`Limits`] caps the element count while decoding.
//!
//! Protobuf semantics are prost's (unknown fields skipped, the last value of a scalar wins),
//! with two deliberate refusals: a setup holding two data structures (protobuf would merge
//! them), and bytes whose first fields show they are a message of another type
//! ([`PsiError::WrongMessage`]), which would otherwise decode as an empty or garbled message.
//! Encoding stays prost's (`encode`).

use std::io::{BufRead, BufReader, Read};

use super::scanner::{ScanError, Scanner, WireType};
use super::types::{Bloom, Gcs, Mode, Request, Response, ServerSetup};
use crate::curve::{ELEMENT_LEN, Element};
use crate::error::MessageKind;
use crate::{PsiError, bloom, gcs};

/// The bytes one element takes in a canonical encoding: key, length and the point.
const ELEMENT_WIRE_LEN: u64 = 2 + ELEMENT_LEN as u64;

/// Room for everything but the elements in a canonical encoding (a request's mode, a raw
/// setup's enclosing key and length), with margin.
const MESSAGE_OVERHEAD: u64 = 64;

/// Bounds on what a decoder accepts from the other party.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    max_elements: Option<u64>,
}

impl Limits {
    /// No bound beyond the input's own length.
    pub const NONE: Self = Self { max_elements: None };

    /// At most `count` elements (in a request, a response or a raw setup); decoding fails as
    /// soon as one more arrives.
    pub fn max_elements(count: u64) -> Self {
        Self {
            max_elements: Some(count),
        }
    }

    /// The element bound, if any.
    pub fn element_limit(&self) -> Option<u64> {
        self.max_elements
    }

    /// The most bytes a request, response or raw setup within these limits takes as every
    /// OpenMined implementation encodes it (35 bytes per element, with room for the rest):
    /// a front end can refuse a larger file before reading it. `None` without an element bound.
    pub fn max_encoded_len(&self) -> Option<u64> {
        self.max_elements.map(|count| {
            count
                .saturating_mul(ELEMENT_WIRE_LEN)
                .saturating_add(MESSAGE_OVERHEAD)
        })
    }
}

/// The type of message `prefix` (the first bytes of a message) is, when its first fields say so
/// unambiguously for the canonical encodings OpenMined's implementations write; `None` when in
/// doubt. A valid message of one type is never taken for another.
pub(crate) fn sniff(prefix: &[u8]) -> Option<MessageKind> {
    let (&first, rest) = prefix.split_first()?;
    // The byte after a length prefix, and the length.
    let after_length = |bytes: &[u8]| -> Option<(u64, u8)> {
        let mut len = 0u64;
        for (i, &b) in bytes.iter().enumerate().take(9) {
            len |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return bytes.get(i + 1).map(|&next| (len, next));
            }
        }
        None
    };
    let point = |b: u8| b == 0x02 || b == 0x03;
    match first {
        // Request field 1 (reveal_intersection, a varint): only a request has a varint field 1.
        0x08 => Some(MessageKind::Request),
        // Field 1, length-delimited: a response's element or a setup's raw data structure.
        0x0a => match after_length(rest)? {
            (33, next) if point(next) => Some(MessageKind::Response),
            (_, 0x0a) => Some(MessageKind::Setup),
            _ => None,
        },
        // Field 2, length-delimited: a request's element or a setup's GCS data structure.
        0x12 => match after_length(rest)? {
            (33, next) if point(next) => Some(MessageKind::Request),
            (len, 0x08 | 0x10 | 0x1a) if len != 33 => Some(MessageKind::Setup),
            _ => None,
        },
        // Field 3, length-delimited: a setup's Bloom filter.
        0x1a => match after_length(rest)? {
            (_, 0x08 | 0x12) => Some(MessageKind::Setup),
            _ => None,
        },
        _ => None,
    }
}

/// One message being decoded: its kind, for errors, and its element bound.
struct Decoder<R> {
    scanner: Scanner<R>,
    kind: MessageKind,
    limits: Limits,
}

impl<R: BufRead> Decoder<R> {
    fn new(reader: R, kind: MessageKind, limits: Limits) -> Result<Self, PsiError> {
        let mut decoder = Self {
            scanner: Scanner::new(reader),
            kind,
            limits,
        };
        let prefix = decoder.scanner.peek().map_err(|e| scan_error(kind, e))?;
        match sniff(prefix) {
            Some(found) if found != kind => Err(PsiError::WrongMessage {
                expected: kind,
                found,
            }),
            _ => Ok(decoder),
        }
    }

    fn error(&self, error: ScanError) -> PsiError {
        scan_error(self.kind, error)
    }

    fn key(&mut self, end: Option<u64>) -> Result<Option<(u32, WireType)>, PsiError> {
        self.scanner.key(end).map_err(|e| self.error(e))
    }

    fn varint(&mut self) -> Result<u64, PsiError> {
        self.scanner.varint().map_err(|e| self.error(e))
    }

    fn length(&mut self, end: Option<u64>) -> Result<u64, PsiError> {
        self.scanner.length(end).map_err(|e| self.error(e))
    }

    fn skip(&mut self, field: u32, wire_type: WireType, end: Option<u64>) -> Result<(), PsiError> {
        self.scanner
            .skip(field, wire_type, end)
            .map_err(|e| self.error(e))
    }

    fn bytes(&mut self, end: Option<u64>) -> Result<Vec<u8>, PsiError> {
        let len = self.length(end)?;
        self.scanner.read_vec(len).map_err(|e| self.error(e))
    }

    fn expect_wire_type(
        &self,
        field: u32,
        found: WireType,
        expected: WireType,
    ) -> Result<(), PsiError> {
        if found == expected {
            return Ok(());
        }
        Err(PsiError::Protobuf {
            kind: self.kind,
            reason: format!(
                "field {field} is {found}, not {expected}, at byte {}",
                self.scanner.offset()
            ),
        })
    }

    /// Reads element `index` (a length-delimited field's payload), checking the element bound,
    /// its length and its prefix before anything else is read.
    fn element_at(&mut self, index: usize, end: Option<u64>) -> Result<Element, PsiError> {
        if let Some(limit) = self.limits.max_elements
            && index as u64 >= limit
        {
            return Err(PsiError::TooManyElements {
                kind: self.kind,
                limit,
            });
        }
        let len = self.length(end)?;
        let element_error = |reason| PsiError::Element {
            kind: self.kind,
            index,
            reason,
        };
        if len != ELEMENT_LEN as u64 {
            return Err(element_error(crate::PointError::Length(len)));
        }
        let mut bytes = [0u8; ELEMENT_LEN];
        self.scanner
            .read_exact(&mut bytes)
            .map_err(|e| self.error(e))?;
        Element::from_slice(&bytes).map_err(element_error)
    }
}

/// A request's or response's elements decoded one at a time, by the rules and bounds of
/// [`Request::read`] and [`Response::read`]: what a message larger than memory is read with.
///
/// Elements come out in message order, each checked (length, prefix, the element bound) as it
/// is read. A request's mode is known only at the end ([`mode`](Self::mode)): its field may
/// follow the elements.
pub struct ElementReader<R: Read> {
    decoder: Decoder<BufReader<R>>,
    /// The elements' field: 2 in a request, 1 in a response.
    field: u32,
    read: u64,
    reveal: bool,
    ended: bool,
}

impl<R: Read> ElementReader<R> {
    /// Starts decoding a request.
    ///
    /// # Errors
    /// [`PsiError::WrongMessage`] for another message; [`PsiError::Read`] if `reader` fails.
    pub fn request(reader: R, limits: Limits) -> Result<Self, PsiError> {
        Self::new(reader, MessageKind::Request, 2, limits)
    }

    /// Starts decoding a response.
    ///
    /// # Errors
    /// As [`request`](Self::request).
    pub fn response(reader: R, limits: Limits) -> Result<Self, PsiError> {
        Self::new(reader, MessageKind::Response, 1, limits)
    }

    fn new(reader: R, kind: MessageKind, field: u32, limits: Limits) -> Result<Self, PsiError> {
        Ok(Self {
            decoder: Decoder::new(BufReader::with_capacity(1 << 16, reader), kind, limits)?,
            field,
            read: 0,
            reveal: false,
            ended: false,
        })
    }

    /// The next element, `None` after the last.
    ///
    /// # Errors
    /// As [`Request::read`] and [`Response::read`], for the bytes read so far; nothing more is
    /// read after an error.
    pub fn next_element(&mut self) -> Result<Option<Element>, PsiError> {
        if self.ended {
            return Ok(None);
        }
        let next = self.advance();
        if !matches!(next, Ok(Some(_))) {
            self.ended = true;
        }
        next
    }

    fn advance(&mut self) -> Result<Option<Element>, PsiError> {
        let d = &mut self.decoder;
        while let Some((field, wire_type)) = d.key(None)? {
            if field == self.field {
                d.expect_wire_type(field, wire_type, WireType::Len)?;
                let index =
                    usize::try_from(self.read).expect("invariant: fewer elements than usize holds");
                let element = d.element_at(index, None)?;
                self.read += 1;
                return Ok(Some(element));
            }
            if d.kind == MessageKind::Request && field == 1 {
                d.expect_wire_type(field, wire_type, WireType::Varint)?;
                self.reveal = d.varint()? != 0;
            } else {
                d.skip(field, wire_type, None)?;
            }
        }
        Ok(None)
    }

    /// The elements read so far.
    pub fn count(&self) -> u64 {
        self.read
    }

    /// The reader the message is read from (some of its bytes may be read ahead).
    pub fn get_ref(&self) -> &R {
        self.decoder.scanner.get_ref().get_ref()
    }

    /// A request's mode, once every element was read (`None` before the end, and for a
    /// response).
    pub fn mode(&self) -> Option<Mode> {
        (self.ended && self.decoder.kind == MessageKind::Request).then_some(if self.reveal {
            Mode::Reveal
        } else {
            Mode::SizeOnly
        })
    }
}

fn scan_error(kind: MessageKind, error: ScanError) -> PsiError {
    match error {
        ScanError::Io(source) => PsiError::Read { kind, source },
        ScanError::Malformed(reason) => PsiError::Protobuf { kind, reason },
    }
}

/// Decodes a request (see the module documentation for what is refused).
pub(crate) fn request(reader: impl Read, limits: Limits) -> Result<Request, PsiError> {
    let request = request_or_empty(reader, limits)?;
    if request.elements.is_empty() {
        return Err(PsiError::EmptySet("request's"));
    }
    Ok(request)
}

/// Decodes a request that may have no elements, as OpenMined's API makes one for an empty set
/// ([`compat`](crate::compat)).
pub(crate) fn request_or_empty(reader: impl Read, limits: Limits) -> Result<Request, PsiError> {
    let mut reader = ElementReader::request(reader, limits)?;
    let mut elements = Vec::new();
    while let Some(element) = reader.next_element()? {
        elements.push(element);
    }
    let mode = reader
        .mode()
        .expect("invariant: a request read to its end has a mode");
    Ok(Request { mode, elements })
}

/// Decodes a response.
pub(crate) fn response(reader: impl Read, limits: Limits) -> Result<Response, PsiError> {
    let mut reader = ElementReader::response(reader, limits)?;
    let mut elements = Vec::new();
    while let Some(element) = reader.next_element()? {
        elements.push(element);
    }
    Ok(Response { elements })
}

/// Decodes a setup (see the module documentation for what is refused).
pub(crate) fn setup(reader: impl Read, limits: Limits) -> Result<ServerSetup, PsiError> {
    match StreamedSetup::read(reader, limits)? {
        StreamedSetup::Raw(mut raw) => {
            let mut elements = Vec::new();
            while let Some(element) = raw.next_element()? {
                elements.push(element);
            }
            Ok(ServerSetup::Raw(elements))
        }
        StreamedSetup::Whole(setup) => Ok(setup),
    }
}

/// A setup as it is read for a step past memory: a raw setup's elements one at a time, a GCS or
/// Bloom setup whole (it is its code or filter, held in memory either way).
pub enum StreamedSetup<R: Read> {
    /// A raw setup, its elements still to be read.
    Raw(RawSetupReader<R>),
    /// A GCS or Bloom setup, read to its end and validated.
    Whole(ServerSetup),
}

impl<R: Read> StreamedSetup<R> {
    /// Reads a setup up to a raw setup's first element, or a GCS or Bloom setup whole, by the
    /// rules and bounds of [`ServerSetup::read`].
    ///
    /// # Errors
    /// As [`ServerSetup::read`], for the bytes read so far.
    pub fn read(reader: R, limits: Limits) -> Result<Self, PsiError> {
        let mut d = Decoder::new(
            BufReader::with_capacity(1 << 16, reader),
            MessageKind::Setup,
            limits,
        )?;
        let mut setup = None;
        while let Some((field, wire_type)) = d.key(None)? {
            if !(1..=3).contains(&field) {
                d.skip(field, wire_type, None)?;
                continue;
            }
            d.expect_wire_type(field, wire_type, WireType::Len)?;
            if setup.is_some() {
                return Err(second_structure());
            }
            let end = structure_end(&mut d)?;
            setup = Some(match field {
                1 => {
                    return Ok(Self::Raw(RawSetupReader {
                        decoder: d,
                        end,
                        read: 0,
                        previous: None,
                        ended: false,
                    }));
                }
                2 => gcs_info(&mut d, end)?,
                _ => bloom_info(&mut d, end)?,
            });
        }
        let setup = setup.ok_or_else(|| {
            PsiError::InvalidSetup(
                "it holds no data structure (raw, gcs or bloom_filter)".to_owned(),
            )
        })?;
        setup.validate()?;
        Ok(Self::Whole(setup))
    }
}

fn second_structure() -> PsiError {
    PsiError::InvalidSetup("it holds more than one data structure".to_owned())
}

/// Where a data structure whose key was just read ends.
fn structure_end<R: BufRead>(d: &mut Decoder<R>) -> Result<u64, PsiError> {
    let len = d.length(None)?;
    d.scanner
        .offset()
        .checked_add(len)
        .ok_or_else(|| PsiError::Protobuf {
            kind: MessageKind::Setup,
            reason: format!(
                "a data structure of {len} bytes runs past any input, at byte {}",
                d.scanner.offset()
            ),
        })
}

/// A raw setup's elements, read one at a time in message order, each checked (length, prefix,
/// the element bound, not below the one before it); at their end the rest of the message is
/// read, refusing a second data structure.
pub struct RawSetupReader<R: Read> {
    decoder: Decoder<BufReader<R>>,
    end: u64,
    read: u64,
    previous: Option<Element>,
    ended: bool,
}

impl<R: Read> RawSetupReader<R> {
    /// The next element, `None` after the last (the whole message read and checked).
    ///
    /// # Errors
    /// As [`ServerSetup::read`]; nothing more is read after an error.
    pub fn next_element(&mut self) -> Result<Option<Element>, PsiError> {
        if self.ended {
            return Ok(None);
        }
        let next = self.advance();
        if !matches!(next, Ok(Some(_))) {
            self.ended = true;
        }
        next
    }

    fn advance(&mut self) -> Result<Option<Element>, PsiError> {
        let d = &mut self.decoder;
        while let Some((field, wire_type)) = d.key(Some(self.end))? {
            if field != 1 {
                d.skip(field, wire_type, Some(self.end))?;
                continue;
            }
            d.expect_wire_type(field, wire_type, WireType::Len)?;
            let index =
                usize::try_from(self.read).expect("invariant: fewer elements than usize holds");
            let element = d.element_at(index, Some(self.end))?;
            if self.previous.is_some_and(|previous| element < previous) {
                return Err(PsiError::InvalidSetup(format!(
                    "raw elements are not sorted: element {index} is smaller than element {}",
                    index - 1
                )));
            }
            self.previous = Some(element);
            self.read += 1;
            return Ok(Some(element));
        }
        // The rest of the message: unknown fields, and no second data structure.
        while let Some((field, wire_type)) = d.key(None)? {
            if (1..=3).contains(&field) {
                d.expect_wire_type(field, wire_type, WireType::Len)?;
                return Err(second_structure());
            }
            d.skip(field, wire_type, None)?;
        }
        Ok(None)
    }

    /// The elements read so far.
    pub fn count(&self) -> u64 {
        self.read
    }

    /// The reader the setup is read from (some of its bytes may be read ahead).
    pub fn get_ref(&self) -> &R {
        self.decoder.scanner.get_ref().get_ref()
    }
}

fn gcs_info<R: BufRead>(d: &mut Decoder<R>, end: u64) -> Result<ServerSetup, PsiError> {
    let (mut div, mut hash_range, mut bits) = (0i32, 0i64, Vec::new());
    while let Some((field, wire_type)) = d.key(Some(end))? {
        match field {
            // int32 and int64 take a varint's low bits, as prost (and C++) read them.
            #[allow(clippy::cast_possible_truncation, reason = "protobuf's int32 decoding")]
            1 => {
                d.expect_wire_type(field, wire_type, WireType::Varint)?;
                div = d.varint()? as i32;
            }
            #[allow(clippy::cast_possible_wrap, reason = "protobuf's int64 decoding")]
            2 => {
                d.expect_wire_type(field, wire_type, WireType::Varint)?;
                hash_range = d.varint()? as i64;
            }
            3 => {
                d.expect_wire_type(field, wire_type, WireType::Len)?;
                bits = d.bytes(Some(end))?;
            }
            _ => d.skip(field, wire_type, Some(end))?,
        }
    }
    Ok(ServerSetup::Gcs(Gcs {
        div: u32::try_from(div).map_err(|_| {
            PsiError::InvalidSetup(format!(
                "the GCS divisor exponent is {div}, outside 0..={}",
                gcs::MAX_DIV
            ))
        })?,
        hash_range: u64::try_from(hash_range).map_err(|_| {
            PsiError::InvalidSetup(format!(
                "the GCS hash range is {hash_range}; it must be in 1..2^63"
            ))
        })?,
        bits,
    }))
}

fn bloom_info<R: BufRead>(d: &mut Decoder<R>, end: u64) -> Result<ServerSetup, PsiError> {
    let (mut hash_functions, mut bits) = (0i32, Vec::new());
    while let Some((field, wire_type)) = d.key(Some(end))? {
        match field {
            #[allow(clippy::cast_possible_truncation, reason = "protobuf's int32 decoding")]
            1 => {
                d.expect_wire_type(field, wire_type, WireType::Varint)?;
                hash_functions = d.varint()? as i32;
            }
            2 => {
                d.expect_wire_type(field, wire_type, WireType::Len)?;
                let len = d.length(Some(end))?;
                // Refused before a byte of it is read.
                if len > bloom::MAX_BYTES {
                    return Err(PsiError::InvalidSetup(format!(
                        "the Bloom filter has {len} bytes, more than {}",
                        bloom::MAX_BYTES
                    )));
                }
                bits = d.scanner.read_vec(len).map_err(|e| d.error(e))?;
            }
            _ => d.skip(field, wire_type, Some(end))?,
        }
    }
    Ok(ServerSetup::Bloom(Bloom {
        num_hash_functions: u32::try_from(hash_functions).map_err(|_| {
            PsiError::InvalidSetup(format!(
                "the Bloom filter has {hash_functions} hash functions, outside 1..={}",
                bloom::MAX_HASH_FUNCTIONS
            ))
        })?,
        bits,
    }))
}

impl ServerSetup {
    /// Decodes and validates a setup message.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PsiError> {
        Self::read(bytes, Limits::NONE)
    }

    /// Decodes and validates a setup message from `reader`, streaming: raw elements are checked
    /// (length, prefix, order, count against `limits`) as they arrive.
    ///
    /// # Errors
    /// [`PsiError::Protobuf`] for bytes that are not a `ServerSetup`; [`PsiError::WrongMessage`]
    /// for a request or response; [`PsiError::Element`] for a raw element that is not a
    /// compressed point; [`PsiError::TooManyElements`]; [`PsiError::InvalidSetup`] for a setup
    /// with no data structure or two, unsorted raw elements, or GCS/Bloom parameters out of
    /// range; [`PsiError::Read`] if `reader` fails.
    pub fn read(reader: impl Read, limits: Limits) -> Result<Self, PsiError> {
        setup(reader, limits)
    }
}

impl Request {
    /// Decodes and validates a request.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PsiError> {
        Self::read(bytes, Limits::NONE)
    }

    /// Decodes and validates a request from `reader`, streaming: each element is checked
    /// (count against `limits`, length, prefix) as it arrives.
    ///
    /// # Errors
    /// [`PsiError::Protobuf`] for bytes that are not a `Request`; [`PsiError::WrongMessage`] for
    /// a setup or response; [`PsiError::Element`] for an element that is not a 33-byte
    /// compressed point; [`PsiError::TooManyElements`]; [`PsiError::EmptySet`] for a request
    /// without elements; [`PsiError::Read`] if `reader` fails.
    pub fn read(reader: impl Read, limits: Limits) -> Result<Self, PsiError> {
        request(reader, limits)
    }
}

impl Response {
    /// Decodes and validates a response.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PsiError> {
        Self::read(bytes, Limits::NONE)
    }

    /// Decodes and validates a response from `reader`, streaming as [`Request::read`] does.
    ///
    /// # Errors
    /// [`PsiError::Protobuf`] for bytes that are not a `Response`; [`PsiError::WrongMessage`]
    /// for a setup or request; [`PsiError::Element`] for an element that is not a 33-byte
    /// compressed point; [`PsiError::TooManyElements`]; [`PsiError::Read`] if `reader` fails.
    pub fn read(reader: impl Read, limits: Limits) -> Result<Self, PsiError> {
        response(reader, limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that fails the test if more than `budget` bytes are read from it.
    struct Budget<R> {
        inner: R,
        budget: usize,
    }

    impl<R: Read> Read for Budget<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.budget = self
                .budget
                .checked_sub(n)
                .expect("the decoder read past the bad element");
            Ok(n)
        }
    }

    #[test]
    fn a_bad_first_element_fails_without_reading_the_rest() {
        // A request of one-byte elements, endless: element 0 is refused at once.
        let endless = [0x12u8, 0x01, 0x02].into_iter().cycle();
        let reader = Budget {
            inner: ReaderOf(endless),
            budget: 1 << 17,
        };
        let err = request(reader, Limits::NONE).unwrap_err();
        assert!(
            matches!(
                err,
                PsiError::Element {
                    index: 0,
                    reason: crate::PointError::Length(1),
                    ..
                }
            ),
            "{err}"
        );
    }

    struct ReaderOf<I>(I);

    impl<I: Iterator<Item = u8>> Read for ReaderOf<I> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let mut n = 0;
            for slot in buf.iter_mut() {
                match self.0.next() {
                    Some(b) => *slot = b,
                    None => break,
                }
                n += 1;
            }
            Ok(n)
        }
    }

    fn element_bytes(i: u8) -> [u8; 33] {
        let mut e = [2u8; 33];
        e[32] = i;
        e
    }

    fn encoded_request(count: u8) -> Vec<u8> {
        let mut out = vec![0x08, 0x01];
        for i in 0..count {
            out.extend([0x12, 33]);
            out.extend(element_bytes(i));
        }
        out
    }

    #[test]
    fn the_element_limit_is_checked_as_elements_arrive() {
        let bytes = encoded_request(5);
        assert_eq!(
            request(&bytes[..], Limits::max_elements(5))
                .unwrap()
                .elements
                .len(),
            5
        );
        let err = request(&bytes[..], Limits::max_elements(4)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the request message holds more than 4 elements, the most allowed here"
        );
        assert!(bytes.len() as u64 <= Limits::max_elements(5).max_encoded_len().unwrap());
        assert_eq!(Limits::NONE.max_encoded_len(), None);
    }

    #[test]
    fn messages_of_another_type_are_named() {
        let request_bytes = encoded_request(3);
        let mut size_only = request_bytes.clone();
        size_only.drain(..2);
        let mut response_bytes = Vec::new();
        for i in 0..3 {
            response_bytes.extend([0x0a, 33]);
            response_bytes.extend(element_bytes(i));
        }
        let mut raw = vec![0x0a, 35 * 2];
        for i in 0..2 {
            raw.extend([0x0a, 33]);
            raw.extend(element_bytes(i));
        }
        let gcs_setup = [0x12, 4, 0x08, 3, 0x10, 5];
        let bloom_setup = [0x1a, 3, 0x12, 1, 0xff];
        let cases: [(&[u8], MessageKind); 6] = [
            (&request_bytes, MessageKind::Request),
            (&size_only, MessageKind::Request),
            (&response_bytes, MessageKind::Response),
            (&raw, MessageKind::Setup),
            (&gcs_setup, MessageKind::Setup),
            (&bloom_setup, MessageKind::Setup),
        ];
        for (bytes, kind) in cases {
            assert_eq!(sniff(bytes), Some(kind), "{bytes:02x?}");
            for expected in [
                MessageKind::Request,
                MessageKind::Response,
                MessageKind::Setup,
            ] {
                let result = match expected {
                    MessageKind::Request => request(bytes, Limits::NONE).map(drop),
                    MessageKind::Response => response(bytes, Limits::NONE).map(drop),
                    MessageKind::Setup => setup(bytes, Limits::NONE).map(drop),
                };
                if expected == kind {
                    // Bloom's test filter has 0 hash functions: invalid, but not for its type.
                    assert!(
                        !matches!(result, Err(PsiError::WrongMessage { .. })),
                        "{kind} read as {expected}"
                    );
                } else {
                    let err = result.unwrap_err();
                    assert_eq!(
                        err.to_string(),
                        format!("this is a {kind} message, not a {expected}"),
                    );
                }
            }
        }
        // In doubt (an empty message, unknown leading fields): no verdict.
        assert_eq!(sniff(&[]), None);
        assert_eq!(sniff(&[0x48, 0x01]), None);
    }

    #[test]
    fn a_setup_holds_one_data_structure() {
        let gcs_setup = [0x12, 4, 0x08, 3, 0x10, 5];
        let twice = [&gcs_setup[..], &gcs_setup[..]].concat();
        let err = setup(&twice[..], Limits::NONE).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the setup message is invalid: it holds more than one data structure"
        );
    }

    #[test]
    fn unsorted_raw_elements_fail_where_they_are_seen() {
        let mut raw = vec![0x0a, 35 * 3];
        for i in [1, 0, 2] {
            raw.extend([0x0a, 33]);
            raw.extend(element_bytes(i));
        }
        let err = setup(&raw[..], Limits::NONE).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the setup message is invalid: raw elements are not sorted: element 1 is smaller than element 0"
        );
    }

    /// What prost's decoder (the one these replaced) made of `bytes`, validated the same way.
    mod prost_reading {
        use prost::Message as _;

        use crate::curve::Element;
        use crate::message::proto as wire;
        use crate::message::{Bloom, Gcs, Mode, Request, Response, ServerSetup};

        fn elements(raw: Vec<Vec<u8>>) -> Option<Vec<Element>> {
            raw.iter().map(|e| Element::from_slice(e).ok()).collect()
        }

        pub(super) fn request(bytes: &[u8]) -> Option<Request> {
            let m = wire::Request::decode(bytes).ok()?;
            let elements = elements(m.encrypted_elements)?;
            (!elements.is_empty()).then_some(Request {
                mode: if m.reveal_intersection {
                    Mode::Reveal
                } else {
                    Mode::SizeOnly
                },
                elements,
            })
        }

        pub(super) fn response(bytes: &[u8]) -> Option<Response> {
            let m = wire::Response::decode(bytes).ok()?;
            Some(Response {
                elements: elements(m.encrypted_elements)?,
            })
        }

        pub(super) fn setup(bytes: &[u8]) -> Option<ServerSetup> {
            let setup = match wire::ServerSetup::decode(bytes).ok()?.data_structure? {
                wire::DataStructure::Raw(r) => ServerSetup::Raw(elements(r.encrypted_elements)?),
                wire::DataStructure::Gcs(g) => ServerSetup::Gcs(Gcs {
                    div: u32::try_from(g.div).ok()?,
                    hash_range: u64::try_from(g.hash_range).ok()?,
                    bits: g.bits,
                }),
                wire::DataStructure::BloomFilter(b) => ServerSetup::Bloom(Bloom {
                    num_hash_functions: u32::try_from(b.num_hash_functions).ok()?,
                    bits: b.bits,
                }),
            };
            setup.validate().ok()?;
            Some(setup)
        }
    }

    /// Our result against prost's: equal, or one of the documented refusals.
    fn agrees<T: PartialEq + std::fmt::Debug>(ours: Result<T, PsiError>, theirs: Option<T>) {
        match (ours, theirs) {
            (Ok(o), Some(t)) => assert_eq!(o, t),
            (Err(PsiError::WrongMessage { .. }), _) | (Err(_), None) => {}
            (Err(PsiError::InvalidSetup(reason)), Some(_))
                if reason.contains("more than one data structure") => {}
            (ours, theirs) => panic!("ours {ours:?}, prost's {theirs:?}"),
        }
    }

    fn element_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (prop::sample::select(vec![2u8, 3]), prop::array::uniform32(any::<u8>()))
                .prop_map(|(p, x)| [&[p][..], &x[..]].concat()),
            1 => proptest::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        #[test]
        fn structured_messages_decode_as_prost_decodes_them(
            elements in proptest::collection::vec(element_strategy(), 0..12),
            reveal in proptest::prelude::any::<bool>(),
            div in proptest::prelude::any::<i32>(),
            range in proptest::prelude::any::<i64>(),
            bits in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
            which in 0u8..3,
        ) {
            use prost::Message as _;
            let bytes = crate::message::proto::Request {
                reveal_intersection: reveal,
                encrypted_elements: elements.clone(),
            }
            .encode_to_vec();
            agrees(request(&bytes[..], Limits::NONE), prost_reading::request(&bytes));
            let bytes = crate::message::proto::Response { encrypted_elements: elements.clone() }
                .encode_to_vec();
            agrees(response(&bytes[..], Limits::NONE), prost_reading::response(&bytes));
            let mut sorted = elements.clone();
            sorted.sort();
            let data = match which {
                0 => crate::message::proto::DataStructure::Raw(crate::message::proto::RawInfo {
                    encrypted_elements: sorted,
                }),
                1 => crate::message::proto::DataStructure::Gcs(crate::message::proto::GcsInfo {
                    div: div % 70,
                    hash_range: range,
                    bits,
                }),
                _ => crate::message::proto::DataStructure::BloomFilter(crate::message::proto::BloomFilterInfo {
                    num_hash_functions: div % 1200,
                    bits,
                }),
            };
            let bytes = crate::message::proto::ServerSetup { data_structure: Some(data) }.encode_to_vec();
            agrees(setup(&bytes[..], Limits::NONE), prost_reading::setup(&bytes));
        }

        #[test]
        fn arbitrary_bytes_decode_as_prost_decodes_them(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        ) {
            agrees(request(&bytes[..], Limits::NONE), prost_reading::request(&bytes));
            agrees(response(&bytes[..], Limits::NONE), prost_reading::response(&bytes));
            agrees(setup(&bytes[..], Limits::NONE), prost_reading::setup(&bytes));
        }
    }

    #[test]
    fn a_data_structure_longer_than_any_input_is_malformed() {
        // Found in review: 0a + a varint of 2^64 - 1 overflowed the end offset.
        let bytes = [
            0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        let err = setup(&bytes[..], Limits::NONE).unwrap_err();
        assert!(err.to_string().contains("runs past any input"), "{err}");
        let bytes = [
            0x12, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x08,
        ];
        assert!(setup(&bytes[..], Limits::NONE).is_err());
    }

    #[test]
    fn a_huge_bloom_filter_is_refused_before_reading() {
        // A filter of 2^45 bytes declared, its bits field of 2^41 + 1 bytes.
        let mut bytes = vec![0x1a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08];
        bytes.extend([0x08, 0x01, 0x12, 0x81, 0x80, 0x80, 0x80, 0x80, 0x40]);
        let err = setup(&bytes[..], Limits::NONE).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the setup message is invalid: the Bloom filter has 2199023255553 bytes, more than 1099511627776"
        );
    }
}
