//! Command-line arguments: every flag of every subcommand, parsed by clap.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use lockstep_psi::{Backend, SetupFormat};
use lockstep_shard::{ShardPolicy, parse_workers};

use crate::usage::UsageError;

/// Deterministic parallel batch cryptography: output byte-identical to one thread at every
/// worker count.
#[derive(Debug, Parser)]
#[command(name = "lockstep", version, propagate_version = true)]
pub(crate) struct Cli {
    /// Worker threads for every parallel step (default: LOCKSTEP_WORKERS, else the detected
    /// parallelism). Output bytes never depend on it.
    #[arg(
        long,
        global = true,
        value_name = "N",
        value_delimiter = ',',
        value_parser = parse_workers_flag
    )]
    pub(crate) workers: Vec<NonZeroUsize>,

    /// No progress bars or status lines on stderr (errors are still printed).
    #[arg(long, short, global = true)]
    pub(crate) quiet: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print the version, the detected parallelism and the worker count the policy picks.
    Info,
    /// Private set intersection: find shared records without revealing the rest
    /// (wire-compatible with OpenMined PSI 2.x).
    Psi(PsiArgs),
    /// Groth16 trusted-setup ceremony over BLS12-381 (phase 1 files compatible with gnark v0.15).
    #[command(subcommand)]
    Ceremony(CeremonyCommand),
    /// Groth16 proofs with a ceremony's keys: prove (snarkjs `.zkey` + circom `.wtns`) and
    /// verify (gnark's files).
    #[command(subcommand)]
    Groth16(Groth16Command),
    /// Typed-array compute plans: element-wise DAGs over raw or .npy arrays, run fused.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Run the relay two parties run PSI rounds through (HTTPS; see `psi invite`, `psi round`).
    Serve(ServeArgs),
}

/// `lockstep serve`: the relay.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["tls_cert", "dev", "plain_http"])))]
pub(crate) struct ServeArgs {
    /// The address to listen on (port 0: any free port, printed).
    #[arg(long, default_value = "127.0.0.1:8443", value_name = "ADDR")]
    pub(crate) listen: std::net::SocketAddr,
    /// The database: `sqlite:PATH` (created if missing) or `postgres://...`.
    #[arg(long, default_value = "sqlite:lockstep.db", value_name = "URL")]
    pub(crate) db: String,
    /// The directory of message bodies (created if missing).
    #[arg(long, default_value = "lockstep-store", value_name = "DIR")]
    pub(crate) store: PathBuf,
    /// The operator's token file (64 hex digits and a newline, mode 0600); made if missing.
    /// Whoever holds it creates rounds.
    #[arg(long, value_name = "FILE")]
    pub(crate) operator_token: PathBuf,
    /// The TLS certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// A self-signed certificate for loopback, made now and written to --dev-cert (give that
    /// file to clients as --ca).
    #[arg(long)]
    pub(crate) dev: bool,
    /// Where --dev writes its certificate.
    #[arg(long, default_value = "lockstep-dev-cert.pem", value_name = "FILE")]
    pub(crate) dev_cert: PathBuf,
    /// Plain HTTP, on a loopback address only (tests, a TLS proxy in front).
    #[arg(long)]
    pub(crate) plain_http: bool,
    /// The most rows a round may allow.
    #[arg(long, default_value_t = lockstep_server::Caps::default().max_rows, value_name = "N")]
    pub(crate) max_rows: u64,
    /// The most bytes a round may allow one message.
    #[arg(long, default_value_t = lockstep_server::Caps::default().max_bytes, value_name = "N")]
    pub(crate) max_bytes: u64,
    /// The longest a round may live, in seconds.
    #[arg(long, default_value_t = lockstep_server::Caps::default().max_expiry, value_name = "S")]
    pub(crate) max_expiry: u64,
    /// Seconds an upload may go without a byte before it is dropped.
    #[arg(long, default_value_t = 30, value_name = "S")]
    pub(crate) body_idle: u64,
    /// Seconds a client may take to send its request's headers (and its TLS handshake).
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub(crate) header_timeout: u64,
    /// Seconds between sweeps of expired rounds.
    #[arg(long, default_value_t = 60, value_name = "S")]
    pub(crate) sweep_every: u64,
    /// Seconds a shutdown (SIGINT, SIGTERM) waits for requests in flight.
    #[arg(long, default_value_t = 30, value_name = "S")]
    pub(crate) drain: u64,
    /// A web origin whose pages may call the relay (CORS), as `https://app.example:8443`;
    /// repeat for more. None by default.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// Log lines as JSON (default) or text.
    #[arg(long, default_value = "json", value_parser = ["json", "text"], value_name = "FORM")]
    pub(crate) log_format: String,
}

/// The plan engine's commands.
#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Check a plan (format v1) and print what it computes.
    Validate {
        /// The plan (JSON).
        plan: PathBuf,
    },
    /// Run a plan over arrays in files and write its outputs.
    Run(PlanRunArgs),
}

#[derive(Debug, Args)]
pub(crate) struct PlanRunArgs {
    /// The plan (JSON).
    pub(crate) plan: PathBuf,
    /// An input array: NAME=FILE, one per plan input. A `.npy` file is read as numpy writes it
    /// (its dtype must be the input's); any other file is raw little-endian elements of the
    /// input's dtype.
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_binding)]
    pub(crate) inputs: Vec<(String, PathBuf)>,
    /// An output array: NAME=FILE, one per plan output; `.npy` or raw as for inputs.
    #[arg(long = "output", value_name = "NAME=FILE", value_parser = parse_binding)]
    pub(crate) outputs: Vec<(String, PathBuf)>,
    /// The most memory the run may hold, in bytes: its inputs, its outputs and its working
    /// memory (inputs are read no further than it allows; the rest is checked before the
    /// outputs are allocated).
    #[arg(long, value_name = "BYTES")]
    pub(crate) budget: Option<u64>,
}

fn parse_binding(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!("expected NAME=FILE, not {text:?}")),
    }
}

/// The ceremony's commands.
#[derive(Debug, Subcommand)]
pub(crate) enum CeremonyCommand {
    /// Phase 1, powers of tau: one chain of contributions shared by every circuit.
    #[command(subcommand)]
    Phase1(Phase1Command),
    /// Phase 2, per circuit (gnark v0.15's `Phase2`): from a sealed phase 1 and a circuit's
    /// R1CS to the Groth16 proving and verifying keys.
    #[command(subcommand)]
    Phase2(Phase2Command),
    /// Groth16 proofs made with the ceremony's keys (the same as `lockstep groth16`).
    #[command(subcommand)]
    Groth16(Groth16Command),
    /// snarkjs `.ptau` files (BLS12-381) in and out, and prepared for phase 2.
    #[command(subcommand)]
    Ptau(PtauCommand),
    /// snarkjs Groth16 `.zkey` files of circom circuits (BLS12-381), byte for byte as snarkjs
    /// 0.7.6 writes them.
    #[command(subcommand)]
    Zkey(ZkeyCommand),
    /// Print what any ceremony file holds (gnark's, snarkjs's, circom's), after reading and
    /// checking all of it: its kind, then its own facts (power, challenge, hash, wires...).
    Info {
        /// The file.
        file: PathBuf,
    },
    /// Open a ceremony on a `lockstep serve` (the operator): its kind, initial object and
    /// participants, whose invitations are written to files.
    Open(OpenArgs),
    /// Take part in a ceremony on a server: wait for your turn, download the head, contribute,
    /// upload, and print the contribution hash to publish.
    Participate(ParticipateArgs),
    /// Register yourself in a ceremony with open registration: your invitation, written.
    Register(RegisterArgs),
    /// Seal a ceremony on its server with a public beacon (the operator): no more
    /// contributions; the server publishes the result.
    Seal(RemoteSealArgs),
    /// Download a ceremony's transcript and every file it names, and re-verify the chain and
    /// the seal here.
    VerifyTranscript(VerifyTranscriptArgs),
}

/// A ceremony's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CeremonyKindArg {
    /// gnark's phase 1 (powers of tau) at --power.
    Phase1,
    /// gnark's phase 2 for the circuit --r1cs over the sealed phase 1 --phase1.
    Phase2,
    /// snarkjs's phase 2 (`.zkey`) for the circom circuit --r1cs over the `.ptau` --phase1.
    Zkey,
}

/// `ceremony open`.
#[derive(Debug, Args)]
pub(crate) struct OpenArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// The server's operator token file.
    #[arg(long, value_name = "FILE")]
    pub(crate) operator_token: PathBuf,
    /// The ceremony's kind.
    #[arg(long, value_enum)]
    pub(crate) kind: CeremonyKindArg,
    /// A phase 1's power of two.
    #[arg(long, value_name = "N", required_if_eq("kind", "phase1"))]
    pub(crate) power: Option<u32>,
    /// A phase 2's circuit (gnark's R1CS; circom's `.r1cs` for a `.zkey` ceremony).
    #[arg(long, value_name = "FILE", required_if_eq_any([("kind", "phase2"), ("kind", "zkey")]))]
    pub(crate) r1cs: Option<PathBuf>,
    /// A phase 2's sealed phase 1 (a snarkjs `.ptau` for a `.zkey` ceremony).
    #[arg(long, value_name = "FILE", required_if_eq_any([("kind", "phase2"), ("kind", "zkey")]))]
    pub(crate) phase1: Option<PathBuf>,
    /// What the transcript page calls the ceremony.
    #[arg(long, value_name = "TEXT")]
    pub(crate) title: String,
    /// A participant's public name (repeat for each); each gets an invitation file.
    #[arg(long = "participant", value_name = "NAME")]
    pub(crate) participants: Vec<String>,
    /// How many more may register themselves (`ceremony register`).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(crate) open_slots: u64,
    /// Seconds a participant holds the turn (download, contribute, upload).
    #[arg(long, default_value_t = 600, value_name = "S")]
    pub(crate) turn: u64,
    /// Where the invitations are written (NN-NAME.invitation, private files).
    #[arg(long, value_name = "DIR")]
    pub(crate) invitations: PathBuf,
}

/// `ceremony participate`.
#[derive(Debug, Args)]
pub(crate) struct ParticipateArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// Your invitation file (CEREMONY.TOKEN, from the operator or `ceremony register`).
    #[arg(long, value_name = "FILE")]
    pub(crate) token: PathBuf,
    /// Text mixed into the operating system's randomness; `-` reads it from standard input.
    #[arg(long, value_name = "TEXT")]
    pub(crate) entropy: Option<String>,
    /// Where the head and your contribution are written.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub(crate) dir: PathBuf,
    /// Seconds between looks at the queue.
    #[arg(long, default_value_t = 2, value_name = "S")]
    pub(crate) poll: u64,
}

/// `ceremony register`.
#[derive(Debug, Args)]
pub(crate) struct RegisterArgs {
    /// The ceremony's page (https://HOST/ceremonies/ID).
    #[arg(value_name = "URL")]
    pub(crate) url: String,
    /// A PEM certificate to trust besides the usual roots.
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
    /// Your public name, as the transcript will show it.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: String,
    /// Where your invitation is written (a private file).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
}

/// `ceremony seal`.
#[derive(Debug, Args)]
pub(crate) struct RemoteSealArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// The server's operator token file.
    #[arg(long, value_name = "FILE")]
    pub(crate) operator_token: PathBuf,
    /// The ceremony's id.
    #[arg(long, value_name = "ID")]
    pub(crate) ceremony: String,
    #[command(flatten)]
    pub(crate) beacon: BeaconArgs,
}

/// `ceremony verify-transcript`.
#[derive(Debug, Args)]
pub(crate) struct VerifyTranscriptArgs {
    /// The ceremony's page (https://HOST/ceremonies/ID).
    #[arg(value_name = "URL")]
    pub(crate) url: String,
    /// A PEM certificate to trust besides the usual roots.
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
    /// Where the files are downloaded and kept (default: a temporary folder, removed after).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// snarkjs `.zkey` steps (`snarkjs zkey ...`).
#[derive(Debug, Subcommand)]
pub(crate) enum ZkeyCommand {
    /// The initial key of a circom circuit (snarkjs's `zkey new` / `groth16 setup`); the
    /// `.ptau` may be prepared for phase 2 or not.
    New {
        /// The circuit: circom's `.r1cs`, compiled with `--prime bls12381`.
        #[arg(value_name = "R1CS")]
        r1cs: PathBuf,
        /// The powers of tau: a snarkjs `.ptau` of the circuit's power or more.
        #[arg(value_name = "PTAU")]
        ptau: PathBuf,
        /// The `.zkey` to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Contribute to a `.zkey` (snarkjs's `zkey contribute`): randomness from the operating
    /// system mixed with --entropy; prints the contribution hash to publish.
    Contribute {
        /// The last `.zkey` of the chain.
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        /// Your contribution (never the input file).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Your name, recorded in the key (snarkjs keeps its first 64 characters).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// Text mixed into the operating system's randomness; `-` reads it from standard input.
        #[arg(long, value_name = "TEXT")]
        entropy: Option<String>,
    },
    /// The final contribution of a public beacon (snarkjs's `zkey beacon`): deterministic,
    /// snarkjs's bytes for the same beacon and exponent.
    Beacon {
        /// The last `.zkey` of the chain.
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        /// The key to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The beacon value, hex (1 to 255 bytes).
        #[arg(long, value_name = "HEX")]
        beacon: String,
        /// SHA-256 is applied 2^EXP times to the beacon (10 to 32).
        #[arg(long, value_name = "EXP")]
        exp: u8,
        /// A name recorded with it.
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Verify a `.zkey` against its circuit and powers of tau (snarkjs's `zkey verify`): every
    /// contribution, and every section against the initial key; exit 0 and `ZKey Ok!`, or 1
    /// and the first check that fails.
    Verify {
        /// The circuit: circom's `.r1cs`.
        #[arg(value_name = "R1CS")]
        r1cs: PathBuf,
        /// The `.ptau` the key was made from.
        #[arg(value_name = "PTAU")]
        ptau: PathBuf,
        /// The `.zkey`.
        #[arg(value_name = "ZKEY")]
        zkey: PathBuf,
    },
    /// Write a `.zkey`'s verification key as snarkjs's JSON (`zkey export verificationkey`).
    ExportVkey {
        /// The `.zkey`.
        #[arg(value_name = "ZKEY")]
        zkey: PathBuf,
        /// The JSON file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

/// `.ptau` conversions.
#[derive(Debug, Subcommand)]
pub(crate) enum PtauCommand {
    /// Check a snarkjs `.ptau` (every point, and the powers with random linear combinations),
    /// then write its powers as a phase 1 object (or, with --srs, as a sealed SRS).
    Import {
        /// The `.ptau` file.
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// The phase 1 object (or SRS) to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Write the SRS commons alone (a sealed SRS) instead of a phase 1 object.
        #[arg(long)]
        srs: bool,
    },
    /// Add the Lagrange sections 12-15 a `.zkey` is made from (snarkjs's `powersoftau prepare
    /// phase2`, byte for byte): every point of the input checked first.
    Prepare {
        /// The `.ptau` file.
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// The prepared `.ptau` to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Write a phase 1 object or a sealed SRS as a `.ptau` for snarkjs (`powersoftau prepare
    /// phase2`, then `groth16 setup`).
    Export {
        /// The phase 1 object or sealed SRS.
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// The `.ptau` file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

/// Phase 2 steps. Files are gnark v0.15's `Phase2` bytes; circuits gnark's serialized
/// BLS12-381 R1CS (`(*cs.R1CS).WriteTo`).
#[derive(Debug, Subcommand)]
pub(crate) enum Phase2Command {
    /// Write the initial phase 2 object of a circuit (gnark's `Initialize`); a phase 1 larger
    /// than the circuit needs is cut to its domain.
    New {
        /// The circuit: gnark's serialized R1CS.
        #[arg(long, value_name = "FILE")]
        r1cs: PathBuf,
        /// The sealed phase 1 (`phase1 seal`'s output).
        #[arg(long, value_name = "FILE")]
        phase1: PathBuf,
        /// The file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Add your secret randomness (delta, and a sigma per commitment) to the last object, and
    /// print the hash to publish.
    Contribute(ContributeArgs),
    /// Verify a chain of contributions; with --r1cs and --phase1, the initial object is
    /// re-derived and compared too. One verdict line per file.
    Verify {
        /// The chain, in order (the first may be the initial object).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The object the first file was made on, if it is not in the list.
        #[arg(long, value_name = "FILE", conflicts_with = "r1cs")]
        previous: Option<PathBuf>,
        /// The circuit, to re-derive the initial object (with --phase1).
        #[arg(long, value_name = "FILE", requires = "phase1")]
        r1cs: Option<PathBuf>,
        /// The sealed phase 1, to re-derive the initial object (with --r1cs).
        #[arg(long, value_name = "FILE", requires = "r1cs")]
        phase1: Option<PathBuf>,
    },
    /// Seal the last contribution with a public beacon and write the Groth16 keys (gnark's
    /// `ProvingKey` and `VerifyingKey` bytes).
    Seal {
        /// The chain, in order, from the initial object (or its first contribution) to the last
        /// contribution: verified as gnark's `VerifyPhase2` verifies it before the seal.
        #[arg(required = true, value_name = "FILE")]
        chain: Vec<PathBuf>,
        /// The circuit.
        #[arg(long, value_name = "FILE")]
        r1cs: PathBuf,
        /// The sealed phase 1 the chain was initialized from.
        #[arg(long, value_name = "FILE")]
        phase1: PathBuf,
        #[command(flatten)]
        beacon: BeaconArgs,
        /// The proving key to write.
        #[arg(long, value_name = "FILE")]
        pk: PathBuf,
        /// The verifying key to write.
        #[arg(long, value_name = "FILE")]
        vk: PathBuf,
    },
}

/// What `phase1 contribute` and `phase2 contribute` are given.
#[derive(Debug, Args)]
pub(crate) struct ContributeArgs {
    /// The last object of the chain.
    #[arg(long = "in", value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// Your contribution (never the input file).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
    /// Text mixed into the operating system's randomness (keyboard mashing, dice rolls);
    /// `-` reads it from standard input, out of sight of other users' `ps`.
    #[arg(long, value_name = "TEXT")]
    pub(crate) entropy: Option<String>,
}

/// The public beacon `phase1 seal` and `phase2 seal` apply.
#[derive(Debug, Args)]
pub(crate) struct BeaconArgs {
    /// The beacon value, hex (a value no contributor could know in advance).
    #[arg(long, value_name = "HEX")]
    pub(crate) beacon: String,
    /// SHA-256 iterations applied to the beacon first (a delay; 0 passes it to gnark's
    /// `Seal` as is).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) iterations: u64,
}

/// Groth16 with the ceremony's keys.
#[derive(Debug, Subcommand)]
pub(crate) enum Groth16Command {
    /// Prove (BLS12-381), blinded by the operating system's randomness. snarkjs: from a
    /// `.zkey` (--zkey) and a circom `.wtns`, snarkjs's `proof.json` and `public.json`, which
    /// `snarkjs groth16 verify` accepts; the proof is checked against the key before it is
    /// written. gnark: from a proving key (--pk: `phase2 seal`'s, or `groth16.Setup`'s
    /// `WriteTo`), gnark's R1CS (--r1cs) and gnark's full witness, the proof in gnark's bytes
    /// and the public witness, which gnark's `groth16.Verify` accepts; the witness is solved
    /// and every constraint checked, and with --vk the proof is verified before it is written.
    Prove {
        /// The proving key, a snarkjs `.zkey`.
        #[arg(
            long,
            value_name = "FILE",
            required_unless_present = "pk",
            conflicts_with = "pk"
        )]
        zkey: Option<PathBuf>,
        /// The proving key, gnark's (needs --r1cs, gnark's circuit).
        #[arg(long, value_name = "FILE", requires = "r1cs")]
        pk: Option<PathBuf>,
        /// The witness: circom `.wtns` (e.g. from `snarkjs wtns calculate`) with --zkey, gnark's
        /// full witness (`witness.WriteTo`) with --pk.
        #[arg(long, value_name = "FILE")]
        witness: PathBuf,
        /// Where to write the proof (snarkjs's `proof.json`, or gnark's `Proof.WriteTo` bytes).
        #[arg(long, value_name = "FILE")]
        proof: PathBuf,
        /// Where to write the public inputs (snarkjs's `public.json`, or gnark's public
        /// witness).
        #[arg(long, value_name = "FILE")]
        public: PathBuf,
        /// The circuit: with --zkey a circom `.r1cs` (the witness is checked against each
        /// constraint first, and the first it does not satisfy is named); with --pk gnark's
        /// R1CS (`WriteTo`), which the witness is solved on.
        #[arg(long, value_name = "FILE")]
        r1cs: Option<PathBuf>,
        /// gnark's verifying key (with --pk): the proof is verified before it is written.
        #[arg(long, value_name = "FILE", requires = "pk")]
        vk: Option<PathBuf>,
        /// Check the key's points on their curves only, not in their subgroups: for a key you
        /// made or checked (`groth16 prepare` checks gnark's whole, `ceremony zkey verify` a
        /// `.zkey`). The proof's points are still checked in theirs. A key from someone else
        /// should be read in full (the default), as a point outside its subgroup could tell
        /// them, over many proofs, something of the witness.
        #[arg(long)]
        trust_key: bool,
    },
    /// Prepare gnark's proving key for proving many times: every point checked in its
    /// subgroup once, the key written uncompressed (gnark's `WriteRawTo` layout, which gnark
    /// reads too), so that `prove --pk` reads it without square roots.
    Prepare {
        /// gnark's proving key (`WriteTo` or `WriteRawTo`).
        #[arg(long, value_name = "FILE")]
        pk: PathBuf,
        /// Where to write the prepared key.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Verify a proof: gnark's files (`Proof.WriteTo`, a verifying key, `witness.Public()`'s
    /// `WriteTo`), or snarkjs's JSON (`proof.json`, `verification_key.json`, `public.json`),
    /// told by the key's first byte: exit 0 and `ok`, or exit 1 and why.
    Verify {
        /// The verifying key.
        #[arg(long, value_name = "FILE")]
        vk: PathBuf,
        /// The proof.
        #[arg(long, value_name = "FILE")]
        proof: PathBuf,
        /// The public witness.
        #[arg(long, value_name = "FILE")]
        public: PathBuf,
    },
}

/// Phase 1 steps. Files are gnark v0.15's `Phase1` (and, once sealed, `SrsCommons`) bytes.
#[derive(Debug, Subcommand)]
pub(crate) enum Phase1Command {
    /// Write the initial object for domain size N = 2^power (every power of tau is 1).
    New {
        /// log2 of the domain size: the largest circuit has 2^power constraints (1 to 28).
        #[arg(long, value_name = "P")]
        power: u32,
        /// The file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Add your secret randomness to the last object of the chain, and print the hash to publish.
    Contribute(ContributeArgs),
    /// Verify a chain of contributions (from the initial object), or one file against its
    /// predecessor (--previous); with --sealed, also the seal of the chain.
    Verify {
        /// The contributions, in order (the first may be the initial object).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The object the first file was made on, if it is not the initial one.
        #[arg(long, value_name = "FILE")]
        previous: Option<PathBuf>,
        /// The sealed SRS to check against the seal of the last file.
        #[arg(long, value_name = "FILE", requires = "beacon")]
        sealed: Option<PathBuf>,
        /// The beacon the seal used, hex.
        #[arg(long, value_name = "HEX", requires = "sealed")]
        beacon: Option<String>,
        /// SHA-256 iterations the seal applied to the beacon.
        #[arg(long, value_name = "N", default_value_t = 0, requires = "beacon")]
        iterations: u64,
    },
    /// Seal the chain with a public random beacon: the final SRS (gnark's `Seal`).
    Seal {
        /// The last contribution.
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        #[command(flatten)]
        beacon: BeaconArgs,
        /// The sealed SRS file.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct PsiArgs {
    /// The P-256 implementation: native (OpenSSL) or portable (pure Rust); identical bytes.
    #[arg(long, global = true, default_value_t = Backend::fastest(), value_name = "NAME")]
    pub(crate) backend: Backend,

    /// Accept a key file that group or others may read or write (refused otherwise, as ssh
    /// refuses such private keys).
    #[arg(long, global = true)]
    pub(crate) allow_open_key: bool,

    /// The most memory a step's sorts and masking blocks hold (every step): past it they spill
    /// to --tmp. A size: 2GiB, 512MiB, 64KiB, or bytes. Default: a quarter of the
    /// machine's memory.
    #[arg(long, global = true, value_parser = parse_size, value_name = "SIZE")]
    pub(crate) memory: Option<u64>,

    /// The folder for a step's temporary files (sort runs, the key index), removed on every
    /// exit. Default: the output's folder.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) tmp: Option<PathBuf>,

    #[command(subcommand)]
    pub(crate) command: PsiCommand,
}

/// The two parties: the starter publishes its masked set (setup) and answers requests; the
/// joiner asks (request) and reads the answer (intersect). Messages are OpenMined's protobuf
/// bytes.
#[derive(Debug, Subcommand)]
pub(crate) enum PsiCommand {
    /// Manage secret keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Starter: mask your records into a setup message for the joiner.
    Setup(SetupArgs),
    /// Joiner: mask your records into a request for the starter.
    Request(RequestArgs),
    /// Starter: re-mask the joiner's request into a response.
    Respond(RespondArgs),
    /// Joiner: find which of your records the starter holds.
    Intersect(IntersectArgs),
    /// Starter: map the setup positions the joiner sends back to your own rows.
    Resolve(ResolveArgs),
    /// Both parties in one process on built-in sample data.
    Demo(DemoArgs),
    /// Operator: create a round on a relay and write the two parties' invitation files.
    Invite(InviteArgs),
    /// Either party: run your whole side of a round through a relay (resumable).
    Round(RoundArgs),
}

/// Where a relay is and how to trust it.
#[derive(Debug, Args, Clone)]
pub(crate) struct ServerArgs {
    /// The relay: `https://host:port` (`http://` to loopback only).
    #[arg(long, value_name = "URL")]
    pub(crate) server: String,
    /// A PEM certificate to trust besides the usual roots (`lockstep serve --dev`'s).
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
    /// Seconds to keep retrying while the relay is unreachable or restarting.
    #[arg(long, default_value_t = 300, value_name = "S")]
    pub(crate) retry_for: u64,
}

#[derive(Debug, Args)]
pub(crate) struct InviteArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// The operator's token file (as `lockstep serve --operator-token`).
    #[arg(long, value_name = "FILE")]
    pub(crate) operator_token: PathBuf,
    /// The setup's form: raw, gcs or bloom.
    #[arg(long, default_value = "raw", value_parser = parse_format, value_name = "FORMAT")]
    pub(crate) format: SetupFormat,
    /// The joiner learns only the intersection's size.
    #[arg(long)]
    pub(crate) size_only: bool,
    /// The most rows either party's set may hold.
    #[arg(long, value_name = "N")]
    pub(crate) max_rows: u64,
    /// The most bytes a message may hold (default: what a raw message of --max-rows takes).
    #[arg(long, value_name = "N")]
    pub(crate) max_bytes: Option<u64>,
    /// Seconds until the round expires and its messages are removed.
    #[arg(long, default_value_t = 86_400, value_name = "S")]
    pub(crate) expires_in: u64,
    /// The starter's invitation file (a secret: give it to the starter only).
    #[arg(long, value_name = "FILE")]
    pub(crate) starter_out: PathBuf,
    /// The joiner's invitation file (a secret: give it to the joiner only).
    #[arg(long, value_name = "FILE")]
    pub(crate) joiner_out: PathBuf,
}

/// Which party a `psi round` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RoleArg {
    Starter,
    Joiner,
}

#[derive(Debug, Args)]
pub(crate) struct RoundArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// Your invitation file (from `psi invite`).
    #[arg(long, value_name = "FILE")]
    pub(crate) token: PathBuf,
    /// Your party (checked against the invitation).
    #[arg(long, value_name = "ROLE")]
    pub(crate) role: RoleArg,
    /// Your key file (keep it until the round is done: a resumed round needs the same key).
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Where the round's messages are kept (default: `round-ROUND` here); a run again resumes
    /// from them.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Joiner: your matching rows as CSV (`psi intersect --out`); a size-only round prints the
    /// size instead.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Starter: the false-positive rate of a GCS or Bloom setup.
    #[arg(long, default_value_t = lockstep_psi::SetupParams::DEFAULT_FPR, value_name = "F")]
    pub(crate) fpr: f64,
    /// Seconds to wait for the other party before stopping (run again to go on waiting).
    #[arg(long, default_value_t = 3_600, value_name = "S")]
    pub(crate) wait: u64,
    /// Seconds between looks at the round while waiting.
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    pub(crate) poll: f64,
    /// Joiner: leave the round on the relay when done (default: close it, removing its messages).
    #[arg(long)]
    pub(crate) keep: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Write a fresh random key: 32 raw bytes, file mode 0600.
    New {
        /// Where to write the key (a regular file; a symbolic link is followed).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
}

/// Where a party's records come from.
#[derive(Debug, Args, Clone)]
pub(crate) struct InputArgs {
    /// The records: CSV with a header when --column is given, else plain text, one value per line.
    #[arg(long, value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// A CSV column of the key; repeat for a composite key (joined unambiguously).
    #[arg(long, value_name = "NAME")]
    pub(crate) column: Vec<String>,
    /// Trim, lowercase and collapse whitespace in key fields (both parties must agree).
    #[arg(long)]
    pub(crate) normalize: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    /// Your key file.
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// How many distinct keys the joiner will ask about (sizes GCS and Bloom setups).
    #[arg(long, value_name = "N")]
    pub(crate) joiner_count: u64,
    /// False-positive rate of the joiner's whole query (GCS and Bloom), in (0, 1).
    #[arg(long, default_value_t = lockstep_psi::SetupParams::DEFAULT_FPR, value_name = "F")]
    pub(crate) fpr: f64,
    /// raw (exact, supports resolve), gcs (smallest) or bloom (fastest to query).
    #[arg(long, default_value = "raw", value_parser = parse_format, value_name = "FORMAT")]
    pub(crate) format: SetupFormat,
    /// Write the raw setup's permutation (setup position -> your rows), for `psi resolve`.
    /// Keep it: it is yours alone.
    #[arg(long, value_name = "FILE")]
    pub(crate) permutation_out: Option<PathBuf>,
    /// Where to write the setup message (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// Your key file.
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Ask for the intersection's size only (the starter must answer with --size-only).
    #[arg(long)]
    pub(crate) size_only: bool,
    /// Where to write the request message (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct RespondArgs {
    /// Your key file (the one the setup was made with).
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    /// The joiner's request message.
    #[arg(long, value_name = "FILE")]
    pub(crate) request: PathBuf,
    /// Answer size-only requests (and refuse the others); the response is sorted.
    #[arg(long)]
    pub(crate) size_only: bool,
    /// The most elements a request may hold: the --joiner-count your setup was sized for. A
    /// larger request is refused before it is read (it would also query the setup more often
    /// than its false-positive rate allows for).
    #[arg(long, value_name = "N")]
    pub(crate) joiner_count: u64,
    /// Where to write the response message (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct IntersectArgs {
    /// Your key file (the one the request was made with).
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    /// The starter's setup message.
    #[arg(long, value_name = "FILE")]
    pub(crate) setup: PathBuf,
    /// The starter's response to your request.
    #[arg(long, value_name = "FILE")]
    pub(crate) response: PathBuf,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Your request message, to check the response against its mode and length.
    #[arg(long, value_name = "FILE")]
    pub(crate) request: Option<PathBuf>,
    /// Print the intersection's size only, on standard output (the only choice after a
    /// --size-only request).
    #[arg(long, conflicts_with_all = ["out", "pairs_out"])]
    pub(crate) size: bool,
    /// Your matching rows as CSV (from a raw setup, each with the setup position it matched);
    /// `-`: standard output.
    #[arg(long, value_name = "FILE", required_unless_present = "size")]
    pub(crate) out: Option<PathBuf>,
    /// The pairs file to send the starter for `psi resolve`: your matched rows, their keys'
    /// request indexes and setup positions, your row count and the setup's SHA-256.
    #[arg(long, value_name = "FILE")]
    pub(crate) pairs_out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// The permutation `psi setup --permutation-out` wrote.
    #[arg(long, value_name = "FILE")]
    pub(crate) permutation: PathBuf,
    /// The joiner's pairs file (`psi intersect --pairs-out`).
    #[arg(long, value_name = "FILE")]
    pub(crate) matches: PathBuf,
    /// Your records, exactly as they were at setup (checked against the permutation).
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Where to write the matched row pairs with your rows (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Rows of the starter's sample (the joiner gets four fifths as many).
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub(crate) rows: usize,
    /// Keep the sample files and messages in this directory (default: a temporary one).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

impl Cli {
    /// The shard policy: `--workers`, else `LOCKSTEP_WORKERS` (read only without the flag),
    /// else the detected parallelism. A bad count is a usage error.
    pub(crate) fn policy(&self) -> anyhow::Result<ShardPolicy> {
        let policy = match self.workers.as_slice() {
            [] => ShardPolicy::from_env(),
            [one] => ShardPolicy::detected().with_request(*one, "--workers"),
            _ => {
                return Err(UsageError(
                    "--workers takes one count here; a list of counts is for `lockstep-bench`"
                        .to_owned(),
                )
                .into());
            }
        };
        Ok(policy.map_err(|e| UsageError(e.to_string()))?)
    }
}

/// The least `--memory`: a sort's run and its buffers need some room.
pub(crate) const MIN_MEMORY: u64 = 1 << 10;

/// A size in bytes: a whole number, optionally followed by KiB, MiB, GiB or TiB (powers of
/// 1,024) or by B; at least [`MIN_MEMORY`].
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        "TiB" => 40,
        other => {
            return Err(format!(
                "unknown unit {other:?}: write the size as 2GiB, 512MiB, 64KiB or a number of bytes"
            ));
        }
    };
    let bytes = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| {
            format!("{text:?} is not a size: write 2GiB, 512MiB, 64KiB or a number of bytes")
        })?;
    if bytes < MIN_MEMORY {
        return Err(format!("{text:?} is less than the least, 1KiB"));
    }
    Ok(bytes)
}

fn parse_workers_flag(text: &str) -> Result<NonZeroUsize, String> {
    parse_workers("--workers", text).map_err(|e| e.to_string())
}

fn parse_format(text: &str) -> Result<SetupFormat, String> {
    text.parse()
}
