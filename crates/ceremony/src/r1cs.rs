//! gnark's serialized BLS12-381 R1CS, as `(*cs.R1CS).WriteTo` writes it (gnark v0.15), read
//! into the rank-1 constraints phase 2 needs.
//!
//! # Layout
//! `total` u64 LE, gnark's version (major, minor, patch) u64 LE each, then `total` bytes: a
//! section header (four u64 LE lengths), the solver levels (skipped), the packed instructions
//! (blueprint ids, constraint and wire offsets as compressed u32 streams, call-data starts as a
//! compressed u64 stream: ronanh/intcomp's format), the call data (a u64 LE count and unsigned varints), a
//! CBOR body (decoded by `ciborium`: version, scalar field, blueprints, variable counts,
//! commitments), and the coefficient table (a u64 LE count, then each coefficient's four
//! Montgomery limbs, u64 LE).
//!
//! A `BlueprintGenericR1C` instruction is one constraint: call data `[4 + 2t, |L|, |R|, |O|]`
//! then `(coefficient id, wire)` pairs for L, R and O. A `BlueprintGenericHint` instruction is a
//! hint's call (`r1cs/hint.rs`), kept in instruction order for the prover's solver
//! (`r1cs/solve.rs`). Other solver instructions (batch inversions, lookups) add no constraint
//! and are skipped, as gnark's R1C iterator skips them; the solver refuses them.
//!
//! # Checks
//! Everything phase 2 later indexes is checked here, so a bad file is an error that names its
//! place, never a panic or a wrong key: the version (0.10 or later, as gnark's reader), the
//! scalar field (another curve's R1CS is named as such), the system type, every section
//! length against the file, each instruction's blueprint (a sparse or GKR one is refused by
//! instruction and constraint), each constraint's call data, wire ids (below the wire count)
//! and coefficient ids (in the table), canonical coefficients (below r), the constraint count
//! against the body's, and the commitments' wires. Sections are read as they arrive, never
//! allocated from a length field ahead of the bytes.
//!
//! # Memory
//! The call data (4 bytes a word: `4 + 2t + 1` words a constraint of `t` terms), 8 bytes a
//! constraint for its start, 32 bytes a coefficient, and while reading, the compressed
//! instruction streams and the CBOR body.

mod body;
mod hint;
mod intcomp;
mod solve;

pub use hint::{HintCall, hint_id};
pub use solve::{Hints, SolveError, Solved, solve};

use std::io::Read;

use blstrs::Scalar;
use ff::Field;

use body::Blueprint;

/// gnark's `ScalarField` text for BLS12-381 (`r.Text(16)`).
const BLS12_381_R: &str = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";

/// Other curves' scalar fields, to name a wrong file.
const OTHER_CURVES: [(&str, &str); 3] = [
    (
        "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001",
        "BN254",
    ),
    (
        "12ab655e9a2ca55660b44d1e5c37b00159aa76fed00000010a11800000000001",
        "BLS12-377",
    ),
    (
        "1ae3a4617c510eac63b05c06ca1493b1a22d9f300f5138f1ef3622fba094800170b5d44300000008508c00000000001",
        "BW6-761",
    ),
];

/// gnark's reserved coefficient ids (`constraint/term.go`: `CoeffIdZero`, `CoeffIdOne`,
/// `CoeffIdTwo`, `CoeffIdMinusOne`, then `CoeffIdMinusTwo`, which phase 2 multiplies like any
/// other), handled by additions.
const COEFF_ZERO: u32 = 0;
const COEFF_ONE: u32 = 1;
const COEFF_TWO: u32 = 2;
const COEFF_MINUS_ONE: u32 = 3;

/// The wire id of a constant term (gnark's `Term.MarkConstant`): the term is its coefficient.
/// Only hints' inputs have them.
pub(crate) const CONSTANT_TERM: u32 = u32::MAX;

/// Commitments a circuit may have: gnark's seal hashes `1 + k` scalars of 48 bytes in one
/// `expand_message_xmd` (at most 255 blocks of 32 bytes), so 169 is the most gnark can seal.
pub const MAX_COMMITMENTS: usize = 169;

/// Wires a file may declare per byte of itself (plus a few): every real circuit's wires are
/// referenced by its constraints' bytes (a gnark circuit of 2^16 constraints has 0.025 a byte),
/// and a count no bytes back must not decide the allocation (1 KiB a wire in phase 2).
const WIRES_PER_BYTE: u64 = 1;

/// Why an R1CS file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum R1csError {
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file ends inside a part of it.
    #[error("truncated R1CS: the file ends inside {0}")]
    Truncated(&'static str),
    /// Bytes follow the coefficient table.
    #[error("trailing bytes after the R1CS")]
    TrailingBytes,
    /// The header's length is more than the input can hold (a regular file's length, or what
    /// the front end allows a pipe).
    #[error("the header says {total} bytes follow, more than the {max} this input holds")]
    TooLong {
        /// The length the header gives, after its first 32 bytes.
        total: u64,
        /// The most the input can hold there.
        max: u64,
    },
    /// A gnark version this reader does not take.
    #[error("R1CS written by gnark {0}.{1}.{2}: gnark 0.10 or later is read")]
    Version(u64, u64, u64),
    /// Another curve's constraint system.
    #[error("R1CS over {curve} (scalar field 0x{field}), not BLS12-381")]
    Curve {
        /// The curve's name, when known.
        curve: &'static str,
        /// The scalar field as the file writes it.
        field: String,
    },
    /// Not a rank-1 constraint system.
    #[error("not an R1CS: {0}")]
    NotR1cs(&'static str),
    /// The CBOR body is malformed or lacks a field.
    #[error("R1CS body: {0}")]
    Body(String),
    /// A section's lengths disagree with each other or with the file.
    #[error("R1CS {section}: {problem}")]
    Section {
        /// Which section.
        section: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// An instruction uses a blueprint phase 2 does not take.
    #[error(
        "instruction {instruction} (before constraint {constraint}): unsupported blueprint {blueprint}"
    )]
    Blueprint {
        /// The instruction's index.
        instruction: usize,
        /// The constraints before it.
        constraint: usize,
        /// The blueprint's type.
        blueprint: &'static str,
    },
    /// A constraint is malformed: its call data, a wire id or a coefficient id.
    #[error("constraint {constraint}: {problem}")]
    Constraint {
        /// The constraint's index.
        constraint: usize,
        /// What is wrong.
        problem: String,
    },
    /// A coefficient is not a canonical field element.
    #[error("coefficient {index}: not a canonical element of the scalar field (>= r)")]
    Coefficient {
        /// Its index in the table.
        index: usize,
    },
    /// A commitment names wires it cannot have.
    #[error("commitment {index}: {problem}")]
    Commitment {
        /// Its index.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

/// A BSB22 commitment of a Groth16 circuit, as gnark records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commitment {
    /// Public wires committed to, then earlier commitments' wires (ascending).
    pub public_and_commitment_committed: Vec<usize>,
    /// Private (secret or internal) wires committed to (ascending).
    pub private_committed: Vec<usize>,
    /// The wire that holds the commitment.
    pub commitment_index: usize,
    /// How many of `public_and_commitment_committed` are public wires.
    pub nb_public_committed: usize,
}

/// One term of a linear combination: `coefficient(coeff) * wire`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// The coefficient's id (see [`R1cs::coefficient`]).
    pub coeff: u32,
    /// The wire.
    pub wire: u32,
}

/// The terms of one side of a constraint, in file order.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a>(&'a [u32]);

impl<'a> Terms<'a> {
    /// The terms in file order.
    pub fn iter(self) -> impl ExactSizeIterator<Item = Term> + 'a {
        self.0.chunks_exact(2).map(|pair| Term {
            coeff: pair[0],
            wire: pair[1],
        })
    }

    /// How many terms.
    pub fn len(self) -> usize {
        self.0.len() / 2
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }
}

/// A rank-1 constraint `<L, w> * <R, w> = <O, w>`.
#[derive(Clone, Copy, Debug)]
pub struct Constraint<'a> {
    /// The left combination.
    pub l: Terms<'a>,
    /// The right combination.
    pub r: Terms<'a>,
    /// The output combination.
    pub o: Terms<'a>,
}

/// A coefficient as phase 2 applies it: gnark adds for the reserved ids and multiplies
/// otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coefficient<'a> {
    /// Id 0: the term adds nothing.
    Zero,
    /// Id 1: add the point.
    One,
    /// Id 3: subtract it.
    MinusOne,
    /// Id 2: add it twice.
    Two,
    /// Any other id: add the point times this scalar.
    Other(&'a Scalar),
}

/// A BLS12-381 rank-1 constraint system read from gnark's file.
#[derive(Clone, Debug)]
pub struct R1cs {
    version: [u64; 3],
    nb_public: usize,
    nb_secret: usize,
    nb_internal: usize,
    /// The call data, whole (hints' words included: the layout puts the blueprints and the
    /// coefficients after it, so constraints are told apart and checked once the body is read).
    calldata: Vec<u32>,
    /// Each constraint's first call-data word (its `4 + 2t`).
    starts: Vec<u64>,
    /// Each hint call's first call-data word, and the constraint it comes before.
    hints: Vec<(u64, usize)>,
    /// The first solver step the prover's solver does not run: its instruction, the
    /// constraint it comes before, its blueprint.
    unsolvable: Option<(usize, usize, &'static str)>,
    /// The hints' names by id (sorted by id).
    hint_names: Vec<(u32, String)>,
    coefficients: Vec<Scalar>,
    commitments: Vec<Commitment>,
}

/// A reader that knows where it is.
struct Source<R> {
    inner: R,
    offset: u64,
}

impl<R: Read> Source<R> {
    fn exact<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], R1csError> {
        let mut buf = [0u8; N];
        self.inner.read_exact(&mut buf).map_err(|e| eof(e, what))?;
        self.offset += N as u64;
        Ok(buf)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, R1csError> {
        Ok(u64::from_le_bytes(self.exact::<8>(what)?))
    }

    /// `len` bytes, grown as they arrive (a length field never allocates ahead of the data).
    fn bytes(&mut self, len: u64, what: &'static str) -> Result<Vec<u8>, R1csError> {
        let mut out = Vec::new();
        let got = (&mut self.inner).take(len).read_to_end(&mut out)?;
        self.offset += got as u64;
        if got as u64 != len {
            return Err(R1csError::Truncated(what));
        }
        Ok(out)
    }

    fn skip(&mut self, len: u64, what: &'static str) -> Result<(), R1csError> {
        let got = std::io::copy(&mut (&mut self.inner).take(len), &mut std::io::sink())?;
        self.offset += got;
        if got != len {
            return Err(R1csError::Truncated(what));
        }
        Ok(())
    }
}

fn eof(error: std::io::Error, what: &'static str) -> R1csError {
    if error.kind() == std::io::ErrorKind::UnexpectedEof {
        R1csError::Truncated(what)
    } else {
        R1csError::Io(error)
    }
}

fn section(section: &'static str, problem: impl Into<String>) -> R1csError {
    R1csError::Section {
        section,
        problem: problem.into(),
    }
}

impl R1cs {
    /// Reads gnark's serialized BLS12-381 R1CS and checks it (see the module's documentation).
    ///
    /// # Errors
    /// The first problem met, in file order for the framing and then in constraint order:
    /// each an [`R1csError`] naming its section, instruction, constraint or coefficient.
    pub fn read<R: Read>(input: R) -> Result<Self, R1csError> {
        Self::read_at_most(input, u64::MAX)
    }

    /// [`read`](Self::read) of an input of at most `max_len` bytes (a regular file's length;
    /// for a pipe, what the front end allows): a header that says more is refused before any
    /// of it is read (a lying length over an endless pipe was read forever).
    ///
    /// # Errors
    /// As [`read`](Self::read); [`R1csError::TooLong`].
    pub fn read_at_most<R: Read>(input: R, max_len: u64) -> Result<Self, R1csError> {
        let mut src = Source {
            inner: input,
            offset: 0,
        };
        let total = src.u64("the file header")?;
        // The length and the version words (32 bytes) come before the `total` bytes.
        let max = max_len.saturating_sub(32);
        if total > max {
            return Err(R1csError::TooLong { total, max });
        }
        let version = [
            src.u64("the file header")?,
            src.u64("the file header")?,
            src.u64("the file header")?,
        ];
        if version[0] != 0 || version[1] < 10 {
            return Err(R1csError::Version(version[0], version[1], version[2]));
        }
        let lens = [
            src.u64("the section header")?,
            src.u64("the section header")?,
            src.u64("the section header")?,
            src.u64("the section header")?,
        ];
        let [levels_len, instructions_len, calldata_len, body_len] = lens;
        let sections = lens
            .iter()
            .try_fold(32u64, |sum, &len| sum.checked_add(len))
            .filter(|&sum| sum <= total)
            .ok_or_else(|| section("header", "section lengths exceed the file's total length"))?;
        src.skip(levels_len, "the solver levels")?;
        // Every instruction has at least one call-data word of at least one byte: more
        // instructions than call-data bytes is a lie, refused while decoding (a packed block
        // of bit length 0 turns one word into 128 values).
        let instructions = Instructions::parse(
            &src.bytes(instructions_len, "the instructions")?,
            calldata_len,
        )?;
        let calldata = parse_calldata(&src.bytes(calldata_len, "the call data")?)?;
        let body = body::decode(&src.bytes(body_len, "the CBOR body")?)?;
        let coefficients = parse_coefficients(&src.bytes(total - sections, "the coefficients")?)?;
        let mut probe = [0u8; 1];
        if src.inner.read(&mut probe)? != 0 {
            return Err(R1csError::TrailingBytes);
        }
        check_body(&body)?;
        let wires = body
            .nb_public
            .checked_add(body.nb_secret)
            .and_then(|w| w.checked_add(body.nb_internal))
            .filter(|&w| u32::try_from(w).is_ok())
            .ok_or_else(|| R1csError::Body("too many wires".to_owned()))?;
        if wires as u64 > 64 + WIRES_PER_BYTE * src.offset {
            return Err(R1csError::Body(format!(
                "{wires} wires declared in a file of {} bytes: more than its constraints can use",
                src.offset
            )));
        }
        let Steps {
            starts,
            hints,
            unsolvable,
        } = steps(&instructions, &body.blueprints, &calldata)?;
        drop(instructions);
        if starts.len() != body.nb_constraints {
            return Err(R1csError::Body(format!(
                "NbConstraints says {}, the instructions hold {} rank-1 constraints",
                body.nb_constraints,
                starts.len()
            )));
        }
        let r1cs = Self {
            version,
            nb_public: body.nb_public,
            nb_secret: body.nb_secret,
            nb_internal: body.nb_internal,
            calldata,
            starts,
            hints,
            unsolvable,
            hint_names: body.hints,
            coefficients,
            commitments: body.commitments,
        };
        r1cs.check_constraints(wires)?;
        r1cs.check_hints(wires)?;
        r1cs.check_commitments(wires)?;
        Ok(r1cs)
    }

    /// gnark's version that wrote the file.
    pub fn gnark_version(&self) -> [u64; 3] {
        self.version
    }

    /// The number of rank-1 constraints.
    pub fn constraints(&self) -> usize {
        self.starts.len()
    }

    /// Public wires, the constant-one wire 0 included.
    pub fn public(&self) -> usize {
        self.nb_public
    }

    /// Secret wires.
    pub fn secret(&self) -> usize {
        self.nb_secret
    }

    /// Internal wires.
    pub fn internal(&self) -> usize {
        self.nb_internal
    }

    /// All wires: public, then secret, then internal.
    pub fn wires(&self) -> usize {
        self.nb_public + self.nb_secret + self.nb_internal
    }

    /// The circuit's BSB22 commitments.
    pub fn commitments(&self) -> &[Commitment] {
        &self.commitments
    }

    /// The smallest domain that holds the constraints: the power of two N >= constraints, as
    /// `log2 N` (gnark's `ecc.NextPowerOfTwo`: a circuit of one constraint has N = 1, below
    /// the smallest phase 1, which is cut to it).
    pub fn domain_power(&self) -> u32 {
        self.constraints()
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// Constraint `index` (below [`constraints`](Self::constraints)).
    ///
    /// # Panics
    /// If `index` is out of range.
    pub fn constraint(&self, index: usize) -> Constraint<'_> {
        let start = usize::try_from(self.starts[index]).expect("invariant: checked at read");
        let data = &self.calldata[start..];
        let (l, r, o) = (data[1] as usize, data[2] as usize, data[3] as usize);
        let terms = &data[4..4 + 2 * (l + r + o)];
        let (l_terms, rest) = terms.split_at(2 * l);
        let (r_terms, o_terms) = rest.split_at(2 * r);
        Constraint {
            l: Terms(l_terms),
            r: Terms(r_terms),
            o: Terms(o_terms),
        }
    }

    /// How coefficient `id` applies.
    ///
    /// # Panics
    /// If `id` is not in the table (every constraint's ids are checked at read).
    pub fn coefficient(&self, id: u32) -> Coefficient<'_> {
        match id {
            COEFF_ZERO => Coefficient::Zero,
            COEFF_ONE => Coefficient::One,
            COEFF_MINUS_ONE => Coefficient::MinusOne,
            COEFF_TWO => Coefficient::Two,
            _ => Coefficient::Other(&self.coefficients[id as usize]),
        }
    }

    fn check_constraints(&self, wires: usize) -> Result<(), R1csError> {
        for index in 0..self.constraints() {
            let fail = |problem: String| R1csError::Constraint {
                constraint: index,
                problem,
            };
            let c = self.constraint(index);
            for (side, terms) in [("L", c.l), ("R", c.r), ("O", c.o)] {
                for (k, term) in terms.iter().enumerate() {
                    if term.wire as usize >= wires {
                        return Err(fail(format!(
                            "{side}[{k}] names wire {}, but the circuit has {wires} wires",
                            term.wire
                        )));
                    }
                    if term.coeff as usize >= self.coefficients.len() {
                        return Err(fail(format!(
                            "{side}[{k}] names coefficient {}, but the table holds {}",
                            term.coeff,
                            self.coefficients.len()
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_hints(&self, wires: usize) -> Result<(), R1csError> {
        for (k, &(_, before)) in self.hints.iter().enumerate() {
            let fail = |problem: String| R1csError::Constraint {
                constraint: before,
                problem: format!("hint call {k} (before it): {problem}"),
            };
            let call = self.hint_call(k).map_err(fail)?;
            for (i, input) in call.inputs.iter().enumerate() {
                for term in input.iter() {
                    let constant = term.wire == CONSTANT_TERM;
                    if (!constant && term.wire as usize >= wires)
                        || term.coeff as usize >= self.coefficients.len()
                    {
                        return Err(fail(format!(
                            "input {i} names wire {} with coefficient {}: the circuit has {wires} \
                             wires and {} coefficients",
                            term.wire,
                            term.coeff,
                            self.coefficients.len()
                        )));
                    }
                }
            }
            if call.outputs.end as usize > wires || call.outputs.start == 0 {
                return Err(fail(format!(
                    "its outputs are wires {}..{}, the circuit has {wires} (wire 0 is the constant)",
                    call.outputs.start, call.outputs.end
                )));
            }
        }
        Ok(())
    }

    /// Hint call `k` (below the number of calls), decoded.
    pub(crate) fn hint_call(&self, k: usize) -> Result<HintCall<'_>, String> {
        let start = usize::try_from(self.hints[k].0).map_err(|_| "call data start out of range")?;
        let data = self
            .calldata
            .get(start..)
            .ok_or_else(|| "call data start out of range".to_owned())?;
        hint::decode(data)
    }

    /// The full name gnark recorded for hint `id`, if any.
    pub fn hint_name(&self, id: u32) -> Option<&str> {
        self.hint_names
            .binary_search_by_key(&id, |(k, _)| *k)
            .ok()
            .map(|i| self.hint_names[i].1.as_str())
    }

    /// How coefficient `id` multiplies (reserved ids by their values).
    pub(crate) fn coefficient_value(&self, id: u32) -> Scalar {
        match self.coefficient(id) {
            Coefficient::Zero => Scalar::ZERO,
            Coefficient::One => Scalar::ONE,
            Coefficient::MinusOne => -Scalar::ONE,
            Coefficient::Two => Scalar::from(2u64),
            Coefficient::Other(c) => *c,
        }
    }

    fn check_commitments(&self, wires: usize) -> Result<(), R1csError> {
        if self.commitments.len() > MAX_COMMITMENTS {
            return Err(R1csError::Commitment {
                index: MAX_COMMITMENTS,
                problem: format!("more than {MAX_COMMITMENTS} commitments"),
            });
        }
        for (index, c) in self.commitments.iter().enumerate() {
            let fail = |problem: String| R1csError::Commitment { index, problem };
            if c.commitment_index >= wires {
                return Err(fail(format!(
                    "wire {} is not in the circuit",
                    c.commitment_index
                )));
            }
            if c.nb_public_committed > c.public_and_commitment_committed.len() {
                return Err(fail("more public wires committed than listed".to_owned()));
            }
            for list in [&c.private_committed, &c.public_and_commitment_committed] {
                if list.iter().any(|&w| w >= wires) {
                    return Err(fail("a committed wire is not in the circuit".to_owned()));
                }
                if list.windows(2).any(|p| p[0] >= p[1]) {
                    return Err(fail(
                        "committed wires are not strictly ascending".to_owned(),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn check_body(body: &body::Body) -> Result<(), R1csError> {
    if body.scalar_field != BLS12_381_R {
        let curve = OTHER_CURVES
            .iter()
            .find(|(field, _)| *field == body.scalar_field)
            .map_or("another field", |(_, name)| name);
        return Err(R1csError::Curve {
            curve,
            // Escaped and cut: the field is the file's text, which may hold anything.
            field: body
                .scalar_field
                .chars()
                .take(100)
                .flat_map(char::escape_debug)
                .collect(),
        });
    }
    match body.system_type {
        1 => Ok(()),
        2 => Err(R1csError::NotR1cs("a sparse (PLONK) constraint system")),
        _ => Err(R1csError::NotR1cs("an unknown system type")),
    }?;
    if body.nb_public == 0 {
        return Err(R1csError::Body(
            "no public wire (wire 0 is the constant one)".to_owned(),
        ));
    }
    Ok(())
}

/// The packed instructions, the streams phase 2 uses.
struct Instructions {
    blueprints: Vec<u32>,
    calldata_starts: Vec<u64>,
}

impl Instructions {
    /// Parses the four streams, each of at most `max` values.
    fn parse(bytes: &[u8], max: u64) -> Result<Self, R1csError> {
        let bad = |e: intcomp::Malformed| section("instructions", e.0);
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        let mut at = 0usize;
        let mut streams32 = Vec::new();
        for _ in 0..3 {
            let words = words::<4>(bytes, &mut at)?;
            let words: Vec<u32> = words
                .iter()
                .map(|w| u32::from_le_bytes(*w))
                .collect::<Vec<_>>();
            streams32.push(intcomp::decode(&words, max).map_err(bad)?);
        }
        let words = words::<8>(bytes, &mut at)?;
        let words: Vec<u64> = words.iter().map(|w| u64::from_le_bytes(*w)).collect();
        let calldata_starts = intcomp::decode(&words, max).map_err(bad)?;
        if at != bytes.len() {
            return Err(section("instructions", "bytes after the last stream"));
        }
        let n = streams32[0].len();
        if streams32.iter().any(|s| s.len() != n) || calldata_starts.len() != n {
            return Err(section(
                "instructions",
                "the streams disagree on the instruction count",
            ));
        }
        Ok(Self {
            blueprints: streams32.swap_remove(0),
            calldata_starts,
        })
    }
}

/// One compressed stream's words: a u64 LE word count, then the words.
fn words<const W: usize>(bytes: &[u8], at: &mut usize) -> Result<Vec<[u8; W]>, R1csError> {
    let short = || section("instructions", "a stream is cut short");
    let count = bytes
        .get(*at..*at + 8)
        .ok_or_else(short)?
        .try_into()
        .map(u64::from_le_bytes)
        .map_err(|_| short())?;
    *at += 8;
    let len = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(W))
        .filter(|&len| len <= bytes.len() - *at)
        .ok_or_else(short)?;
    let out = bytes[*at..*at + len]
        .chunks_exact(W)
        .map(|c| c.try_into().expect("invariant: chunks of W"))
        .collect();
    *at += len;
    Ok(out)
}

fn parse_calldata(bytes: &[u8]) -> Result<Vec<u32>, R1csError> {
    let count = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("invariant: 8 bytes")))
        .ok_or_else(|| section("call data", "no count"))?;
    let mut rest = &bytes[8..];
    // A varint is at least a byte: more values than bytes is a lie, refused before allocating.
    if count > rest.len() as u64 {
        return Err(section("call data", "more values than bytes"));
    }
    let mut out = Vec::with_capacity(usize::try_from(count).expect("invariant: <= a length"));
    for index in 0..count {
        let (value, used) = uvarint(rest)
            .ok_or_else(|| section("call data", format!("value {index} is not a valid varint")))?;
        let value = u32::try_from(value)
            .map_err(|_| section("call data", format!("value {index} exceeds 32 bits")))?;
        out.push(value);
        rest = &rest[used..];
    }
    if !rest.is_empty() {
        return Err(section("call data", "bytes after the last value"));
    }
    Ok(out)
}

/// Go's `binary.Uvarint`: the value and the bytes used, or `None` if cut short or over 64 bits.
fn uvarint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        if i == 9 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

fn parse_coefficients(bytes: &[u8]) -> Result<Vec<Scalar>, R1csError> {
    let count = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("invariant: 8 bytes")))
        .ok_or(R1csError::Truncated("the coefficients"))?;
    let rest = &bytes[8..];
    match (count.checked_mul(32), rest.len() as u64) {
        (Some(need), have) if need == have => {}
        (Some(need), have) if need > have => return Err(R1csError::Truncated("the coefficients")),
        _ => return Err(R1csError::TrailingBytes),
    }
    // Montgomery form with R = 2^256 (gnark's and blst's): the value is limbs * R^-1.
    let r_inv = Scalar::from(2u64)
        .pow_vartime([256])
        .invert()
        .expect("invariant: 2^256 is invertible mod r");
    rest.chunks_exact(32)
        .enumerate()
        .map(|(index, chunk)| {
            let limbs: [u64; 4] = std::array::from_fn(|j| {
                u64::from_le_bytes(chunk[8 * j..8 * j + 8].try_into().expect("invariant: 8"))
            });
            Option::<Scalar>::from(Scalar::from_u64s_le(&limbs))
                .map(|m| m * r_inv)
                .ok_or(R1csError::Coefficient { index })
        })
        .collect()
}

/// The instructions sorted by kind.
struct Steps {
    starts: Vec<u64>,
    hints: Vec<(u64, usize)>,
    unsolvable: Option<(usize, usize, &'static str)>,
}

/// Each rank-1 constraint's call-data start, checking its framing and blueprint; each hint
/// call's start and the constraint it precedes; the first step the solver cannot run.
fn steps(
    instructions: &Instructions,
    blueprints: &[Blueprint],
    calldata: &[u32],
) -> Result<Steps, R1csError> {
    let mut starts = Vec::new();
    let mut hints = Vec::new();
    let mut unsolvable = None;
    // Where the previous instruction's call data ends: gnark appends each instruction's after
    // the last, so an instruction that starts before it reuses bytes (a small file could make
    // every constraint or hint point at one huge call and cost quadratic work).
    let mut free = 0usize;
    for (instruction, (&id, &start)) in instructions
        .blueprints
        .iter()
        .zip(&instructions.calldata_starts)
        .enumerate()
    {
        let constraint = starts.len();
        let kind = blueprints
            .get(id as usize)
            .ok_or_else(|| R1csError::Constraint {
                constraint,
                problem: format!(
                    "instruction {instruction} names blueprint {id}, but the system has {}",
                    blueprints.len()
                ),
            })?;
        let at = usize::try_from(start)
            .ok()
            .filter(|&at| at >= free && at < calldata.len())
            .ok_or_else(|| R1csError::Constraint {
                constraint,
                problem: format!(
                    "instruction {instruction}: its call data starts at word {start}, not after \
                     the previous instruction's (word {free}) and within the {} words",
                    calldata.len()
                ),
            })?;
        match *kind {
            Blueprint::Hint => {
                // A hint's first word is its size (checked whole by `check_hints`).
                let size = (calldata[at] as usize).max(1);
                free = at.saturating_add(size);
                hints.push((start, constraint));
                continue;
            }
            Blueprint::Solver(name) => {
                free = at + 1;
                unsolvable.get_or_insert((instruction, constraint, name));
                continue;
            }
            Blueprint::Unsupported(blueprint) => {
                return Err(R1csError::Blueprint {
                    instruction,
                    constraint,
                    blueprint,
                });
            }
            Blueprint::R1c => {}
        }
        let fail = |problem: &str| R1csError::Constraint {
            constraint,
            problem: format!("instruction {instruction}: {problem}"),
        };
        let head = calldata
            .get(at..at.saturating_add(4))
            .ok_or_else(|| fail("call data start out of range"))?;
        let (size, l, r, o) = (
            head[0] as usize,
            head[1] as usize,
            head[2] as usize,
            head[3] as usize,
        );
        let terms = l.checked_add(r).and_then(|t| t.checked_add(o));
        if terms
            .and_then(|t| t.checked_mul(2))
            .and_then(|t| t.checked_add(4))
            != Some(size)
        {
            return Err(fail("its call data size disagrees with its term counts"));
        }
        if at.checked_add(size).is_none_or(|end| end > calldata.len()) {
            return Err(fail("its call data runs past the end"));
        }
        free = at + size;
        starts.push(start);
    }
    Ok(Steps {
        starts,
        hints,
        unsolvable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarints_are_go_s() {
        assert_eq!(uvarint(&[0x00]), Some((0, 1)));
        assert_eq!(uvarint(&[0xac, 0x02]), Some((300, 2)));
        assert_eq!(uvarint(&[0x80]), None);
        assert_eq!(
            uvarint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Some((u64::MAX, 10))
        );
        assert_eq!(
            uvarint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            None
        );
    }

    #[test]
    fn coefficients_are_montgomery_limbs() {
        // One in Montgomery form is R mod r; its limbs are blst's for Scalar::ONE.
        let one = Scalar::ONE.to_bytes_le();
        let r_mod = Scalar::from(2u64).pow_vartime([256]).to_bytes_le();
        let mut table = 1u64.to_le_bytes().to_vec();
        table.extend_from_slice(&r_mod);
        let parsed = parse_coefficients(&table).unwrap();
        assert_eq!(parsed[0].to_bytes_le(), one);
        // r itself is not canonical.
        let mut bad = 1u64.to_le_bytes().to_vec();
        bad.extend_from_slice(&(-Scalar::ONE).to_bytes_le());
        bad[8] = bad[8].wrapping_add(1); // r - 1 + 1 = r
        assert!(matches!(
            parse_coefficients(&bad),
            Err(R1csError::Coefficient { index: 0 })
        ));
    }
}
