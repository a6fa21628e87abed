//! `lockstep-bench plan`: the plan engine in milliseconds beside numpy and numexpr, in one run
//! (this machine is shared and noisy: only same-run ratios mean anything).
//!
//! The plans are chains of `nodes` additions of the constant 1 (`x + 1 + 1 + ...`), as the
//! prior system measured them. Contenders, the median of `repeats` runs each:
//! - fused: the executor, at each worker count;
//! - node by node: the same kernels over full-size arrays (one pass over memory per node);
//! - bare loop: a hand-written Rust loop doing the same additions on 64 elements held in
//!   registers (the fully fused loop: the floor an interpreter of plans can approach);
//! - numpy (a new array per node), numpy in place (`out=`), numexpr (one thread), through
//!   `peers/plan.py` in `peers/.venv` (scripts/install-peers).

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use lockstep_plan::{Array, ArrayMut, DType, Plan, RunOptions};
use lockstep_shard::{Control, Pool};

use crate::BenchPlanArgs;

mod compile;
mod idle_pool;

fn chain(dtype: DType, nodes: usize) -> anyhow::Result<Plan> {
    let mut list = vec![r#"{ "id": "n0", "op": "add", "args": ["x", "one"] }"#.to_owned()];
    for i in 1..nodes {
        list.push(format!(
            r#"{{ "id": "n{i}", "op": "add", "args": ["n{}", "one"] }}"#,
            i - 1
        ));
    }
    Ok(Plan::from_json(&format!(
        r#"{{ "version": 1, "inputs": [{{ "id": "x", "dtype": "{dtype}" }}],
             "constants": [{{ "id": "one", "dtype": "{dtype}", "value": 1 }}],
             "nodes": [{}], "outputs": [{{ "id": "y", "from": "n{}" }}] }}"#,
        list.join(", "),
        nodes - 1
    ))?)
}

// The median of the runs (what the issue asks the README to show); `times` is never empty.
fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn time(repeats: usize, mut body: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    body()?; // warm up
    let mut times = Vec::with_capacity(repeats.max(1));
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        body()?;
        times.push(started.elapsed());
    }
    Ok(median(times))
}

// The bare loop: `nodes` additions of 1 on 64 elements held in a fixed-size array, which the
// compiler keeps in vector registers (eight 256-bit registers of f32) across the additions: the
// fully fused register loop an interpreter of plans can only approach.
#[inline(never)]
fn bare<T: Copy + Default>(x: &[T], out: &mut [T], nodes: usize, add_one: impl Fn(T) -> T) {
    const LANES: usize = 64;
    let mut outs = out.chunks_exact_mut(LANES);
    let mut ins = x.chunks_exact(LANES);
    for (o, i) in (&mut outs).zip(&mut ins) {
        let mut v = [T::default(); LANES];
        v.copy_from_slice(i);
        for _ in 0..nodes {
            for lane in &mut v {
                *lane = add_one(*lane);
            }
        }
        o.copy_from_slice(&v);
    }
    for (o, &i) in outs.into_remainder().iter_mut().zip(ins.remainder()) {
        let mut v = i;
        for _ in 0..nodes {
            v = add_one(v);
        }
        *o = v;
    }
}

fn bare_time(dtype: DType, n: usize, nodes: usize, repeats: usize) -> anyhow::Result<f64> {
    macro_rules! run {
        ($T:ty, $one:expr, $add:expr) => {{
            let x: Vec<$T> = vec![$one; n];
            let mut out: Vec<$T> = vec![$one; n];
            let t = time(repeats, || {
                bare(&x, &mut out, nodes, $add);
                Ok(())
            })?;
            std::hint::black_box(&out);
            t
        }};
    }
    Ok(match dtype {
        DType::F32 => run!(f32, 1.0, |v: f32| v + 1.0),
        DType::F64 => run!(f64, 1.0, |v: f64| v + 1.0),
        DType::I32 => run!(i32, 1, |v: i32| v.wrapping_add(1)),
        other => anyhow::bail!("bench plan: no bare loop for {other}"),
    })
}

/// GB/s of copying a 64 MiB buffer: this machine's memory bandwidth, for the 1M figures.
fn copy_bandwidth() -> f64 {
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    let mut times = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        dst.copy_from_slice(&src);
        times.push(started.elapsed());
        std::hint::black_box(&dst);
    }
    // Read and written: two bytes moved per byte copied.
    2.0 * (64 << 20) as f64 / (median(times) / 1e3) / 1e9
}

struct Peers {
    numpy: f64,
    in_place: f64,
    numexpr: f64,
}

fn peers(args: &BenchPlanArgs, dtype: DType, n: usize, nodes: usize) -> anyhow::Result<Peers> {
    let python = args.peers.join(".venv/bin/python");
    let out = Command::new(&python)
        .arg(args.peers.join("plan.py"))
        .args([
            "bench",
            "--dtype",
            dtype.name(),
            "--elements",
            &n.to_string(),
        ])
        .args([
            "--nodes",
            &nodes.to_string(),
            "--repeats",
            &args.repeats.to_string(),
        ])
        .output()
        .with_context(|| format!("{} (run scripts/install-peers)", python.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "peers/plan.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let get = |k: &str| {
        v[k].as_f64()
            .with_context(|| format!("peers/plan.py printed no {k}"))
    };
    Ok(Peers {
        numpy: get("numpy")?,
        in_place: get("numpy_in_place")?,
        numexpr: get("numexpr")?,
    })
}

pub(crate) fn run(args: &BenchPlanArgs, workers: &[usize]) -> anyhow::Result<()> {
    if args.idle_pool {
        return idle_pool::run(args, workers);
    }
    if args.compile {
        return compile::run(args);
    }
    let mut out = std::io::stdout().lock();
    let bandwidth = copy_bandwidth();
    writeln!(
        out,
        "plan bench: chains of additions; medians of {} runs; executor {}; copy bandwidth {bandwidth:.1} GB/s\n",
        args.repeats,
        lockstep_plan::instruction_set()
    )?;
    let fused_heads: Vec<String> = workers.iter().map(|w| format!("fused {w}w ms")).collect();
    writeln!(
        out,
        "| dtype | nodes | elements | {} | node-by-node ms | bare loop ms | numpy ms | numpy in place ms | numexpr ms | nbn / fused 1w | in place / fused 1w | fused 1w / {}w | notes |",
        fused_heads.join(" | "),
        workers.last().copied().unwrap_or(1)
    )?;
    writeln!(out, "|{}", "---|".repeat(12 + workers.len()))?;
    for &dtype in &args.dtypes {
        for &nodes in &args.nodes {
            let plan = chain(dtype, nodes)?;
            for &n in &args.elements {
                let x = match dtype {
                    DType::F32 => Array::from(vec![1.0f32; n]),
                    DType::F64 => Array::from(vec![1.0f64; n]),
                    DType::I32 => Array::from(vec![1i32; n]),
                    other => anyhow::bail!("bench plan: dtype {other} is not benched"),
                };
                let refs = [x.as_array_ref()];
                let mut outputs = plan.output_arrays(&refs)?;
                let executor = plan.executor();
                // One pool alive at a time. (The two-worker runs measured here were once 1.9x
                // slower with the one-worker pool still alive: their two workers had come to
                // share a CPU, which the pool's pinning now prevents; the idle pool only stood
                // by. `--idle-pool` measures both.)
                let mut fused = Vec::with_capacity(workers.len());
                for &w in workers {
                    let pool = Pool::new(w)?;
                    fused.push(time(args.repeats, || {
                        let mut views: Vec<ArrayMut<'_>> =
                            outputs.iter_mut().map(Array::as_array_mut).collect();
                        executor.run(
                            &pool,
                            &Control::new(),
                            &refs,
                            &mut views,
                            &RunOptions::default(),
                        )?;
                        Ok(())
                    })?);
                }
                let node_by_node = plan.node_by_node_executor(n);
                let one = Pool::new(1)?;
                let nbn = time(args.repeats, || {
                    let mut views: Vec<ArrayMut<'_>> =
                        outputs.iter_mut().map(Array::as_array_mut).collect();
                    node_by_node.run(
                        &one,
                        &Control::new(),
                        &refs,
                        &mut views,
                        &RunOptions::default(),
                    )?;
                    Ok(())
                })?;
                let bare = bare_time(dtype, n, nodes, args.repeats)?;
                let peers = if args.no_peers {
                    None
                } else {
                    Some(peers(args, dtype, n, nodes)?)
                };
                let f1 = fused[0];
                let mut notes = Vec::new();
                if n <= 4096 {
                    notes.push(format!(
                        "fused 1w - bare = {:.0} ns per run",
                        (f1 - bare) * 1e6
                    ));
                }
                if n >= 1 << 20 {
                    let moved = 2.0 * (n * dtype.size()) as f64;
                    let best = fused.iter().copied().fold(f64::MAX, f64::min);
                    notes.push(format!(
                        "{:.1} GB/s at best ({:.0}% of copy)",
                        moved / (best / 1e3) / 1e9,
                        100.0 * moved / (best / 1e3) / 1e9 / bandwidth
                    ));
                }
                let p = |f: fn(&Peers) -> f64| {
                    peers
                        .as_ref()
                        .map_or("-".to_owned(), |p| format!("{:.3}", f(p)))
                };
                let ratio = |f: fn(&Peers) -> f64| {
                    peers
                        .as_ref()
                        .map_or("-".to_owned(), |p| format!("{:.2}x", f(p) / f1))
                };
                writeln!(
                    out,
                    "| {dtype} | {nodes} | {n} | {} | {nbn:.3} | {bare:.3} | {} | {} | {} | {:.2}x | {} | {:.2}x | {} |",
                    fused
                        .iter()
                        .map(|t| format!("{t:.3}"))
                        .collect::<Vec<_>>()
                        .join(" | "),
                    p(|p| p.numpy),
                    p(|p| p.in_place),
                    p(|p| p.numexpr),
                    nbn / f1,
                    ratio(|p| p.in_place),
                    f1 / fused.last().copied().unwrap_or(f1),
                    notes.join("; ")
                )?;
            }
        }
    }
    Ok(())
}
