//! Command-line arguments.

use std::num::NonZeroUsize;

use clap::{Parser, Subcommand};
use lockstep_shard::{ShardPolicy, parse_workers};

/// Deterministic parallel batch cryptography: output byte-identical to one thread at every
/// worker count.
#[derive(Debug, Parser)]
#[command(name = "lockstep", version, propagate_version = true)]
pub(crate) struct Cli {
    /// Worker threads for every parallel step (default: LOCKSTEP_WORKERS, else the detected
    /// parallelism). Output bytes never depend on it.
    #[arg(long, global = true, value_name = "N", value_parser = parse_workers_flag)]
    pub(crate) workers: Option<NonZeroUsize>,

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
}

impl Cli {
    /// The shard policy: `--workers` over `LOCKSTEP_WORKERS` over the detected parallelism.
    pub(crate) fn policy(&self) -> anyhow::Result<ShardPolicy> {
        Ok(ShardPolicy::from_env()?.with_workers(self.workers)?)
    }
}

fn parse_workers_flag(text: &str) -> Result<NonZeroUsize, String> {
    parse_workers("--workers", text).map_err(|e| e.to_string())
}
