//! gnark's proving key read section by section from its file, for a key larger than memory:
//! opening reads and checks every part but the five large vectors (A, B, Z, K and G2 B), which
//! it locates and steps over; the prover then reads each vector a chunk at a time, checking
//! each chunk's points as a whole read checks them.
//!
//! Memory: the opened key holds its flags (two bytes a wire), its commitment keys and its
//! constants; a chunk of `n` points adds `n` points (and the reader's buffer).

use std::cell::RefCell;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;

use blstrs::{G1Affine, G2Affine};
use lockstep_shard::{Control, Pool};

use super::keys::{KeyPoint, KeyVector, Layout, RawSource, Section, read_layout, write_raw_from};
use crate::codec::stream::{HashingReader, Seeking};
use crate::codec::{CodecError, KeyChecks, Limits};
use crate::phase2::KeyEncoding;

/// A proving key opened for reading its large vectors a chunk at a time (see the module's
/// documentation). Its small parts are fields, as [`super::ProvingKey`]'s.
pub struct KeyFile<R> {
    /// Behind a cell so the small parts can be borrowed while chunks are read (one reader:
    /// the chunks are read one at a time, never from two threads).
    input: RefCell<BufReader<R>>,
    len: u64,
    checks: KeyChecks,
    encoding: KeyEncoding,
    sections: [Section; 5],
    /// `log2 N`.
    pub power: u32,
    /// `[alpha]_1`.
    pub alpha_g1: G1Affine,
    /// `[beta]_1`.
    pub beta_g1: G1Affine,
    /// `[delta]_1`.
    pub delta_g1: G1Affine,
    /// `[beta]_2`.
    pub beta_g2: G2Affine,
    /// `[delta]_2`.
    pub delta_g2: G2Affine,
    /// Per wire, whether its `A` is infinity.
    pub infinity_a: Vec<bool>,
    /// Per wire, whether its `B` is infinity.
    pub infinity_b: Vec<bool>,
    /// Per commitment, its basis and the basis times sigma.
    pub commitment_keys: Vec<(Vec<G1Affine>, Vec<G1Affine>)>,
}

impl<R: Read + Seek> KeyFile<R> {
    /// Opens the key `input` holds from its start (gnark's `WriteTo` or `WriteRawTo`): every
    /// part but the five large vectors read and checked by `checks`, the vectors located, every
    /// length checked as [`super::ProvingKey::read`] checks them, and nothing after the key.
    ///
    /// # Errors
    /// As [`super::ProvingKey::read`]; a seek error.
    pub fn open(
        pool: &Pool,
        control: &Control,
        mut input: R,
        limits: &Limits,
        checks: KeyChecks,
    ) -> Result<Self, CodecError> {
        let len = input.seek(SeekFrom::End(0))?;
        input.rewind()?;
        let limits = Limits {
            file_len: Some(len),
            ..*limits
        };
        let mut seeking = Seeking(BufReader::new(input));
        let layout: Layout = read_layout(pool, control, &mut seeking, &limits, (checks, false))?;
        Ok(Self {
            input: RefCell::new(seeking.0),
            len,
            checks,
            encoding: layout.encoding,
            sections: [
                layout.a.section(),
                layout.b.section(),
                layout.z.section(),
                layout.k.section(),
                layout.b2.section(),
            ],
            power: layout.power,
            alpha_g1: layout.alpha_g1,
            beta_g1: layout.beta_g1,
            delta_g1: layout.delta_g1,
            beta_g2: layout.beta_g2,
            delta_g2: layout.delta_g2,
            infinity_a: layout.infinity_a,
            infinity_b: layout.infinity_b,
            commitment_keys: layout.commitment_keys,
        })
    }

    /// How the key's points are encoded.
    pub fn encoding(&self) -> KeyEncoding {
        self.encoding
    }

    /// The number of points in `vector`.
    pub fn count(&self, vector: KeyVector) -> usize {
        self.sections[vector as usize].count
    }

    /// The points of the five large vectors: a proof's MSM points (its progress total).
    pub fn msm_points(&self) -> u64 {
        self.sections.iter().map(|s| s.count as u64).sum()
    }

    /// `vector`'s points at `range` (a G1 vector), each checked as opening said.
    ///
    /// # Errors
    /// A bad point (named by its index in the vector), a read error, cancellation.
    ///
    /// # Panics
    /// If `vector` is [`KeyVector::B2`] or `range` passes its end (a bug in the caller).
    pub fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: KeyVector,
        range: Range<usize>,
    ) -> Result<Vec<G1Affine>, CodecError> {
        assert_ne!(vector, KeyVector::B2, "invariant: G2 B is read by g2");
        self.points(pool, control, vector, range)
    }

    /// G2 B's points at `range`, each checked as opening said.
    ///
    /// # Errors
    /// As [`g1`](Self::g1).
    ///
    /// # Panics
    /// If `range` passes the vector's end (a bug in the caller).
    pub fn g2(
        &self,
        pool: &Pool,
        control: &Control,
        range: Range<usize>,
    ) -> Result<Vec<G2Affine>, CodecError> {
        self.points(pool, control, KeyVector::B2, range)
    }

    fn points<P: KeyPoint>(
        &self,
        pool: &Pool,
        control: &Control,
        vector: KeyVector,
        range: Range<usize>,
    ) -> Result<Vec<P>, CodecError> {
        let section = self.sections[vector as usize];
        assert!(
            range.start <= range.end && range.end <= section.count,
            "invariant: a range within the vector"
        );
        let offset = section.offset + range.start as u64 * P::size(self.encoding);
        let mut input = self.input.borrow_mut();
        input.seek(SeekFrom::Start(offset))?;
        let mut r = HashingReader::at(&mut *input, offset).with_end(Some(self.len));
        P::read(
            pool,
            control,
            &mut r,
            vector.name(),
            range.start as u64,
            range.len(),
            self.encoding,
            self.checks,
        )
    }
}

impl<R: Read + Seek> KeyFile<R> {
    /// Writes the key as [`super::ProvingKey::write_raw`] does (gnark's `WriteRawTo`), reading
    /// its vectors a chunk at a time, each point checked as the key was opened to check them:
    /// `groth16 prepare` for a key larger than memory. Returns the SHA-256 of the bytes.
    ///
    /// # Errors
    /// A bad point (named), a read or write error, cancellation.
    pub fn write_raw<W: std::io::Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        write_raw_from(pool, control, out, self)
    }
}

impl<R: Read + Seek> RawSource for KeyFile<R> {
    fn parts(&self) -> super::keys::RawParts<'_> {
        super::keys::RawParts {
            power: self.power,
            alpha_g1: self.alpha_g1,
            beta_g1: self.beta_g1,
            delta_g1: self.delta_g1,
            beta_g2: self.beta_g2,
            delta_g2: self.delta_g2,
            infinity_a: &self.infinity_a,
            infinity_b: &self.infinity_b,
            commitment_keys: &self.commitment_keys,
        }
    }

    fn count(&self, vector: KeyVector) -> usize {
        KeyFile::count(self, vector)
    }

    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: KeyVector,
        range: Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G1Affine]>, CodecError> {
        Ok(KeyFile::g1(self, pool, control, vector, range)?.into())
    }

    fn g2(
        &self,
        pool: &Pool,
        control: &Control,
        range: Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G2Affine]>, CodecError> {
        Ok(KeyFile::g2(self, pool, control, range)?.into())
    }
}
