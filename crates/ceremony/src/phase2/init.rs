//! `Phase2.Initialize`: the serial reference and its parallel form.

use std::convert::Infallible;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::{Curve, Group};
use lockstep_shard::{Control, Cut, Owned, OwnedError, Pool, memory};

use super::{Evaluations, Phase2, Phase2Error};
use crate::curve;
use crate::fft::{self, Domain, FftGroup};
use crate::phase1::{Srs, UpdateProof};
use crate::r1cs::{Coefficient, R1cs, Term};

/// Constraints read per batch of the accumulation: the terms of one batch are routed to their
/// owners, applied, and dropped before the next is read.
pub const BATCH_CONSTRAINTS: usize = 16_384;

/// A block of the per-wire conversion: `A`, `B`, `B2` and `beta A + alpha B + C`.
type WireBlock<'a> = (
    &'a mut [G1Affine],
    &'a mut [G1Affine],
    &'a mut [G2Affine],
    &'a mut [G1Affine],
);

/// Points per block of the per-wire and `Z` conversions.
const BLOCK: usize = 256;

/// The Lagrange bases at the domain's points.
struct Bases {
    tau1: Vec<G1Affine>,
    tau2: Vec<G2Affine>,
    alpha1: Vec<G1Affine>,
    beta1: Vec<G1Affine>,
}

/// One wire's sums over the constraints that use it.
#[derive(Clone, Copy, Debug)]
struct Sums {
    a: G1Projective,
    b: G1Projective,
    beta_a: G1Projective,
    alpha_b: G1Projective,
    c: G1Projective,
    b2: G2Projective,
}

impl Sums {
    fn identity() -> Self {
        Self {
            a: G1Projective::identity(),
            b: G1Projective::identity(),
            beta_a: G1Projective::identity(),
            alpha_b: G1Projective::identity(),
            c: G1Projective::identity(),
            b2: G2Projective::identity(),
        }
    }

    fn combine(&mut self, other: Self) {
        self.a += other.a;
        self.b += other.b;
        self.beta_a += other.beta_a;
        self.alpha_b += other.alpha_b;
        self.c += other.c;
        self.b2 += other.b2;
    }
}

/// Which side of a constraint a term is on.
#[derive(Clone, Copy, Debug)]
enum Side {
    L,
    R,
    O,
}

/// One term of one constraint, routed to its wire's owner.
#[derive(Clone, Copy, Debug)]
struct Update {
    constraint: u32,
    side: Side,
    term: Term,
}

/// `acc += c * p`, as gnark's `accumulateG1/G2`: additions for the reserved coefficients, a
/// variable-time multiplication by the (public) coefficient otherwise ([`FftGroup::mul_public`]).
fn accumulate<G: FftGroup>(acc: &mut G, c: Coefficient<'_>, p: &G::Affine, reference: bool) {
    match c {
        Coefficient::Zero => {}
        Coefficient::One => *acc += p,
        Coefficient::MinusOne => *acc -= p,
        Coefficient::Two => {
            *acc += p;
            *acc += p;
        }
        Coefficient::Other(s) if reference => *acc += G::from_affine(p).mul_reference(s),
        Coefficient::Other(s) => *acc += G::from_affine(p).mul_public(s),
    }
}

/// Applies one term; `reference` picks the serial reference's multiplication.
fn apply(sums: &mut Sums, update: &Update, r1cs: &R1cs, bases: &Bases, reference: bool) {
    let i = update.constraint as usize;
    let c = r1cs.coefficient(update.term.coeff);
    match update.side {
        Side::L => {
            accumulate(&mut sums.a, c, &bases.tau1[i], reference);
            accumulate(&mut sums.beta_a, c, &bases.beta1[i], reference);
        }
        Side::R => {
            accumulate(&mut sums.b, c, &bases.tau1[i], reference);
            // Without evaluations there is no G2 basis, and no B2 to sum.
            if let Some(point) = bases.tau2.get(i) {
                accumulate(&mut sums.b2, c, point, reference);
            }
            accumulate(&mut sums.alpha_b, c, &bases.alpha1[i], reference);
        }
        Side::O => accumulate(&mut sums.c, c, &bases.tau1[i], reference),
    }
}

/// Appends constraint `index`'s terms, L then R then O, each in file order (gnark's order).
fn push_terms(r1cs: &R1cs, index: usize, out: &mut Vec<Update>) {
    let c = r1cs.constraint(index);
    let constraint = u32::try_from(index).expect("invariant: constraints <= N <= 2^32");
    for (side, terms) in [(Side::L, c.l), (Side::R, c.r), (Side::O, c.o)] {
        out.extend(terms.iter().map(|term| Update {
            constraint,
            side,
            term,
        }));
    }
}

/// The domain, and the commitments' committed inputs, once the inputs fit each other (before
/// any transform).
fn check_inputs(r1cs: &R1cs, srs: &Srs) -> Result<(Domain, Vec<Vec<usize>>), Phase2Error> {
    if srs.n() < r1cs.constraints() {
        return Err(Phase2Error::Phase1TooSmall {
            constraints: r1cs.constraints(),
            n: srs.n(),
        });
    }
    let committed = public_and_commitment_committed(r1cs)?;
    Ok((Domain::new(srs.power()), committed))
}

/// The sealed phase 1 `srs` fitted to the circuit: as it is when its domain is the circuit's,
/// cut to the circuit's domain when larger (the first powers of a larger phase 1 are a smaller
/// one's, as gnark's `Initialize` reads them). Every front end that starts a phase 2 from a
/// phase 1 of any power goes through this rule.
///
/// # Errors
/// [`Phase2Error::Phase1TooSmall`] if the phase 1's domain is smaller than the circuit's.
pub fn fit_phase1(srs: Srs, r1cs: &R1cs) -> Result<Srs, Phase2Error> {
    let need = r1cs.domain_power();
    if srs.power() < need {
        return Err(Phase2Error::Phase1TooSmall {
            constraints: r1cs.constraints(),
            n: srs.n(),
        });
    }
    Ok(if srs.power() > need {
        srs.truncated(need)
    } else {
        srs
    })
}

/// gnark's `Initialize(r1cs, commons)` on one thread, as gnark writes it: the reference.
///
/// # Errors
/// [`Phase2Error::Phase1TooSmall`] if the circuit has more constraints than `N`;
/// [`Phase2Error::Commitment`] for a commitment gnark's translation cannot place.
pub fn initialize_serial(r1cs: &R1cs, srs: &Srs) -> Result<(Phase2, Evaluations), Phase2Error> {
    let (domain, committed) = check_inputs(r1cs, srs)?;
    let n = domain.size();
    let bases = Bases {
        tau1: fft::lagrange_serial::<G1Projective>(&domain, &srs.g1_tau),
        tau2: fft::lagrange_serial::<G2Projective>(&domain, &srs.g2_tau),
        alpha1: fft::lagrange_serial::<G1Projective>(&domain, &srs.alpha_tau),
        beta1: fft::lagrange_serial::<G1Projective>(&domain, &srs.beta_tau),
    };
    let mut sums = vec![Sums::identity(); r1cs.wires()];
    let mut updates = Vec::new();
    for index in 0..r1cs.constraints() {
        updates.clear();
        push_terms(r1cs, index, &mut updates);
        for u in &updates {
            apply(&mut sums[u.term.wire as usize], u, r1cs, &bases, true);
        }
    }
    let a = sums.iter().map(|s| s.a.to_affine()).collect();
    let b = sums.iter().map(|s| s.b.to_affine()).collect();
    let b2 = sums.iter().map(|s| s.b2.to_affine()).collect();
    let k: Vec<G1Affine> = sums
        .iter()
        .map(|s| (s.beta_a + s.alpha_b + s.c).to_affine())
        .collect();
    let mut z: Vec<G1Affine> = (0..n)
        .map(|i| {
            if i + 1 < n {
                (G1Projective::from(srs.g1_tau[i + n]) - srs.g1_tau[i]).to_affine()
            } else {
                G1Affine::default()
            }
        })
        .collect();
    fft::bit_reverse(&mut z);
    z.truncate(n - 1);
    Ok(assemble(r1cs, committed, [a, b], b2, &k, z))
}

/// [`initialize_serial`] on `pool`: the same object and evaluations at every worker count.
///
/// Progress: the transforms' butterflies and scalings, each term applied, each wire and `Z`
/// point converted.
///
/// # Errors
/// As [`initialize_serial`]; cancellation, a stall or a panic of the run.
pub fn initialize(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    srs: &Srs,
) -> Result<(Phase2, Evaluations), Phase2Error> {
    initialize_batched(pool, control, r1cs, srs, BATCH_CONSTRAINTS)
}

/// [`initialize`] reading `batch` constraints at a time (tests cross batch boundaries with
/// small circuits).
///
/// # Errors
/// As [`initialize`].
#[doc(hidden)]
pub fn initialize_batched(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    srs: &Srs,
    batch: usize,
) -> Result<(Phase2, Evaluations), Phase2Error> {
    let (object, evaluations, _) = run(pool, control, r1cs, srs, batch, true)?;
    Ok((
        object,
        evaluations.expect("invariant: evaluations asked for"),
    ))
}

/// [`initialize`], also returning how long the four transforms took (the bench splits the
/// initialization into transforms and accumulation with it).
///
/// # Errors
/// As [`initialize`].
#[doc(hidden)]
pub fn initialize_timed(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    srs: &Srs,
) -> Result<(Phase2, Evaluations, std::time::Duration), Phase2Error> {
    let (object, evaluations, transforms) = run(pool, control, r1cs, srs, BATCH_CONSTRAINTS, true)?;
    Ok((
        object,
        evaluations.expect("invariant: evaluations asked for"),
        transforms,
    ))
}

/// The initial object alone, without the evaluations the keys need: no G2 transform (about
/// 40% of [`initialize`]'s work) and no per-wire `A`, `B`, `B2`. The same object as
/// [`initialize`] and [`initialize_serial`] return, at every worker count: what a coordinator
/// publishes; the evaluations are derived again at the seal.
///
/// # Errors
/// As [`initialize`].
pub fn initialize_object(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    srs: &Srs,
) -> Result<Phase2, Phase2Error> {
    Ok(run(pool, control, r1cs, srs, BATCH_CONSTRAINTS, false)?.0)
}

/// The parallel initialization, with or without the evaluations.
fn run(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    srs: &Srs,
    batch: usize,
    evaluations: bool,
) -> Result<(Phase2, Option<Evaluations>, std::time::Duration), Phase2Error> {
    let (domain, committed) = check_inputs(r1cs, srs)?;
    let n = domain.size();
    let started = std::time::Instant::now();
    let bases = Bases {
        tau1: fft::lagrange::<G1Projective>(pool, control, &domain, &srs.g1_tau)?,
        tau2: if evaluations {
            fft::lagrange::<G2Projective>(pool, control, &domain, &srs.g2_tau)?
        } else {
            Vec::new()
        },
        alpha1: fft::lagrange::<G1Projective>(pool, control, &domain, &srs.alpha_tau)?,
        beta1: fft::lagrange::<G1Projective>(pool, control, &domain, &srs.beta_tau)?,
    };
    let transforms = started.elapsed();
    let sums = accumulate_owned(pool, control, r1cs, &bases, batch.max(1))?;
    drop(bases);
    // Read in place from the owners' parts: no second vector of sums.
    let sum = |id: usize| -> &Sums { sums.get(id).expect("invariant: one sum a wire") };
    let wires = sums.len();
    let per_wire = if evaluations { wires } else { 0 };
    let filled =
        |what, len| memory::try_filled(len, G1Affine::default()).map_err(Phase2Error::memory(what));
    let mut a = filled("A", per_wire)?;
    let mut b = filled("B", per_wire)?;
    let mut b2 = memory::try_filled(per_wire, G2Affine::default())
        .map_err(Phase2Error::memory("B in G2"))?;
    let mut k = filled("K", wires)?;
    if evaluations {
        pool.for_each_block(
            control,
            (&mut a[..], &mut b[..], &mut b2[..], &mut k[..]),
            Cut::Blocks(BLOCK),
            |_, range, (a, b, b2, k): WireBlock<'_>| {
                let block: Vec<&Sums> = range.map(sum).collect();
                let pick =
                    |f: fn(&Sums) -> G1Projective| block.iter().map(|s| f(s)).collect::<Vec<_>>();
                G1Projective::to_affine_block(&pick(|s| s.a), a);
                G1Projective::to_affine_block(&pick(|s| s.b), b);
                G1Projective::to_affine_block(&pick(|s| s.beta_a + s.alpha_b + s.c), k);
                let g2: Vec<G2Projective> = block.iter().map(|s| s.b2).collect();
                G2Projective::to_affine_block(&g2, b2);
                Ok::<_, Infallible>(())
            },
        )?;
    } else {
        pool.for_each_block(
            control,
            &mut k[..],
            Cut::Blocks(BLOCK),
            |_, range, k: &mut [G1Affine]| {
                let points: Vec<G1Projective> = range
                    .map(|id| {
                        let s = sum(id);
                        s.beta_a + s.alpha_b + s.c
                    })
                    .collect();
                G1Projective::to_affine_block(&points, k);
                Ok::<_, Infallible>(())
            },
        )?;
    }
    drop(sums);
    let mut z = filled("Z", n)?;
    pool.for_each_block(
        control,
        &mut z[..],
        Cut::Blocks(BLOCK),
        |_, range, out: &mut [G1Affine]| {
            let points: Vec<G1Projective> = range
                .map(|i| {
                    if i + 1 < n {
                        G1Projective::from(srs.g1_tau[i + n]) - srs.g1_tau[i]
                    } else {
                        G1Projective::identity()
                    }
                })
                .collect();
            curve::g1_to_affine(&points, out);
            Ok::<_, Infallible>(())
        },
    )?;
    fft::bit_reverse(&mut z);
    z.truncate(n - 1);
    let (object, evals) = assemble(r1cs, committed, [a, b], b2, &k, z);
    Ok((object, evaluations.then_some(evals), transforms))
}

/// The per-wire sums by owner partitioning, `batch` constraints at a time.
fn accumulate_owned(
    pool: &Pool,
    control: &Control,
    r1cs: &R1cs,
    bases: &Bases,
    batch: usize,
) -> Result<Owned<Sums>, Phase2Error> {
    let owners = pool.workers();
    let mut owned = Owned::from_fn(r1cs.wires(), owners, |_| Sums::identity())
        .map_err(Phase2Error::memory("the per-wire sums"))?;
    let hot = hot_wires(r1cs, owners);
    if !hot.is_empty() {
        owned = owned.with_hot(&hot, Sums::identity, Sums::combine);
    }
    let mut updates = Vec::new();
    let mut position = 0usize;
    let mut first = 0usize;
    while first < r1cs.constraints() {
        let end = first.saturating_add(batch).min(r1cs.constraints());
        updates.clear();
        for index in first..end {
            push_terms(r1cs, index, &mut updates);
        }
        owned
            .apply(
                pool,
                control,
                position,
                &updates,
                |u| u.term.wire as usize,
                |sums, u| {
                    apply(sums, u, r1cs, bases, false);
                    Ok::<_, Infallible>(())
                },
            )
            .map_err(|e| match e {
                OwnedError::Run(run) => Phase2Error::from(run),
                other => Phase2Error::Worker(other.to_string()),
            })?;
        position += updates.len();
        first = end;
    }
    Ok(owned)
}

/// Wires that hold more than a quarter of an owner's fair share of all terms: with one owner,
/// none.
fn hot_wires(r1cs: &R1cs, owners: usize) -> Vec<usize> {
    if owners <= 1 {
        return Vec::new();
    }
    let mut counts = vec![0u32; r1cs.wires()];
    let mut total = 0u64;
    for index in 0..r1cs.constraints() {
        let c = r1cs.constraint(index);
        for terms in [c.l, c.r, c.o] {
            for term in terms.iter() {
                counts[term.wire as usize] = counts[term.wire as usize].saturating_add(1);
                total += 1;
            }
        }
    }
    let threshold = total / (4 * owners as u64);
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &count)| u64::from(count) > threshold)
        .map(|(wire, _)| wire)
        .collect()
}

/// gnark's `GetPublicAndCommitmentCommitted(CommitmentIndexes(), nbPublic)`: each commitment's
/// public wires, then the commitments it commits to as `nbPublic + their position`.
fn public_and_commitment_committed(r1cs: &R1cs) -> Result<Vec<Vec<usize>>, Phase2Error> {
    let commitments = r1cs.commitments();
    let indexes: Vec<usize> = commitments.iter().map(|c| c.commitment_index).collect();
    commitments
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let (public, committed) = c
                .public_and_commitment_committed
                .split_at(c.nb_public_committed);
            let mut out = public.to_vec();
            let mut k = 0usize;
            for &wire in committed {
                while indexes.get(k).is_some_and(|&w| w != wire) {
                    k += 1;
                }
                if k >= indexes.len() {
                    return Err(Phase2Error::Commitment { index, wire });
                }
                out.push(k + r1cs.public());
            }
            Ok(out)
        })
        .collect()
}

/// Splits the per-wire `beta A + alpha B + C` as gnark does and builds the initial object.
fn assemble(
    r1cs: &R1cs,
    public_and_commitment_committed: Vec<Vec<usize>>,
    [a, b]: [Vec<G1Affine>; 2],
    b2: Vec<G2Affine>,
    k: &[G1Affine],
    z: Vec<G1Affine>,
) -> (Phase2, Evaluations) {
    let commitments = r1cs.commitments();
    let mut ckk: Vec<Vec<G1Affine>> = commitments
        .iter()
        .map(|c| Vec::with_capacity(c.private_committed.len()))
        .collect();
    let mut vkk = Vec::with_capacity(r1cs.public() + commitments.len());
    let mut pkk = Vec::new();
    let mut committed = MergeIterator::new(commitments.iter().map(|c| &c.private_committed[..]));
    let mut seen = 0usize;
    for (j, point) in k.iter().enumerate() {
        let commitment = committed.index_if_next(j);
        let is_commitment = seen < commitments.len() && commitments[seen].commitment_index == j;
        if let Some(c) = commitment {
            ckk[c].push(*point);
        } else if j < r1cs.public() || is_commitment {
            vkk.push(*point);
        } else {
            pkk.push(*point);
        }
        if is_commitment {
            seen += 1;
        }
    }
    let phase2 = Phase2 {
        delta_g1: curve::g1(),
        delta_g2: curve::g2(),
        pkk,
        z,
        sigma_ckk: ckk.clone(),
        sigma_g2: vec![curve::g2(); commitments.len()],
        delta_proof: UpdateProof::default(),
        sigma_proofs: vec![UpdateProof::default(); commitments.len()],
        challenge: None,
    };
    let evaluations = Evaluations {
        a,
        b,
        b2,
        vkk,
        ckk,
        public_and_commitment_committed,
    };
    (phase2, evaluations)
}

/// gnark's `internal.MergeIterator` over sorted wire lists, with its exact semantics: the
/// least head (first list on ties) is consumed only when it equals the wire asked about.
struct MergeIterator<'a> {
    lists: Vec<&'a [usize]>,
}

impl<'a> MergeIterator<'a> {
    fn new(lists: impl Iterator<Item = &'a [usize]>) -> Self {
        Self {
            lists: lists.collect(),
        }
    }

    fn least(&self) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (index, list) in self.lists.iter().enumerate() {
            if let Some(&head) = list.first()
                && best.is_none_or(|(value, _)| head < value)
            {
                best = Some((head, index));
            }
        }
        best
    }

    fn index_if_next(&mut self, wire: usize) -> Option<usize> {
        match self.least() {
            Some((value, index)) if value == wire => {
                self.lists[index] = &self.lists[index][1..];
                Some(index)
            }
            _ => None,
        }
    }
}
