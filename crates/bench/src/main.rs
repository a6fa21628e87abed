//! `lockstep-bench`: lockstep's benches against its peers, each printing ours and the peer's
//! figures side by side from one run, as ratios (this machine is shared and noisy: only same-run
//! ratios mean anything). Not shipped in the `lockstep` binary.
//!
//! ```text
//! cargo run --release -p lockstep-bench -- psi --rows 100000
//! cargo run --release -p lockstep-bench -- --workers 1,2 ceremony --powers 10,12,14
//! cargo run --release -p lockstep-bench -- --workers 1,2 ceremony --phase 2 --powers 10,12
//! cargo run --release -p lockstep-bench -- --workers 1,2 groth16 --logs 12,14,16,18,20
//! cargo run --release -p lockstep-bench -- --workers 1,2 plan --repeats 21
//! cargo run --release -p lockstep-bench -- serve --rounds 200 --rows 1000
//! cargo run --release -p lockstep-bench -- --workers 2 plan --idle-pool --dtypes f32 --nodes 64 --elements 1048576 --repeats 15
//! ```

mod ceremony;
mod groth16;
mod plan;
mod psi;
mod serve;

use std::io::Write;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use lockstep_shard::{ShardPolicy, parse_workers};

/// Benchmarks against the peers, side by side.
#[derive(Debug, Parser)]
#[command(name = "lockstep-bench", version)]
struct Cli {
    /// Worker counts to run ours at (default: 1 and the detected parallelism, or
    /// LOCKSTEP_WORKERS): --workers 1,2.
    #[arg(
        long,
        global = true,
        value_name = "N,...",
        value_delimiter = ',',
        value_parser = parse_workers_flag
    )]
    workers: Vec<NonZeroUsize>,

    /// No progress lines on stderr.
    #[arg(long, short, global = true)]
    quiet: bool,

    #[command(subcommand)]
    command: BenchCommand,
}

fn parse_workers_flag(text: &str) -> Result<NonZeroUsize, String> {
    parse_workers("--workers", text).map_err(|e| e.to_string())
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// PSI rows/s per operation, ours at each worker count beside @openmined/psi.js and
    /// openmined.psi on the same rows.
    Psi(BenchPsiArgs),
    /// Ceremony phase 1 stages (new, contribute, decode, verify, seal) in ms: ours serial and at
    /// each worker count beside gnark v0.15 (GOMAXPROCS=1 and 2) and snarkjs on the same power.
    Ceremony(BenchCeremonyArgs),
    /// Groth16's building blocks: multi-scalar multiplication in G1 and G2, ns a point, ours at
    /// each worker count beside gnark-crypto's MultiExp at as many threads, and blst's.
    Groth16(BenchGroth16Args),
    /// Plan engine: chains of 3 and 64 additions in ms, fused (each worker count), node by
    /// node and a bare loop, beside numpy (naive and in place) and numexpr on the same arrays.
    Plan(BenchPlanArgs),
    /// The relay under load: many rounds at once through one `lockstep serve`, on SQLite and
    /// PostgreSQL side by side: request latency (p50, p99), rounds/s, bytes checked.
    Serve(serve::BenchServeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BenchPlanArgs {
    /// Element counts to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1024,262144,1048576",
        value_name = "N,..."
    )]
    pub(crate) elements: Vec<usize>,
    /// Chain lengths to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "3,64",
        value_name = "K,..."
    )]
    pub(crate) nodes: Vec<usize>,
    /// Dtypes to run (f32, f64, i32).
    #[arg(long, value_delimiter = ',', default_value = "f32,f64,i32", value_parser = parse_dtype, value_name = "D,...")]
    pub(crate) dtypes: Vec<lockstep_plan::DType>,
    /// Runs per contender; the median is reported.
    #[arg(long, default_value_t = 15, value_name = "R")]
    pub(crate) repeats: usize,
    /// Where scripts/install-peers put the Python peers (numpy, numexpr in .venv).
    #[arg(long, default_value = "peers", value_name = "DIR")]
    pub(crate) peers: PathBuf,
    /// Skip numpy and numexpr (ours only).
    #[arg(long)]
    pub(crate) no_peers: bool,
    /// Instead of the table: the fused runs on the largest --workers pool alone against the
    /// same runs beside an idle one-worker pool (created, used once, left idle), interleaved
    /// over --repeats rounds; medians and their ratio.
    #[arg(long)]
    pub(crate) idle_pool: bool,
    /// Instead of the table: reading and compiling chains of 1,000 to 200,000 nodes (ms and ns
    /// a node; --repeats runs each, medians).
    #[arg(long)]
    pub(crate) compile: bool,
}

fn parse_dtype(text: &str) -> Result<lockstep_plan::DType, String> {
    lockstep_plan::DType::ALL
        .into_iter()
        .find(|d| d.name() == text)
        .ok_or_else(|| format!("unknown dtype {text:?}"))
}

#[derive(Debug, Args)]
pub(crate) struct BenchCeremonyArgs {
    /// Which phase: 1 (powers of tau), or 2 (init, contribute, verify and seal on the gnark
    /// harness's test circuit of 2^P - 3 constraints).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub(crate) phase: u8,
    /// Powers of two of the domain size to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,12,14",
        value_name = "P,..."
    )]
    pub(crate) powers: Vec<u32>,
    /// Rounds: each runs every contender once, interleaved; the best time is reported.
    #[arg(long, default_value_t = 1, value_name = "R")]
    pub(crate) repeats: usize,
    /// Skip the serial reference (slow: one inversion per point) above this power.
    #[arg(long, default_value_t = 14, value_name = "P")]
    pub(crate) serial_max_power: u32,
    /// Run snarkjs `powersoftau contribute`/`verify` up to this power (contribute takes 52 s at
    /// 14); with --snarkjs, snarkjs's `prepare phase2` below this power.
    #[arg(long, default_value_t = 14, value_name = "P")]
    pub(crate) snarkjs_max_power: u32,
    /// Where scripts/install-peers put snarkjs.
    #[arg(long, default_value = "peers", value_name = "DIR")]
    pub(crate) peers: PathBuf,
    /// The gnark harness directory (built with `go build` at the start).
    #[arg(long, default_value = "interop/gnark", value_name = "DIR")]
    pub(crate) gnark: PathBuf,
    /// Skip gnark and snarkjs (ours only).
    #[arg(long)]
    pub(crate) no_peers: bool,
    /// Instead: snarkjs's phase 2 (prepare, zkey new, contribute, verify on a circom circuit of
    /// 2^P - 3 constraints), lockstep's CLI (--lockstep) beside snarkjs, times and peak memory.
    #[arg(long)]
    pub(crate) snarkjs: bool,
    /// The lockstep binary --snarkjs runs (`cargo build --release -p lockstep-cli`).
    #[arg(long, default_value = "target/release/lockstep", value_name = "FILE")]
    pub(crate) lockstep: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct BenchGroth16Args {
    /// MSM sizes, as powers of two.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "12,14,16,18,20",
        value_name = "L,..."
    )]
    pub(crate) logs: Vec<u32>,
    /// Groups to run (g1, g2).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "g1,g2",
        value_name = "G,..."
    )]
    pub(crate) groups: Vec<String>,
    /// Runs per contender and size; the best is reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    pub(crate) repeats: usize,
    /// The gnark harness directory (built with `go build` at the start).
    #[arg(long, default_value = "interop/gnark", value_name = "DIR")]
    pub(crate) gnark: PathBuf,
    /// Skip gnark (ours and blst only).
    #[arg(long)]
    pub(crate) no_peers: bool,
    /// Skip the MSM tables (the prove table only).
    #[arg(long)]
    pub(crate) no_msm: bool,
    /// Skip the prove table (the MSM tables only).
    #[arg(long)]
    pub(crate) no_prove: bool,
    /// Groth16 prove of circom circuits of these sizes (powers of two), our CLI beside
    /// `snarkjs groth16 prove` and gnark's `groth16.Prove`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "12,14,16",
        value_name = "L,..."
    )]
    pub(crate) prove_logs: Vec<u32>,
    /// Groth16 prove on gnark's files (its circuit, `groth16.Setup`'s key, its witness) of
    /// these sizes, ours beside gnark's `groth16.Prove` (empty: skipped).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "12,14,16",
        value_name = "L,..."
    )]
    pub(crate) gnark_prove_logs: Vec<u32>,
    /// snarkjs proves up to this size only (2^18 takes it minutes).
    #[arg(long, default_value_t = 16, value_name = "L")]
    pub(crate) snarkjs_max_log: u32,
    /// Skip the phase 1 verify table.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Phase 1 verification (one contribution) at these powers, ours beside gnark v0.15's.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "14,16",
        value_name = "P,..."
    )]
    pub(crate) verify_powers: Vec<u32>,
    /// The lockstep binary --prove-logs runs (`cargo build --release -p lockstep-cli`).
    #[arg(long, default_value = "target/release/lockstep", value_name = "FILE")]
    pub(crate) lockstep: PathBuf,
    /// The directory where scripts/install-peers put snarkjs and circom2.
    #[arg(long, default_value = "peers", value_name = "DIR")]
    pub(crate) peers: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct BenchPsiArgs {
    /// Rows per party.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub(crate) rows: usize,
    /// Rounds: each runs every contender once, interleaved; the best rate is reported.
    #[arg(long, default_value_t = 1, value_name = "R")]
    pub(crate) repeats: usize,
    /// Where scripts/install-peers put the peers.
    #[arg(long, default_value = "peers", value_name = "DIR")]
    pub(crate) peers: PathBuf,
    /// Rows for psi.js, which is ~15x slower (default: the same as --rows).
    #[arg(long, value_name = "N")]
    pub(crate) psi_js_rows: Option<usize>,
    /// Skip the peers (ours only).
    #[arg(long)]
    pub(crate) no_peers: bool,
    /// Our backend: native (OpenSSL) or portable (the wasm build's arithmetic; built with
    /// `--features lockstep-psi/field32`, its 26-bit field). Default: the fastest built.
    #[arg(long, value_name = "BACKEND")]
    pub(crate) backend: Option<lockstep_psi::Backend>,
}

impl Cli {
    /// The worker counts to run at: the `--workers` list, else 1 and the policy's count.
    fn worker_counts(&self) -> anyhow::Result<Vec<usize>> {
        if !self.workers.is_empty() {
            return Ok(self.workers.iter().map(|w| w.get()).collect());
        }
        let base = ShardPolicy::from_env()?.base();
        Ok(if base > 1 { vec![1, base] } else { vec![1] })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = cli.worker_counts().and_then(|workers| match &cli.command {
        BenchCommand::Psi(args) => psi::run(args, &workers, cli.quiet),
        BenchCommand::Ceremony(args) => ceremony::run(args, &workers, cli.quiet),
        BenchCommand::Groth16(args) => groth16::run(args, &workers, &|text: &str| {
            if !cli.quiet {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }),
        BenchCommand::Plan(args) => plan::run(args, &workers),
        BenchCommand::Serve(args) => serve::run(args, cli.quiet),
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "lockstep-bench: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
