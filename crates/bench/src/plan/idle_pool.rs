//! `lockstep-bench plan --idle-pool`: a two-worker pool's fused runs alone against the same runs
//! beside an idle one-worker pool (created, used once, left idle), in one process, interleaved.
//!
//! Issue 16 saw a two-worker pool's runs 1.9x slower while a one-worker pool was alive. Each
//! round does what the plan bench did before its two-worker column, the caller's own one-worker
//! runs, then starts a fresh pool of the largest `--workers` count (a new pool: where its threads
//! land is drawn again each round) and times `RUNS_PER_ROUND` runs on it (after one untimed),
//! with the idle pool alive or not; rounds alternate which condition goes first. Printed: the
//! medians over all rounds, their ratio, and the runs of each condition slower than 1.5x the
//! fastest run (a two-worker run at one worker's speed, its two workers sharing a CPU).

use std::io::Write;
use std::time::{Duration, Instant};

use lockstep_plan::{Array, ArrayMut, ArrayRef, DType, Executor, RunOptions};
use lockstep_shard::{Control, Pool};

use crate::BenchPlanArgs;

/// Runs timed per condition and round, after one untimed run.
const RUNS_PER_ROUND: usize = 10;

/// One-worker runs of the caller's own before each round's pool starts (the plan bench's
/// one-worker column).
const CALLER_RUNS: usize = 20;

fn run_once(
    executor: &Executor<'_>,
    pool: &Pool,
    inputs: &[ArrayRef<'_>],
    outputs: &mut [Array],
) -> anyhow::Result<()> {
    let mut views: Vec<ArrayMut<'_>> = outputs.iter_mut().map(Array::as_array_mut).collect();
    executor.run(
        pool,
        &Control::new(),
        inputs,
        &mut views,
        &RunOptions::default(),
    )?;
    Ok(())
}

// `times` is never empty: every round times `RUNS_PER_ROUND` runs.
fn median_ms(times: &[Duration]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2].as_secs_f64() * 1e3
}

/// Runs slower than 1.5x the fastest of `all`.
fn slow_runs(times: &[Duration], all: &[Duration]) -> usize {
    let best = all.iter().min().copied().unwrap_or_default();
    times.iter().filter(|&&t| t > best * 3 / 2).count()
}

pub(super) fn run(args: &BenchPlanArgs, workers: &[usize]) -> anyhow::Result<()> {
    let w = workers.iter().copied().max().unwrap_or(1);
    let rounds = args.repeats.max(1);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "plan bench, idle pool: fused runs on a fresh {w}-worker pool alone and beside an idle one-worker pool; {rounds} rounds x {RUNS_PER_ROUND} runs per condition, interleaved; medians\n"
    )?;
    writeln!(
        out,
        "| dtype | nodes | elements | alone ms | beside idle pool ms | beside / alone | slow runs alone | slow runs beside |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    for &dtype in &args.dtypes {
        for &nodes in &args.nodes {
            let plan = super::chain(dtype, nodes)?;
            for &n in &args.elements {
                let x = match dtype {
                    DType::F32 => Array::from(vec![1.0f32; n]),
                    DType::F64 => Array::from(vec![1.0f64; n]),
                    DType::I32 => Array::from(vec![1i32; n]),
                    other => anyhow::bail!("bench plan: dtype {other} is not benched"),
                };
                let inputs = [x.as_array_ref()];
                let mut outputs = plan.output_arrays(&inputs)?;
                let executor = plan.executor();
                let (mut alone, mut beside) = (Vec::new(), Vec::new());
                for round in 0..rounds {
                    for with_idle in [round % 2 == 1, round % 2 == 0] {
                        for _ in 0..CALLER_RUNS {
                            run_once(&executor, &Pool::current_thread(), &inputs, &mut outputs)?;
                        }
                        let idle = if with_idle {
                            let idle = Pool::new(1)?;
                            run_once(&executor, &idle, &inputs, &mut outputs)?;
                            Some(idle)
                        } else {
                            None
                        };
                        let pool = Pool::new(w)?;
                        run_once(&executor, &pool, &inputs, &mut outputs)?;
                        let times = if with_idle { &mut beside } else { &mut alone };
                        for _ in 0..RUNS_PER_ROUND {
                            let started = Instant::now();
                            run_once(&executor, &pool, &inputs, &mut outputs)?;
                            times.push(started.elapsed());
                        }
                        drop(idle);
                    }
                }
                let all: Vec<Duration> = alone.iter().chain(&beside).copied().collect();
                let (a, b) = (median_ms(&alone), median_ms(&beside));
                writeln!(
                    out,
                    "| {dtype} | {nodes} | {n} | {a:.3} | {b:.3} | {:.2}x | {}/{} | {}/{} |",
                    b / a,
                    slow_runs(&alone, &all),
                    alone.len(),
                    slow_runs(&beside, &all),
                    beside.len()
                )?;
            }
        }
    }
    Ok(())
}
