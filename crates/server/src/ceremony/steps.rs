//! The ceremony engine's steps as the coordinator runs them on stored files: the initial
//! object, a contribution's verification against the head, and the seal. Blocking CPU work,
//! run on the server's one worker pool (its budget: one step at a time across ceremonies).
//! Every rule is the engine's ([`lockstep_ceremony`]); this module only reads from and writes
//! to the store.

use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Mutex;

use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::phase1::{self, Phase1, Srs};
use lockstep_ceremony::phase2::{self, Origin, Phase2};
use lockstep_ceremony::r1cs::R1cs;
use lockstep_ceremony::zkey::{self, Zkey};
use lockstep_ceremony::{DEFAULT_MAX_POWER, Limits};
use lockstep_shard::{Control, Pool};

use super::records::FileRef;
use super::rules::CeremonyKind;
use crate::{DiskStore, Staging as _, Store, StoreError};

/// Why a step failed: the file's fault (its words go to whoever sent it) or the server's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StepError {
    /// The input is not what the step needs (the engine's words).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The engine failed for a reason not the file's (memory, a worker).
    #[error("{0}")]
    Server(String),
}

/// The server's worker pool: one step at a time runs on it.
#[derive(Debug)]
pub struct Workers(Mutex<Pool>);

impl Workers {
    /// `workers` threads (0: on the calling thread).
    ///
    /// # Errors
    /// The threads could not be started.
    pub fn new(workers: usize) -> Result<Self, lockstep_shard::PoolError> {
        let pool = if workers == 0 {
            Pool::current_thread()
        } else {
            Pool::new(workers)?
        };
        Ok(Self(Mutex::new(pool)))
    }

    /// Runs `step` on the pool, waiting for the steps before it.
    pub(crate) fn run<T>(&self, step: impl FnOnce(&Pool) -> T) -> T {
        // A step that panicked left the pool as it was (runs own their state): keep using it.
        let pool = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        step(&pool)
    }

    /// Its worker count.
    pub fn workers(&self) -> usize {
        self.run(Pool::workers)
    }
}

fn open(store: &DiskStore, file: FileRef) -> Result<BufReader<Box<dyn Read + Send>>, StepError> {
    Ok(BufReader::with_capacity(1 << 20, store.open(&file.digest)?))
}

fn limits(file: FileRef, power: Option<u32>) -> Limits {
    Limits {
        max_power: DEFAULT_MAX_POWER,
        power,
        file_len: Some(file.len),
    }
}

/// Writes with `write` into the store and returns the file.
fn put(
    store: &DiskStore,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<[u8; 32], lockstep_ceremony::CodecError>,
) -> Result<FileRef, StepError> {
    let mut staging = store.stage()?;
    write(&mut staging).map_err(|e| StepError::Server(e.to_string()))?;
    let len = staging.written();
    let digest = store.commit(staging)?;
    Ok(FileRef { digest, len })
}

/// The initial object of a phase 1 at `2^power`, stored.
pub(crate) fn initial_phase1(
    pool: &Pool,
    store: &DiskStore,
    power: u32,
) -> Result<FileRef, StepError> {
    let object = Phase1::initial(power).map_err(|e| StepError::Invalid(e.to_string()))?;
    put(store, |w| object.write(pool, &Control::new(), w))
}

fn read_circuit(
    pool: &Pool,
    store: &DiskStore,
    r1cs: FileRef,
    phase1: FileRef,
) -> Result<(R1cs, Srs), StepError> {
    let circuit = R1cs::read_at_most(open(store, r1cs)?, r1cs.len)
        .map_err(|e| StepError::Invalid(format!("the circuit: {e}")))?;
    let (srs, _) = Srs::read(
        pool,
        &Control::new(),
        open(store, phase1)?,
        &limits(phase1, None),
    )
    .map_err(|e| StepError::Invalid(format!("the phase 1: {e}")))?;
    let srs = phase2::fit_phase1(srs, &circuit)
        .map_err(|e| StepError::Invalid(format!("the phase 1: {e}")))?;
    Ok((circuit, srs))
}

/// The initial object of a ceremony whose inputs are `r1cs` and `phase1` (a phase 2's circuit
/// and sealed phase 1; a `.zkey` ceremony's circom circuit and `.ptau`), and its domain power.
pub(crate) fn initial(
    pool: &Pool,
    store: &DiskStore,
    kind: CeremonyKind,
    r1cs: FileRef,
    phase1: FileRef,
) -> Result<(FileRef, u32), StepError> {
    match kind {
        CeremonyKind::Zkey => initial_zkey(pool, store, r1cs, phase1),
        _ => initial_phase2(pool, store, r1cs, phase1),
    }
}

/// A stored file as a seekable reader (circom's and snarkjs's files are read through their
/// section tables).
fn open_file(store: &DiskStore, file: FileRef) -> Result<BufReader<std::fs::File>, StepError> {
    Ok(BufReader::with_capacity(
        1 << 20,
        store.open_file(&file.digest)?,
    ))
}

/// A `.zkey` ceremony's initial key (snarkjs's `zkey new`) from its stored circom circuit and
/// `.ptau`, and its domain power.
fn initial_zkey(
    pool: &Pool,
    store: &DiskStore,
    r1cs: FileRef,
    ptau: FileRef,
) -> Result<(FileRef, u32), StepError> {
    let circuit = CircomR1cs::read(open_file(store, r1cs)?)
        .map_err(|e| StepError::Invalid(format!("the circuit: {e}")))?;
    let key = zkey::new(
        pool,
        &Control::new(),
        &circuit,
        open_file(store, ptau)?,
        &limits(ptau, None),
    )
    .map_err(|e| StepError::Invalid(format!("the powers of tau: {e}")))?;
    let file = put(store, |w| {
        key.write(pool, &Control::new(), &zkey::NEW_ORDER, w)
    })?;
    Ok((file, key.header.power))
}

/// A phase 2's initial object, derived from its circuit and sealed phase 1 (both stored), and
/// the circuit's domain power.
fn initial_phase2(
    pool: &Pool,
    store: &DiskStore,
    r1cs: FileRef,
    phase1: FileRef,
) -> Result<(FileRef, u32), StepError> {
    let (circuit, srs) = read_circuit(pool, store, r1cs, phase1)?;
    let object = phase2::initialize_object(pool, &Control::new(), &circuit, &srs)
        .map_err(|e| StepError::Invalid(e.to_string()))?;
    let file = put(store, |w| object.write(pool, &Control::new(), w))?;
    Ok((file, srs.power()))
}

/// Verifies the upload at `candidate` (of `candidate_len` bytes) as participant `name`'s
/// contribution on `head` (the engine's `verify_contribution`, every point of both files read
/// and checked) and returns its contribution hash: gnark's (the SHA-256 of the file), or
/// snarkjs's for a `.zkey` (whose recorded name must be `name`).
pub(crate) fn verify(
    pool: &Pool,
    store: &DiskStore,
    kind: CeremonyKind,
    head: FileRef,
    (candidate, candidate_len): (&Path, u64),
    name: &str,
) -> Result<Vec<u8>, StepError> {
    let control = Control::new();
    let file = std::fs::File::open(candidate).map_err(|source| StoreError::Io {
        action: "open an upload",
        path: candidate.to_path_buf(),
        source,
    })?;
    let upload = BufReader::with_capacity(1 << 20, file);
    let upload_limits = |power| Limits {
        file_len: Some(candidate_len),
        ..limits(head, power)
    };
    let invalid = |e: &dyn std::fmt::Display| StepError::Invalid(e.to_string());
    match kind {
        CeremonyKind::Phase1 { power } => {
            let (previous, previous_hash) = Phase1::read(
                pool,
                &control,
                open(store, head)?,
                &limits(head, Some(power)),
            )
            .map_err(|e| StepError::Server(format!("the head: {e}")))?;
            let (next, hash) = Phase1::read(pool, &control, upload, &upload_limits(Some(power)))
                .map_err(|e| invalid(&e))?;
            phase1::verify_contribution(pool, &control, &previous, &previous_hash, &next)
                .map_err(|e| invalid(&e))?;
            Ok(hash.to_vec())
        }
        CeremonyKind::Zkey => {
            let previous = Zkey::read(pool, &control, open_file(store, head)?, &limits(head, None))
                .map_err(|e| StepError::Server(format!("the head: {e}")))?;
            let file = std::fs::File::open(candidate).map_err(|source| StoreError::Io {
                action: "open an upload",
                path: candidate.to_path_buf(),
                source,
            })?;
            let next = Zkey::read(
                pool,
                &control,
                BufReader::with_capacity(1 << 20, file),
                &upload_limits(None),
            )
            .map_err(|e| invalid(&e))?;
            let verified = zkey::verify_contribution(pool, &control, &previous, &next)
                .map_err(|e| invalid(&e))?;
            if verified.name.as_deref() != Some(name) {
                return Err(StepError::Invalid(format!(
                    "the contribution is recorded under the name {:?}, not this participant's {name:?}",
                    verified.name.as_deref().unwrap_or("")
                )));
            }
            Ok(verified.hash.to_vec())
        }
        CeremonyKind::Phase2 => {
            let (previous, previous_hash) =
                Phase2::read(pool, &control, open(store, head)?, &limits(head, None))
                    .map_err(|e| StepError::Server(format!("the head: {e}")))?;
            let (next, hash) = Phase2::read(pool, &control, upload, &upload_limits(None))
                .map_err(|e| invalid(&e))?;
            phase2::verify_contribution(pool, &control, &previous, &previous_hash, &next)
                .map_err(|e| invalid(&e))?;
            Ok(hash.to_vec())
        }
    }
}

/// The sealed result of a ceremony whose head is `head`: a phase 1's SRS, or a phase 2's
/// proving and verifying keys (its circuit and phase 1 read again for the evaluations), with the
/// beacon delayed by `iterations` SHA-256 hashes.
pub(crate) fn seal(
    pool: &Pool,
    store: &DiskStore,
    kind: CeremonyKind,
    files: &SealInputs,
    beacon: &[u8],
    iterations: u64,
) -> Result<(FileRef, Option<FileRef>), StepError> {
    let control = Control::new();
    let head = files.head;
    if kind == CeremonyKind::Zkey {
        return seal_zkey(pool, store, head, beacon, iterations);
    }
    let challenge = phase1::beacon_challenge_with(&control, beacon, iterations)
        .map_err(|e| StepError::Invalid(e.to_string()))?;
    match kind {
        CeremonyKind::Phase1 { power } => {
            let (last, last_hash) = Phase1::read(
                pool,
                &control,
                open(store, head)?,
                &limits(head, Some(power)),
            )
            .map_err(|e| StepError::Server(format!("the head: {e}")))?;
            let srs = phase1::seal(pool, &control, last, &last_hash, &challenge)
                .map_err(|e| StepError::Server(e.to_string()))?;
            Ok((put(store, |w| srs.write(pool, &control, w))?, None))
        }
        CeremonyKind::Phase2 => {
            let (Some(r1cs), Some(phase1)) = (files.r1cs, files.phase1) else {
                return Err(StepError::Server(
                    "a phase 2 ceremony open without its circuit and phase 1".into(),
                ));
            };
            let (circuit, srs) = read_circuit(pool, store, r1cs, phase1)?;
            let (initial, evaluations) = phase2::initialize(pool, &control, &circuit, &srs)
                .map_err(|e| StepError::Server(e.to_string()))?;
            let (last, last_hash) =
                Phase2::read(pool, &control, open(store, head)?, &limits(head, None))
                    .map_err(|e| StepError::Server(format!("the head: {e}")))?;
            let origin = Origin {
                initial: &initial,
                srs: &srs,
                evaluations: &evaluations,
            };
            let (pk, vk) = phase2::seal(pool, &control, origin, last, &last_hash, &challenge)
                .map_err(|e| StepError::Invalid(e.to_string()))?;
            let pk = put(store, |w| pk.write(pool, &control, w))?;
            let vk = put(store, |w| vk.write(pool, &control, w))?;
            Ok((pk, Some(vk)))
        }
        CeremonyKind::Zkey => unreachable!("invariant: sealed above"),
    }
}

/// The exponent of a `.zkey` beacon's `iterations`: they are `2^exp` for snarkjs's `zkey
/// beacon` (exp 10 to 32 here).
pub(crate) fn zkey_beacon_exp(iterations: u64) -> Result<u8, StepError> {
    let exp = iterations.trailing_zeros();
    if !iterations.is_power_of_two() || !(10..=32).contains(&exp) {
        return Err(StepError::Invalid(format!(
            "a .zkey ceremony's beacon iterations are 2^10 to 2^32 (snarkjs's exponent); given {iterations}"
        )));
    }
    u8::try_from(exp).map_err(|_| StepError::Invalid("beacon exponent".into()))
}

/// A `.zkey` ceremony's seal: snarkjs's `zkey beacon` on the head (named `beacon`), and the
/// final key's verification key as snarkjs's JSON.
fn seal_zkey(
    pool: &Pool,
    store: &DiskStore,
    head: FileRef,
    beacon: &[u8],
    iterations: u64,
) -> Result<(FileRef, Option<FileRef>), StepError> {
    let control = Control::new();
    let exp = zkey_beacon_exp(iterations)?;
    let last = Zkey::read(pool, &control, open_file(store, head)?, &limits(head, None))
        .map_err(|e| StepError::Server(format!("the head: {e}")))?;
    let (key, _) = zkey::beacon(pool, &control, last, Some("beacon"), beacon, exp)
        .map_err(|e| StepError::Invalid(e.to_string()))?;
    let json = zkey::verification_key_json(&key);
    let sealed = put(store, |w| key.write(pool, &control, &zkey::ORDER, w))?;
    let vk = put(store, |w| {
        w.write_all(json.as_bytes())?;
        Ok([0u8; 32])
    })?;
    Ok((sealed, Some(vk)))
}

/// The stored files a seal reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SealInputs {
    /// The last accepted contribution.
    pub(crate) head: FileRef,
    /// A phase 2's circuit.
    pub(crate) r1cs: Option<FileRef>,
    /// A phase 2's sealed phase 1.
    pub(crate) phase1: Option<FileRef>,
}
