//! `lockstep info`.

use std::io::Write;

use lockstep_psi::Backend;
use lockstep_shard::ShardPolicy;

/// Prints the version, the host's parallelism and the policy's worker count.
pub(crate) fn print(out: &mut impl Write, policy: &ShardPolicy) -> anyhow::Result<()> {
    let source = policy.source().name();
    writeln!(out, "lockstep {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "parallelism: {}", policy.detected_parallelism())?;
    writeln!(
        out,
        "workers: {} (from {source}; cap {})",
        policy.base(),
        policy.cap()
    )?;
    let backends: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    writeln!(
        out,
        "psi backends: {} (default {})",
        backends.join(", "),
        Backend::fastest()
    )?;
    Ok(())
}
