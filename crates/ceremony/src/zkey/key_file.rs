//! A `.zkey` read section by section for proving, for a key larger than memory: opening reads
//! and checks sections 1-3 (the header and IC) and the contributions, checks section 4's
//! entries a block at a time and sections 5-9's sizes; the prover then reads each of A, B1, B2, C and H a chunk at a
//! time, each chunk's points checked as a whole read checks them.
//!
//! Memory: the opened key holds its header and IC; section 4 is checked when opened and read
//! again a block of 4,096 entries at a time; a chunk of `n` points adds `n` points.

use std::cell::RefCell;
use std::io::{Read, Seek};
use std::ops::Range;

use blstrs::{G1Affine, G2Affine};
use lockstep_shard::{Control, Pool, memory};

use super::file::{
    COEFFICIENT_BLOCK, Checks, Decoders, Head, check_entries, read_contributions, read_head,
    vector_index,
};
use super::{Header, ZkeyError};
use crate::binfile::{SectionReader, read_points};
use crate::codec::{KeyChecks, Limits, Location};

/// One of a `.zkey`'s G1 vectors (B2, the G2 one, is read by [`ZkeyFile::b2`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZkeyVector {
    /// Section 5, a point a wire.
    A,
    /// Section 6, a point a wire.
    B1,
    /// Section 8, a point a private wire.
    C,
    /// Section 9, a point a row of the domain.
    H,
}

impl ZkeyVector {
    fn id(self) -> u32 {
        match self {
            Self::A => 5,
            Self::B1 => 6,
            Self::C => 8,
            Self::H => 9,
        }
    }
}

/// A `.zkey` opened for proving by sections (see the module's documentation).
pub struct ZkeyFile<R> {
    /// Behind a cell so the small parts can be borrowed while chunks are read (one reader:
    /// the chunks are read one at a time, never from two threads).
    input: RefCell<R>,
    vectors: [(crate::binfile::Section, usize); 5],
    decoders: Decoders,
    /// Section 2.
    pub header: Header,
    /// Section 3.
    pub ic: Vec<G1Affine>,
    /// Section 4's body and entry count (checked when opened, read again a block at a time).
    coefficients: (crate::binfile::Section, u32),
}

impl<R: Read + Seek> ZkeyFile<R> {
    /// Opens the `.zkey` `input` holds: sections 1-3 and 10 read and checked as
    /// [`Zkey::read_for_proving`](super::Zkey::read_for_proving) reads them, section 4's entries
    /// checked a block at a time (not kept), sections 5-9's sizes checked, their points left to [`g1`](Self::g1) and [`b2`](Self::b2), which check
    /// them by `checks`.
    ///
    /// # Errors
    /// As [`Zkey::read`](super::Zkey::read), but for sections 5-9's points.
    pub fn open(
        pool: &Pool,
        control: &Control,
        mut input: R,
        limits: &Limits,
        checks: KeyChecks,
    ) -> Result<Self, ZkeyError> {
        let checks = match checks {
            KeyChecks::Subgroups => Checks::Subgroups,
            KeyChecks::Curve => Checks::Prover,
        };
        let Head {
            table,
            header,
            ic,
            coefficients_at,
            vectors,
            decoders,
            ..
        } = read_head(pool, control, &mut input, limits, (checks, false))?;
        read_contributions(&mut input, &table)?;
        Ok(Self {
            input: RefCell::new(input),
            vectors,
            decoders,
            header,
            ic,
            coefficients: coefficients_at,
        })
    }

    /// Section 4's entry count.
    pub fn coefficient_count(&self) -> u32 {
        self.coefficients.1
    }

    /// Section 4's entries (44 bytes each, checked when the key was opened) in blocks of at
    /// most [`COEFFICIENT_BLOCK`] entries, in order, each given to `visit`.
    ///
    /// # Errors
    /// A read error (the file changed since it was opened: an entry no longer checks is named
    /// as the opening would).
    pub(crate) fn coefficient_blocks(&self, visit: &mut dyn FnMut(&[u8])) -> Result<(), ZkeyError> {
        let (section, count) = self.coefficients;
        let mut input = self.input.borrow_mut();
        let mut reader = SectionReader::new(&mut *input, section)?;
        reader.u32(Location::value("coefficient count"))?;
        let mut block = vec![0u8; 44 * COEFFICIENT_BLOCK];
        let mut done = 0usize;
        while done < count as usize {
            let take = (count as usize - done).min(COEFFICIENT_BLOCK);
            let bytes = &mut block[..44 * take];
            reader.fill(bytes, Location::value("coefficients"))?;
            // Checked again: the file may have changed since it was opened, and the prover
            // indexes its vectors by these entries.
            check_entries(done, bytes, &self.header)?;
            visit(bytes);
            done += take;
        }
        Ok(())
    }

    /// Section 4 as [`Zkey::coefficients`](super::Zkey::coefficients) holds it (the count,
    /// then the entries), read whole: for tests and comparisons.
    ///
    /// # Errors
    /// Memory for the copy, a read error, or an entry that no longer checks (the file changed
    /// since it was opened).
    pub fn coefficients(&self) -> Result<Vec<u8>, ZkeyError> {
        let count = self.coefficients.1;
        let mut out = memory::try_with_capacity(4 + 44 * count as usize)
            .map_err(ZkeyError::memory("the coefficients"))?;
        out.extend_from_slice(&count.to_le_bytes());
        self.coefficient_blocks(&mut |block| out.extend_from_slice(block))?;
        Ok(out)
    }

    /// The number of points in section `id` (5-9).
    pub(crate) fn count(&self, id: u32) -> usize {
        self.vectors[vector_index(id)].1
    }

    /// The number of points in `vector`.
    pub fn len(&self, vector: ZkeyVector) -> usize {
        self.count(vector.id())
    }

    /// B2's number of points (one a wire).
    pub fn b2_len(&self) -> usize {
        self.count(7)
    }

    /// `vector`'s points at `range`, checked as opening said.
    ///
    /// # Errors
    /// A bad point (named by its index in its section), a read error, cancellation.
    ///
    /// # Panics
    /// If `range` passes the vector's end (a bug in the caller).
    pub fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: ZkeyVector,
        range: Range<usize>,
    ) -> Result<Vec<G1Affine>, ZkeyError> {
        let id = vector.id();
        let (section, count) = self.vectors[vector_index(id)];
        assert!(
            range.start <= range.end && range.end <= count,
            "invariant: a range within the section"
        );
        let mut input = self.input.borrow_mut();
        Ok(read_points(
            (pool, control),
            &mut *input,
            section,
            super::file::name(id),
            (range.start as u64, range.len()),
            self.decoders.g1(id),
        )?)
    }

    /// B2's points at `range`, checked as opening said.
    ///
    /// # Errors
    /// As [`g1`](Self::g1).
    ///
    /// # Panics
    /// If `range` passes B2's end (a bug in the caller).
    pub fn b2(
        &self,
        pool: &Pool,
        control: &Control,
        range: Range<usize>,
    ) -> Result<Vec<G2Affine>, ZkeyError> {
        let (section, count) = self.vectors[vector_index(7)];
        assert!(
            range.start <= range.end && range.end <= count,
            "invariant: a range within the section"
        );
        let mut input = self.input.borrow_mut();
        Ok(read_points(
            (pool, control),
            &mut *input,
            section,
            "B2",
            (range.start as u64, range.len()),
            self.decoders.g2,
        )?)
    }
}
