//! `psi demo`: both parties in one process, on built-in sample data, through the same commands
//! a user runs, checked against the plain intersection of the two files.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

use lockstep_psi::SetupFormat;
use lockstep_psi::linkage::KeySpec;

use super::joiner::{intersect, request};
use super::keys::key_command;
use super::records::Table;
use super::starter::{resolve, respond, setup};
use super::{Context, Timing, sample, thousands};
use crate::args::{
    DemoArgs, InputArgs, IntersectArgs, KeyCommand, RequestArgs, ResolveArgs, RespondArgs,
    SetupArgs,
};

fn input(path: &Path) -> InputArgs {
    InputArgs {
        input: path.to_owned(),
        column: vec!["email".to_owned()],
        normalize: true,
    }
}

/// The plain join of the two files on the normalized email: `(joiner row, starter row)`, 1-based.
fn plain_join(starter: &Path, joiner: &Path) -> anyhow::Result<BTreeSet<(usize, usize)>> {
    let spec = KeySpec {
        columns: vec!["email".to_owned()],
        normalize: true,
    };
    let (s, j) = (
        Table::read("--input", starter, &spec)?.keys(&spec)?,
        Table::read("--input", joiner, &spec)?.keys(&spec)?,
    );
    let starter_rows: HashMap<&Vec<u8>, &[usize]> = s
        .values()
        .iter()
        .enumerate()
        .map(|(k, v)| (v, s.rows(k)))
        .collect();
    let mut pairs = BTreeSet::new();
    for (k, value) in j.values().iter().enumerate() {
        if let Some(rows) = starter_rows.get(value) {
            for &jr in j.rows(k) {
                pairs.extend(rows.iter().map(|&sr| (jr + 1, sr + 1)));
            }
        }
    }
    Ok(pairs)
}

/// Runs the demo.
pub(crate) fn run(ctx: &Context, args: &DemoArgs) -> anyhow::Result<()> {
    let temp;
    let dir = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_owned()
        }
    };
    let path = |name: &str| dir.join(name);
    let (starter_rows, joiner_rows) = sample::write(
        ctx,
        &path("starter.csv"),
        &path("joiner.csv"),
        args.rows.max(10),
    )?;
    for who in ["starter", "joiner"] {
        key_command(
            ctx,
            &KeyCommand::New {
                out: path(&format!("{who}.key")),
                force: true,
            },
        )?;
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "lockstep psi demo: a starter with {} rows and a joiner with {} rows match on email (--normalize),\n\
         {} workers, {} backend, files in {}\n",
        thousands(starter_rows),
        thousands(joiner_rows),
        ctx.policy.workers_for(starter_rows),
        ctx.backend,
        if args.dir.is_some() {
            dir.display().to_string()
        } else {
            "a temporary directory".to_owned()
        }
    )?;

    let quiet = Context {
        policy: ctx.policy.clone(),
        backend: ctx.backend,
        quiet: true,
        allow_open_key: false,
    };
    let request_timing = request(
        &quiet,
        &RequestArgs {
            key: path("joiner.key"),
            input: input(&path("joiner.csv")),
            size_only: false,
            out: path("request.bin"),
        },
    )?;
    let joiner_count = request_timing.rows as u64;
    let setup_timing = setup(
        &quiet,
        &SetupArgs {
            key: path("starter.key"),
            input: input(&path("starter.csv")),
            joiner_count,
            fpr: 1e-9,
            format: SetupFormat::Raw,
            permutation_out: Some(path("permutation.csv")),
            out: path("setup.bin"),
        },
    )?;
    let respond_timing = respond(
        &quiet,
        &RespondArgs {
            key: path("starter.key"),
            request: path("request.bin"),
            size_only: false,
            joiner_count,
            out: path("response.bin"),
        },
    )?;
    let found = intersect(
        &quiet,
        &IntersectArgs {
            key: path("joiner.key"),
            setup: path("setup.bin"),
            response: path("response.bin"),
            input: input(&path("joiner.csv")),
            request: Some(path("request.bin")),
            size: false,
            out: Some(path("matches.csv")),
            pairs_out: Some(path("pairs.csv")),
        },
    )?;
    let started = std::time::Instant::now();
    let resolved = resolve(
        &quiet,
        &ResolveArgs {
            permutation: path("permutation.csv"),
            matches: path("pairs.csv"),
            input: input(&path("starter.csv")),
            out: path("matched-rows.csv"),
        },
    )?;
    let resolve_timing = Timing {
        rows: resolved.len(),
        elapsed: started.elapsed(),
    };

    writeln!(
        out,
        "{:<28} {:>9} {:>9} {:>10}",
        "step", "rows", "seconds", "rows/s"
    )?;
    for (name, t) in [
        ("starter: setup (raw)", setup_timing),
        ("joiner: request", request_timing),
        ("starter: respond", respond_timing),
        ("joiner: intersect", found.timing),
        ("starter: resolve", resolve_timing),
    ] {
        writeln!(
            out,
            "{name:<28} {:>9} {:>9.3} {:>10.0}",
            thousands(t.rows),
            t.elapsed.as_secs_f64(),
            t.rows_per_second()
        )?;
    }

    let expected = plain_join(&path("starter.csv"), &path("joiner.csv"))?;
    let got: BTreeSet<(usize, usize)> = resolved.iter().copied().collect();
    let joiner_matched: BTreeSet<usize> = found.pairs.iter().map(|&(r, _)| r + 1).collect();
    let expected_joiner: BTreeSet<usize> = expected.iter().map(|&(j, _)| j).collect();
    if got != expected || joiner_matched != expected_joiner {
        anyhow::bail!(
            "the demo's matches differ from the plain intersection of the two files ({} pairs found, {} expected): this is a bug",
            got.len(),
            expected.len()
        );
    }
    writeln!(
        out,
        "\nmatched {} distinct emails: {} joiner rows <-> starter rows in {} pairs,\n\
         equal to the plain join of the two files on the normalized email.",
        thousands(found.size),
        thousands(joiner_matched.len()),
        thousands(got.len())
    )?;
    let spec = KeySpec {
        columns: vec!["email".to_owned()],
        normalize: false,
    };
    let (starter_table, joiner_table) = (
        Table::read("--input", &path("starter.csv"), &spec)?,
        Table::read("--input", &path("joiner.csv"), &spec)?,
    );
    let show = |t: &Table, row: usize| {
        t.row(row - 1)
            .map(|r| {
                r.iter()
                    .take(3)
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    writeln!(out, "for example:")?;
    let step = (got.len() / 4).max(1);
    for &(j, s) in got.iter().step_by(step).take(4) {
        writeln!(
            out,
            "  joiner row {j:>5} [{}]  <->  starter row {s:>5} [{}]",
            show(&joiner_table, j),
            show(&starter_table, s)
        )?;
    }
    Ok(())
}
