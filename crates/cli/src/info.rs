//! `lockstep info`.

use std::fmt::Write as _;

use lockstep_psi::Backend;
use lockstep_shard::ShardPolicy;

/// The version, the host's parallelism and the policy's worker count, as `lockstep info` prints
/// them.
pub(crate) fn text(policy: &ShardPolicy) -> Result<String, std::fmt::Error> {
    let mut out = String::new();
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
    Ok(out)
}
