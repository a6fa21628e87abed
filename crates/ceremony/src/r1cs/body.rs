//! The CBOR body of a gnark constraint system (fxamacker/cbor, Go field names as map keys,
//! registered types under tags from 5,309,735), read with `ciborium` into the few fields
//! phase 2 needs.

use ciborium::Value;

use super::{Commitment, R1csError};

/// The first tag of gnark's registered types (`constraint.getTagSet`), in registration order.
const TAG_BASE: u64 = 5_309_735;

/// The blueprint types gnark v0.15 registers, by tag offset.
const BLUEPRINTS: [&str; 19] = [
    "BlueprintGenericHint",
    "BlueprintGenericR1C",
    "Groth16Commitments",
    "PlonkCommitments",
    "BlueprintGenericSparseR1C[U32]",
    "BlueprintSparseR1CAdd[U32]",
    "BlueprintSparseR1CMul[U32]",
    "BlueprintSparseR1CBool[U32]",
    "BlueprintLookupHint[U32]",
    "BlueprintGenericSparseR1C[U64]",
    "BlueprintSparseR1CAdd[U64]",
    "BlueprintSparseR1CMul[U64]",
    "BlueprintSparseR1CBool[U64]",
    "BlueprintLookupHint[U64]",
    "BlueprintBatchInverse[U32]",
    "BlueprintBatchInverse[U64]",
    "GkrSkipLevel",
    "GkrSumcheckLevel",
    "GkrSingleSourceZeroCheckLevel",
];

/// What a blueprint is to phase 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blueprint {
    /// `BlueprintGenericR1C`: one rank-1 constraint an instruction.
    R1c,
    /// `BlueprintGenericHint`: a hint's call (no constraint), run by the prover's solver.
    Hint,
    /// Another solver step that adds no constraint (batch inversion, lookups), skipped as
    /// gnark's R1C iterator skips it; the prover's solver does not run it.
    Solver(&'static str),
    /// Anything else: refused when an instruction uses it.
    Unsupported(&'static str),
}

/// The fields of the body phase 2 reads.
#[derive(Debug)]
pub(crate) struct Body {
    pub(crate) scalar_field: String,
    pub(crate) system_type: u64,
    pub(crate) blueprints: Vec<Blueprint>,
    pub(crate) nb_constraints: usize,
    pub(crate) nb_internal: usize,
    pub(crate) nb_public: usize,
    pub(crate) nb_secret: usize,
    pub(crate) commitments: Vec<Commitment>,
    /// The hints the circuit calls, by id: gnark's `MHintsDependencies` (the function's full
    /// name, whose FNV-1a hash is its id), sorted by id.
    pub(crate) hints: Vec<(u32, String)>,
}

fn bad(what: impl Into<String>) -> R1csError {
    R1csError::Body(what.into())
}

/// Decodes the body.
pub(crate) fn decode(bytes: &[u8]) -> Result<Body, R1csError> {
    let value: Value = ciborium::de::from_reader(bytes).map_err(|e| bad(format!("CBOR: {e}")))?;
    let Value::Map(fields) = value else {
        return Err(bad("the body is not a CBOR map"));
    };
    let field = |name: &str| -> Option<&Value> {
        fields
            .iter()
            .find(|(k, _)| matches!(k, Value::Text(t) if t == name))
            .map(|(_, v)| v)
    };
    let required = |name: &'static str| field(name).ok_or_else(|| bad(format!("no field {name}")));
    let text = |name: &'static str| -> Result<String, R1csError> {
        match required(name)? {
            Value::Text(t) => Ok(t.clone()),
            _ => Err(bad(format!("{name} is not a string"))),
        }
    };
    let count = |name: &'static str| -> Result<usize, R1csError> {
        match field(name) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Array(items)) => Ok(items.len()),
            Some(_) => Err(bad(format!("{name} is not an array"))),
        }
    };
    let blueprints = match field("Blueprints") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(blueprint).collect::<Result<_, _>>()?,
        Some(_) => return Err(bad("Blueprints is not an array")),
    };
    let commitments = match field("CommitmentInfo") {
        None | Some(Value::Null) => Vec::new(),
        Some(value) => commitments(value)?,
    };
    let mut hints = match field("MHintsDependencies") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Map(entries)) => entries
            .iter()
            .map(|(id, name)| {
                let id = u32::try_from(unsigned(id, "a hint id")?)
                    .map_err(|_| bad("a hint id beyond 32 bits"))?;
                match name {
                    Value::Text(name) => Ok((id, name.clone())),
                    _ => Err(bad("a hint name is not a string")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(bad("MHintsDependencies is not a map")),
    };
    hints.sort_unstable_by_key(|&(id, _)| id);
    Ok(Body {
        hints,
        scalar_field: text("ScalarField")?,
        system_type: unsigned(required("Type")?, "Type")?,
        blueprints,
        nb_constraints: size(required("NbConstraints")?, "NbConstraints")?,
        nb_internal: size(required("NbInternalVariables")?, "NbInternalVariables")?,
        nb_public: count("Public")?,
        nb_secret: count("Secret")?,
        commitments,
    })
}

fn unsigned(value: &Value, name: &str) -> Result<u64, R1csError> {
    match value {
        Value::Integer(i) => u64::try_from(i128::from(*i))
            .map_err(|_| bad(format!("{name} is negative or too large"))),
        _ => Err(bad(format!("{name} is not an integer"))),
    }
}

fn size(value: &Value, name: &str) -> Result<usize, R1csError> {
    usize::try_from(unsigned(value, name)?).map_err(|_| bad(format!("{name} is too large")))
}

fn blueprint(value: &Value) -> Result<Blueprint, R1csError> {
    let Value::Tag(tag, _) = value else {
        return Err(bad("a blueprint without its type tag"));
    };
    let name = tag
        .checked_sub(TAG_BASE)
        .and_then(|k| usize::try_from(k).ok())
        .and_then(|k| BLUEPRINTS.get(k))
        .copied();
    Ok(match name {
        Some("BlueprintGenericR1C") => Blueprint::R1c,
        Some("BlueprintGenericHint") => Blueprint::Hint,
        Some(name @ ("BlueprintBatchInverse[U64]" | "BlueprintLookupHint[U64]")) => {
            Blueprint::Solver(name)
        }
        Some(other) => Blueprint::Unsupported(other),
        None => Blueprint::Unsupported("an unregistered blueprint type (a GKR gate?)"),
    })
}

fn commitments(value: &Value) -> Result<Vec<Commitment>, R1csError> {
    let items = match value {
        Value::Tag(tag, inner) if *tag == TAG_BASE + 2 => match inner.as_ref() {
            Value::Array(items) => items,
            Value::Null => return Ok(Vec::new()),
            _ => return Err(bad("Groth16Commitments is not an array")),
        },
        Value::Tag(tag, _) if *tag == TAG_BASE + 3 => {
            return Err(R1csError::NotR1cs(
                "its commitments are PLONK's: a sparse (PLONK) constraint system",
            ));
        }
        _ => return Err(bad("CommitmentInfo is not gnark's Groth16Commitments")),
    };
    items.iter().map(commitment).collect()
}

fn commitment(value: &Value) -> Result<Commitment, R1csError> {
    let Value::Map(fields) = value else {
        return Err(bad("a commitment is not a map"));
    };
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| matches!(k, Value::Text(t) if t == name))
            .map(|(_, v)| v)
    };
    let list = |name: &'static str| -> Result<Vec<usize>, R1csError> {
        match field(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(|v| size(v, name)).collect(),
            Some(_) => Err(bad(format!("{name} is not an array"))),
        }
    };
    let number = |name: &'static str| -> Result<usize, R1csError> {
        match field(name) {
            None => Ok(0),
            Some(v) => size(v, name),
        }
    };
    Ok(Commitment {
        public_and_commitment_committed: list("PublicAndCommitmentCommitted")?,
        private_committed: list("PrivateCommitted")?,
        commitment_index: number("CommitmentIndex")?,
        nb_public_committed: number("NbPublicCommitted")?,
    })
}
