//! `lockstep-bench psi`: our rows/s per operation at each worker count, beside the peers' on the
//! same rows in the same run, as ratios (this machine is shared and noisy: only same-run ratios
//! mean anything).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::Context as _;
use lockstep_psi::{Backend, Joiner, Key, Mode, SetupFormat, SetupParams, Starter};
use lockstep_shard::{Control, Pool};
use serde_json::Value;

use crate::BenchPsiArgs;

/// The operations, as the peers' bench scripts name them.
const OPERATIONS: [&str; 6] = [
    "setup_raw",
    "setup_gcs",
    "setup_bloom",
    "request",
    "response",
    "intersect_raw",
];

/// The false-positive rate of every bench setup, as the peers' bench scripts use it (1e-9 would
/// overflow OpenMined's int64 GCS hash range at 100,000 rows).
const BENCH_FPR: f64 = 1e-6;

/// Rows/s of each operation, in [`OPERATIONS`] order.
type Rates = Vec<f64>;

/// Runs `body` once, returning its rate over `rows` rows and its value.
fn timed<T>(rows: usize, body: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(f64, T)> {
    let started = Instant::now();
    let value = body()?;
    #[allow(clippy::cast_precision_loss, reason = "a rate")]
    let rate = rows as f64 / started.elapsed().as_secs_f64().max(1e-9);
    Ok((rate, value))
}

/// Our rates at `workers` workers, and the matches found (a check that the run is real).
fn ours(rows: usize, workers: usize, backend: Backend) -> anyhow::Result<(Rates, usize)> {
    let starter_values: Vec<String> = (0..rows)
        .map(|i| format!("starter-{i}@example.org"))
        .collect();
    let joiner_values: Vec<String> = (0..rows)
        .map(|i| format!("starter-{}@example.org", i + rows / 2))
        .collect();
    let pool = Pool::new(workers)?;
    let control = Control::new();
    let starter = Starter::new(&Key::generate()?, Mode::Reveal, backend)?;
    let joiner = Joiner::new(&Key::generate()?, Mode::Reveal, backend)?;
    let mut rates = Vec::new();
    let mut raw = None;
    for format in [SetupFormat::Raw, SetupFormat::Gcs, SetupFormat::Bloom] {
        let params = SetupParams {
            format,
            fpr: BENCH_FPR,
            joiner_count: rows as u64,
        };
        let (rate, setup) = timed(rows, || {
            Ok(starter.setup(&pool, &control, &starter_values, &params)?)
        })?;
        rates.push(rate);
        if format == SetupFormat::Raw {
            raw = Some(setup.message);
        }
    }
    let setup = raw.context("raw setup")?;
    let (rate, request) = timed(rows, || {
        Ok(joiner.request(&pool, &control, &joiner_values)?)
    })?;
    rates.push(rate);
    let (rate, response) = timed(rows, || Ok(starter.respond(&pool, &control, &request)?))?;
    rates.push(rate);
    let (rate, found) = timed(rows, || {
        Ok(joiner.intersect(&pool, &control, &setup, &response, rows)?)
    })?;
    rates.push(rate);
    Ok((rates, found.len()))
}

/// Runs a peer's bench job and returns its rates.
fn peer(program: &Path, script: &Path, rows: usize) -> anyhow::Result<(Rates, usize)> {
    let job = serde_json::json!({ "op": "bench", "rows": rows, "repeats": 1 });
    let mut child = Command::new(program)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("running {} {}", program.display(), script.display()))?;
    child
        .stdin
        .take()
        .context("peer stdin")?
        .write_all(job.to_string().as_bytes())?;
    let output = child.wait_with_output()?;
    let result: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("reading {}'s result", script.display()))?;
    if let Some(error) = result.get("error") {
        anyhow::bail!("{}: {error}", script.display());
    }
    let rates = OPERATIONS
        .iter()
        .map(|op| {
            result[op]
                .as_f64()
                .with_context(|| format!("{}: no {op}", script.display()))
        })
        .collect::<Result<_, _>>()?;
    let matches = result["matches"].as_u64().unwrap_or(0);
    Ok((rates, usize::try_from(matches).unwrap_or(0)))
}

/// Peak resident memory of this process so far (VmHWM), in bytes, where the OS tells.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs the bench and prints the table.
pub(crate) fn run(args: &BenchPsiArgs, worker_counts: &[usize], quiet: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let rows = args.rows.max(2);
    let note = |text: &str| {
        if !quiet {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    };
    let psi_js_rows = args.psi_js_rows.unwrap_or(rows).max(2);
    let backend = args.backend.unwrap_or_else(Backend::fastest);
    let python = args.peers.join(".venv/bin/python");
    if !args.no_peers {
        anyhow::ensure!(
            python.exists() && args.peers.join("node_modules/@openmined/psi.js").exists(),
            "the peers are not installed in {}: run scripts/install-peers (or pass --no-peers)",
            args.peers.display()
        );
    }
    // Rounds interleave every contender, so a slow spell of this shared machine hits them all;
    // each keeps its best rate per operation.
    let mut columns: Vec<(String, Rates)> = Vec::new();
    let mut keep = |name: String, rates: Rates| match columns.iter_mut().find(|(n, _)| *n == name) {
        Some((_, best)) => best.iter_mut().zip(rates).for_each(|(b, r)| *b = b.max(r)),
        None => columns.push((name, rates)),
    };
    let mut rss = None;
    for round in 1..=args.repeats.max(1) {
        for &workers in worker_counts {
            note(&format!(
                "round {round}: lockstep, {workers} workers, {rows} rows..."
            ));
            let (rates, matches) = ours(rows, workers, backend)?;
            anyhow::ensure!(
                matches == rows - rows / 2,
                "found {matches} matches, expected {}",
                rows - rows / 2
            );
            keep(format!("lockstep {workers}w"), rates);
        }
        rss = rss.or_else(peak_rss);
        if !args.no_peers {
            note(&format!(
                "round {round}: openmined.psi 2.0.6, {rows} rows..."
            ));
            let (rates, _) = peer(&python, &args.peers.join("openmined.py"), rows)?;
            keep("openmined.psi".to_owned(), rates);
            note(&format!(
                "round {round}: @openmined/psi.js 2.0.6, {psi_js_rows} rows..."
            ));
            let (rates, _) = peer(
                Path::new("node"),
                &args.peers.join("psi-js.mjs"),
                psi_js_rows,
            )?;
            keep("psi.js".to_owned(), rates);
        }
    }

    writeln!(
        out,
        "PSI bench: {rows} rows per party (half shared; psi.js {psi_js_rows}), best of {} interleaved rounds, {} backend, rows/s",
        args.repeats.max(1),
        backend
    )?;
    write!(out, "{:<14}", "operation")?;
    for (name, _) in &columns {
        write!(out, " {name:>14}")?;
    }
    let find = |name: &str| columns.iter().position(|(n, _)| n == name);
    let mut ratios: Vec<(String, usize, usize)> = Vec::new();
    if let Some(one) = find("lockstep 1w") {
        for (label, peer) in [("1w/openmined", "openmined.psi"), ("1w/psi.js", "psi.js")] {
            if let Some(p) = find(peer) {
                ratios.push((label.to_owned(), one, p));
            }
        }
        for w in worker_counts.iter().skip(1) {
            if let Some(many) = find(&format!("lockstep {w}w")) {
                ratios.push((format!("{w}w/1w"), many, one));
            }
        }
    }
    for (label, _, _) in &ratios {
        write!(out, " {label:>13}")?;
    }
    writeln!(out)?;
    for (i, op) in OPERATIONS.iter().enumerate() {
        write!(out, "{op:<14}")?;
        for (_, rates) in &columns {
            write!(out, " {:>14.0}", rates[i])?;
        }
        for (_, a, b) in &ratios {
            write!(out, " {:>12.2}x", columns[*a].1[i] / columns[*b].1[i])?;
        }
        writeln!(out)?;
    }
    if let Some(bytes) = rss {
        #[allow(clippy::cast_precision_loss, reason = "a size for display")]
        let mib = bytes as f64 / f64::from(1 << 20);
        writeln!(
            out,
            "peak memory (ours, whole process, every operation at every worker count): {mib:.0} MiB RSS at {rows} rows per party"
        )?;
    }
    Ok(())
}
