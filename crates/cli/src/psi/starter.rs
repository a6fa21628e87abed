//! The starter's commands: setup, respond, resolve.

use std::collections::HashMap;

use anyhow::Context as _;
use lockstep_psi::records::{KeySpec, Table};
use lockstep_psi::{Mode, Request, SetupFormat, SetupParams, Starter};

use super::files::{CsvOutput, prepare_file, read_key, read_message, write_file};
use super::{Context, Timing, thousands};
use crate::args::{InputArgs, ResolveArgs, RespondArgs, SetupArgs};

/// Reads a party's records and their distinct keys, reporting rows left out.
pub(crate) fn load(
    ctx: &Context,
    input: &InputArgs,
) -> anyhow::Result<(Table, lockstep_psi::records::Keys)> {
    let spec = KeySpec {
        columns: input.column.clone(),
        normalize: input.normalize,
    };
    let table = Table::read(&input.input, &spec)?;
    let keys = table.keys(&spec)?;
    if !keys.empty_rows.is_empty() {
        ctx.note(&format!(
            "{}: left out {} rows with an empty key (first: row {})",
            input.input.display(),
            thousands(keys.empty_rows.len()),
            keys.empty_rows[0] + 1
        ));
    }
    if keys.values.is_empty() {
        anyhow::bail!(
            "{}: no row has a non-empty key; nothing to intersect",
            input.input.display()
        );
    }
    Ok((table, keys))
}

/// `psi setup`.
pub(crate) fn setup(ctx: &Context, args: &SetupArgs) -> anyhow::Result<Timing> {
    if args.permutation_out.is_some() && args.format != SetupFormat::Raw {
        anyhow::bail!(
            "--permutation-out needs --format raw: only a raw setup has positions to map back"
        );
    }
    let key = read_key(&args.key)?;
    let (_, keys) = load(ctx, &args.input)?;
    let starter = Starter::new(&key, Mode::Reveal, ctx.backend)?;
    let pool = ctx.pool(keys.values.len())?;
    let step = ctx.step("setup", keys.values.len());
    let params = SetupParams {
        format: args.format,
        fpr: args.fpr,
        joiner_count: args.joiner_count,
    };
    let setup = starter.setup(&pool, step.control(), &keys.values, &params)?;
    let timing = step.finish();
    let bytes = setup.message.to_bytes();
    // Both files are written before either is renamed into place: a setup never lands beside a
    // stale permutation.
    let message = prepare_file(&args.out, &bytes)?;
    let permutation_file = match (&args.permutation_out, &setup.permutation) {
        (Some(path), Some(permutation)) => {
            let mut out = CsvOutput::create(path)?;
            out.row(["setup_position", "starter_row"])?;
            for (position, &k) in permutation.iter().enumerate() {
                for &row in &keys.rows[k] {
                    out.row([position.to_string(), (row + 1).to_string()])?;
                }
            }
            Some(out.finish()?)
        }
        _ => None,
    };
    message.commit()?;
    if let Some(file) = permutation_file {
        file.commit()?;
    }
    ctx.note(&format!(
        "setup: {} distinct keys masked in {:.2} s ({:.0} rows/s, {} workers, {} backend) -> {} ({} setup, {} bytes)",
        thousands(keys.values.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        ctx.backend,
        args.out.display(),
        setup.message.format_name(),
        thousands(bytes.len())
    ));
    Ok(timing)
}

/// `psi respond`.
pub(crate) fn respond(ctx: &Context, args: &RespondArgs) -> anyhow::Result<Timing> {
    let key = read_key(&args.key)?;
    let request = Request::from_bytes(&read_message(&args.request, "request")?)
        .with_context(|| format!("request {}", args.request.display()))?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let starter = Starter::new(&key, mode, ctx.backend)?;
    let pool = ctx.pool(request.elements.len())?;
    let step = ctx.step("respond", request.elements.len());
    let response = starter.respond(&pool, step.control(), &request)?;
    let timing = step.finish();
    write_file(&args.out, &response.to_bytes())?;
    ctx.note(&format!(
        "respond: {} elements re-masked in {:.2} s ({:.0} rows/s, {} workers) -> {}",
        thousands(response.elements.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        args.out.display()
    ));
    Ok(timing)
}

/// Reads a CSV of numbers, returning the named columns' values per row.
fn read_number_columns(path: &std::path::Path, names: &[&str]) -> anyhow::Result<Vec<Vec<usize>>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let header = reader
        .headers()
        .with_context(|| format!("reading {}", path.display()))?
        .clone();
    let columns: Vec<usize> = names
        .iter()
        .map(|name| {
            header.iter().position(|h| h == *name).with_context(|| {
                format!(
                    "{}: no column named {name:?} (the header has {:?})",
                    path.display(),
                    header
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("reading {}", path.display()))?;
        let values = columns
            .iter()
            .zip(names)
            .map(|(&c, name)| {
                let text = record.get(c).unwrap_or_default();
                text.parse::<usize>().with_context(|| {
                    format!(
                        "{}: data row {}: {name} {text:?} is not a number",
                        path.display(),
                        line + 1
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(values);
    }
    Ok(rows)
}

/// `psi resolve`: the joiner's setup positions, through the permutation, to the starter's rows.
/// Returns the matched `(joiner row, starter row)` pairs, 1-based.
pub(crate) fn resolve(ctx: &Context, args: &ResolveArgs) -> anyhow::Result<Vec<(usize, usize)>> {
    let spec = KeySpec {
        columns: args.input.column.clone(),
        normalize: args.input.normalize,
    };
    let table = Table::read(&args.input.input, &spec)?;
    let mut rows_at: HashMap<usize, Vec<usize>> = HashMap::new();
    for pair in read_number_columns(&args.permutation, &["setup_position", "starter_row"])? {
        let (position, row) = (pair[0], pair[1]);
        if row == 0 || row > table.len() {
            anyhow::bail!(
                "{}: starter row {row} is not a row of {} ({} rows): was the setup made from this input?",
                args.permutation.display(),
                args.input.input.display(),
                table.len()
            );
        }
        rows_at.entry(position).or_default().push(row);
    }
    let mut pairs = Vec::new();
    for m in read_number_columns(&args.matches, &["joiner_row", "setup_position"])? {
        let (joiner_row, position) = (m[0], m[1]);
        let rows = rows_at.get(&position).with_context(|| {
            format!(
                "{}: setup position {position} is not in the permutation {}: were they made by the same setup?",
                args.matches.display(),
                args.permutation.display()
            )
        })?;
        pairs.extend(rows.iter().map(|&starter_row| (joiner_row, starter_row)));
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = CsvOutput::create(&args.out)?;
    let mut header = vec![b"joiner_row".to_vec(), b"starter_row".to_vec()];
    header.extend(table.header_fields());
    out.row(&header)?;
    for &(joiner_row, starter_row) in &pairs {
        let mut fields = vec![
            joiner_row.to_string().into_bytes(),
            starter_row.to_string().into_bytes(),
        ];
        if let Some(record) = table.row(starter_row - 1) {
            fields.extend(record.iter().map(<[u8]>::to_vec));
        }
        out.row(&fields)?;
    }
    out.commit()?;
    ctx.note(&format!(
        "resolve: {} matched row pairs -> {}",
        thousands(pairs.len()),
        args.out.display()
    ));
    Ok(pairs)
}
