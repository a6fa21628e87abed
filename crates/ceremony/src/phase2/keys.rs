//! The seal (gnark's `Phase2.Seal`) and the Groth16 keys it builds, written as gnark's
//! `groth16.ProvingKey.WriteTo` and `VerifyingKey.WriteTo` write them for BLS12-381.
//!
//! Proving key: the domain (`N` u64 BE; `N^-1`, `omega`, `omega^-1`, the multiplicative
//! generator 7 and its inverse, 32-byte big-endian each; a precomputation flag byte 1),
//! `[alpha]_1`, `[beta]_1`, `[delta]_1`, `A`, `B` (G1, infinity filtered out), `Z` (kept in the
//! phase 2 order: gnark's bit reversal of its `N - 1` points is the identity), `K` (= PKK),
//! `[beta]_2`, `[delta]_2`, `B` (G2, filtered as `B2`'s own infinity), the wire count, the
//! counts of infinite `A` and `B`, one byte a wire for each (infinite or not), the commitment
//! count u32 BE, and per commitment its basis and its basis times sigma. Vectors are a u32 BE
//! count then compressed points.
//!
//! Verifying key: `[alpha]_1`, `[beta]_1`, `[beta]_2`, `[gamma]_2` (= g2), `[delta]_1`,
//! `[delta]_2`, `K` (= VKK), the public-and-commitment-committed lists (u32 BE count, then per
//! list a u32 BE count and u64 BE values), the commitment count, then per commitment g2 and
//! `-[sigma_i]_2`.

use std::io::Write;

use blstrs::{G1Affine, G2Affine, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use lockstep_shard::{Control, Pool};

use super::contribute::{Secrets, update};
use super::{Evaluations, Phase2, Phase2Error};
use crate::codec::stream::{Discarding, HashingReader, HashingWriter, Skip, write_counted};
use crate::codec::{CodecError, KeyChecks};
use crate::curve;
use crate::phase1::Srs;

/// A Groth16 proving key in gnark's layout (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvingKey {
    /// `log2 N`.
    pub power: u32,
    /// `[alpha]_1`.
    pub alpha_g1: G1Affine,
    /// `[beta]_1`.
    pub beta_g1: G1Affine,
    /// `[delta]_1`.
    pub delta_g1: G1Affine,
    /// `[A_j(tau)]_1` of the wires whose `A` is not infinity.
    pub a: Vec<G1Affine>,
    /// `[B_j(tau)]_1` of the wires whose `B` is not infinity.
    pub b: Vec<G1Affine>,
    /// `[tau^i (tau^N - 1) / delta]_1`, in the phase 2 object's order.
    pub z: Vec<G1Affine>,
    /// The private wires' `(beta A + alpha B + C) / delta`.
    pub k: Vec<G1Affine>,
    /// `[beta]_2`.
    pub beta_g2: G2Affine,
    /// `[delta]_2`.
    pub delta_g2: G2Affine,
    /// `[B_j(tau)]_2` of the wires whose `B2` is not infinity.
    pub b2: Vec<G2Affine>,
    /// Per wire, whether its `A` is infinity.
    pub infinity_a: Vec<bool>,
    /// Per wire, whether its `B` is infinity.
    pub infinity_b: Vec<bool>,
    /// Per commitment, its basis and the basis times sigma.
    pub commitment_keys: Vec<(Vec<G1Affine>, Vec<G1Affine>)>,
}

/// A Groth16 verifying key in gnark's layout (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// `[alpha]_1`.
    pub alpha_g1: G1Affine,
    /// `[beta]_1`.
    pub beta_g1: G1Affine,
    /// `[beta]_2`.
    pub beta_g2: G2Affine,
    /// `[gamma]_2`: the generator (gnark's phase 2 keeps gamma = 1).
    pub gamma_g2: G2Affine,
    /// `[delta]_1`.
    pub delta_g1: G1Affine,
    /// `[delta]_2`.
    pub delta_g2: G2Affine,
    /// The public wires' (wire 0 first) and then the commitment wires' `beta A + alpha B + C`.
    pub k: Vec<G1Affine>,
    /// Per commitment, the public inputs it commits to (see [`Evaluations`]).
    pub public_and_commitment_committed: Vec<Vec<usize>>,
    /// Per commitment, Pedersen's `(g2, -[sigma_i]_2)`.
    pub commitment_keys: Vec<(G2Affine, G2Affine)>,
}

/// Where a chain starts: a circuit's initial object over a phase 1 (cut to the circuit's
/// domain), and the circuit's evaluations over it ([`super::initialize`] gives the first and
/// the last from the circuit and the phase 1).
#[derive(Clone, Copy)]
pub struct Origin<'a> {
    /// The circuit's initial object over `srs`.
    pub initial: &'a Phase2,
    /// The phase 1, cut to the circuit's domain.
    pub srs: &'a Srs,
    /// The circuit's evaluations over `srs`.
    pub evaluations: &'a Evaluations,
}

/// The proving and verifying keys (gnark's `Seal`): `last` (whose bytes hash to `last_hash`)
/// updated by the beacon's values ([`Secrets::beacon`] over `beacon`), then assembled with the
/// phase 1 and the evaluations of its `origin`, once [`check_sealable`] holds.
///
/// gnark's `Seal` checks nothing (its `VerifyPhase2` verifies the chain first); this one refuses
/// an object that does not descend from the circuit's initial object, whatever the caller
/// verified. Verify the chain's contributions too ([`super::verify_contribution`]), as
/// `lockstep ceremony phase2 seal` does.
///
/// # Errors
/// As [`check_sealable`]; cancellation or a stall of the run.
pub fn seal(
    pool: &Pool,
    control: &Control,
    origin: Origin<'_>,
    last: Phase2,
    last_hash: &[u8; 32],
    beacon: &[u8],
) -> Result<(ProvingKey, VerifyingKey), Phase2Error> {
    check_sealable(pool, control, origin, &last)?;
    let secrets = Secrets::beacon(last_hash, beacon, last.sigma_g2.len());
    let mut p = last;
    update(pool, control, &mut p, &secrets)?;
    Ok(keys(p, origin.srs, origin.evaluations))
}

/// Whether `last` is an object of the circuit and phase 1 the evaluations come from: the same
/// commitments, each `SigmaCKK` of its commitment's length, `PKK` of the private wires', `Z` of
/// the domain's, and its points descended from the initial object's
/// ([`super::verify_descent`]: another phase 1 of the same power, another circuit of the same
/// shape and swapped points are refused). [`seal`] checks it; a front end may check it before a
/// long beacon delay.
///
/// # Errors
/// [`Phase2Error::Mismatch`], naming the first shape that differs; [`Phase2Error::Descent`],
/// naming the first point that does not descend; cancellation.
pub fn check_sealable(
    pool: &Pool,
    control: &Control,
    origin: Origin<'_>,
    last: &Phase2,
) -> Result<(), Phase2Error> {
    let Origin {
        initial,
        srs,
        evaluations,
    } = origin;
    let commitments = evaluations.ckk.len();
    if last.sigma_g2.len() != commitments
        || last.sigma_ckk.len() != commitments
        || last.sigma_proofs.len() != commitments
    {
        return Err(Phase2Error::Mismatch(format!(
            "{} commitments, the circuit has {commitments}",
            last.sigma_g2.len()
        )));
    }
    if let Some(i) = (0..commitments).find(|&i| last.sigma_ckk[i].len() != evaluations.ckk[i].len())
    {
        return Err(Phase2Error::Mismatch(format!(
            "commitment {i} commits to {} wires, the circuit's to {}",
            last.sigma_ckk[i].len(),
            evaluations.ckk[i].len()
        )));
    }
    let committed: usize = evaluations.ckk.iter().map(Vec::len).sum();
    let private = evaluations
        .a
        .len()
        .checked_sub(evaluations.vkk.len() + committed)
        .ok_or_else(|| {
            Phase2Error::Mismatch("the evaluations split more wires than they hold".to_owned())
        })?;
    if last.pkk.len() != private {
        return Err(Phase2Error::Mismatch(format!(
            "PKK holds {} points, the circuit has {private} private wires",
            last.pkk.len()
        )));
    }
    if last.z.len() + 1 != srs.n() {
        return Err(Phase2Error::Mismatch(format!(
            "Z holds {} points, the phase 1 domain N = {} needs N - 1",
            last.z.len(),
            srs.n()
        )));
    }
    super::verify_descent(pool, control, initial, last).map_err(|error| match error {
        super::VerifyError::Run(message) => Phase2Error::Worker(message),
        other => Phase2Error::Descent(other),
    })
}

fn keys(p: Phase2, srs: &Srs, evaluations: &Evaluations) -> (ProvingKey, VerifyingKey) {
    let infinity_a: Vec<bool> = evaluations
        .a
        .iter()
        .map(|e| bool::from(e.is_identity()))
        .collect();
    let infinity_b: Vec<bool> = evaluations
        .b
        .iter()
        .map(|e| bool::from(e.is_identity()))
        .collect();
    let finite = |points: &[G1Affine]| -> Vec<G1Affine> {
        points
            .iter()
            .filter(|e| !bool::from(e.is_identity()))
            .copied()
            .collect()
    };
    let b2 = evaluations
        .b2
        .iter()
        .filter(|e| !bool::from(e.is_identity()))
        .copied()
        .collect();
    let commitment_keys = evaluations
        .ckk
        .iter()
        .zip(&p.sigma_ckk)
        .map(|(basis, sigma)| (basis.clone(), sigma.clone()))
        .collect();
    let vk = VerifyingKey {
        alpha_g1: srs.alpha_tau[0],
        beta_g1: srs.beta_tau[0],
        beta_g2: srs.beta_g2,
        gamma_g2: curve::g2(),
        delta_g1: p.delta_g1,
        delta_g2: p.delta_g2,
        k: evaluations.vkk.clone(),
        public_and_commitment_committed: evaluations.public_and_commitment_committed.clone(),
        commitment_keys: p.sigma_g2.iter().map(|s| (curve::g2(), -*s)).collect(),
    };
    let pk = ProvingKey {
        power: srs.power(),
        alpha_g1: srs.alpha_tau[0],
        beta_g1: srs.beta_tau[0],
        delta_g1: p.delta_g1,
        a: finite(&evaluations.a),
        b: finite(&evaluations.b),
        z: p.z,
        k: p.pkk,
        beta_g2: srs.beta_g2,
        delta_g2: p.delta_g2,
        b2,
        infinity_a,
        infinity_b,
        commitment_keys,
    };
    (pk, vk)
}

/// gnark-crypto's `fft.Domain.WriteTo` for `N = 2^power`.
///
/// Computed from the root of unity alone (no twiddle table): a reader calls it on the size a
/// file's first 8 bytes announce, before the file has shown it holds that much.
fn domain_bytes(power: u32) -> Vec<u8> {
    let n = 1u64 << power;
    let omega = crate::fft::gnark_omega(power);
    let omega_inv = omega
        .invert()
        .expect("invariant: a root of unity is invertible");
    let n_inv = Scalar::from(n)
        .invert()
        .expect("invariant: N < r is invertible");
    let generator = Scalar::from(7u64);
    let generator_inv = generator.invert().expect("invariant: 7 is invertible");
    let mut out = n.to_be_bytes().to_vec();
    for s in [n_inv, omega, omega_inv, generator, generator_inv] {
        out.extend_from_slice(&s.to_bytes_be());
    }
    out.push(1);
    out
}

fn count(len: usize) -> u32 {
    u32::try_from(len).expect("invariant: fewer than 2^32 entries")
}

/// Reads a proving key (see [`ProvingKey::read`]): with `load`, every vector; without, the
/// five large ones (A, B, Z, K, G2 B) located and stepped over, every other part read and every
/// length checked as a whole read checks them.
pub(crate) fn read_layout<R: Skip>(
    pool: &Pool,
    control: &Control,
    input: R,
    limits: &crate::codec::Limits,
    (checks, load): (KeyChecks, bool),
) -> Result<Layout, CodecError> {
    use crate::codec::Location;
    let mut r = HashingReader::new(input).with_end(limits.file_len);
    let invalid = |message: String| {
        CodecError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("proving key: {message}"),
        ))
    };
    let mut n = [0u8; 8];
    r.fill(&mut n, Location::value("domain size"))?;
    let power = limits.check_n_from(u64::from_be_bytes(n), 0, 1)?;
    // Z alone holds N - 1 points of at least 48 bytes: a file too short for them is refused
    // before any work for its size.
    if let Some(len) = limits.file_len
        && ((1u64 << power) - 1).saturating_mul(48) > len
    {
        return Err(invalid(format!(
            "N = 2^{power} in a file of {len} bytes: too short for its Z"
        )));
    }
    let expected = domain_bytes(power);
    let mut constants = vec![0u8; expected.len() - 8];
    r.fill(&mut constants, Location::value("domain constants"))?;
    let (fixed, flag) = constants.split_at(constants.len() - 1);
    if fixed != &expected[8..expected.len() - 1] || flag[0] > 1 {
        return Err(invalid(format!(
            "the domain's constants are not gnark-crypto's for N = 2^{power}"
        )));
    }
    // The first point's flag tells the encoding: gnark writes a key one way or the other.
    let mut first = [0u8; 48];
    r.fill(&mut first, Location::value("[alpha]_1"))?;
    let encoding = if first[0] & 0x80 != 0 {
        KeyEncoding::Compressed
    } else {
        KeyEncoding::Raw
    };
    let alpha_g1 = {
        let mut bytes = first.to_vec();
        if encoding == KeyEncoding::Raw {
            let mut rest = [0u8; 48];
            r.fill(&mut rest, Location::value("[alpha]_1"))?;
            bytes.extend_from_slice(&rest);
        }
        lockstep_bls12::ffi::g1_deserialize(&bytes, checks == KeyChecks::Subgroups).map_err(
            |problem| CodecError::Point {
                location: Location::value("[alpha]_1"),
                offset: expected.len() as u64,
                problem: problem.into(),
            },
        )?
    };
    let g1 = |r: &mut HashingReader<_>, name| G1Affine::one(r, name, encoding, checks);
    let g2 = |r: &mut HashingReader<_>, name| G2Affine::one(r, name, encoding, checks);
    let beta_g1 = g1(&mut r, "[beta]_1")?;
    let delta_g1 = g1(&mut r, "[delta]_1")?;
    let mode = (checks, load);
    let a = key_part(pool, control, &mut r, "G1 A", encoding, mode)?;
    let b = key_part(pool, control, &mut r, "G1 B", encoding, mode)?;
    let z: Part<G1Affine> = key_part(pool, control, &mut r, "G1 Z", encoding, mode)?;
    let k = key_part(pool, control, &mut r, "G1 K", encoding, mode)?;
    let beta_g2 = g2(&mut r, "[beta]_2")?;
    let delta_g2 = g2(&mut r, "[delta]_2")?;
    let b2: Part<G2Affine> = key_part(pool, control, &mut r, "G2 B", encoding, mode)?;
    let mut word = |name| -> Result<u64, CodecError> {
        let mut bytes = [0u8; 8];
        r.fill(&mut bytes, Location::value(name))?;
        Ok(u64::from_be_bytes(bytes))
    };
    let wires = word("wire count")?;
    let infinite_a = word("infinite A count")?;
    let infinite_b = word("infinite B count")?;
    // Each flag is a byte the file must hold: a count beyond the points read is a lie
    // refused before any allocation for it.
    let bound = (a.len() as u64 + b.len() as u64 + k.len() as u64).saturating_add(1 << 20);
    if wires > bound || infinite_a > wires || infinite_b > wires {
        return Err(invalid(format!(
            "{wires} wires with {infinite_a} infinite A and {infinite_b} infinite B"
        )));
    }
    let wires = usize::try_from(wires)
        .map_err(|_| invalid(format!("{wires} wires: more than this machine can count")))?;
    let mut flags = |name| -> Result<Vec<bool>, CodecError> {
        let mut bytes = vec![0u8; wires];
        r.fill(&mut bytes, Location::value(name))?;
        bytes
            .iter()
            .map(|&f| match f {
                0 => Ok(false),
                1 => Ok(true),
                other => Err(invalid(format!("{name}: flag byte {other}, not 0 or 1"))),
            })
            .collect()
    };
    let infinity_a = flags("infinity A flags")?;
    let infinity_b = flags("infinity B flags")?;
    let mut commitments = [0u8; 4];
    r.fill(&mut commitments, Location::value("commitment count"))?;
    let commitments = u32::from_be_bytes(commitments);
    if commitments as usize > crate::r1cs::MAX_COMMITMENTS {
        return Err(invalid(format!("{commitments} commitments")));
    }
    let mut commitment_keys = Vec::new();
    for _ in 0..commitments {
        let basis = read_key_points(pool, control, &mut r, "commitment basis", encoding, checks)?;
        let sigma: Vec<G1Affine> = read_key_points(
            pool,
            control,
            &mut r,
            "commitment basis times sigma",
            encoding,
            checks,
        )?;
        if sigma.len() != basis.len() {
            return Err(invalid(format!(
                "a commitment basis of {} points with {} times sigma",
                basis.len(),
                sigma.len()
            )));
        }
        commitment_keys.push((basis, sigma));
    }
    r.finish_unhashed()?;
    let finite = |flags: &[bool]| flags.iter().filter(|&&f| !f).count();
    let counted = |flags: &[bool]| flags.iter().filter(|&&f| f).count() as u64;
    let n = 1usize << power;
    let checks = [
        (counted(&infinity_a) == infinite_a, "infinite A count"),
        (counted(&infinity_b) == infinite_b, "infinite B count"),
        (a.len() == finite(&infinity_a), "A against its flags"),
        (b.len() == finite(&infinity_b), "B against its flags"),
        (b2.len() == finite(&infinity_b), "G2 B against the B flags"),
        (z.len() + 1 == n || z.len() == n, "Z against the domain"),
    ];
    if let Some((_, what)) = checks.iter().find(|(holds, _)| !holds) {
        return Err(invalid(format!("{what}: the lengths disagree")));
    }
    Ok(Layout {
        power,
        alpha_g1,
        beta_g1,
        delta_g1,
        a,
        b,
        z,
        k,
        beta_g2,
        delta_g2,
        b2,
        infinity_a,
        infinity_b,
        commitment_keys,
        encoding,
    })
}

impl ProvingKey {
    /// Writes the key as gnark's `ProvingKey.WriteTo` and returns the SHA-256 of the bytes.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut w = HashingWriter::new(out);
        w.put(&domain_bytes(self.power))?;
        for p in [&self.alpha_g1, &self.beta_g1, &self.delta_g1] {
            w.put(&p.to_compressed())?;
        }
        for v in [&self.a, &self.b, &self.z, &self.k] {
            write_counted(pool, control, &mut w, v)?;
        }
        w.put(&self.beta_g2.to_compressed())?;
        w.put(&self.delta_g2.to_compressed())?;
        write_counted(pool, control, &mut w, &self.b2)?;
        write_tail(&self.parts(), &mut w)?;
        for (basis, sigma) in &self.commitment_keys {
            write_counted(pool, control, &mut w, basis)?;
            write_counted(pool, control, &mut w, sigma)?;
        }
        Ok(w.finish()?.0)
    }
}

/// How a proving key's points are encoded: gnark's `WriteTo` (compressed) or `WriteRawTo`
/// (uncompressed: twice the bytes, read without square roots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyEncoding {
    /// 48 bytes a G1 point, 96 a G2 one.
    Compressed,
    /// 96 bytes a G1 point, 192 a G2 one.
    Raw,
}

/// Point decoders by group, encoding and check (function pointers for the vector reader).
fn g1_decoder<const N: usize, const SUBGROUP: bool>(
    bytes: &crate::codec::Compressed<N>,
) -> Result<G1Affine, crate::codec::PointProblem> {
    Ok(lockstep_bls12::ffi::g1_deserialize(&bytes.0, SUBGROUP)?)
}

fn g2_decoder<const N: usize, const SUBGROUP: bool>(
    bytes: &crate::codec::Compressed<N>,
) -> Result<G2Affine, crate::codec::PointProblem> {
    Ok(lockstep_bls12::ffi::g2_deserialize(&bytes.0, SUBGROUP)?)
}

/// Reads a u32 BE count and that many points of `name` in `encoding`, checked by `checks`.
fn read_key_points<P, R>(
    pool: &Pool,
    control: &Control,
    r: &mut HashingReader<R>,
    name: &'static str,
    encoding: KeyEncoding,
    checks: KeyChecks,
) -> Result<Vec<P>, CodecError>
where
    P: KeyPoint,
    R: std::io::Read,
{
    let mut count = [0u8; 4];
    r.fill(&mut count, crate::codec::Location::value(name))?;
    let count = u32::from_be_bytes(count) as usize;
    P::read(pool, control, r, name, 0, count, encoding, checks)
}

/// Where one of a key's vectors lies in its file: its first point's offset and its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Section {
    pub(crate) offset: u64,
    pub(crate) count: usize,
}

/// One of a key's large vectors as a read leaves it: read, or located (a streamed read).
pub(crate) enum Part<P> {
    Points(Vec<P>),
    At(Section),
}

impl<P> Part<P> {
    fn len(&self) -> usize {
        match self {
            Self::Points(points) => points.len(),
            Self::At(section) => section.count,
        }
    }

    /// The points of a key read whole.
    fn points(self) -> Vec<P> {
        match self {
            Self::Points(points) => points,
            Self::At(_) => unreachable!("invariant: a key read whole holds its points"),
        }
    }

    /// Where a streamed read found the vector.
    pub(crate) fn section(&self) -> Section {
        match self {
            Self::At(section) => *section,
            Self::Points(_) => unreachable!("invariant: a streamed read locates its vectors"),
        }
    }
}

/// [`read_key_points`], or with `load` false the count read and the points stepped over.
fn key_part<P, R>(
    pool: &Pool,
    control: &Control,
    r: &mut HashingReader<R>,
    name: &'static str,
    encoding: KeyEncoding,
    (checks, load): (KeyChecks, bool),
) -> Result<Part<P>, CodecError>
where
    P: KeyPoint,
    R: Skip,
{
    if load {
        return Ok(Part::Points(read_key_points(
            pool, control, r, name, encoding, checks,
        )?));
    }
    let mut count = [0u8; 4];
    r.fill(&mut count, crate::codec::Location::value(name))?;
    let count = u32::from_be_bytes(count) as usize;
    let offset = r.offset();
    r.skip(
        count as u64 * P::size(encoding),
        crate::codec::Location::value(name),
    )?;
    Ok(Part::At(Section { offset, count }))
}

/// A proving key as [`read_layout`] leaves it: its small parts read, its five large vectors
/// read or located.
pub(crate) struct Layout {
    pub(crate) power: u32,
    pub(crate) alpha_g1: G1Affine,
    pub(crate) beta_g1: G1Affine,
    pub(crate) delta_g1: G1Affine,
    pub(crate) a: Part<G1Affine>,
    pub(crate) b: Part<G1Affine>,
    pub(crate) z: Part<G1Affine>,
    pub(crate) k: Part<G1Affine>,
    pub(crate) beta_g2: G2Affine,
    pub(crate) delta_g2: G2Affine,
    pub(crate) b2: Part<G2Affine>,
    pub(crate) infinity_a: Vec<bool>,
    pub(crate) infinity_b: Vec<bool>,
    pub(crate) commitment_keys: Vec<(Vec<G1Affine>, Vec<G1Affine>)>,
    pub(crate) encoding: KeyEncoding,
}

/// A group a proving key holds points of.
pub(crate) trait KeyPoint: Copy + Default + Send + Sync {
    /// `count` points, the first of them the vector's `first`-th (for errors).
    #[allow(clippy::too_many_arguments)]
    fn read<R: std::io::Read>(
        pool: &Pool,
        control: &Control,
        r: &mut HashingReader<R>,
        name: &'static str,
        first: u64,
        count: usize,
        encoding: KeyEncoding,
        checks: KeyChecks,
    ) -> Result<Vec<Self>, CodecError>;

    /// A point's bytes in `encoding`.
    fn size(encoding: KeyEncoding) -> u64;

    fn one<R: std::io::Read>(
        r: &mut HashingReader<R>,
        name: &'static str,
        encoding: KeyEncoding,
        checks: KeyChecks,
    ) -> Result<Self, CodecError> {
        let pool = Pool::current_thread();
        let mut v = Self::read(&pool, &Control::new(), r, name, 0, 1, encoding, checks)?;
        Ok(v.pop().expect("invariant: one point read"))
    }
}

macro_rules! key_point {
    ($Affine:ty, $decoder:ident, $c:literal, $u:literal) => {
        impl KeyPoint for $Affine {
            fn read<R: std::io::Read>(
                pool: &Pool,
                control: &Control,
                r: &mut HashingReader<R>,
                name: &'static str,
                first: u64,
                count: usize,
                encoding: KeyEncoding,
                checks: KeyChecks,
            ) -> Result<Vec<Self>, CodecError> {
                use crate::codec::stream::read_vector;
                let sub = checks == KeyChecks::Subgroups;
                let (p, c) = (pool, control);
                match (encoding, sub) {
                    (KeyEncoding::Compressed, true) => {
                        read_vector(p, c, r, name, first, count, $decoder::<$c, true>, None)
                    }
                    (KeyEncoding::Compressed, false) => {
                        read_vector(p, c, r, name, first, count, $decoder::<$c, false>, None)
                    }
                    (KeyEncoding::Raw, true) => {
                        read_vector(p, c, r, name, first, count, $decoder::<$u, true>, None)
                    }
                    (KeyEncoding::Raw, false) => {
                        read_vector(p, c, r, name, first, count, $decoder::<$u, false>, None)
                    }
                }
            }

            fn size(encoding: KeyEncoding) -> u64 {
                match encoding {
                    KeyEncoding::Compressed => $c,
                    KeyEncoding::Raw => $u,
                }
            }
        }
    };
}

key_point!(G1Affine, g1_decoder, 48, 96);
key_point!(G2Affine, g2_decoder, 96, 192);

impl ProvingKey {
    /// Reads a key written by [`write`](Self::write) or gnark's `ProvingKey.WriteTo`
    /// (compressed points) or `WriteRawTo` (uncompressed: told by the first point's flag, and
    /// every point must then be so), checking every point canonical, on its curve and in its
    /// subgroup, the domain's constants against gnark-crypto's for its size, and the vectors'
    /// lengths against each other: `A`, `B` and `B2` hold the wires the flags say are finite,
    /// `Z` `N - 1` or `N` points.
    ///
    /// # Errors
    /// A bad point (named), a truncated file, trailing bytes, a domain outside `limits`,
    /// constants or lengths that disagree ([`CodecError::Io`] of kind `InvalidData`, named),
    /// memory for a vector, cancellation.
    pub fn read<R: std::io::Read>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &crate::codec::Limits,
    ) -> Result<Self, CodecError> {
        Ok(Self::read_with(pool, control, input, limits, KeyChecks::Subgroups)?.0)
    }

    /// [`read`](Self::read) with the points checked as `checks` says; the key and how its
    /// points were encoded.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_with<R: std::io::Read>(
        pool: &Pool,
        control: &Control,
        input: R,
        limits: &crate::codec::Limits,
        checks: KeyChecks,
    ) -> Result<(Self, KeyEncoding), CodecError> {
        let input = Discarding(std::io::BufReader::new(input));
        let layout = read_layout(pool, control, input, limits, (checks, true))?;
        Ok((
            Self {
                power: layout.power,
                alpha_g1: layout.alpha_g1,
                beta_g1: layout.beta_g1,
                delta_g1: layout.delta_g1,
                a: layout.a.points(),
                b: layout.b.points(),
                z: layout.z.points(),
                k: layout.k.points(),
                beta_g2: layout.beta_g2,
                delta_g2: layout.delta_g2,
                b2: layout.b2.points(),
                infinity_a: layout.infinity_a,
                infinity_b: layout.infinity_b,
                commitment_keys: layout.commitment_keys,
            },
            layout.encoding,
        ))
    }

    /// Writes the key as gnark's `ProvingKey.WriteRawTo` does (uncompressed points, which
    /// gnark's `ReadFrom` reads too) and returns the SHA-256 of the bytes.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    pub fn write_raw<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        write_raw_from(pool, control, out, self)
    }
}

/// One of a proving key's large vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyVector {
    /// `[A_j(tau)]_1` of the wires whose `A` is finite.
    A,
    /// `[B_j(tau)]_1` of the wires whose `B` is finite.
    B,
    /// `[tau^i (tau^N - 1) / delta]_1`.
    Z,
    /// The private wires' `(beta A + alpha B + C) / delta`.
    K,
    /// `[B_j(tau)]_2` of the wires whose `B` is finite.
    B2,
}

impl KeyVector {
    /// The vector's name in errors (a whole read's).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::A => "G1 A",
            Self::B => "G1 B",
            Self::Z => "G1 Z",
            Self::K => "G1 K",
            Self::B2 => "G2 B",
        }
    }
}

/// A proving key's parts that [`write_raw_from`] writes around its five large vectors.
pub(crate) struct RawParts<'a> {
    pub(crate) power: u32,
    pub(crate) alpha_g1: G1Affine,
    pub(crate) beta_g1: G1Affine,
    pub(crate) delta_g1: G1Affine,
    pub(crate) beta_g2: G2Affine,
    pub(crate) delta_g2: G2Affine,
    pub(crate) infinity_a: &'a [bool],
    pub(crate) infinity_b: &'a [bool],
    pub(crate) commitment_keys: &'a [(Vec<G1Affine>, Vec<G1Affine>)],
}

/// A proving key a raw write reads: in memory, or from its file a chunk at a time.
pub(crate) trait RawSource {
    fn parts(&self) -> RawParts<'_>;
    fn count(&self, vector: KeyVector) -> usize;
    fn g1(
        &self,
        pool: &Pool,
        control: &Control,
        vector: KeyVector,
        range: std::ops::Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G1Affine]>, CodecError>;
    fn g2(
        &self,
        pool: &Pool,
        control: &Control,
        range: std::ops::Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G2Affine]>, CodecError>;
}

impl RawSource for ProvingKey {
    fn parts(&self) -> RawParts<'_> {
        RawParts {
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
        self.vector(vector).map_or(self.b2.len(), <[G1Affine]>::len)
    }

    fn g1(
        &self,
        _: &Pool,
        _: &Control,
        vector: KeyVector,
        range: std::ops::Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G1Affine]>, CodecError> {
        let points = self.vector(vector).expect("invariant: G2 B is read by g2");
        Ok(points[range].into())
    }

    fn g2(
        &self,
        _: &Pool,
        _: &Control,
        range: std::ops::Range<usize>,
    ) -> Result<std::borrow::Cow<'_, [G2Affine]>, CodecError> {
        Ok(self.b2[range].into())
    }
}

impl ProvingKey {
    /// The points of the five large vectors: a proof's MSM points (its progress total).
    pub fn msm_points(&self) -> u64 {
        (self.a.len() + self.b.len() + self.z.len() + self.k.len() + self.b2.len()) as u64
    }

    /// A G1 vector (`None` for G2 B).
    fn vector(&self, vector: KeyVector) -> Option<&[G1Affine]> {
        match vector {
            KeyVector::A => Some(&self.a),
            KeyVector::B => Some(&self.b),
            KeyVector::Z => Some(&self.z),
            KeyVector::K => Some(&self.k),
            KeyVector::B2 => None,
        }
    }
}

/// The wire count, the infinity counts and flags, and the commitment count.
fn write_tail<W: Write>(parts: &RawParts<'_>, w: &mut HashingWriter<W>) -> Result<(), CodecError> {
    let wires = parts.infinity_a.len() as u64;
    let infinite = |flags: &[bool]| flags.iter().filter(|&&f| f).count() as u64;
    for v in [
        wires,
        infinite(parts.infinity_a),
        infinite(parts.infinity_b),
    ] {
        w.put(&v.to_be_bytes())?;
    }
    for flags in [parts.infinity_a, parts.infinity_b] {
        let bytes: Vec<u8> = flags.iter().map(|&f| u8::from(f)).collect();
        w.put(&bytes)?;
    }
    w.put(&count(parts.commitment_keys.len()).to_be_bytes())
}

/// Points a raw write reads at a time from a key's file.
const RAW_CHUNK: usize = 1 << 16;

/// Writes `key` as gnark's `ProvingKey.WriteRawTo` does, its vectors read [`RAW_CHUNK`] points
/// at a time, and returns the SHA-256 of the bytes.
pub(crate) fn write_raw_from<W: Write, K: RawSource + ?Sized>(
    pool: &Pool,
    control: &Control,
    out: W,
    key: &K,
) -> Result<[u8; 32], CodecError> {
    let mut w = HashingWriter::new(out);
    let parts = key.parts();
    let g1s = |w: &mut HashingWriter<W>, points: &[G1Affine]| -> Result<(), CodecError> {
        let encoded = pool
            .map_items(control, points, |_, p| {
                Ok::<_, std::convert::Infallible>(p.to_uncompressed())
            })
            .map_err(crate::codec::stream::worker_failure)?;
        for bytes in encoded {
            w.put(&bytes)?;
        }
        Ok(())
    };
    w.put(&domain_bytes(parts.power))?;
    for p in [&parts.alpha_g1, &parts.beta_g1, &parts.delta_g1] {
        w.put(&p.to_uncompressed())?;
    }
    for v in [KeyVector::A, KeyVector::B, KeyVector::Z, KeyVector::K] {
        let n = key.count(v);
        w.put(&count(n).to_be_bytes())?;
        for start in (0..n).step_by(RAW_CHUNK) {
            let points = key.g1(pool, control, v, start..n.min(start + RAW_CHUNK))?;
            g1s(&mut w, &points)?;
        }
    }
    w.put(&parts.beta_g2.to_uncompressed())?;
    w.put(&parts.delta_g2.to_uncompressed())?;
    let n = key.count(KeyVector::B2);
    w.put(&count(n).to_be_bytes())?;
    for start in (0..n).step_by(RAW_CHUNK) {
        for p in key
            .g2(pool, control, start..n.min(start + RAW_CHUNK))?
            .iter()
        {
            w.put(&p.to_uncompressed())?;
        }
    }
    write_tail(&parts, &mut w)?;
    for (basis, sigma) in parts.commitment_keys {
        for points in [basis, sigma] {
            w.put(&count(points.len()).to_be_bytes())?;
            g1s(&mut w, points)?;
        }
    }
    Ok(w.finish()?.0)
}

impl VerifyingKey {
    /// Reads a key written by [`write`](Self::write) or gnark's `VerifyingKey.WriteTo`,
    /// checking every point.
    ///
    /// # Errors
    /// A bad point (named), a truncated file, trailing bytes, a committed-input index beyond
    /// 2^32.
    pub fn read<R: std::io::Read>(input: R) -> Result<Self, CodecError> {
        use crate::codec::Location;
        use crate::codec::stream::{HashingReader, read_counted, read_point};
        let pool = Pool::current_thread();
        let control = Control::new();
        let mut r = HashingReader::new(input);
        let g1 =
            |r: &mut HashingReader<R>, name| read_point::<G1Affine, _>(r, Location::value(name));
        let g2 =
            |r: &mut HashingReader<R>, name| read_point::<G2Affine, _>(r, Location::value(name));
        let alpha_g1 = g1(&mut r, "[alpha]_1")?;
        let beta_g1 = g1(&mut r, "[beta]_1")?;
        let beta_g2 = g2(&mut r, "[beta]_2")?;
        let gamma_g2 = g2(&mut r, "[gamma]_2")?;
        let delta_g1 = g1(&mut r, "[delta]_1")?;
        let delta_g2 = g2(&mut r, "[delta]_2")?;
        let word = |r: &mut HashingReader<R>, name| -> Result<u32, CodecError> {
            let mut bytes = [0u8; 4];
            r.fill(&mut bytes, Location::value(name))?;
            Ok(u32::from_be_bytes(bytes))
        };
        let k = read_counted(&pool, &control, &mut r, "K")?;
        let lists = word(&mut r, "committed lists")?;
        let mut public_and_commitment_committed = Vec::new();
        for _ in 0..lists {
            let len = word(&mut r, "committed list")?;
            let mut list = Vec::new();
            for _ in 0..len {
                let mut bytes = [0u8; 8];
                r.fill(&mut bytes, Location::value("committed input"))?;
                let value = u64::from_be_bytes(bytes);
                let value = u32::try_from(value).map_err(|_| {
                    CodecError::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("committed input {value} is beyond any circuit"),
                    ))
                })?;
                list.push(value as usize);
            }
            public_and_commitment_committed.push(list);
        }
        let keys = word(&mut r, "commitment keys")?;
        let mut commitment_keys = Vec::new();
        for _ in 0..keys {
            commitment_keys.push((
                g2(&mut r, "commitment G")?,
                g2(&mut r, "commitment -[sigma]_2")?,
            ));
        }
        r.finish()?;
        Ok(Self {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            k,
            public_and_commitment_committed,
            commitment_keys,
        })
    }

    /// Writes the key as gnark's `VerifyingKey.WriteTo` and returns the SHA-256 of the bytes.
    ///
    /// # Errors
    /// Writing fails, or the run is cancelled.
    pub fn write<W: Write>(
        &self,
        pool: &Pool,
        control: &Control,
        out: W,
    ) -> Result<[u8; 32], CodecError> {
        let mut w = HashingWriter::new(out);
        w.put(&self.alpha_g1.to_compressed())?;
        w.put(&self.beta_g1.to_compressed())?;
        w.put(&self.beta_g2.to_compressed())?;
        w.put(&self.gamma_g2.to_compressed())?;
        w.put(&self.delta_g1.to_compressed())?;
        w.put(&self.delta_g2.to_compressed())?;
        write_counted(pool, control, &mut w, &self.k)?;
        w.put(&count(self.public_and_commitment_committed.len()).to_be_bytes())?;
        for list in &self.public_and_commitment_committed {
            w.put(&count(list.len()).to_be_bytes())?;
            for &v in list {
                w.put(&(v as u64).to_be_bytes())?;
            }
        }
        w.put(&count(self.commitment_keys.len()).to_be_bytes())?;
        for (g, neg_sigma) in &self.commitment_keys {
            w.put(&g.to_compressed())?;
            w.put(&neg_sigma.to_compressed())?;
        }
        Ok(w.finish()?.0)
    }
}
