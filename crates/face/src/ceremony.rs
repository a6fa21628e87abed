//! The ceremony's files for a front end that has paths (a Python module): what a file holds
//! ([`info`]) and the verifications (`verify_*`), each reading its files and handing them to
//! the engine's rules ([`lockstep_ceremony::describe`], [`phase1::Chain`], [`phase2::Chain`],
//! [`zkey::verify_file`], [`groth16::verify`], snarkjs's verifier). The CLI reads the same
//! files with its progress bars and pipes and calls the same engine functions; the words of a
//! verdict or a refusal are the engine's, so both say the same.
//!
//! Every refusal is [`Coded`], a file's naming the file: `CEREMONY_IO` (cannot be opened, or
//! not a regular file: a pipe is never waited on), `CEREMONY_KIND` (not a ceremony file, or
//! another kind than the call takes), `CEREMONY_FILE` (its reader refuses it: a bad point, a
//! truncated file), `CEREMONY_REJECTED` (a verification fails), `CEREMONY_RUN` (cancelled, out
//! of memory), `CEREMONY_USAGE` (a bad argument, before any file is read).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use lockstep_ceremony::beacon::Beacon;
use lockstep_ceremony::chain::{ChainError, Verdict};
use lockstep_ceremony::circom::CircomR1cs;
use lockstep_ceremony::describe::{self, Description};
use lockstep_ceremony::phase1::{self, Phase1, Srs};
use lockstep_ceremony::phase2::{self, Phase2, Phase2Error, Start, VerifyingKey};
use lockstep_ceremony::prove::snarkjs;
use lockstep_ceremony::r1cs::R1cs;
use lockstep_ceremony::zkey::{self, Verification, ZkeyVerifyError};
use lockstep_ceremony::{FileKind, GRAIN, Limits, SNIFF_LEN, groth16, points_at_most};
use lockstep_shard::{Control, Pool};

use crate::Coded;

pub use crate::workers::MAX_WORKERS;

/// A file described: its length and the engine's description.
#[derive(Clone, Debug)]
pub struct Info {
    /// The file's length in bytes.
    pub size: u64,
    /// What it holds.
    pub description: Description,
}

/// One file's verdict in a chain.
#[derive(Clone, Debug)]
pub struct Step {
    /// The file, as the caller named it.
    pub path: PathBuf,
    /// What it was found to be.
    pub verdict: Verdict,
}

impl Step {
    /// The verdict's line: `PATH: VERDICT`, as `lockstep ceremony ... verify` prints it.
    pub fn line(&self) -> String {
        format!("{}: {}", self.path.display(), self.verdict)
    }
}

/// A chain verified: each file's verdict in order, and the contributions counted.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The verdicts, in the order the files were given (a seal's last).
    pub steps: Vec<Step>,
    /// The contributions verified.
    pub contributions: usize,
}

/// A proof verified: how many public inputs (or signals) it was checked for, and whose files
/// they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofVerified {
    /// The public inputs (gnark) or signals (snarkjs).
    pub public: usize,
    /// Whether the files were snarkjs's JSON (else gnark's binary files).
    pub snarkjs: bool,
}

fn io(path: &Path, error: &std::io::Error) -> Coded {
    Coded::new("CEREMONY_IO", format!("{}: {error}", path.display()))
}

fn file_error(path: &Path, error: impl std::fmt::Display) -> Coded {
    Coded::new("CEREMONY_FILE", format!("{}: {error}", path.display()))
}

fn chain_error(path: &Path, error: &ChainError) -> Coded {
    Coded::new(error.code(), format!("{}: {error}", path.display()))
}

/// Opens `path` for reading, refused unless it is a regular file: checked before it is opened,
/// so a named pipe is never waited on.
fn open_file(path: &Path) -> Result<(File, u64), Coded> {
    let meta = std::fs::metadata(path).map_err(|e| io(path, &e))?;
    if !meta.is_file() {
        return Err(Coded::new(
            "CEREMONY_IO",
            format!(
                "{}: not a regular file (a ceremony file is read from a file, not a folder or a pipe)",
                path.display()
            ),
        ));
    }
    let file = File::open(path).map_err(|e| io(path, &e))?;
    Ok((file, meta.len()))
}

/// A file opened and its kind told from its first bytes (the file rewound).
struct Opened {
    file: File,
    /// `None`: no kind's first bytes (a reader then names the fault).
    kind: Option<FileKind>,
    len: u64,
    /// Whether it is empty.
    empty: bool,
}

impl Opened {
    fn new(path: &Path) -> Result<Self, Coded> {
        let (mut file, len) = open_file(path)?;
        let mut prefix = Vec::with_capacity(SNIFF_LEN);
        (&mut file)
            .take(SNIFF_LEN as u64)
            .read_to_end(&mut prefix)
            .and_then(|_| file.rewind())
            .map_err(|e| io(path, &e))?;
        Ok(Self {
            file,
            kind: FileKind::sniff(&prefix),
            len,
            empty: prefix.is_empty(),
        })
    }

    /// Opens `path`, refused if its first bytes tell another kind than `expected` (naming what
    /// it is and what reads it) or it is empty; a file of no kind is left to the reader, which
    /// names its fault (a truncated file, a bad first point), as the CLI does.
    fn expecting(path: &Path, expected: FileKind) -> Result<Self, Coded> {
        let opened = Self::new(path)?;
        match opened.kind {
            Some(found) if found != expected => Err(Coded::new(
                "CEREMONY_KIND",
                format!(
                    "{} is {}, not {}: {}",
                    path.display(),
                    found.described(),
                    expected.described(),
                    found.read_by()
                ),
            )),
            _ if opened.empty => Err(Coded::new(
                "CEREMONY_FILE",
                format!("{}: empty file", path.display()),
            )),
            _ => Ok(opened),
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            file_len: Some(self.len),
            ..Limits::default()
        }
    }

    fn reader(self) -> BufReader<File> {
        BufReader::with_capacity(1 << 20, self.file)
    }
}

/// A pool of `asked` workers, or for 0 the shard policy's count for `points` points of
/// ceremony work ([`crate::workers::by_policy`] in the ceremony's grain).
///
/// # Errors
/// `CEREMONY_USAGE` past [`MAX_WORKERS`] or for a `LOCKSTEP_WORKERS` that is not a count.
pub fn pool(asked: u32, points: u64) -> Result<Pool, Coded> {
    let points = usize::try_from(points).unwrap_or(usize::MAX);
    let workers = crate::workers::by_policy(asked, points, GRAIN, "CEREMONY_USAGE")?;
    Pool::new(workers).map_err(|e| Coded::new("CEREMONY_RUN", e.to_string()))
}

/// What the file at `path` holds, after reading and checking all of it (any kind the engine
/// reads).
///
/// # Errors
/// `CEREMONY_IO`, `CEREMONY_KIND`, `CEREMONY_FILE` (see the module), `CEREMONY_USAGE`.
pub fn info(path: &Path, workers: u32, control: &Control) -> Result<Info, Coded> {
    let opened = Opened::new(path)?;
    let Some(kind) = opened.kind else {
        let what = if opened.empty {
            "an empty file"
        } else {
            "not a ceremony file: its first bytes are those of no phase 1 object, sealed SRS, .ptau, phase 2 object, R1CS, Groth16 key, proof or witness"
        };
        return Err(Coded::new(
            "CEREMONY_KIND",
            format!("{} is {what}", path.display()),
        ));
    };
    let pool = pool(workers, points_at_most(opened.len))?;
    let (size, limits) = (opened.len, opened.limits());
    let described = if kind.is_sectioned() {
        describe::read_sectioned(&pool, control, kind, opened.reader(), &limits)
    } else {
        describe::read_stream(&pool, control, kind, opened.reader(), &limits)
    }
    .map_err(|e| Coded::new(e.code(), format!("{}: {e}", path.display())))?;
    Ok(Info {
        size,
        description: described,
    })
}

/// The pool for a chain whose objects are each as large as `sized` (its first file).
fn chain_pool(sized: &Path, workers: u32) -> Result<Pool, Coded> {
    let len = std::fs::metadata(sized).map_err(|e| io(sized, &e))?.len();
    pool(workers, points_at_most(len))
}

fn read_phase1(
    pool: &Pool,
    control: &Control,
    path: &Path,
    limits: Limits,
) -> Result<(Phase1, [u8; 32]), Coded> {
    let opened = Opened::expecting(path, FileKind::Phase1)?;
    let limits = Limits {
        file_len: Some(opened.len),
        ..limits
    };
    Phase1::read(pool, control, &mut opened.reader(), &limits).map_err(|e| file_error(path, e))
}

/// A seal to check after a phase 1 chain: the sealed SRS's path and the beacon (hex) with its
/// SHA-256 iterations, as a caller gives them (each may be missing; [`verify_phase1`] takes
/// both paths and the beacon, or none of them).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sealed<'a> {
    /// The sealed SRS.
    pub path: Option<&'a Path>,
    /// The beacon, in hex.
    pub beacon: Option<&'a str>,
    /// Its SHA-256 iterations.
    pub iterations: u64,
}

fn usage(message: &str) -> Coded {
    Coded::new("CEREMONY_USAGE", message)
}

/// Verifies a phase 1 chain (`lockstep ceremony phase1 verify`): `files` from the initial
/// object (or a first contribution, checked against the initial object of its power), or
/// after `previous`; then the sealed SRS, the seal of its last file, when given.
///
/// # Errors
/// `CEREMONY_USAGE` for no file, a seal's path without its beacon or the other way round,
/// iterations without a seal, or a bad beacon (before any file is read); then as the module
/// says, the first file that fails named.
pub fn verify_phase1(
    files: &[PathBuf],
    previous: Option<&Path>,
    sealed: Sealed<'_>,
    workers: u32,
    control: &Control,
) -> Result<Verified, Coded> {
    let Some(first) = files.first() else {
        return Err(usage("files: none given"));
    };
    let sealed = match (sealed.path, sealed.beacon) {
        (Some(path), Some(text)) => Some((
            path,
            Beacon::new(text, sealed.iterations)
                .map_err(|e| Coded::new(e.code(), e.to_string()))?,
        )),
        (None, None) if sealed.iterations == 0 => None,
        (None, None) => {
            return Err(usage(
                "iterations: the beacon's delay, given without a sealed SRS and its beacon",
            ));
        }
        _ => {
            return Err(usage(
                "sealed and beacon: give both (the sealed SRS and the beacon it was sealed with), or neither",
            ));
        }
    };
    let pool = chain_pool(previous.unwrap_or(first), workers)?;
    let mut steps = Vec::new();
    let (mut chain, rest) = match previous {
        Some(path) => {
            let (object, hash) = read_phase1(&pool, control, path, Limits::default())?;
            (phase1::Chain::after(object, hash), files)
        }
        None => {
            let (object, hash) = read_phase1(&pool, control, first, Limits::default())?;
            let (chain, verdict) = phase1::Chain::from_first(&pool, control, object, hash)
                .map_err(|e| chain_error(first, &e))?;
            steps.push(Step {
                path: first.clone(),
                verdict,
            });
            (chain, &files[1..])
        }
    };
    for path in rest {
        let (next, hash) = read_phase1(&pool, control, path, chain.next_limits())?;
        let verdict = chain
            .push(&pool, control, next, hash)
            .map_err(|e| chain_error(path, &e))?;
        steps.push(Step {
            path: path.clone(),
            verdict,
        });
    }
    let contributions = chain.contributions();
    if let Some((path, beacon)) = sealed {
        let challenge = phase1::beacon_challenge_with(control, beacon.bytes(), beacon.iterations())
            .map_err(|e| Coded::new("CEREMONY_RUN", e.to_string()))?;
        let opened = Opened::expecting(path, FileKind::Srs)?;
        let limits = Limits {
            file_len: Some(opened.len),
            ..chain.next_limits()
        };
        let (srs, hash) = Srs::read(&pool, control, &mut opened.reader(), &limits)
            .map_err(|e| file_error(path, e))?;
        let verdict = chain
            .check_seal(&pool, control, &srs, hash, &challenge, beacon.iterations())
            .map_err(|e| chain_error(path, &e))?;
        steps.push(Step {
            path: path.to_owned(),
            verdict,
        });
    }
    Ok(Verified {
        steps,
        contributions,
    })
}

fn read_phase2(pool: &Pool, control: &Control, path: &Path) -> Result<(Phase2, [u8; 32]), Coded> {
    let opened = Opened::expecting(path, FileKind::Phase2)?;
    let limits = opened.limits();
    Phase2::read(pool, control, &mut opened.reader(), &limits).map_err(|e| file_error(path, e))
}

/// Verifies a phase 2 chain (`lockstep ceremony phase2 verify`): `files` after `previous`, or
/// from their first file: an initial object (equal to the one re-derived from `circuit`, the
/// gnark R1CS and the sealed phase 1, when given), or a first contribution on that re-derived
/// object (gnark's `VerifyPhase2` form, which needs `circuit`).
///
/// # Errors
/// `CEREMONY_USAGE` for no file, a circuit without its phase 1 or the other way round, or a
/// circuit with `previous` (whose chain has its start already); then as the module says, the
/// first file that fails named.
pub fn verify_phase2(
    files: &[PathBuf],
    previous: Option<&Path>,
    r1cs: Option<&Path>,
    phase1: Option<&Path>,
    workers: u32,
    control: &Control,
) -> Result<Verified, Coded> {
    let Some(first) = files.first() else {
        return Err(usage("files: none given"));
    };
    let circuit = match (r1cs, phase1) {
        (Some(_), Some(_)) if previous.is_some() => {
            return Err(usage(
                "previous with r1cs and phase1: a chain after a previous object is not re-derived from a circuit (give one or the other)",
            ));
        }
        (Some(r1cs), Some(phase1)) => Some((r1cs, phase1)),
        (None, None) => None,
        _ => {
            return Err(usage(
                "r1cs and phase1: give both (the circuit and the sealed phase 1 it was initialized from), or neither",
            ));
        }
    };
    let pool = chain_pool(previous.unwrap_or(first), workers)?;
    let mut steps = Vec::new();
    let (mut chain, rest) = match previous {
        Some(path) => {
            let (object, hash) = read_phase2(&pool, control, path)?;
            (phase2::Chain::after(Cow::Owned(object), hash), files)
        }
        None => {
            let start = match circuit {
                Some((r1cs_path, phase1_path)) => {
                    let opened = Opened::expecting(r1cs_path, FileKind::R1cs)?;
                    let max = opened.len;
                    let r1cs = R1cs::read_at_most(opened.reader(), max)
                        .map_err(|e| file_error(r1cs_path, e))?;
                    let opened = Opened::expecting(phase1_path, FileKind::Srs)?;
                    let limits = opened.limits();
                    let (srs, _) = Srs::read(&pool, control, &mut opened.reader(), &limits)
                        .map_err(|e| file_error(phase1_path, e))?;
                    let srs = phase2::fit_phase1(srs, &r1cs).map_err(|e| {
                        Coded::new(
                            "CEREMONY_REJECTED",
                            format!("{}: REJECTED: {e}", phase1_path.display()),
                        )
                    })?;
                    let object = phase2::initialize_object(&pool, control, &r1cs, &srs).map_err(
                        |e| match e {
                            Phase2Error::Commitment { .. } => file_error(r1cs_path, e),
                            other => {
                                Coded::new("CEREMONY_RUN", format!("initializing phase 2: {other}"))
                            }
                        },
                    )?;
                    let origin = format!("{} over {}", r1cs_path.display(), phase1_path.display());
                    Some(
                        Start::new(&pool, Cow::Owned(object), origin)
                            .map_err(|e| Coded::new(e.code(), e.to_string()))?,
                    )
                }
                None => None,
            };
            let (object, hash) = read_phase2(&pool, control, first)?;
            let (chain, verdict) = phase2::Chain::from_first(&pool, control, object, hash, start)
                .map_err(|e| chain_error(first, &e))?;
            steps.push(Step {
                path: first.clone(),
                verdict,
            });
            (chain, &files[1..])
        }
    };
    for path in rest {
        let (next, hash) = read_phase2(&pool, control, path)?;
        let verdict = chain
            .push(&pool, control, next, hash)
            .map_err(|e| chain_error(path, &e))?;
        steps.push(Step {
            path: path.clone(),
            verdict,
        });
    }
    Ok(Verified {
        contributions: chain.contributions(),
        steps,
    })
}

/// Verifies a snarkjs `.zkey` against its circom `.r1cs` and the `.ptau` it was made from
/// (`snarkjs zkey verify`, `lockstep ceremony zkey verify`): every contribution's proof and
/// the key's points. Returns the circuit hash and each contribution's hash, as snarkjs prints.
///
/// # Errors
/// As the module says; `CEREMONY_REJECTED` names the first check that fails.
pub fn verify_zkey(
    r1cs: &Path,
    ptau: &Path,
    key: &Path,
    workers: u32,
    control: &Control,
) -> Result<Verification, Coded> {
    let circuit = CircomR1cs::read(Opened::expecting(r1cs, FileKind::CircomR1cs)?.reader())
        .map_err(|e| file_error(r1cs, e))?;
    let powers = Opened::expecting(ptau, FileKind::Ptau)?.reader();
    let opened = Opened::expecting(key, FileKind::Zkey)?;
    let pool = pool(workers, points_at_most(opened.len))?;
    match zkey::verify_file(
        &pool,
        control,
        &circuit,
        powers,
        opened.reader(),
        &Limits::default(),
    ) {
        Ok((_, report)) => Ok(report),
        Err(ZkeyVerifyError::Key(error)) => Err(file_error(key, error)),
        Err(ZkeyVerifyError::Zkey(error)) => Err(Coded::new(
            "CEREMONY_FILE",
            format!("{} with {}: {error}", r1cs.display(), ptau.display()),
        )),
        Err(refusal) => Err(Coded::new(
            "CEREMONY_REJECTED",
            format!("{}: REJECTED: {refusal}", key.display()),
        )),
    }
}

/// A JSON file of snarkjs's, whole (at most [`snarkjs::JSON_LIMIT`] bytes).
fn read_json(path: &Path) -> Result<String, Coded> {
    let (file, _) = open_file(path)?;
    let mut bytes = Vec::new();
    file.take(snarkjs::JSON_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(path, &e))?;
    if bytes.len() as u64 > snarkjs::JSON_LIMIT {
        return Err(Coded::new(
            "CEREMONY_FILE",
            format!(
                "{}: larger than {} bytes",
                path.display(),
                snarkjs::JSON_LIMIT
            ),
        ));
    }
    if let Some(kind) = FileKind::sniff(&bytes[..bytes.len().min(SNIFF_LEN)]) {
        return Err(Coded::new(
            "CEREMONY_KIND",
            format!(
                "{} is {}, not snarkjs's JSON (a verification key, proof or public signals)",
                path.display(),
                kind.described()
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|_| file_error(path, "not JSON (not UTF-8 text)"))
}

/// Verifies a Groth16 proof (`lockstep groth16 verify`): gnark's verifying key, proof and
/// public witness, or snarkjs's `verification_key.json`, `proof.json` and `public.json` (told
/// by the key's first bytes).
///
/// # Errors
/// As the module says; `CEREMONY_REJECTED` when the proof does not verify.
pub fn verify_proof(vk: &Path, proof: &Path, public: &Path) -> Result<ProofVerified, Coded> {
    let mut head = [0u8; 64];
    let (mut file, _) = open_file(vk)?;
    let n = file.read(&mut head).map_err(|e| io(vk, &e))?;
    drop(file);
    let rejected = |error: &dyn std::fmt::Display| {
        Coded::new(
            "CEREMONY_REJECTED",
            format!("{}: REJECTED: {error}", proof.display()),
        )
    };
    if snarkjs::is_json(&head[..n]) {
        let key =
            snarkjs::verification_key_from_json(&read_json(vk)?).map_err(|e| file_error(vk, e))?;
        let made =
            snarkjs::proof_from_json(&read_json(proof)?).map_err(|e| file_error(proof, e))?;
        let values =
            snarkjs::public_from_json(&read_json(public)?).map_err(|e| file_error(public, e))?;
        snarkjs::verify_with(&key, &made, &values).map_err(|e| rejected(&e))?;
        return Ok(ProofVerified {
            public: values.len(),
            snarkjs: true,
        });
    }
    let key = VerifyingKey::read(Opened::expecting(vk, FileKind::VerifyingKey)?.reader())
        .map_err(|e| file_error(vk, e))?;
    let made = groth16::Proof::read(Opened::expecting(proof, FileKind::Proof)?.reader())
        .map_err(|e| file_error(proof, e))?;
    let values =
        groth16::read_public_witness(Opened::expecting(public, FileKind::PublicWitness)?.reader())
            .map_err(|e| file_error(public, e))?;
    groth16::verify(&key, &made, &values).map_err(|e| rejected(&e))?;
    Ok(ProofVerified {
        public: values.len(),
        snarkjs: false,
    })
}

/// Checks a snarkjs `.ptau` (what `lockstep ceremony ptau import` checks before it writes):
/// every point read and checked, and the powers consecutive powers of one tau. Returns its
/// power and the contributions snarkjs recorded (not re-checked: snarkjs proves them in its own
/// form).
///
/// # Errors
/// As the module says; `CEREMONY_REJECTED` when the powers do not hold.
pub fn verify_ptau(path: &Path, workers: u32, control: &Control) -> Result<(u32, u32), Coded> {
    let opened = Opened::expecting(path, FileKind::Ptau)?;
    let pool = pool(workers, points_at_most(opened.len))?;
    let limits = Limits::default();
    let read = lockstep_ceremony::ptau::read(&pool, control, opened.reader(), &limits)
        .map_err(|e| file_error(path, e))?;
    lockstep_ceremony::ptau::check(&pool, control, &read.srs).map_err(|e| match e {
        phase1::VerifyError::Run(reason) => Coded::new("CEREMONY_RUN", reason),
        refused => Coded::new(
            "CEREMONY_REJECTED",
            format!("{}: REJECTED: {refused}", path.display()),
        ),
    })?;
    Ok((read.srs.power(), read.contributions))
}
