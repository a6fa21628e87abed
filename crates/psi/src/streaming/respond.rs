//! The starter's response, re-masked block by block from a request read an element at a time.

use std::io::{Read, Write};

use lockstep_shard::spill::ExternalSort;
use lockstep_shard::{Control, Pool};

use super::{Budget, StreamingError, element_weight, in_blocks};
use crate::linkage::{Digest, DigestingReader};
use crate::{ELEMENT_LEN, Element, ElementReader, ElementWriter, Limits, Mode, PsiError, Starter};

/// What a whole request holds, checked before it is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestScan {
    /// Its mode (which may be written after its elements).
    pub mode: Mode,
    /// Its elements.
    pub elements: u64,
    /// The SHA-256 of its bytes: its second reading must give the same.
    pub digest: Digest,
}

/// Reads a whole request, checking every element's form and the bound as
/// [`Request::read`](crate::Request::read) does, without keeping them.
///
/// # Errors
/// As [`Request::read`](crate::Request::read).
///
/// # Panics
/// Never: a request read to its end has a mode.
pub fn scan_request(reader: impl Read, limits: Limits) -> Result<RequestScan, PsiError> {
    let mut request = ElementReader::request(DigestingReader::new(reader), limits)?;
    while request.next_element()?.is_some() {}
    if request.count() == 0 {
        return Err(PsiError::EmptySet("request's"));
    }
    Ok(RequestScan {
        mode: request
            .mode()
            .expect("invariant: a request read to its end has a mode"),
        elements: request.count(),
        digest: request.get_ref().digest(),
    })
}

/// Writes the starter's response to the request `request` reads again (within `limits`; which
/// [`scan_request`] found to be `scan`) to `out`: the bytes [`Starter::respond`] then `to_bytes` give, in request order,
/// or sorted by bytes (an external sort in `budget`) when size-only. Returns `out`.
///
/// Progress: one step per element.
///
/// # Errors
/// [`PsiError::ModeMismatch`] before any work if the scan's mode is not this starter's; as
/// [`Starter::respond`] for an element; [`StreamingError::Changed`] if `request` gives other
/// bytes than the scan read; [`StreamingError::Spill`], [`StreamingError::Write`].
///
/// # Panics
/// Never: a record of the size-only sort is an element this starter re-masked.
#[allow(clippy::too_many_arguments, reason = "one step's inputs, each needed")]
pub fn respond<R: Read, W: Write>(
    starter: &Starter,
    pool: &Pool,
    control: &Control,
    scan: RequestScan,
    request: R,
    limits: Limits,
    budget: &Budget<'_>,
    out: W,
) -> Result<W, StreamingError> {
    if scan.mode != starter.mode() {
        return Err(PsiError::ModeMismatch {
            request: scan.mode,
            starter: starter.mode(),
        }
        .into());
    }
    let mut request = ElementReader::request(DigestingReader::new(request), limits)?;
    let mut writer = ElementWriter::response(out)?;
    let mut sorted = match scan.mode {
        Mode::SizeOnly => Some(ExternalSort::<ELEMENT_LEN>::new(&budget.spill(1))?),
        Mode::Reveal => None,
    };
    let expected = usize::try_from(scan.elements).unwrap_or(usize::MAX);
    in_blocks(
        budget,
        expected,
        element_weight,
        || Ok(request.next_element()?),
        |first, block| {
            for element in starter.remask(pool, control, block, first)? {
                match &mut sorted {
                    Some(sort) => sort.push(pool, control, *element.as_bytes())?,
                    None => writer.push(&element)?,
                }
            }
            Ok(())
        },
    )?;
    if request.get_ref().digest() != scan.digest {
        return Err(StreamingError::Changed { what: "request" });
    }
    if let Some(sort) = sorted {
        for record in sort.finish(pool, control)? {
            let element = Element::from_slice(&record?)
                .expect("invariant: a sorted record is an element re-masked");
            writer.push(&element)?;
        }
    }
    Ok(writer.finish()?)
}

/// Copies a request's elements, checked as [`scan_request`] checks them, to `out` packed (33
/// bytes each, in request order: what [`Keyed::remask`](crate::party::Keyed::remask) takes), for
/// helpers elsewhere to re-mask a range each. Returns how many were copied.
///
/// # Errors
/// As [`scan_request`]; [`PsiError::ModeMismatch`] if the request's mode is not `mode` (found
/// at its end: its field may follow the elements), after which `out` holds elements of a
/// request this starter does not answer; [`StreamingError::Write`] if `out` fails.
///
/// # Panics
/// Never: a request read to its end has a mode.
pub fn unpack_request<W: Write>(
    reader: impl Read,
    limits: Limits,
    mode: Mode,
    mut out: W,
) -> Result<u64, StreamingError> {
    let mut request = ElementReader::request(reader, limits)?;
    while let Some(element) = request.next_element()? {
        out.write_all(element.as_bytes())
            .map_err(|e| StreamingError::Write(e.into()))?;
    }
    out.flush().map_err(|e| StreamingError::Write(e.into()))?;
    if request.count() == 0 {
        return Err(PsiError::EmptySet("request's").into());
    }
    let found = request
        .mode()
        .expect("invariant: a request read to its end has a mode");
    if found != mode {
        return Err(PsiError::ModeMismatch {
            request: found,
            starter: mode,
        }
        .into());
    }
    Ok(request.count())
}
