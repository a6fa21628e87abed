//! `snarkjs zkey new` (`groth16 setup`): a circom circuit's initial key from a `.ptau`, byte for
//! byte as snarkjs 0.7.6 writes it (`zkey_new.js`).
//!
//! # What is computed
//! For the domain of `n = 2^p` ([`R1csHeader::domain_power`]) and the Lagrange bases `L_c` of
//! snarkjs's domain ([`Domain::snarkjs`]) at tau (read from a prepared `.ptau`'s sections 12-15,
//! or transformed here from its powers when it is not prepared, which snarkjs refuses):
//! - `A[s] = sum a L_c` over the A terms `(c, s, a)`, plus `L_(m+s)` for each public signal and
//!   the constant (`s <= nPublic`: snarkjs's extra rows); `B1[s]`, `B2[s]` the same over B in
//!   G1 and G2;
//! - `K[s] = sum a beta L_c + b alpha L_c + c L_c` over all three sides (and the extra rows'
//!   `beta L_(m+s)`): `IC` for `s <= nPublic`, `C` for the others;
//! - `H[i]` the odd points `2i + 1` of section 12's block of `2n`;
//! - section 4 the A then B terms of each constraint in file order, then the extra rows, each
//!   coefficient times `R^2` (snarkjs stores `fromMontgomery(toMontgomery(c) R^2)`);
//! - the circuit hash ([`super::circuit_hash`]) over the monomial `[tau^(i+n) - tau^i]_1`.
//!
//! The sums are group elements, exact whatever their order, so the parallel form (terms routed
//! to their wire's owner, [`Owned`]) gives the serial reference's bytes at every worker count.
//! Coefficients are public: multiplications are blst's variable-time ones over the scalar's
//! bit length (a coefficient `-c` with a short `c` is multiplied as `c` and subtracted).
//!
//! # Memory
//! The sums are made one at a time (`B2`, `A`, `B1`, then `K`, which becomes `IC` and `C`), each
//! from the Lagrange blocks it needs, read when it starts: at most three blocks are held at once
//! and, from a prepared `.ptau`, the powers only while the hash's H points are made. Peak, from a prepared `.ptau`, while
//! `K` is summed: the circuit ([`CircomR1cs`]: 40 bytes a term), the G1 blocks `L`, `alpha L`,
//! `beta L` (`3 x 96 n` bytes), the hash's H points (`96 n`), `A`, `B1` and `B2` done
//! (`384 nVars`), `K`'s sums and result (`240 nVars`); then the key as written ([`Zkey`]'s
//! formula): about `0.62 KB nVars + 0.38 KB n + 40 B terms`. At assembly the key, the hash's H
//! points, the circuit and section 4 (44 bytes an A or B term) are held: `0.48 KB nVars + 0.19 KB
//! n + 84 B terms` at most, the peak only for circuits of more than about four A and B terms a
//! wire. The constraint batches (`16,384` constraints' terms) are small beside either.

use std::convert::Infallible;
use std::io::{Read, Seek};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Curve;
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Cut, Owned, OwnedError, Pool};

use super::hash::{HashedPoints, hashed_h_points};
use super::{Header, Zkey, ZkeyError, circuit_hash};
use crate::circom::{CircomR1cs, LcTerm};
use crate::codec::{Compressed, Location};
use crate::codec::{Limits, PointProblem};
use crate::curve;
use crate::fft::{self, Domain, FftGroup};
use crate::ptau::{
    PtauError, PtauFile, g1_from_ptau, g1_from_ptau_on_curve, g2_from_ptau, g2_from_ptau_on_curve,
};

/// Constraints routed per batch of the accumulation.
const BATCH_CONSTRAINTS: usize = 16_384;

/// Points per block of the affine conversions.
const BLOCK: usize = 256;

/// The H points per chunk of snarkjs's circuit hash: above one chunk, the hash reads
/// `[tau^(2n-1)]_1`, which a `.ptau` of the circuit's own power does not hold.
const HASH_CHUNK: usize = 1 << 14;

/// `R^2 mod r` for `R = 2^256`, little-endian: section 4 stores each coefficient times it.
const R2_LE: [u8; 32] = [
    0x6d, 0x9c, 0xf2, 0xf3, 0x90, 0xe9, 0x99, 0xc9, 0x23, 0x5c, 0x92, 0x87, 0xcb, 0xed, 0x6c, 0x2b,
    0x8f, 0x39, 0x54, 0x72, 0x96, 0x14, 0xd3, 0x05, 0x11, 0xff, 0x59, 0x9f, 0xd9, 0xd9, 0x48, 0x07,
];

/// One of the key's per-wire sums: which sides' terms enter it (on which bases: [`G1Blocks::base`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// A's terms on `L_c` (and the extra rows).
    A,
    /// B's terms on `L_c`.
    B1,
    /// B's terms on `[L_c]_2`.
    B2,
    /// A's on `beta L_c`, B's on `alpha L_c`, C's on `L_c`: `IC` and `C`.
    K,
}

impl Output {
    fn takes(self, side: Side) -> bool {
        match self {
            Self::A => matches!(side, Side::A),
            Self::B1 | Self::B2 => matches!(side, Side::B),
            Self::K => true,
        }
    }
}

/// The G1 Lagrange blocks the sum `K` takes (`A` and `B1` take `tau1` alone).
struct G1Blocks<'a> {
    tau1: &'a [G1Affine],
    alpha1: &'a [G1Affine],
    beta1: &'a [G1Affine],
}

impl G1Blocks<'_> {
    /// The base of a term of `side` at `row` in the G1 sum `output`.
    fn base(&self, output: Output, side: Side, row: usize) -> &G1Affine {
        match (output, side) {
            (Output::K, Side::A) => &self.beta1[row],
            (Output::K, Side::B) => &self.alpha1[row],
            _ => &self.tau1[row],
        }
    }
}

/// How a Lagrange block's subgroup is settled. Each of its points checked as it is read
/// (`Inputs`), or, when fewer of the key's points are made from it than it holds, each of those
/// key points checked once made (`Outputs`): a sum of multiples of subgroup points is in the
/// subgroup, so a key point outside it has a bad base, and the block is then read again, each
/// point checked, for the first bad one's name. Either way every point of the key is in its
/// subgroup. `Outputs` lets pass a bad base no key point takes, or whose off-subgroup part
/// vanishes in every key point it enters; the key is then sound but, for such a file alone, not
/// necessarily snarkjs's bytes, nor [`new_serial`]'s: blst multiplies by a scalar over about 2^127
/// through the endomorphism, exact on the subgroup only, where the serial reference and the
/// fast path differ (on sound files, every file snarkjs's bytes are defined for, they agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Settle {
    Inputs,
    Outputs,
}

impl Settle {
    /// `Outputs` when fewer than `block` key points (`made`) are made from a block of `block`
    /// points, and the file is prepared (an unprepared file's points are checked as read, before
    /// they are transformed).
    fn choose(prepared: bool, made: usize, block: usize) -> Self {
        if prepared && made < block {
            Self::Outputs
        } else {
            Self::Inputs
        }
    }
}

/// The wires with a B term (`B2`'s points that can differ from the identity) and those with any
/// term, the extra rows' included (`K`'s).
fn term_wires(r1cs: &CircomR1cs) -> (usize, usize) {
    let header = r1cs.header();
    let mut seen = vec![(false, false); header.wires as usize];
    for index in 0..header.constraints as usize {
        let [a, b, c] = r1cs.constraint(index);
        for t in b {
            seen[t.wire as usize] = (true, true);
        }
        for t in a.iter().chain(c) {
            seen[t.wire as usize].1 = true;
        }
    }
    for s in 0..=header.public() as usize {
        if let Some(wire) = seen.get_mut(s) {
            wire.1 = true;
        }
    }
    let b = seen.iter().filter(|w| w.0).count();
    let any = seen.iter().filter(|w| w.1).count();
    (b, any)
}

/// The position of the first of `points` outside its subgroup, if any.
fn first_outside<A: Sync>(
    (pool, control): (&Pool, &Control),
    points: &[A],
    inside: fn(&A) -> bool,
) -> Result<Option<usize>, ZkeyError> {
    let found = pool.for_each_block(
        control,
        points,
        Cut::Blocks(BLOCK),
        |_, range, block: &[A]| {
            for (i, p) in range.zip(block) {
                if !inside(p) {
                    return Err(i);
                }
            }
            Ok(())
        },
    );
    match found {
        Ok(()) => Ok(None),
        Err(lockstep_shard::Error::Task { source, .. }) => Ok(Some(source)),
        Err(other) => Err(ZkeyError::from(other)),
    }
}

fn g1_inside(p: &G1Affine) -> bool {
    bool::from(p.is_identity()) || bool::from(p.is_torsion_free())
}

fn g2_inside(p: &G2Affine) -> bool {
    bool::from(p.is_identity()) || bool::from(p.is_torsion_free())
}

/// A coefficient, sorted by how it is cheapest to multiply.
#[derive(Clone, Copy, Debug)]
enum Coeff {
    Zero,
    One,
    MinusOne,
    /// `+c`.
    Add(Scalar),
    /// `-c` (`c` shorter than the coefficient).
    Sub(Scalar),
}

impl Coeff {
    fn of(c: &Scalar) -> Self {
        if bool::from(c.is_zero()) {
            Self::Zero
        } else if *c == Scalar::ONE {
            Self::One
        } else if *c == -Scalar::ONE {
            Self::MinusOne
        } else {
            let neg = -*c;
            if bits(&neg) < bits(c) {
                Self::Sub(neg)
            } else {
                Self::Add(*c)
            }
        }
    }

    /// `acc += self * p`; `reference` uses blstrs' constant-time multiplication of the full
    /// coefficient (the serial reference checks the fast path, not shares it).
    fn accumulate<G: FftGroup>(self, acc: &mut G, p: &G::Affine, reference: bool) {
        match self {
            Self::Zero => {}
            Self::One => *acc += p,
            Self::MinusOne => *acc -= p,
            Self::Add(c) if reference => *acc += G::from_affine(p).mul_reference(&c),
            Self::Sub(c) if reference => *acc -= G::from_affine(p).mul_reference(&c),
            Self::Add(c) => *acc += G::from_affine(p).mul_public(&c),
            Self::Sub(c) => *acc -= G::from_affine(p).mul_public(&c),
        }
    }
}

/// A scalar's bit length.
fn bits(s: &Scalar) -> u32 {
    let mut bits = 0;
    for (i, b) in (0u32..).zip(s.to_bytes_le()) {
        if b != 0 {
            bits = 8 * i + 8 - b.leading_zeros();
        }
    }
    bits
}

#[derive(Clone, Copy, Debug)]
enum Side {
    A,
    B,
    C,
}

/// One term routed to its wire.
#[derive(Clone, Copy, Debug)]
struct Update {
    row: u32,
    side: Side,
    wire: u32,
    coeff: Coeff,
}

/// The updates of constraints `range` that enter `output` (A, B, C each in file order), then,
/// when the range ends the circuit, the extra rows of the public signals (side A).
fn updates(
    r1cs: &CircomR1cs,
    range: std::ops::Range<usize>,
    output: Output,
    out: &mut Vec<Update>,
) {
    let m = r1cs.header().constraints as usize;
    for index in range.clone() {
        let row = u32::try_from(index).expect("invariant: constraints are counted in a u32");
        for (side, terms) in [Side::A, Side::B, Side::C]
            .into_iter()
            .zip(r1cs.constraint(index))
        {
            if !output.takes(side) {
                continue;
            }
            out.extend(terms.iter().map(|t: &LcTerm| Update {
                row,
                side,
                wire: t.wire,
                coeff: Coeff::of(&t.coeff),
            }));
        }
    }
    if range.end == m && output.takes(Side::A) {
        for s in 0..=r1cs.header().public() {
            out.push(Update {
                row: u32::try_from(m).expect("invariant: rows fit the domain") + s,
                side: Side::A,
                wire: s,
                coeff: Coeff::One,
            });
        }
    }
}

/// The domain's power, once the `.ptau` is known to serve it.
fn check_sizes(r1cs: &CircomR1cs, file: &PtauFile) -> Result<u32, ZkeyError> {
    let p = r1cs.header().domain_power();
    if p > file.power() {
        return Err(PtauError::TooSmall {
            power: file.power(),
            needed: p,
        }
        .into());
    }
    if (1usize << p) > HASH_CHUNK && p == file.power() {
        return Err(ZkeyError::HashPastPowers { power: p });
    }
    Ok(p)
}

/// Where the bases come from: a prepared `.ptau`'s sections 12-15, read block by block as the
/// sums need them (so that at most three blocks are held at once), or an unprepared one's
/// powers, transformed here.
struct Source<'a, R> {
    pool: &'a Pool,
    control: &'a Control,
    r1cs: &'a CircomR1cs,
    file: &'a PtauFile,
    input: R,
    p: u32,
    /// The serial reference's transforms (blstrs' multiplications, one thread).
    serial: bool,
}

/// A point decoder of the `.ptau`'s encoding `B`.
type Decode<B, P> = fn(&B) -> Result<P, PointProblem>;

impl<R: Read + Seek> Source<'_, R> {
    fn n(&self) -> usize {
        1 << self.p
    }

    /// `[tau^i]_1` for `i < 2n` (`2n - 1` when the file holds no more). From a prepared file they
    /// only enter the circuit hash (differences of them, hashed): on the curve is what that
    /// needs. Unprepared, they are transformed into the key's bases and checked in full.
    fn powers(&mut self) -> Result<Vec<G1Affine>, ZkeyError> {
        let have = (2 * self.n()).min(2 * (1usize << self.file.power()) - 1);
        let decode = if self.file.prepared() {
            g1_from_ptau_on_curve
        } else {
            g1_from_ptau
        };
        let runtime = (self.pool, self.control);
        Ok(self
            .file
            .points(runtime, &mut self.input, 2, (0, have), decode)?)
    }

    /// `[alpha]_1`, `[beta]_1` and `[beta]_2`.
    fn singles(&mut self) -> Result<(G1Affine, G1Affine, G2Affine), ZkeyError> {
        let runtime = (self.pool, self.control);
        let (file, input) = (self.file, &mut self.input);
        Ok((
            file.points(runtime, input, 4, (0, 1), g1_from_ptau)?[0],
            file.points(runtime, input, 5, (0, 1), g1_from_ptau)?[0],
            file.points(runtime, input, 6, (0, 1), g2_from_ptau)?[0],
        ))
    }

    /// A prepared file's block of the domain in section `id` (12-15), each point decoded by
    /// `[checked, on_curve]`'s first, or its second when the block is settled by outputs.
    fn block<P, B>(
        &mut self,
        id: u32,
        settle: Settle,
        [checked, on_curve]: [Decode<B, P>; 2],
    ) -> Result<Vec<P>, ZkeyError>
    where
        P: Copy + Default + Send + Sync,
        B: Copy + Default + Send + Sync + AsMut<[u8]>,
    {
        let n = self.n();
        let decode = match settle {
            Settle::Inputs => checked,
            Settle::Outputs => on_curve,
        };
        let runtime = (self.pool, self.control);
        Ok(self
            .file
            .points(runtime, &mut self.input, id, ((n - 1) as u64, n), decode)?)
    }

    /// The G1 Lagrange block of section `id`: 12 (`L_c`), 14 (`alpha L_c`) or 15 (`beta L_c`);
    /// unprepared, the transform of `powers` or of section 4's or 5's first `n` points.
    /// `settle`: see [`Settle`].
    fn g1(
        &mut self,
        id: u32,
        powers: &[G1Affine],
        settle: Settle,
    ) -> Result<Vec<G1Affine>, ZkeyError> {
        let n = self.n();
        let runtime = (self.pool, self.control);
        if self.file.prepared() {
            return self.block(id, settle, [g1_from_ptau, g1_from_ptau_on_curve]);
        }
        let monomial = match id {
            12 => return self.transform::<G1Projective>(&powers[..n], self.p),
            14 => 4,
            15 => 5,
            _ => unreachable!("invariant: the G1 Lagrange sections are 12, 14 and 15"),
        };
        let points = self
            .file
            .points(runtime, &mut self.input, monomial, (0, n), g1_from_ptau)?;
        self.transform::<G1Projective>(&points, self.p)
    }

    /// Section 13's block (`[L_c]_2`), or the transform of section 3's first `n` points.
    /// `settle`: see [`Settle`].
    fn tau2(&mut self, settle: Settle) -> Result<Vec<G2Affine>, ZkeyError> {
        let n = self.n();
        let runtime = (self.pool, self.control);
        if self.file.prepared() {
            return self.block(13, settle, [g2_from_ptau, g2_from_ptau_on_curve]);
        }
        let points = self
            .file
            .points(runtime, &mut self.input, 3, (0, n), g2_from_ptau)?;
        self.transform::<G2Projective>(&points, self.p)
    }

    /// The key's `H`: the odd points of section 12's block of `2n`, or of the transform of the
    /// `2n` powers (`2n - 1` and a zero point when the file holds no more, as `prepare phase2`
    /// makes that block).
    fn h(&mut self, powers: &[G1Affine]) -> Result<Vec<G1Affine>, ZkeyError> {
        let n = self.n();
        if self.file.prepared() {
            let runtime = (self.pool, self.control);
            return odd_points(runtime, self.file, &mut self.input, 2 * n);
        }
        let mut doubled = powers.to_vec();
        doubled.resize(2 * n, G1Affine::default());
        let doubled = self.transform::<G1Projective>(&doubled, self.p + 1)?;
        Ok(doubled.into_iter().skip(1).step_by(2).collect())
    }

    fn transform<G: FftGroup>(
        &self,
        points: &[G::Affine],
        p: u32,
    ) -> Result<Vec<G::Affine>, ZkeyError> {
        let domain = Domain::snarkjs(p);
        Ok(if self.serial {
            fft::lagrange_serial::<G>(&domain, points)
        } else {
            fft::lagrange::<G>(self.pool, self.control, &domain, points)?
        })
    }
}

/// The odd points `1, 3, ..., 2n - 1` of section 12's block of `2n = len` (the key's `H`), each
/// checked; the even ones are not decoded.
fn odd_points<R: Read + Seek>(
    (pool, control): (&Pool, &Control),
    file: &PtauFile,
    input: &mut R,
    len: usize,
) -> Result<Vec<G1Affine>, ZkeyError> {
    let first = len - 1;
    let section = file.table().require(12, "lagrangeTauG1")?;
    let start = section.offset + first as u64 * 96;
    let end = start + len as u64 * 96;
    if end > section.offset + section.size {
        return Err(crate::codec::CodecError::Truncated {
            location: Location::element("lagrangeTauG1", first as u64),
            offset: section.offset + section.size,
        }
        .into());
    }
    input
        .seek(std::io::SeekFrom::Start(start))
        .map_err(crate::codec::CodecError::Io)?;
    let mut raw = lockstep_shard::memory::try_filled(len * 96, 0u8)
        .map_err(ZkeyError::memory("section 12's block for H"))?;
    input
        .read_exact(&mut raw)
        .map_err(crate::codec::CodecError::Io)?;
    let odd: Vec<Compressed<96>> = raw
        .chunks_exact(192)
        .map(|pair| {
            let mut point = Compressed([0u8; 96]);
            point.0.copy_from_slice(&pair[96..]);
            point
        })
        .collect();
    drop(raw);
    pool.map_items(control, &odd, |k, bytes| {
        let index = (first + 2 * k + 1) as u64;
        g1_from_ptau(bytes).map_err(|problem| crate::codec::CodecError::Point {
            location: Location::element("lagrangeTauG1", index),
            offset: section.offset + index * 96,
            problem,
        })
    })
    .map_err(|error| match error {
        lockstep_shard::Error::Task { source, .. } => ZkeyError::Codec(source),
        other => ZkeyError::from(other),
    })
}

/// Section 4: the A then B terms of each constraint in file order, then the extra rows.
pub(super) fn coefficient_section(r1cs: &CircomR1cs) -> Result<Vec<u8>, ZkeyError> {
    let header = r1cs.header();
    let m = header.constraints as usize;
    let mut count = 0usize;
    for index in 0..m {
        let [a, b, _] = r1cs.constraint(index);
        count += a.len() + b.len();
    }
    count += header.public() as usize + 1;
    let count32 = u32::try_from(count).map_err(|_| {
        ZkeyError::Format(format!(
            "{count} A and B terms: snarkjs counts them in a u32"
        ))
    })?;
    let mut out = lockstep_shard::memory::try_with_capacity(4 + 44 * count)
        .map_err(ZkeyError::memory("the coefficient section"))?;
    out.extend(count32.to_le_bytes());
    let r2: Scalar = Option::from(Scalar::from_bytes_le(&R2_LE)).expect("invariant: R^2 mod r < r");
    let entry = |out: &mut Vec<u8>, matrix: u32, row: u32, wire: u32, coeff: &Scalar| {
        out.extend(matrix.to_le_bytes());
        out.extend(row.to_le_bytes());
        out.extend(wire.to_le_bytes());
        out.extend((*coeff * r2).to_bytes_le());
    };
    for (row, index) in (0u32..).zip(0..m) {
        let [a, b, _] = r1cs.constraint(index);
        for (matrix, terms) in [(0, a), (1, b)] {
            for t in terms {
                entry(&mut out, matrix, row, t.wire, &t.coeff);
            }
        }
    }
    for s in 0..=header.public() {
        entry(&mut out, 0, header.constraints + s, s, &Scalar::ONE);
    }
    Ok(out)
}

/// `[tau^(i+n) - tau^i]_1` for the points the circuit hash takes.
fn h_monomial(
    pool: &Pool,
    control: &Control,
    powers: &[G1Affine],
    n: usize,
) -> Result<Vec<G1Affine>, ZkeyError> {
    let count = hashed_h_points(n);
    let mut out = lockstep_shard::memory::try_filled(count, G1Affine::default())
        .map_err(ZkeyError::memory("the hashed H points"))?;
    pool.for_each_block(
        control,
        &mut out[..],
        Cut::Blocks(BLOCK),
        |_, range, out: &mut [G1Affine]| {
            let points: Vec<G1Projective> = range
                .map(|i| G1Projective::from(powers[i + n]) - powers[i])
                .collect();
            curve::g1_to_affine(&points, out);
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(out)
}

/// The key's parts, computed.
struct Parts {
    alpha: G1Affine,
    beta: G1Affine,
    beta2: G2Affine,
    a: Vec<G1Affine>,
    b1: Vec<G1Affine>,
    b2: Vec<G2Affine>,
    k: Vec<G1Affine>,
    h: Vec<G1Affine>,
    h_hashed: Vec<G1Affine>,
}

/// The key from its parts.
fn assemble(r1cs: &CircomR1cs, p: u32, parts: Parts) -> Result<Zkey, ZkeyError> {
    let public = r1cs.header().public() as usize;
    let mut ic = parts.k;
    let c = ic.split_off(public + 1);
    // `split_off` leaves `ic` K's whole allocation: the key holds IC's points alone.
    ic.shrink_to_fit();
    let header = Header {
        n_vars: r1cs.header().wires,
        n_public: r1cs.header().public(),
        power: p,
        alpha1: parts.alpha,
        beta1: parts.beta,
        beta2: parts.beta2,
        gamma2: curve::g2(),
        delta1: curve::g1(),
        delta2: curve::g2(),
    };
    let circuit_hash = circuit_hash(
        &header,
        &HashedPoints {
            ic: &ic,
            h_monomial: &parts.h_hashed,
            c: &c,
            a: &parts.a,
            b1: &parts.b1,
            b2: &parts.b2,
        },
    );
    Ok(Zkey {
        header,
        ic,
        coefficients: coefficient_section(r1cs)?,
        a: parts.a,
        b1: parts.b1,
        b2: parts.b2,
        c,
        h: parts.h,
        circuit_hash,
        contributions: Vec::new(),
    })
}

/// The key's parts in the order that holds the fewest bases at once: the hash's H points from
/// the powers (then dropped, when the file is prepared), `B2` on section 13, `A` and `B1` on
/// section 12, `K` on sections 12, 14 and 15 (then all dropped), `H`. `g1_sums` and `g2_sums`
/// compute one per-wire sum from its bases; `hashed` the hash's H points. Sections 13 and
/// 14-15 are settled by their outputs when these are fewer ([`Settle`]); 12 and H's points,
/// which `A`, `B1`, `K` and `H` all take, are checked as read.
fn parts<R: Read + Seek>(
    mut source: Source<'_, R>,
    hashed: impl FnOnce(&[G1Affine], usize) -> Result<Vec<G1Affine>, ZkeyError>,
    mut g1_sums: impl FnMut(Output, &G1Blocks<'_>) -> Result<Vec<G1Affine>, ZkeyError>,
    g2_sums: impl FnOnce(&[G2Affine]) -> Result<Vec<G2Affine>, ZkeyError>,
) -> Result<Parts, ZkeyError> {
    let n = source.n();
    let prepared = source.file.prepared();
    let (b_wires, k_wires) = term_wires(source.r1cs);
    let mut powers = source.powers()?;
    let h_hashed = hashed(&powers, n)?;
    if prepared {
        powers = Vec::new();
    }
    let (alpha, beta, beta2) = source.singles()?;
    let runtime = (source.pool, source.control);

    let settle = Settle::choose(prepared, b_wires, n);
    let b2 = g2_sums(&source.tau2(settle)?)?;
    if settle == Settle::Outputs
        && let Some(at) = first_outside(runtime, &b2, g2_inside)?
    {
        source.tau2(Settle::Inputs)?;
        return Err(outside("B2", at));
    }

    let tau1 = source.g1(12, &powers, Settle::Inputs)?;
    let only_tau = G1Blocks {
        tau1: &tau1,
        alpha1: &[],
        beta1: &[],
    };
    let a = g1_sums(Output::A, &only_tau)?;
    let b1 = g1_sums(Output::B1, &only_tau)?;

    let settle = Settle::choose(prepared, k_wires, 2 * n);
    let alpha1 = source.g1(14, &powers, settle)?;
    let beta1 = source.g1(15, &powers, settle)?;
    let k = g1_sums(
        Output::K,
        &G1Blocks {
            tau1: &tau1,
            alpha1: &alpha1,
            beta1: &beta1,
        },
    )?;
    drop((tau1, alpha1, beta1));
    if settle == Settle::Outputs
        && let Some(at) = first_outside(runtime, &k, g1_inside)?
    {
        source.g1(14, &powers, Settle::Inputs)?;
        source.g1(15, &powers, Settle::Inputs)?;
        return Err(outside("K (IC, then C)", at));
    }
    let h = source.h(&powers)?;
    Ok(Parts {
        alpha,
        beta,
        beta2,
        a,
        b1,
        b2,
        k,
        h,
        h_hashed,
    })
}

/// The error for a key point (`what`'s point `at`) outside its subgroup whose bases, read again,
/// were each inside it: what a sum of multiples of subgroup points cannot be (kept an error,
/// not a panic, on a user's file).
fn outside(what: &str, at: usize) -> ZkeyError {
    ZkeyError::Format(format!(
        "{what}'s point {at} is outside its subgroup though each of its bases is inside"
    ))
}

/// `zkey new` on one thread, by the definition: the reference [`new`] is tested against.
///
/// # Errors
/// As [`new`].
pub fn new_serial<R: Read + Seek>(
    r1cs: &CircomR1cs,
    mut ptau: R,
    limits: &Limits,
) -> Result<Zkey, ZkeyError> {
    let pool = Pool::current_thread();
    let control = Control::new();
    let file = PtauFile::open(&mut ptau, limits)?;
    let p = check_sizes(r1cs, &file)?;
    let source = Source {
        pool: &pool,
        control: &control,
        r1cs,
        file: &file,
        input: ptau,
        p,
        serial: true,
    };
    let parts = parts(
        source,
        |powers, n| {
            Ok((0..hashed_h_points(n))
                .map(|i| (G1Projective::from(powers[i + n]) - powers[i]).to_affine())
                .collect())
        },
        |output, blocks| {
            Ok(sums_serial::<G1Projective>(
                r1cs,
                output,
                |side, row| blocks.base(output, side, row),
                G1Projective::to_affine,
            ))
        },
        |tau2| {
            Ok(sums_serial::<G2Projective>(
                r1cs,
                Output::B2,
                |_, row| &tau2[row],
                G2Projective::to_affine,
            ))
        },
    )?;
    assemble(r1cs, p, parts)
}

/// One per-wire sum by the definition: each term in file order, blstrs' multiplications and
/// conversions (`to_affine`).
fn sums_serial<'b, G: FftGroup>(
    r1cs: &CircomR1cs,
    output: Output,
    base: impl Fn(Side, usize) -> &'b G::Affine,
    to_affine: fn(&G) -> G::Affine,
) -> Vec<G::Affine> {
    let mut list = Vec::new();
    updates(
        r1cs,
        0..r1cs.header().constraints as usize,
        output,
        &mut list,
    );
    let mut acc = vec![G::identity(); r1cs.header().wires as usize];
    for u in &list {
        u.coeff.accumulate(
            &mut acc[u.wire as usize],
            base(u.side, u.row as usize),
            true,
        );
    }
    acc.iter().map(to_affine).collect()
}

/// `snarkjs zkey new`: the initial key of `r1cs` from the `.ptau` `ptau` (prepared or not), on
/// `pool`: the same bytes as [`new_serial`] and as snarkjs at every worker count (for a `.ptau`
/// whose bases are in their subgroups; for one that is not, the key is sound but its bytes may
/// differ from snarkjs's: see the crate README's "Subgroups").
///
/// Progress: the points read (and transformed, unprepared), each term applied to each sum it
/// enters (about [`new_work`] in all).
///
/// # Errors
/// [`ZkeyError`]: the `.ptau`'s (unreadable, too small: [`PtauError::TooSmall`]), a circuit
/// whose snarkjs hash needs powers past the file ([`ZkeyError::HashPastPowers`]), memory,
/// cancellation.
///
/// # Panics
/// Never for a circuit [`CircomR1cs::read`] accepted (its wires index the sums).
pub fn new<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    r1cs: &CircomR1cs,
    mut ptau: R,
    limits: &Limits,
) -> Result<Zkey, ZkeyError> {
    let file = PtauFile::open(&mut ptau, limits)?;
    let p = check_sizes(r1cs, &file)?;
    let source = Source {
        pool,
        control,
        r1cs,
        file: &file,
        input: ptau,
        p,
        serial: false,
    };
    let hot = hot_wires(r1cs, pool.workers());
    let runtime = (pool, control);
    let parts = parts(
        source,
        |powers, n| h_monomial(pool, control, powers, n),
        |output, blocks| {
            sums::<G1Projective>(runtime, r1cs, &hot, output, |side, row| {
                blocks.base(output, side, row)
            })
        },
        |tau2| sums::<G2Projective>(runtime, r1cs, &hot, Output::B2, |_, row| &tau2[row]),
    )?;
    assemble(r1cs, p, parts)
}

/// About the progress [`new`] reports for `r1cs`: each term once for each sum it enters, the
/// eight blocks of `2^p` points read or made (the hash's H points), the four sums made affine and
/// up to two checked.
pub fn new_work(r1cs: &CircomR1cs) -> u64 {
    let mut terms = 0u64;
    for index in 0..r1cs.header().constraints as usize {
        let [a, b, c] = r1cs.constraint(index);
        terms += 2 * a.len() as u64 + 3 * b.len() as u64 + c.len() as u64;
    }
    terms + 8 * (1u64 << r1cs.header().domain_power()) + 6 * u64::from(r1cs.header().wires)
}

/// The points [`new`] checks in their subgroup from a prepared `.ptau`, in G1 and in G2: the main
/// term of its time (each check about a 128-bit multiplication in G1, a 64-bit one in G2).
/// Section 12's block and H's (`2n`), then, whichever is fewer, sections 14-15
/// (`2n`) or `K`'s points (the wires with a term), section 13 (`n`) or `B2`'s (the wires with
/// a B term). [`super::verify`] adds the key's C and H.
pub fn new_checks(r1cs: &CircomR1cs) -> (u64, u64) {
    let n = 1u64 << r1cs.header().domain_power();
    let (b, k) = term_wires(r1cs);
    (2 * n + (k as u64).min(2 * n), (b as u64).min(n))
}

/// One per-wire sum of `output` over `base(side, row)`: the terms routed to their wire's owner
/// in batches of constraints ([`Owned`]; the circuit's hot wires spread over every owner), the
/// sums then made affine by blocks. Memory: one projective point a wire, then one affine.
fn sums<'b, G>(
    (pool, control): (&Pool, &Control),
    r1cs: &CircomR1cs,
    hot: &[usize],
    output: Output,
    base: impl Fn(Side, usize) -> &'b G::Affine + Sync,
) -> Result<Vec<G::Affine>, ZkeyError>
where
    G: FftGroup + 'static,
{
    let what = match output {
        Output::A => "A's per-wire sums",
        Output::B1 => "B1's per-wire sums",
        Output::B2 => "B2's per-wire sums",
        Output::K => "C's per-wire sums",
    };
    let wires = r1cs.header().wires as usize;
    let mut owned = Owned::from_fn(wires, pool.workers(), |_| G::identity())
        .map_err(ZkeyError::memory(what))?;
    if !hot.is_empty() {
        owned = owned.with_hot(hot, G::identity, |sum: &mut G, part: G| *sum += part);
    }
    let m = r1cs.header().constraints as usize;
    let mut list = Vec::new();
    let mut position = 0usize;
    let mut first = 0usize;
    loop {
        let end = (first + BATCH_CONSTRAINTS).min(m);
        list.clear();
        updates(r1cs, first..end, output, &mut list);
        owned
            .apply(
                pool,
                control,
                position,
                &list,
                |u| u.wire as usize,
                |sum, u| {
                    u.coeff.accumulate(sum, base(u.side, u.row as usize), false);
                    Ok::<_, Infallible>(())
                },
            )
            .map_err(|e| match e {
                OwnedError::Run(run) => ZkeyError::from(run),
                other => ZkeyError::Worker(other.to_string()),
            })?;
        position += list.len();
        first = end;
        if end == m {
            break;
        }
    }
    let mut out = lockstep_shard::memory::try_filled(wires, G::Affine::default())
        .map_err(ZkeyError::memory(what))?;
    pool.for_each_block(
        control,
        &mut out[..],
        Cut::Blocks(BLOCK),
        |_, range, out: &mut [G::Affine]| {
            let block: Vec<G> = range
                .map(|id| *owned.get(id).expect("invariant: one sum a wire"))
                .collect();
            G::to_affine_block(&block, out);
            Ok::<_, Infallible>(())
        },
    )?;
    Ok(out)
}

/// Wires holding more than a quarter of an owner's fair share of the terms (circom's constant
/// wire, typically): spread over every owner.
fn hot_wires(r1cs: &CircomR1cs, owners: usize) -> Vec<usize> {
    if owners <= 1 {
        return Vec::new();
    }
    let mut counts = vec![0u32; r1cs.header().wires as usize];
    for index in 0..r1cs.header().constraints as usize {
        for terms in r1cs.constraint(index) {
            for t in terms {
                counts[t.wire as usize] = counts[t.wire as usize].saturating_add(1);
            }
        }
    }
    let threshold = r1cs.terms() as u64 / (4 * owners as u64);
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &count)| u64::from(count) > threshold)
        .map(|(wire, _)| wire)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::circom::r1cs::tests::file as r1cs_file;

    /// A prepared `.ptau` of `power` (tau 1: enough for subgroup checks).
    fn prepared(power: u32) -> Vec<u8> {
        let pool = Pool::new(2).unwrap();
        let srs = crate::phase1::Srs::one(power).unwrap();
        let mut plain = Vec::new();
        crate::ptau::write(&pool, &Control::new(), &srs, &mut plain).unwrap();
        let mut out = Vec::new();
        crate::ptau::prepare(
            &pool,
            &Control::new(),
            Cursor::new(&plain),
            &mut out,
            &Limits::default(),
        )
        .unwrap();
        out
    }

    fn off_subgroup_g1() -> G1Affine {
        (1u8..)
            .find_map(|x| {
                let mut bytes = [0u8; 48];
                bytes[0] = 0x80;
                bytes[47] = x;
                Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(&bytes))
                    .filter(|p| !bool::from(p.is_torsion_free()))
            })
            .unwrap()
    }

    fn off_subgroup_g2() -> G2Affine {
        (1u8..)
            .find_map(|x| {
                let mut bytes = [0u8; 96];
                bytes[0] = 0x80;
                bytes[95] = x;
                Option::<G2Affine>::from(G2Affine::from_compressed_unchecked(&bytes))
                    .filter(|p| !bool::from(p.is_torsion_free()))
            })
            .unwrap()
    }

    #[test]
    fn a_base_outside_its_subgroup_is_named_whether_settled_by_inputs_or_outputs() {
        // Domain 8 both: `few` has fewer B2 and K points than sections 13 and 14-15 hold
        // (settled by outputs), `many` more (settled as read).
        let few = r1cs_file(
            6,
            (1, 1),
            &vec![[vec![(1, 3)], vec![(2, 1)], vec![(3, 1)]]; 4],
        );
        let many_constraints: Vec<[Vec<(u32, u64)>; 3]> = (0..5u32)
            .map(|i| {
                let w = 3 + 7 * i;
                [
                    (w..w + 4).map(|x| (x, 2)).collect(),
                    vec![(w + 4, 1), (w + 5, 5)],
                    vec![(w + 6, 1)],
                ]
            })
            .collect();
        let many = r1cs_file(40, (1, 1), &many_constraints);
        let ptau = prepared(4);
        let pool = Pool::new(2).unwrap();
        for (bytes, settled) in [(few, Settle::Outputs), (many, Settle::Inputs)] {
            let r1cs = CircomR1cs::read(Cursor::new(&bytes)).unwrap();
            let (b, k) = term_wires(&r1cs);
            assert_eq!(Settle::choose(true, b, 8), settled);
            assert_eq!(Settle::choose(true, k, 16), settled);
            // Sound, both ways, and the same bytes.
            let sound = new(
                &pool,
                &Control::new(),
                &r1cs,
                Cursor::new(&ptau),
                &Limits::default(),
            )
            .unwrap();
            let serial = new_serial(&r1cs, Cursor::new(&ptau), &Limits::default()).unwrap();
            assert_eq!(sound.circuit_hash, serial.circuit_hash);
            let table = PtauFile::open(&mut Cursor::new(&ptau), &Limits::default())
                .unwrap()
                .table()
                .clone();
            // Row 0 of the domain's block (its point 7) in sections 13, 14 and 15: every circuit
            // takes it. Row 7 (point 14): `many`'s extra rows take it from section 15, `few`
            // takes it from none, so a bad point there is refused as read, passes by outputs.
            for (id, row) in [13u32, 14, 15]
                .into_iter()
                .flat_map(|id| [(id, 0), (id, 7)])
            {
                let section = table.get(id).unwrap();
                let mut bad = ptau.clone();
                let encoded = if id == 13 {
                    crate::ptau::g2_to_ptau(&off_subgroup_g2()).0.to_vec()
                } else {
                    crate::ptau::g1_to_ptau(&off_subgroup_g1()).0.to_vec()
                };
                let at = usize::try_from(section.offset).unwrap() + (7 + row) * encoded.len();
                bad[at..at + encoded.len()].copy_from_slice(&encoded);
                let parallel = new(
                    &pool,
                    &Control::new(),
                    &r1cs,
                    Cursor::new(&bad),
                    &Limits::default(),
                );
                let serial = new_serial(&r1cs, Cursor::new(&bad), &Limits::default());
                if row == 7 && settled == Settle::Outputs {
                    let (parallel, serial) = (parallel.unwrap(), serial.unwrap());
                    assert_eq!(parallel.circuit_hash, sound.circuit_hash, "{id}");
                    assert_eq!(serial.circuit_hash, sound.circuit_hash, "{id}");
                    continue;
                }
                let (parallel, serial) = (
                    parallel.unwrap_err().to_string(),
                    serial.unwrap_err().to_string(),
                );
                let name =
                    ["lagrangeTauG2", "lagrangeAlphaTauG1", "lagrangeBetaTauG1"][id as usize - 13];
                let name = format!("{name}[{}]", 7 + row);
                assert!(parallel.contains(&name), "{settled:?} {id}: {parallel}");
                assert!(
                    parallel.contains("subgroup"),
                    "{settled:?} {id}: {parallel}"
                );
                assert_eq!(parallel, serial);
            }
        }
    }

    #[test]
    fn coefficients_are_sorted_by_their_cheapest_multiplication() {
        assert!(matches!(Coeff::of(&Scalar::ZERO), Coeff::Zero));
        assert!(matches!(Coeff::of(&Scalar::ONE), Coeff::One));
        assert!(matches!(Coeff::of(&-Scalar::ONE), Coeff::MinusOne));
        assert!(matches!(Coeff::of(&-Scalar::from(5)), Coeff::Sub(c) if c == Scalar::from(5)));
        assert!(matches!(Coeff::of(&Scalar::from(5)), Coeff::Add(c) if c == Scalar::from(5)));
        assert_eq!(bits(&Scalar::from(5)), 3);
        assert_eq!(bits(&Scalar::ZERO), 0);
        assert_eq!(bits(&-Scalar::ONE), 255);
        // R^2 mod r: 2^512 mod r, checked against the field (2^256 squared).
        let two_256 = Scalar::from(2).pow_vartime([256]);
        assert_eq!(
            Option::<Scalar>::from(Scalar::from_bytes_le(&R2_LE)).unwrap(),
            two_256.square()
        );
    }
}
