//! `psi demo`: both parties in one process, on built-in sample data, through the same commands
//! a user runs, checked against the plain join of the two files.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use lockstep_files::{Files, open_input};
use lockstep_psi::linkage::{self, KeySpec, Party, RowPair};
use lockstep_psi::{GRAIN, SetupFormat, sample};

use super::joiner::{intersect, request};
use super::keys::key_command;
use super::starter::{resolve, respond, setup};
use super::{Context, in_file};
use crate::args::{
    DemoArgs, InputArgs, IntersectArgs, KeyCommand, RequestArgs, ResolveArgs, RespondArgs,
    SetupArgs,
};
use crate::session::{Timing, thousands, workers};

fn input(path: &Path) -> InputArgs {
    InputArgs {
        input: path.to_owned(),
        column: vec![sample::KEY_COLUMN.to_owned()],
        normalize: true,
    }
}

/// A sample file read back, keyed on the normalized email.
fn party(path: &Path) -> anyhow::Result<Party> {
    let spec = KeySpec {
        columns: vec![sample::KEY_COLUMN.to_owned()],
        normalize: true,
    };
    Party::read(open_input("--input", path)?, &spec).map_err(|e| in_file(e, path))
}

/// Writes the two sample files; returns their row counts.
fn write_samples(
    ctx: &Context,
    starter: &Path,
    joiner: &Path,
    n: usize,
) -> anyhow::Result<(usize, usize)> {
    let orgs = sample::organisations(n).map_err(|e| anyhow::anyhow!("--rows: {e}"))?;
    let mut files = Files::new();
    let ids = [
        files.output("--dir", starter, false),
        files.output("--dir", joiner, false),
    ];
    let mut staged = ctx.session.prepare(&files)?;
    staged.write(ids[0], &orgs.starter)?;
    staged.write(ids[1], &orgs.joiner)?;
    staged.commit()?;
    Ok((orgs.starter_rows, orgs.joiner_rows))
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
    let (starter_rows, joiner_rows) =
        write_samples(ctx, &path("starter.csv"), &path("joiner.csv"), args.rows)?;
    for who in ["starter", "joiner"] {
        key_command(
            ctx,
            &KeyCommand::New {
                out: path(&format!("{who}.key")),
                force: true,
            },
        )?;
    }
    let mut out = String::new();
    writeln!(
        out,
        "lockstep psi demo: a starter with {} rows and a joiner with {} rows match on email (--normalize),\n\
         {}, {} backend, files in {}\n",
        thousands(starter_rows),
        thousands(joiner_rows),
        workers(ctx.session.workers_for(starter_rows, GRAIN)),
        ctx.backend,
        if args.dir.is_some() {
            dir.display().to_string()
        } else {
            "a temporary directory".to_owned()
        }
    )?;
    ctx.session.print(&std::mem::take(&mut out))?;

    let quiet = Context {
        session: ctx.session.quietly(),
        backend: ctx.backend,
        allow_open_key: false,
        memory: ctx.memory,
        tmp: ctx.tmp.clone(),
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
    let joiner_count = request_timing.items;
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
        items: resolved,
        elapsed: started.elapsed(),
    };
    let resolved = resolved_pairs(&path("matched-rows.csv"))?;

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
            thousands(t.items),
            t.elapsed.as_secs_f64(),
            t.per_second()
        )?;
    }

    let (starter, joiner) = (party(&path("starter.csv"))?, party(&path("joiner.csv"))?);
    let expected = linkage::plain_join(starter.keys(), joiner.keys());
    // The joiner's matched rows, as its pairs file lists them.
    let pairs = linkage::read_pairs(open_input("pairs", &path("pairs.csv"))?)
        .map_err(|e| in_file(e, &path("pairs.csv")))?;
    let joiner_matched: BTreeSet<usize> = pairs.pairs.iter().map(|p| p.joiner_row).collect();
    let expected_joiner: BTreeSet<usize> = expected.iter().map(|p| p.joiner_row).collect();
    if resolved != expected || joiner_matched != expected_joiner {
        anyhow::bail!(
            "the demo's matches differ from the plain join of the two files ({} pairs found, {} expected): this is a bug",
            resolved.len(),
            expected.len()
        );
    }
    writeln!(
        out,
        "\nmatched {} distinct emails: {} joiner rows <-> starter rows in {} pairs,\n\
         equal to the plain join of the two files on the normalized email.",
        thousands(found.size),
        thousands(joiner_matched.len()),
        thousands(resolved.len())
    )?;
    let show = |party: &Party, row: usize| {
        party
            .records()
            .row(row)
            .map(|fields| {
                fields
                    .take(3)
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    writeln!(out, "for example:")?;
    let step = (resolved.len() / 4).max(1);
    for &RowPair {
        joiner_row,
        starter_row,
    } in resolved.iter().step_by(step).take(4)
    {
        writeln!(
            out,
            "  joiner row {:>5} [{}]  <->  starter row {:>5} [{}]",
            joiner_row + 1,
            show(&joiner, joiner_row),
            starter_row + 1,
            show(&starter, starter_row)
        )?;
    }
    ctx.session.print(&out)
}

/// The `(joiner row, starter row)` pairs (0-based) of a resolved file's first two columns.
fn resolved_pairs(path: &Path) -> anyhow::Result<Vec<RowPair>> {
    let spec = KeySpec {
        columns: vec!["joiner_row".to_owned(), "starter_row".to_owned()],
        normalize: false,
    };
    let records = linkage::Records::read(open_input("resolved", path)?, &spec)
        .map_err(|e| in_file(e, path))?;
    let number = |field: Option<&[u8]>| -> anyhow::Result<usize> {
        let value: usize = std::str::from_utf8(field.unwrap_or(b""))?.parse()?;
        value
            .checked_sub(1)
            .ok_or_else(|| anyhow::anyhow!("{}: a row 0", path.display()))
    };
    (0..records.len())
        .map(|row| {
            let mut fields = records.row(row).expect("invariant: a row of the file");
            Ok(RowPair {
                joiner_row: number(fields.next())?,
                starter_row: number(fields.next())?,
            })
        })
        .collect()
}
