//! Writing a message of elements one element at a time, for steps that never hold them all:
//! the bytes [`Request::to_bytes`](super::Request::to_bytes),
//! [`Response::to_bytes`](super::Response::to_bytes) and a raw
//! [`ServerSetup::to_bytes`](super::ServerSetup::to_bytes) give for the same elements.
//!
//! The three messages carry their elements in one repeated `bytes` field, each element `tag,
//! 0x21, 33 bytes` (35 bytes), which protobuf lets a writer emit as they come: a request's
//! `reveal_intersection` (field 1, written only when true) first, then its elements (field 2);
//! a response's elements (field 1); a raw setup's `RawInfo` (field 1 of the oneof) whose length,
//! 35 bytes an element, is written before them, so a raw setup's writer is told its count.

use std::io::Write;

use super::types::Mode;
use crate::PsiError;
use crate::curve::{ELEMENT_LEN, Element};

/// An element's field on the wire: its tag byte, its length (33), its bytes.
const ELEMENT_FIELD_LEN: u64 = 2 + ELEMENT_LEN as u64;

/// An element's length as its one-byte varint.
#[allow(
    clippy::cast_possible_truncation,
    reason = "33, below 128 (checked at compile time): one varint byte"
)]
const ELEMENT_LEN_BYTE: u8 = {
    assert!(ELEMENT_LEN < 0x80);
    ELEMENT_LEN as u8
};

/// Why a streamed message could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The output refused the bytes (the writer takes no more after it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The elements are not what the message needs: a raw setup's out of order, or another
    /// count than its header declared.
    #[error(transparent)]
    Message(#[from] PsiError),
}

/// Which message a writer writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Request,
    Response,
    RawSetup,
}

/// Writes one message's elements as they come (see the module); [`finish`](Self::finish)
/// ends it. Dropping a writer before `finish` leaves a message cut short: write to a staged
/// file that is only put in place after `finish`.
#[derive(Debug)]
pub struct ElementWriter<W: Write> {
    out: W,
    kind: Kind,
    tag: u8,
    /// A raw setup's declared count.
    declared: Option<u64>,
    written: u64,
    /// A raw setup's last element (each must be at least the one before).
    last: Option<Element>,
    /// Set by a failed write: the message is cut, so no more is written and `finish` fails.
    broken: bool,
}

impl<W: Write> ElementWriter<W> {
    fn start(
        mut out: W,
        kind: Kind,
        tag: u8,
        head: &[u8],
        declared: Option<u64>,
    ) -> Result<Self, StreamError> {
        out.write_all(head)?;
        Ok(Self {
            out,
            kind,
            tag,
            declared,
            written: 0,
            last: None,
            broken: false,
        })
    }

    /// A request in `mode` (`psi_proto.Request`).
    ///
    /// # Errors
    /// [`StreamError::Io`].
    pub fn request(out: W, mode: Mode) -> Result<Self, StreamError> {
        let head: &[u8] = if mode == Mode::Reveal {
            &[0x08, 0x01]
        } else {
            &[]
        };
        Self::start(out, Kind::Request, 0x12, head, None)
    }

    /// A response (`psi_proto.Response`).
    ///
    /// # Errors
    /// [`StreamError::Io`].
    pub fn response(out: W) -> Result<Self, StreamError> {
        Self::start(out, Kind::Response, 0x0a, &[], None)
    }

    /// A raw setup (`psi_proto.ServerSetup` with `raw`) of `count` elements, to be pushed in
    /// ascending byte order.
    ///
    /// # Errors
    /// [`StreamError::Io`]; [`PsiError::InvalidSetup`] for a count whose message length a
    /// `u64` cannot hold.
    pub fn raw_setup(out: W, count: u64) -> Result<Self, StreamError> {
        let len = count.checked_mul(ELEMENT_FIELD_LEN).ok_or_else(|| {
            PsiError::InvalidSetup(format!(
                "a raw setup of {count} elements is too long to encode"
            ))
        })?;
        let mut head = vec![0x0a];
        prost::encoding::encode_varint(len, &mut head);
        Self::start(out, Kind::RawSetup, 0x0a, &head, Some(count))
    }

    /// Writes the next element.
    ///
    /// # Errors
    /// [`StreamError::Io`] (and on every later call, the message being cut); for a raw setup, [`PsiError::InvalidSetup`] for an element smaller
    /// than the one before or past the declared count (nothing written for it).
    pub fn push(&mut self, element: &Element) -> Result<(), StreamError> {
        self.check_whole()?;
        if self.kind == Kind::RawSetup {
            if let Some(last) = &self.last
                && last > element
            {
                return Err(PsiError::InvalidSetup(format!(
                    "raw elements are not sorted: element {} is smaller than element {}",
                    self.written,
                    self.written - 1
                ))
                .into());
            }
            if Some(self.written) == self.declared {
                return Err(self.miscounted(self.written + 1).into());
            }
        }
        let wrote = self
            .out
            .write_all(&[self.tag, ELEMENT_LEN_BYTE])
            .and_then(|()| self.out.write_all(element.as_bytes()));
        if let Err(error) = wrote {
            self.broken = true;
            return Err(error.into());
        }
        if self.kind == Kind::RawSetup {
            self.last = Some(*element);
        }
        self.written += 1;
        Ok(())
    }

    /// Refuses a writer whose output failed before.
    fn check_whole(&self) -> Result<(), StreamError> {
        if self.broken {
            return Err(std::io::Error::other("an earlier write of this message failed").into());
        }
        Ok(())
    }

    /// The elements written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Ends the message and returns the output, flushed.
    ///
    /// # Errors
    /// [`StreamError::Io`]; for a raw setup, [`PsiError::InvalidSetup`] if fewer elements
    /// than declared were pushed.
    pub fn finish(mut self) -> Result<W, StreamError> {
        self.check_whole()?;
        if let Some(declared) = self.declared
            && declared != self.written
        {
            return Err(self.miscounted(self.written).into());
        }
        self.out.flush()?;
        Ok(self.out)
    }

    fn miscounted(&self, found: u64) -> PsiError {
        PsiError::InvalidSetup(format!(
            "the raw setup declared {} elements, {found} were given",
            self.declared.unwrap_or(0)
        ))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::message::{Request, Response, ServerSetup};

    fn element(bytes: &[u8; 33]) -> Element {
        let mut b = *bytes;
        b[0] = 2 + (b[0] & 1);
        Element::from_slice(&b).unwrap()
    }

    fn streamed(
        mut writer: ElementWriter<Vec<u8>>,
        elements: &[Element],
    ) -> Result<Vec<u8>, StreamError> {
        for e in elements {
            writer.push(e)?;
        }
        writer.finish()
    }

    proptest! {
        #[test]
        fn streamed_messages_are_to_bytes_s(raw in proptest::collection::vec(any::<[u8; 33]>(), 0..300)) {
            let elements: Vec<Element> = raw.iter().map(element).collect();
            for mode in [Mode::Reveal, Mode::SizeOnly] {
                let request = Request { mode, elements: elements.clone() };
                let got = streamed(ElementWriter::request(Vec::new(), mode).unwrap(), &elements).unwrap();
                prop_assert_eq!(got, request.to_bytes());
            }
            let response = Response { elements: elements.clone() };
            let got = streamed(ElementWriter::response(Vec::new()).unwrap(), &elements).unwrap();
            prop_assert_eq!(got, response.to_bytes());
            let mut sorted = elements.clone();
            sorted.sort();
            let setup = ServerSetup::Raw(sorted.clone());
            let writer = ElementWriter::raw_setup(Vec::new(), sorted.len() as u64).unwrap();
            prop_assert_eq!(streamed(writer, &sorted).unwrap(), setup.to_bytes().unwrap());
        }
    }

    #[test]
    fn a_raw_setup_out_of_order_or_miscounted_is_refused() {
        let (a, b) = (element(&[2; 33]), element(&[3; 33]));
        let (low, high) = if a < b { (a, b) } else { (b, a) };
        let mut writer = ElementWriter::raw_setup(Vec::new(), 2).unwrap();
        writer.push(&high).unwrap();
        let error = writer.push(&low).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("raw elements are not sorted: element 1 is smaller than element 0"),
            "{error}"
        );
        assert_eq!(writer.written(), 1);
        let error = streamed(
            ElementWriter::raw_setup(Vec::new(), 1).unwrap(),
            &[low, high],
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("declared 1 elements, 2 were given"),
            "{error}"
        );
        let error = streamed(
            ElementWriter::raw_setup(Vec::new(), 3).unwrap(),
            &[low, high],
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("declared 3 elements, 2 were given"),
            "{error}"
        );
        // Equal elements are in order (a set of repeated values).
        streamed(
            ElementWriter::raw_setup(Vec::new(), 2).unwrap(),
            &[low, low],
        )
        .unwrap();
        assert!(matches!(
            ElementWriter::raw_setup(Vec::new(), u64::MAX),
            Err(StreamError::Message(PsiError::InvalidSetup(_)))
        ));
    }

    #[test]
    fn a_failing_output_is_an_io_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("no space left"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut writer = ElementWriter::response(Full).unwrap();
        let error = writer.push(&element(&[2; 33])).unwrap_err();
        assert!(matches!(error, StreamError::Io(_)), "{error}");
        assert_eq!(error.to_string(), "no space left");
        // The message is cut: nothing more is taken, and it does not finish.
        assert!(writer.push(&element(&[2; 33])).is_err());
        assert!(writer.finish().is_err());
        assert!(matches!(
            ElementWriter::request(Full, Mode::Reveal),
            Err(StreamError::Io(_))
        ));
    }
}
