//! `lockstep-bench groth16 --verify-powers`: phase 1 verification (one contribution against the
//! initial object, the ceremony's two large MSMs on the curve core) ours at each worker count
//! beside gnark v0.15's through the harness at GOMAXPROCS of the same count, in one run.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use lockstep_ceremony::phase1::{self, Phase1, Secrets};
use lockstep_shard::{Control, Pool};

use crate::BenchGroth16Args;
use crate::ceremony::{STAGES, ms, ratio};

use super::best;

/// The table: a row per power, ours and gnark's at each worker count, ms.
pub(super) fn run(
    args: &BenchGroth16Args,
    workers: &[usize],
    harness: Option<&Path>,
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let pools: Vec<(usize, Pool)> = workers
        .iter()
        .map(|&w| Ok((w, Pool::new(w)?)))
        .collect::<anyhow::Result<_>>()?;
    let verify = STAGES
        .iter()
        .position(|s| *s == "verify")
        .expect("invariant: verify is one of the harness's stages");
    if let Some(power) = args.verify_powers.iter().find(|p| !(1..=20).contains(*p)) {
        anyhow::bail!("--verify-powers: 1 to 20, not {power}");
    }
    let (_, widest) = pools
        .iter()
        .max_by_key(|(w, _)| *w)
        .expect("invariant: at least one worker count");
    let mut rows = Vec::new();
    for &power in &args.verify_powers {
        note(&format!("phase 1 verify 2^{power}: a contribution..."));
        let control = Control::new();
        let initial = Phase1::initial(power)?;
        let hash = initial.write(widest, &control, &mut std::io::sink())?;
        let next = phase1::contribute(
            widest,
            &control,
            initial.clone(),
            &hash,
            &Secrets::random(b"bench"),
        )?;
        let mut ours = Vec::new();
        for (w, pool) in &pools {
            note(&format!("phase 1 verify 2^{power}: ours {w} workers..."));
            ours.push(best(args.repeats, || {
                phase1::verify_contribution(pool, &control, &initial, &hash, &next)?;
                Ok(())
            })?);
        }
        let mut gnark: Vec<Option<Duration>> = Vec::new();
        for (w, _) in &pools {
            gnark.push(match harness {
                Some(harness) => {
                    note(&format!(
                        "phase 1 verify 2^{power}: gnark GOMAXPROCS={w}..."
                    ));
                    crate::ceremony::gnark(harness, power, *w, args.repeats)?[verify]
                }
                None => None,
            });
        }
        rows.push((power, ours, gnark));
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nPhase 1 verify, ms, best of {} (gnark v0.15's Phase1 Verify through the harness, GOMAXPROCS at the worker count)",
        args.repeats.max(1)
    )?;
    write!(out, "{:<6}", "power")?;
    for (w, _) in &pools {
        write!(
            out,
            " {:>10} {:>10} {:>8}",
            format!("ours {w}w"),
            format!("gnark {w}"),
            "gnark/us"
        )?;
    }
    writeln!(out)?;
    for (power, ours, gnark) in rows {
        write!(out, "{power:<6}")?;
        for (ours, gnark) in ours.into_iter().zip(gnark) {
            write!(
                out,
                " {:>10} {:>10} {:>8}",
                ms(Some(ours)),
                ms(gnark),
                ratio(gnark, Some(ours))
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}
