//! gnark's solver over a BLS12-381 R1CS: the full wire assignment from a witness (the public
//! and secret inputs), as gnark's `R1CS.Solve` finds it, for the prover.
//!
//! Wire 0 is the constant one; wires `1..public` take the public inputs and the next `secret`
//! the secret ones, in the witness's order. Then the instructions run in file order, which is
//! the order gnark's compiler created them in, so every wire an instruction reads was set by
//! an earlier one:
//! - a constraint `<L, w> <R, w> = <O, w>` with one term of an unsolved wire solves it (by a
//!   division when it sits in L or R, as gnark's `solveR1C` does; a zero other side leaves it
//!   0 once the product is checked); a constraint with none is checked;
//! - a hint call sets its output wires from its inputs' values. The hints run are gnark's
//!   `InvZeroHint` (`IsZero`), `bits.nBits` (`ToBinary`, comparisons), `hints.Randomize` (a
//!   commitment's mask, from the OS) and the BSB22 commitment placeholder, whose value the
//!   caller computes ([`Hints::commitment`]: a Pedersen commitment under the proving key). Any
//!   other hint, or a batch inversion or lookup step, is refused by name.
//!
//! # Errors, never panics
//! The first problem in instruction order: a constraint that does not hold ("constraint 17 of
//! 4,096 does not hold"), a constraint with two unsolved terms, a hint that reads an unsolved
//! wire or writes a solved one, a wire no instruction solves.
//!
//! # Secrets
//! The solved wires hold the witness's secrets: [`Solved`] wipes them when dropped and never
//! prints them. The solver runs in variable time over them (divisions, bit decompositions), as
//! gnark's does.

use blstrs::Scalar;
use ff::{Field, PrimeField};

use super::R1cs;
use crate::circom::grouped;
use lockstep_shard::memory;

/// gnark's names of the hints the solver runs.
const BSB22: &str = "github.com/consensys/gnark/frontend/cs.Bsb22CommitmentComputePlaceholder";
const INV_ZERO: &str = "github.com/consensys/gnark/constraint/solver.InvZeroHint";
const N_BITS: &str = "github.com/consensys/gnark/std/math/bits.nBits";
const RANDOMIZE: &str = "github.com/consensys/gnark/internal/hints.Randomize";

/// What the solver asks of its caller.
pub trait Hints {
    /// The value of BSB22 commitment `index`'s wire: `hashed` are the values of its public
    /// and earlier commitments' wires (the commitment's `public_and_commitment_committed`),
    /// `committed` those of its private wires (its `private_committed`), both in order.
    ///
    /// # Errors
    /// Why it cannot be computed, in words.
    fn commitment(
        &mut self,
        index: usize,
        hashed: &[Scalar],
        committed: &[Scalar],
    ) -> Result<Scalar, String>;

    /// A uniformly random field element (gnark's `Randomize`: a commitment's mask).
    fn random(&mut self) -> Scalar;
}

/// Why a witness could not be solved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// The witness has other counts than the circuit's inputs.
    #[error(
        "the witness holds {public} public and {secret} secret values; the circuit takes \
         {expected_public} and {expected_secret}: a witness of another circuit?"
    )]
    WitnessShape {
        /// Public values given.
        public: usize,
        /// Secret values given.
        secret: usize,
        /// Public inputs the circuit takes (the constant one excluded).
        expected_public: usize,
        /// Secret inputs it takes.
        expected_secret: usize,
    },
    /// A constraint does not hold for the witness.
    #[error("constraint {constraint} of {total} does not hold")]
    Unsatisfied {
        /// Its index, as gnark numbers constraints (thousands grouped).
        constraint: String,
        /// The circuit's constraint count (thousands grouped).
        total: String,
    },
    /// The file's instructions cannot be run in order.
    #[error("constraint {constraint}: {problem}")]
    Malformed {
        /// The constraint at or before which it happened.
        constraint: usize,
        /// What is wrong.
        problem: String,
    },
    /// A hint the solver does not run.
    #[error(
        "hint call {call} (before constraint {constraint}) calls {name} (id {id:#010x}): not a \
         hint lockstep's solver runs (it runs gnark's IsZero, ToBinary, comparison and \
         commitment hints)"
    )]
    UnknownHint {
        /// The call's index.
        call: usize,
        /// The constraint it precedes.
        constraint: usize,
        /// The hint's name as the file records it (or "an unnamed hint").
        name: String,
        /// Its id.
        id: u32,
    },
    /// A hint could not compute its outputs.
    #[error("hint call {call} ({name}): {problem}")]
    Hint {
        /// The call's index.
        call: usize,
        /// The hint's short name.
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A solver step the solver does not run.
    #[error(
        "instruction {instruction} (before constraint {constraint}) is a {blueprint} step, \
         which lockstep's solver does not run"
    )]
    Unsupported {
        /// The instruction's index.
        instruction: usize,
        /// The constraint it precedes.
        constraint: usize,
        /// Its blueprint.
        blueprint: &'static str,
    },
    /// No instruction solves a wire.
    #[error("wire {wire} is not solved by any instruction")]
    Unsolved {
        /// The wire.
        wire: usize,
    },
    /// Memory for the wires.
    #[error("the wires: {0}")]
    Memory(#[from] memory::AllocError),
}

/// The solved wires (public, then secret, then internal), wiped when dropped.
pub struct Solved {
    wires: Vec<Scalar>,
}

impl Solved {
    /// Every wire's value, wire 0 (the constant one) first.
    pub fn wires(&self) -> &[Scalar] {
        &self.wires
    }
}

impl std::fmt::Debug for Solved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Solved({} wires)", self.wires.len())
    }
}

impl Drop for Solved {
    fn drop(&mut self) {
        crate::curve::wipe_scalars(&mut self.wires);
    }
}

struct State<'a> {
    r1cs: &'a R1cs,
    wires: Solved,
    solved: Vec<bool>,
    /// The inverses of the coefficients a solved term has had, by id (a circuit has few
    /// distinct coefficients, and an inversion costs hundreds of multiplications).
    inverses: std::collections::HashMap<u32, Option<Scalar>>,
}

impl State<'_> {
    fn eval(&self, terms: super::Terms<'_>) -> Result<Scalar, u32> {
        let mut sum = Scalar::ZERO;
        for t in terms.iter() {
            if t.wire == super::CONSTANT_TERM {
                sum += self.r1cs.coefficient_value(t.coeff);
                continue;
            }
            if !self.solved[t.wire as usize] {
                return Err(t.wire);
            }
            sum += self.r1cs.coefficient_value(t.coeff) * self.wires.wires[t.wire as usize];
        }
        Ok(sum)
    }

    /// `1 / coefficient` (`None` for zero): one and minus one are their own, others are
    /// inverted once each.
    fn coefficient_inverse(&mut self, id: u32) -> Option<Scalar> {
        match self.r1cs.coefficient(id) {
            super::Coefficient::One => Some(Scalar::ONE),
            super::Coefficient::MinusOne => Some(-Scalar::ONE),
            _ => *self
                .inverses
                .entry(id)
                .or_insert_with(|| Option::from(self.r1cs.coefficient_value(id).invert())),
        }
    }

    fn set(&mut self, wire: usize, value: Scalar) -> Result<(), String> {
        if std::mem::replace(&mut self.solved[wire], true) {
            return Err(format!("wire {wire} is set twice"));
        }
        self.wires.wires[wire] = value;
        Ok(())
    }

    fn constraint(&mut self, index: usize) -> Result<(), SolveError> {
        let malformed = |problem: String| SolveError::Malformed {
            constraint: index,
            problem,
        };
        let c = self.r1cs.constraint(index);
        let mut sides = [Scalar::ZERO; 3];
        let mut unknown = None;
        for (side, terms) in [c.l, c.r, c.o].into_iter().enumerate() {
            for t in terms.iter() {
                if self.solved[t.wire as usize] {
                    sides[side] +=
                        self.r1cs.coefficient_value(t.coeff) * self.wires.wires[t.wire as usize];
                } else if let Some((_, first)) = unknown.replace((side, t)) {
                    let first: super::Term = first;
                    return Err(malformed(format!(
                        "more than one unsolved term (wires {} and {}): the instructions are \
                         not in gnark's order",
                        first.wire, t.wire
                    )));
                }
            }
        }
        let [a, b, c] = sides;
        let unsatisfied = || SolveError::Unsatisfied {
            constraint: grouped(index as u64),
            total: grouped(self.r1cs.constraints() as u64),
        };
        let Some((side, term)) = unknown else {
            return if a * b == c {
                Ok(())
            } else {
                Err(unsatisfied())
            };
        };
        // The term's value `coeff * wire` that makes the constraint hold.
        let term_value = match side {
            0 | 1 => {
                let (known, other) = if side == 0 { (a, b) } else { (b, a) };
                match Option::<Scalar>::from(other.invert()) {
                    Some(inverse) => c * inverse - known,
                    None if known * other == c => Scalar::ZERO,
                    None => return Err(unsatisfied()),
                }
            }
            _ => a * b - c,
        };
        let coeff = self.coefficient_inverse(term.coeff).ok_or_else(|| {
            malformed(format!(
                "wire {} is to be solved, but its coefficient is zero",
                term.wire
            ))
        })?;
        self.set(term.wire as usize, term_value * coeff)
            .map_err(malformed)
    }

    fn hint(
        &mut self,
        call: usize,
        constraint: usize,
        hints: &mut dyn Hints,
    ) -> Result<(), SolveError> {
        let malformed = |problem: String| SolveError::Malformed {
            constraint,
            problem: format!("hint call {call}: {problem}"),
        };
        let decoded = self.r1cs.hint_call(call).map_err(malformed)?;
        let (short, name) = known_hint(self.r1cs, call, constraint, decoded.id)?;
        let fail = |problem: String| SolveError::Hint {
            call,
            name: short,
            problem,
        };
        let mut inputs = Vec::with_capacity(decoded.inputs.len());
        for input in &decoded.inputs {
            match self.eval(*input) {
                Ok(value) => inputs.push(value),
                Err(wire) => {
                    crate::curve::wipe_scalars(&mut inputs);
                    return Err(fail(format!("it reads wire {wire} before it is solved")));
                }
            }
        }
        let outputs = decoded.outputs.start as usize..decoded.outputs.end as usize;
        let values = run_hint(name, &inputs, outputs.clone(), self.r1cs, hints, &fail);
        crate::curve::wipe_scalars(&mut inputs);
        let mut values = values?;
        let mut result = Ok(());
        for (wire, value) in outputs.zip(&values) {
            if let Err(problem) = self.set(wire, *value) {
                result = Err(fail(problem));
                break;
            }
        }
        crate::curve::wipe_scalars(&mut values);
        result
    }
}

/// The hint `id` names, if the solver runs it: its short name and full name.
fn known_hint(
    r1cs: &R1cs,
    call: usize,
    constraint: usize,
    id: u32,
) -> Result<(&'static str, &'static str), SolveError> {
    let name = r1cs.hint_name(id);
    let known = match name {
        Some(n) if super::hint_id(n) == id => match n {
            BSB22 => Some(("the commitment", BSB22)),
            INV_ZERO => Some(("InvZeroHint", INV_ZERO)),
            N_BITS => Some(("nBits", N_BITS)),
            RANDOMIZE => Some(("Randomize", RANDOMIZE)),
            _ => None,
        },
        _ => None,
    };
    known.ok_or_else(|| SolveError::UnknownHint {
        call,
        constraint,
        // Escaped and cut: the name is the file's text, which may hold anything.
        name: name.map_or_else(
            || "an unnamed hint".to_owned(),
            |n| n.chars().take(200).flat_map(char::escape_debug).collect(),
        ),
        id,
    })
}

/// Hint `name`'s outputs for `inputs` (see the module's documentation).
fn run_hint(
    name: &'static str,
    inputs: &[Scalar],
    outputs: std::ops::Range<usize>,
    r1cs: &R1cs,
    hints: &mut dyn Hints,
    fail: &dyn Fn(String) -> SolveError,
) -> Result<Vec<Scalar>, SolveError> {
    let want = |ins: usize, outs: usize| {
        if inputs.len() == ins && outputs.len() == outs {
            Ok(())
        } else {
            Err(fail(format!(
                "{} inputs and {} outputs, gnark's hint has {ins} and {outs}",
                inputs.len(),
                outputs.len()
            )))
        }
    };
    Ok(match name {
        INV_ZERO => {
            want(1, 1)?;
            // gnark's InvZeroHint: 0 for 0 (IsZero's case), the inverse otherwise.
            vec![if bool::from(inputs[0].is_zero()) {
                Scalar::ZERO
            } else {
                Option::<Scalar>::from(inputs[0].invert())
                    .expect("invariant: a nonzero field element is invertible")
            }]
        }
        N_BITS => {
            if inputs.len() != 1 || outputs.len() > 256 {
                return Err(fail(format!(
                    "{} inputs and {} outputs: gnark's takes one input and at most 256 bits",
                    inputs.len(),
                    outputs.len()
                )));
            }
            let le = inputs[0].to_repr();
            (0..outputs.len())
                .map(|i| Scalar::from(u64::from((le.as_ref()[i / 8] >> (i % 8)) & 1)))
                .collect()
        }
        RANDOMIZE => {
            want(0, outputs.len())?;
            (0..outputs.len()).map(|_| hints.random()).collect()
        }
        BSB22 => {
            let index = inputs
                .first()
                .and_then(|i| {
                    let repr = i.to_repr();
                    let bytes = repr.as_ref();
                    bytes[8..]
                        .iter()
                        .all(|&b| b == 0)
                        .then(|| u64::from_le_bytes(bytes[..8].try_into().expect("invariant: 8")))
                })
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < r1cs.commitments.len())
                .ok_or_else(|| fail("its first input is not a commitment's index".into()))?;
            let commitment = &r1cs.commitments[index];
            let hashed = commitment.public_and_commitment_committed.len();
            let committed = commitment.private_committed.len();
            want(1 + hashed + committed, 1)?;
            if outputs.start != commitment.commitment_index {
                return Err(fail(format!(
                    "it writes wire {}, commitment {index}'s wire is {}",
                    outputs.start, commitment.commitment_index
                )));
            }
            let value = hints
                .commitment(index, &inputs[1..1 + hashed], &inputs[1 + hashed..])
                .map_err(fail)?;
            vec![value]
        }
        _ => unreachable!("invariant: `known_hint` names only these"),
    })
}

/// Solves `r1cs` for the witness `public` (the constant one excluded) and `secret`, as gnark's
/// solver does (see the module's documentation).
///
/// # Errors
/// [`SolveError`]: the first problem in instruction order.
pub fn solve(
    r1cs: &R1cs,
    public: &[Scalar],
    secret: &[Scalar],
    hints: &mut dyn Hints,
) -> Result<Solved, SolveError> {
    if public.len() + 1 != r1cs.public() || secret.len() != r1cs.secret() {
        return Err(SolveError::WitnessShape {
            public: public.len(),
            secret: secret.len(),
            expected_public: r1cs.public() - 1,
            expected_secret: r1cs.secret(),
        });
    }
    if let Some((instruction, constraint, blueprint)) = r1cs.unsolvable {
        return Err(SolveError::Unsupported {
            instruction,
            constraint,
            blueprint,
        });
    }
    // Every hint known before any work (a call's framing is checked when it runs).
    for (call, &(_, constraint)) in r1cs.hints.iter().enumerate() {
        if let Ok(decoded) = r1cs.hint_call(call) {
            known_hint(r1cs, call, constraint, decoded.id)?;
        }
    }
    let wires = r1cs.wires();
    let mut values = memory::try_with_capacity(wires)?;
    values.push(Scalar::ONE);
    values.extend_from_slice(public);
    values.extend_from_slice(secret);
    values.resize(wires, Scalar::ZERO);
    let mut solved = memory::try_with_capacity(wires)?;
    solved.resize(1 + public.len() + secret.len(), true);
    solved.resize(wires, false);
    let mut state = State {
        r1cs,
        wires: Solved { wires: values },
        solved,
        inverses: std::collections::HashMap::new(),
    };
    let mut calls = r1cs.hints.iter().map(|&(_, before)| before).enumerate();
    let mut next = calls.next();
    for constraint in 0..=r1cs.constraints() {
        while let Some((call, before)) = next.filter(|&(_, before)| before == constraint) {
            state.hint(call, before, hints)?;
            next = calls.next();
        }
        if constraint < r1cs.constraints() {
            state.constraint(constraint)?;
        }
    }
    if let Some(wire) = state.solved.iter().position(|&s| !s) {
        return Err(SolveError::Unsolved { wire });
    }
    Ok(state.wires)
}
