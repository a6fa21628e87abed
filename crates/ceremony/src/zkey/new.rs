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
//! The circuit ([`CircomR1cs`]: 40 bytes a term), the bases (`5 n` G1 and `n` G2 points, 96 and
//! 192 bytes, plus `2n` tau powers), the per-wire sums (720 bytes a wire) and the key
//! ([`Zkey`]'s formula): about `1.2 KB nVars + 0.9 KB n + 84 B terms`.

use std::convert::Infallible;
use std::io::{Read, Seek};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use lockstep_shard::{Control, Cut, Owned, OwnedError, Pool};

use super::hash::{HashedPoints, hashed_h_points};
use super::{Header, Zkey, ZkeyError, circuit_hash};
use crate::circom::{CircomR1cs, LcTerm};
use crate::codec::Limits;
use crate::codec::{Compressed, Location};
use crate::curve;
use crate::fft::{self, Domain, FftGroup};
use crate::ptau::{PtauError, PtauFile, g1_from_ptau, g1_from_ptau_on_curve, g2_from_ptau};

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

/// What the key is made from, taken from the `.ptau`.
struct Bases {
    tau1: Vec<G1Affine>,
    tau2: Vec<G2Affine>,
    alpha1: Vec<G1Affine>,
    beta1: Vec<G1Affine>,
    h: Vec<G1Affine>,
    /// `[tau^i]_1` for `i < 2n` (or `2n - 1` when the `.ptau` holds no more).
    powers: Vec<G1Affine>,
    alpha: G1Affine,
    beta: G1Affine,
    beta2: G2Affine,
}

/// The sums of one wire.
#[derive(Clone, Copy, Debug)]
struct Sums {
    a: G1Projective,
    b1: G1Projective,
    b2: G2Projective,
    k: G1Projective,
}

impl Sums {
    fn identity() -> Self {
        Self {
            a: G1Projective::identity(),
            b1: G1Projective::identity(),
            b2: G2Projective::identity(),
            k: G1Projective::identity(),
        }
    }

    fn combine(&mut self, other: Self) {
        self.a += other.a;
        self.b1 += other.b1;
        self.b2 += other.b2;
        self.k += other.k;
    }
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

fn apply(sums: &mut Sums, u: &Update, bases: &Bases, reference: bool) {
    let row = u.row as usize;
    match u.side {
        Side::A => {
            u.coeff.accumulate(&mut sums.a, &bases.tau1[row], reference);
            u.coeff
                .accumulate(&mut sums.k, &bases.beta1[row], reference);
        }
        Side::B => {
            u.coeff
                .accumulate(&mut sums.b1, &bases.tau1[row], reference);
            u.coeff
                .accumulate(&mut sums.b2, &bases.tau2[row], reference);
            u.coeff
                .accumulate(&mut sums.k, &bases.alpha1[row], reference);
        }
        Side::C => u.coeff.accumulate(&mut sums.k, &bases.tau1[row], reference),
    }
}

/// The updates of constraints `range` (A, B, C each in file order), then, when the range ends
/// the circuit, the extra rows of the public signals.
fn updates(r1cs: &CircomR1cs, range: std::ops::Range<usize>, out: &mut Vec<Update>) {
    let m = r1cs.header().constraints as usize;
    for index in range.clone() {
        let row = u32::try_from(index).expect("invariant: constraints are counted in a u32");
        for (side, terms) in [Side::A, Side::B, Side::C]
            .into_iter()
            .zip(r1cs.constraint(index))
        {
            out.extend(terms.iter().map(|t: &LcTerm| Update {
                row,
                side,
                wire: t.wire,
                coeff: Coeff::of(&t.coeff),
            }));
        }
    }
    if range.end == m {
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

/// Reads (a prepared `.ptau`) or transforms the bases of the domain of `2^p`.
fn bases<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    file: &PtauFile,
    input: &mut R,
    p: u32,
    serial: bool,
) -> Result<Bases, ZkeyError> {
    let n = 1usize << p;
    let big_n = 1usize << file.power();
    let runtime = (pool, control);
    let have = (2 * n).min(2 * big_n - 1);
    // From a prepared file the powers only enter the circuit hash (differences of them, hashed):
    // on the curve is what that needs. Unprepared, they are transformed into the key's bases and
    // checked in full.
    let powers = if file.prepared() {
        file.points(runtime, input, 2, (0, have), g1_from_ptau_on_curve)?
    } else {
        file.points(runtime, input, 2, (0, have), g1_from_ptau)?
    };
    let alpha = file.points(runtime, input, 4, (0, 1), g1_from_ptau)?[0];
    let beta = file.points(runtime, input, 5, (0, 1), g1_from_ptau)?[0];
    let beta2 = file.points(runtime, input, 6, (0, 1), g2_from_ptau)?[0];
    let block = ((n - 1) as u64, n);
    if file.prepared() {
        return Ok(Bases {
            tau1: file.points(runtime, input, 12, block, g1_from_ptau)?,
            tau2: file.points(runtime, input, 13, block, g2_from_ptau)?,
            alpha1: file.points(runtime, input, 14, block, g1_from_ptau)?,
            beta1: file.points(runtime, input, 15, block, g1_from_ptau)?,
            h: odd_points(runtime, file, input, 2 * n)?,
            powers,
            alpha,
            beta,
            beta2,
        });
    }
    let g1 = |points: &[G1Affine], p: u32| -> Result<Vec<G1Affine>, ZkeyError> {
        let domain = Domain::snarkjs(p);
        Ok(if serial {
            fft::lagrange_serial::<G1Projective>(&domain, points)
        } else {
            fft::lagrange::<G1Projective>(pool, control, &domain, points)?
        })
    };
    let tau2_powers = file.points(runtime, input, 3, (0, n), g2_from_ptau)?;
    let tau2 = if serial {
        fft::lagrange_serial::<G2Projective>(&Domain::snarkjs(p), &tau2_powers)
    } else {
        fft::lagrange::<G2Projective>(pool, control, &Domain::snarkjs(p), &tau2_powers)?
    };
    // Section 12's block of 2n: all 2n powers, or, when 2n is one past the file's power, its
    // 2n - 1 powers and a zero point (as `prepare phase2` makes it).
    let mut doubled_in = powers.clone();
    doubled_in.resize(2 * n, G1Affine::default());
    let doubled = g1(&doubled_in, p + 1)?;
    Ok(Bases {
        tau1: g1(&powers[..n], p)?,
        tau2,
        alpha1: g1(&file.points(runtime, input, 4, (0, n), g1_from_ptau)?, p)?,
        beta1: g1(&file.points(runtime, input, 5, (0, n), g1_from_ptau)?, p)?,
        h: doubled.into_iter().skip(1).step_by(2).collect(),
        powers,
        alpha,
        beta,
        beta2,
    })
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
fn coefficient_section(r1cs: &CircomR1cs) -> Result<Vec<u8>, ZkeyError> {
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

/// The key from the sums.
fn assemble(
    r1cs: &CircomR1cs,
    bases: Bases,
    p: u32,
    [a, b1, k]: [Vec<G1Affine>; 3],
    b2: Vec<G2Affine>,
    h_hashed: &[G1Affine],
) -> Result<Zkey, ZkeyError> {
    let public = r1cs.header().public() as usize;
    let mut ic = k;
    let c = ic.split_off(public + 1);
    let header = Header {
        n_vars: r1cs.header().wires,
        n_public: r1cs.header().public(),
        power: p,
        alpha1: bases.alpha,
        beta1: bases.beta,
        beta2: bases.beta2,
        gamma2: curve::g2(),
        delta1: curve::g1(),
        delta2: curve::g2(),
    };
    let circuit_hash = circuit_hash(
        &header,
        &HashedPoints {
            ic: &ic,
            h_monomial: h_hashed,
            c: &c,
            a: &a,
            b1: &b1,
            b2: &b2,
        },
    );
    Ok(Zkey {
        header,
        ic,
        coefficients: coefficient_section(r1cs)?,
        a,
        b1,
        b2,
        c,
        h: bases.h,
        circuit_hash,
        contributions: Vec::new(),
    })
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
    let bases = bases(&pool, &control, &file, &mut ptau, p, true)?;
    let mut sums = vec![Sums::identity(); r1cs.header().wires as usize];
    let mut list = Vec::new();
    updates(r1cs, 0..r1cs.header().constraints as usize, &mut list);
    for u in &list {
        apply(&mut sums[u.wire as usize], u, &bases, true);
    }
    let n = 1usize << p;
    let h_hashed: Vec<G1Affine> = (0..hashed_h_points(n))
        .map(|i| (G1Projective::from(bases.powers[i + n]) - bases.powers[i]).to_affine())
        .collect();
    let a = sums.iter().map(|s| s.a.to_affine()).collect();
    let b1 = sums.iter().map(|s| s.b1.to_affine()).collect();
    let b2 = sums.iter().map(|s| s.b2.to_affine()).collect();
    let k = sums.iter().map(|s| s.k.to_affine()).collect();
    assemble(r1cs, bases, p, [a, b1, k], b2, &h_hashed)
}

/// `snarkjs zkey new`: the initial key of `r1cs` from the `.ptau` `ptau` (prepared or not), on
/// `pool`: the same bytes as [`new_serial`] and as snarkjs at every worker count.
///
/// Progress: the transforms (unprepared `.ptau`), each term applied, the conversions.
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
    let bases = bases(pool, control, &file, &mut ptau, p, false)?;
    let wires = r1cs.header().wires as usize;
    let owners = pool.workers();
    let mut owned = Owned::from_fn(wires, owners, |_| Sums::identity())
        .map_err(ZkeyError::memory("the per-wire sums"))?;
    let hot = hot_wires(r1cs, owners);
    if !hot.is_empty() {
        owned = owned.with_hot(&hot, Sums::identity, Sums::combine);
    }
    let m = r1cs.header().constraints as usize;
    let mut list = Vec::new();
    let mut position = 0usize;
    let mut first = 0usize;
    loop {
        let end = (first + BATCH_CONSTRAINTS).min(m);
        list.clear();
        updates(r1cs, first..end, &mut list);
        owned
            .apply(
                pool,
                control,
                position,
                &list,
                |u| u.wire as usize,
                |sums, u| {
                    apply(sums, u, &bases, false);
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
    let sum = |id: usize| -> &Sums { owned.get(id).expect("invariant: one sum a wire") };
    let filled = |what| {
        lockstep_shard::memory::try_filled(wires, G1Affine::default())
            .map_err(ZkeyError::memory(what))
    };
    let (mut a, mut b1, mut k) = (filled("A")?, filled("B1")?, filled("C")?);
    let mut b2 = lockstep_shard::memory::try_filled(wires, G2Affine::default())
        .map_err(ZkeyError::memory("B2"))?;
    pool.for_each_block(
        control,
        (&mut a[..], &mut b1[..], &mut b2[..], &mut k[..]),
        Cut::Blocks(BLOCK),
        |_,
         range,
         (a, b1, b2, k): (
            &mut [G1Affine],
            &mut [G1Affine],
            &mut [G2Affine],
            &mut [G1Affine],
        )| {
            let block: Vec<&Sums> = range.map(sum).collect();
            let pick =
                |f: fn(&Sums) -> G1Projective| block.iter().map(|s| f(s)).collect::<Vec<_>>();
            G1Projective::to_affine_block(&pick(|s| s.a), a);
            G1Projective::to_affine_block(&pick(|s| s.b1), b1);
            G1Projective::to_affine_block(&pick(|s| s.k), k);
            let g2: Vec<G2Projective> = block.iter().map(|s| s.b2).collect();
            G2Projective::to_affine_block(&g2, b2);
            Ok::<_, Infallible>(())
        },
    )?;
    drop(owned);
    let h_hashed = h_monomial(pool, control, &bases.powers, 1 << p)?;
    assemble(r1cs, bases, p, [a, b1, k], b2, &h_hashed)
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
    use super::*;

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
