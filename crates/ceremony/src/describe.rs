//! What a ceremony file holds, as labelled facts every front end shows alike: the CLI's
//! `ceremony info` prints [`Description::text`], a binding gives the facts by key (a Python
//! dict). The file is read whole and checked by its kind's reader first, so a description is
//! of a file the engine would take.
//!
//! Files of the kinds with a section table (`.ptau`, `.zkey`, circom's `.r1cs` and `.wtns`)
//! are read with [`read_sectioned`] from a seekable input; gnark's files with [`read_stream`]
//! from any reader (a pipe works). [`FileKind::is_sectioned`] tells which.

use std::fmt::Write as _;
use std::io::{Read, Seek};

use lockstep_shard::{Control, Pool};

use crate::chain::hex;
use crate::circom::{CircomR1cs, Witness};
use crate::codec::Limits;
use crate::file_kind::FileKind;
use crate::phase1::{Phase1, Srs};
use crate::phase2::{KeyChecks, Phase2, ProvingKey, VerifyingKey};
use crate::r1cs::R1cs;
use crate::zkey::{self, Zkey};
use crate::{groth16, ptau};

/// One fact's value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Value {
    /// A count.
    Count(u64),
    /// A power of two, given by its exponent (shown `2^p`).
    Power(u32),
    /// Words.
    Text(String),
    /// Bytes such as a SHA-256 (shown in lower-case hex).
    Bytes(Vec<u8>),
    /// A snarkjs hash of 64 bytes (shown as snarkjs shows it: four rows of hex).
    SnarkjsHash(Vec<u8>),
    /// Nothing (a fact that does not apply: an initial object's challenge).
    Absent,
    /// Whether something holds.
    Flag(bool),
    /// Entries of facts (a `.zkey`'s contributions), in file order.
    List(Vec<Vec<Fact>>),
}

/// One labelled fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// Its key for data front ends (snake case, stable).
    pub key: &'static str,
    /// Its label in text (`None`: the text says it in another fact's words).
    pub label: Option<&'static str>,
    /// Its value.
    pub value: Value,
    /// Words after the value in text, in parentheses.
    pub note: Option<String>,
}

impl Fact {
    fn new(key: &'static str, label: &'static str, value: Value) -> Self {
        Self {
            key,
            label: Some(label),
            value,
            note: None,
        }
    }

    fn hidden(key: &'static str, value: Value) -> Self {
        Self {
            key,
            label: None,
            value,
            note: None,
        }
    }

    fn noted(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    fn count(key: &'static str, label: &'static str, n: impl TryInto<u64>) -> Self {
        let n = n
            .try_into()
            .unwrap_or_else(|_| unreachable!("invariant: counts fit u64"));
        Self::new(key, label, Value::Count(n))
    }
}

/// What a file holds: its kind and facts, in the order text shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// The file's kind.
    pub kind: FileKind,
    /// Its facts (the first is `kind`: the kind's words).
    pub facts: Vec<Fact>,
    /// The points (or values) it holds, for a front end's report.
    pub points: u64,
}

impl Description {
    fn new(kind: FileKind, points: u64) -> Self {
        Self {
            kind,
            facts: vec![Fact::new(
                "kind",
                "kind",
                Value::Text(kind_words(kind).to_owned()),
            )],
            points,
        }
    }

    fn push(&mut self, fact: Fact) -> &mut Self {
        self.facts.push(fact);
        self
    }

    /// The facts as text, a `label: value` line each (`ceremony info`'s words).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for fact in &self.facts {
            let Some(label) = fact.label else { continue };
            let _ = write!(out, "{label}: ");
            match &fact.value {
                Value::List(entries) => {
                    let _ = writeln!(out, "{}", entries.len());
                    for (i, entry) in entries.iter().enumerate() {
                        let _ = write!(out, "  #{}", i + 1);
                        entry_text(&mut out, entry);
                        out.push('\n');
                    }
                }
                value => {
                    out.push_str(&shown(value));
                    if let Some(note) = &fact.note {
                        let _ = write!(out, " ({note})");
                    }
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// An entry of a list on its line, as snarkjs shows a `.zkey`'s contributions: words as they
/// are (`contribution alice`), an absent one left out, a snarkjs hash on its own rows after a
/// colon, anything else `label: value`.
fn entry_text(out: &mut String, entry: &[Fact]) {
    for fact in entry {
        let Some(label) = fact.label else { continue };
        match &fact.value {
            Value::Text(text) => {
                let _ = write!(out, " {text}");
            }
            Value::Absent => {}
            Value::SnarkjsHash(_) => {
                let _ = write!(out, ":{}", shown(&fact.value));
            }
            value => {
                let _ = write!(out, " {label}: {}", shown(value));
            }
        }
    }
}

/// A file's description as `ceremony info` prints it: the file as the front end names it
/// (`shown`), its kind, its size where known (a pipe's is not), then the rest of
/// [`Description::text`].
pub fn file_text(shown: &str, size: Option<u64>, description: &Description) -> String {
    let mut out = format!("file: {shown}\n");
    let text = description.text();
    let (kind, rest) = text.split_at(text.find('\n').map_or(text.len(), |i| i + 1));
    out.push_str(kind);
    if let Some(size) = size {
        let _ = writeln!(out, "size: {size} bytes");
    }
    out.push_str(rest);
    out
}

/// A value in text; a snarkjs hash on its own rows.
fn shown(value: &Value) -> String {
    match value {
        Value::Count(n) => n.to_string(),
        Value::Power(p) => format!("2^{p}"),
        Value::Text(text) => text.clone(),
        Value::Bytes(bytes) => hex(bytes),
        Value::SnarkjsHash(bytes) => match <[u8; 64]>::try_from(&bytes[..]) {
            Ok(hash) => format!("\n{}", zkey::format_hash(&hash).trim_end()),
            Err(_) => hex(bytes),
        },
        Value::Absent => "none".to_owned(),
        Value::Flag(yes) => if *yes { "yes" } else { "no" }.to_owned(),
        Value::List(entries) => entries.len().to_string(),
    }
}

/// The words naming a kind in a description.
fn kind_words(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Phase1 => "gnark v0.15 phase 1 object (BLS12-381)",
        FileKind::Srs => "gnark v0.15 sealed phase 1 SRS (SrsCommons, BLS12-381)",
        FileKind::Ptau => "snarkjs .ptau powers of tau (BLS12-381)",
        FileKind::Phase2 => "gnark v0.15 phase 2 object (BLS12-381)",
        FileKind::R1cs => "gnark v0.15 R1CS (BLS12-381)",
        FileKind::ProvingKey => "gnark v0.15 Groth16 proving key (BLS12-381)",
        FileKind::VerifyingKey => "gnark v0.15 Groth16 verifying key (BLS12-381)",
        FileKind::Proof => "gnark v0.15 Groth16 proof (BLS12-381)",
        FileKind::PublicWitness => "gnark public witness (BLS12-381)",
        FileKind::Witness => "gnark full witness (BLS12-381)",
        FileKind::Zkey => "snarkjs Groth16 .zkey (BLS12-381)",
        FileKind::CircomR1cs => "circom .r1cs (BLS12-381)",
        FileKind::Wtns => "circom .wtns witness (BLS12-381)",
    }
}

/// Why a file could not be described: its reader's refusal (a bad point, a truncated file,
/// another curve), or I/O.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DescribeError(Box<dyn std::error::Error + Send + Sync>);

impl DescribeError {
    fn of(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(error))
    }

    fn wrong_reader(kind: FileKind, reader: &str) -> Self {
        Self(format!("{} is read with describe::{reader}", kind.described()).into())
    }

    /// The stable code every front end reports: `CEREMONY_FILE`.
    pub fn code(&self) -> &'static str {
        "CEREMONY_FILE"
    }
}

/// Reads a gnark file of `kind` from `input` (a pipe works) and describes it. `limits` bound
/// what it may claim (give the file's length where known).
///
/// # Errors
/// The kind's reader's refusal.
///
/// A sectioned `kind` ([`FileKind::is_sectioned`]) is refused: read it with
/// [`read_sectioned`].
pub fn read_stream<R: Read>(
    pool: &Pool,
    control: &Control,
    kind: FileKind,
    mut input: R,
    limits: &Limits,
) -> Result<Description, DescribeError> {
    Ok(match kind {
        FileKind::Phase1 => {
            let (object, hash) =
                Phase1::read(pool, control, &mut input, limits).map_err(DescribeError::of)?;
            phase1(&object, &hash)
        }
        FileKind::Srs => {
            let (srs, hash) =
                Srs::read(pool, control, &mut input, limits).map_err(DescribeError::of)?;
            sealed(&srs, &hash)
        }
        FileKind::Phase2 => {
            let (object, hash) =
                Phase2::read(pool, control, &mut input, limits).map_err(DescribeError::of)?;
            phase2(&object, &hash)
        }
        FileKind::R1cs => {
            let max = limits.file_len.unwrap_or(u64::MAX);
            r1cs(&R1cs::read_at_most(input, max).map_err(DescribeError::of)?)
        }
        FileKind::ProvingKey => {
            let (key, _) =
                ProvingKey::read_with(pool, control, input, limits, KeyChecks::Subgroups)
                    .map_err(DescribeError::of)?;
            proving_key(&key)
        }
        FileKind::VerifyingKey => {
            verifying_key(&VerifyingKey::read(input).map_err(DescribeError::of)?)
        }
        FileKind::Proof => proof(&groth16::Proof::read(input).map_err(DescribeError::of)?),
        FileKind::PublicWitness => {
            let values = groth16::read_public_witness(input).map_err(DescribeError::of)?;
            let mut d = Description::new(kind, values.len() as u64);
            d.push(Fact::count("public", "public inputs", values.len()));
            d
        }
        FileKind::Witness => {
            let witness = groth16::read_witness(input).map_err(DescribeError::of)?;
            let mut d = Description::new(kind, witness.values.len() as u64);
            d.push(Fact::count("public", "public inputs", witness.public))
                .push(Fact::count("secret", "secret inputs", witness.secret));
            d
        }
        FileKind::Ptau | FileKind::Zkey | FileKind::CircomR1cs | FileKind::Wtns => {
            return Err(DescribeError::wrong_reader(kind, "read_sectioned"));
        }
    })
}

/// Reads a file of a sectioned `kind` (`.ptau`, `.zkey`, circom's `.r1cs`, `.wtns`) through
/// its section table and describes it.
///
/// # Errors
/// The kind's reader's refusal.
///
/// A kind that is not sectioned is refused: read it with [`read_stream`].
pub fn read_sectioned<R: Read + Seek>(
    pool: &Pool,
    control: &Control,
    kind: FileKind,
    input: R,
    limits: &Limits,
) -> Result<Description, DescribeError> {
    Ok(match kind {
        FileKind::Ptau => {
            let read = ptau::read(pool, control, input, limits).map_err(DescribeError::of)?;
            let mut d = Description::new(kind, read.srs.stored_points());
            d.push(power_fact(read.srs.power(), read.srs.n()))
                .push(Fact::count(
                    "ceremony_power",
                    "ceremony power",
                    read.ceremony_power,
                ))
                .push(
                    Fact::count("contributions", "contributions", read.contributions)
                        .noted("recorded by snarkjs, not re-checked"),
                );
            d
        }
        FileKind::Zkey => {
            zkey(&Zkey::read(pool, control, input, limits).map_err(DescribeError::of)?)
        }
        FileKind::CircomR1cs => circom_r1cs(&CircomR1cs::read(input).map_err(DescribeError::of)?),
        FileKind::Wtns => {
            let witness = Witness::read(input).map_err(DescribeError::of)?;
            let values = witness.values().len();
            let mut d = Description::new(kind, values as u64);
            d.push(Fact::count("values", "values", values).noted("the constant 1 first"));
            d
        }
        FileKind::Phase1
        | FileKind::Srs
        | FileKind::Phase2
        | FileKind::R1cs
        | FileKind::ProvingKey
        | FileKind::VerifyingKey
        | FileKind::Proof
        | FileKind::PublicWitness
        | FileKind::Witness => return Err(DescribeError::wrong_reader(kind, "read_stream")),
    })
}

fn power_fact(power: u32, n: usize) -> Fact {
    Fact::count("power", "power", power).noted(format!("N = {n}"))
}

/// A phase 1 object whose bytes hash to `hash`.
pub fn phase1(object: &Phase1, hash: &[u8; 32]) -> Description {
    let mut d = Description::new(FileKind::Phase1, object.srs.stored_points());
    let initial = object.is_initial();
    let contribution = match object.challenge {
        None if initial => "none (the initial object)".to_owned(),
        None => {
            "none recorded (imported powers: verify a contribution on them as its previous object)"
                .to_owned()
        }
        Some(challenge) => format!("made on the object with hash {}", hex(&challenge)),
    };
    d.push(power_fact(object.srs.power(), object.srs.n()))
        .push(Fact::new(
            "contribution",
            "contribution",
            Value::Text(contribution),
        ))
        .push(Fact::hidden("initial", Value::Flag(initial)))
        .push(Fact::hidden(
            "challenge",
            object
                .challenge
                .map_or(Value::Absent, |c| Value::Bytes(c.to_vec())),
        ))
        .push(Fact::new("hash", "hash", Value::Bytes(hash.to_vec())));
    d
}

/// A sealed SRS whose bytes hash to `hash`.
pub fn sealed(srs: &Srs, hash: &[u8; 32]) -> Description {
    let mut d = Description::new(FileKind::Srs, srs.stored_points());
    d.push(power_fact(srs.power(), srs.n())).push(Fact::new(
        "hash",
        "hash",
        Value::Bytes(hash.to_vec()),
    ));
    d
}

/// A phase 2 object whose bytes hash to `hash`.
pub fn phase2(object: &Phase2, hash: &[u8; 32]) -> Description {
    let mut d = Description::new(FileKind::Phase2, object.points());
    let contribution = match object.challenge {
        None if object.is_initial() => "none (an initial object)".to_owned(),
        None => "none recorded".to_owned(),
        Some(challenge) => format!("made on the object with hash {}", hex(&challenge)),
    };
    d.push(Fact::new(
        "domain",
        "domain",
        Value::Power((object.z.len() + 1).next_power_of_two().trailing_zeros()),
    ))
    .push(Fact::count(
        "private_wires",
        "private wires",
        object.pkk.len(),
    ))
    .push(Fact::count(
        "commitments",
        "commitments",
        object.sigma_g2.len(),
    ))
    .push(Fact::new(
        "contribution",
        "contribution",
        Value::Text(contribution),
    ))
    .push(Fact::hidden("initial", Value::Flag(object.is_initial())))
    .push(Fact::hidden(
        "challenge",
        object
            .challenge
            .map_or(Value::Absent, |c| Value::Bytes(c.to_vec())),
    ))
    .push(Fact::new("hash", "hash", Value::Bytes(hash.to_vec())));
    d
}

/// gnark's R1CS.
pub fn r1cs(circuit: &R1cs) -> Description {
    let mut d = Description::new(FileKind::R1cs, circuit.constraints() as u64);
    d.push(Fact::count(
        "constraints",
        "constraints",
        circuit.constraints(),
    ))
    .push(Fact::count("wires", "wires", circuit.wires()))
    .push(Fact::count("public", "public wires", circuit.public()).noted("the constant 1 included"))
    .push(Fact::count("secret", "secret wires", circuit.secret()))
    .push(Fact::count(
        "internal",
        "internal wires",
        circuit.internal(),
    ))
    .push(Fact::count(
        "commitments",
        "commitments",
        circuit.commitments().len(),
    ))
    .push(Fact::new(
        "domain",
        "domain",
        Value::Power(circuit.domain_power()),
    ));
    d
}

/// gnark's Groth16 proving key.
pub fn proving_key(key: &ProvingKey) -> Description {
    let mut d = Description::new(FileKind::ProvingKey, key.msm_points());
    d.push(Fact::new("domain", "domain", Value::Power(key.power)))
        .push(Fact::count("wires", "wires", key.infinity_a.len()))
        .push(Fact::count(
            "commitments",
            "commitments",
            key.commitment_keys.len(),
        ))
        .push(Fact::count("points", "points", key.msm_points()));
    d
}

/// gnark's Groth16 verifying key.
pub fn verifying_key(key: &VerifyingKey) -> Description {
    let commitments = key.commitment_keys.len();
    let public = key.k.len().saturating_sub(1 + commitments);
    let mut d = Description::new(FileKind::VerifyingKey, key.k.len() as u64);
    d.push(Fact::count("public", "public inputs", public))
        .push(Fact::count("commitments", "commitments", commitments));
    d
}

/// gnark's Groth16 proof.
pub fn proof(proof: &groth16::Proof) -> Description {
    let mut d = Description::new(FileKind::Proof, 3 + proof.commitments.len() as u64);
    d.push(Fact::count(
        "commitments",
        "commitments",
        proof.commitments.len(),
    ));
    d
}

/// A circom `.r1cs`: snarkjs's `r1cs info` lines, in its order, then its Groth16 domain.
pub fn circom_r1cs(circuit: &CircomR1cs) -> Description {
    let h = circuit.header();
    let mut d = Description::new(FileKind::CircomR1cs, circuit.terms() as u64);
    d.push(Fact::new(
        "curve",
        "Curve",
        Value::Text("bls12-381".to_owned()),
    ))
    .push(Fact::count("wires", "# of Wires", h.wires))
    .push(Fact::count(
        "constraints",
        "# of Constraints",
        h.constraints,
    ))
    .push(Fact::count(
        "private_inputs",
        "# of Private Inputs",
        h.private_inputs,
    ))
    .push(Fact::count(
        "public_inputs",
        "# of Public Inputs",
        h.public_inputs,
    ))
    .push(Fact::count("labels", "# of Labels", h.labels))
    .push(Fact::count("outputs", "# of Outputs", h.outputs))
    .push(
        Fact::new("domain", "Groth16 domain", Value::Power(h.domain_power())).noted(format!(
            "snarkjs's zkey new needs a .ptau of power {} or more",
            h.domain_power()
        )),
    );
    d
}

/// A snarkjs `.zkey`: its shape, its contributions in order, its circuit hash.
pub fn zkey(key: &Zkey) -> Description {
    let h = &key.header;
    let points = (key.ic.len() + 3 * key.a.len() + key.c.len() + key.h.len()) as u64;
    let mut d = Description::new(FileKind::Zkey, points);
    let contributions = key
        .contributions
        .iter()
        .map(|c| {
            vec![
                Fact::new(
                    "kind",
                    "kind",
                    Value::Text(
                        if c.kind == 1 {
                            "beacon"
                        } else {
                            "contribution"
                        }
                        .to_owned(),
                    ),
                ),
                Fact::new(
                    "name",
                    "name",
                    c.name.clone().map_or(Value::Absent, Value::Text),
                ),
                Fact::new(
                    "hash",
                    "hash",
                    Value::SnarkjsHash(zkey::contribution_hash(c).to_vec()),
                ),
            ]
        })
        .collect();
    d.push(Fact::count("wires", "wires", h.n_vars))
        .push(Fact::count("public", "public signals", h.n_public))
        .push(Fact::new("domain", "domain", Value::Power(h.power)))
        .push(Fact::new(
            "contributions",
            "contributions",
            Value::List(contributions),
        ))
        .push(Fact::new(
            "circuit_hash",
            "Circuit Hash",
            Value::SnarkjsHash(key.circuit_hash.to_vec()),
        ));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase1_object_is_described_in_text_and_by_key() {
        let pool = Pool::new(2).unwrap();
        let object = Phase1::initial(3).unwrap();
        let mut bytes = Vec::new();
        let hash = object.write(&pool, &Control::new(), &mut bytes).unwrap();
        let d = read_stream(
            &pool,
            &Control::new(),
            FileKind::Phase1,
            &bytes[..],
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(d, phase1(&object, &hash));
        assert_eq!(
            d.text(),
            format!(
                "kind: gnark v0.15 phase 1 object (BLS12-381)\npower: 3 (N = 8)\ncontribution: none (the initial object)\nhash: {}\n",
                hex(&hash)
            )
        );
        let keys: Vec<_> = d.facts.iter().map(|f| f.key).collect();
        assert_eq!(
            keys,
            [
                "kind",
                "power",
                "contribution",
                "initial",
                "challenge",
                "hash"
            ]
        );
        assert_eq!(d.facts[3].value, Value::Flag(true));
        assert_eq!(d.facts[4].value, Value::Absent);
    }

    #[test]
    fn a_truncated_file_is_its_reader_s_error() {
        let pool = Pool::new(1).unwrap();
        let mut bytes = Vec::new();
        Phase1::initial(2)
            .unwrap()
            .write(&pool, &Control::new(), &mut bytes)
            .unwrap();
        bytes.truncate(bytes.len() - 10);
        let error = read_stream(
            &pool,
            &Control::new(),
            FileKind::Phase1,
            &bytes[..],
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(error.code(), "CEREMONY_FILE");
        assert!(error.to_string().contains("truncated"), "{error}");
    }

    #[test]
    fn lists_show_a_line_an_entry_and_snarkjs_hashes_on_rows() {
        let mut d = Description::new(FileKind::Zkey, 0);
        let entry = vec![
            Fact::new("kind", "kind", Value::Text("contribution".into())),
            Fact::new("name", "name", Value::Absent),
            Fact::new("hash", "hash", Value::SnarkjsHash(vec![1; 64])),
        ];
        d.push(Fact::new(
            "contributions",
            "contributions",
            Value::List(vec![entry]),
        ))
        .push(Fact::new(
            "circuit_hash",
            "Circuit Hash",
            Value::SnarkjsHash(vec![2; 64]),
        ));
        let text = d.text();
        let rows = zkey::format_hash(&[1; 64]);
        assert!(
            text.contains(&format!("contributions: 1\n  #1 contribution:\n{rows}\n")),
            "{text}"
        );
        assert!(text.contains("Circuit Hash: \n\t\t0202"), "{text}");
    }
}
