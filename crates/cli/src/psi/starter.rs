//! The starter's commands: setup, respond, resolve.

use anyhow::Context as _;
use lockstep_psi::linkage::{self, Digest, KeySpec, KeyTable, LinkageError, Permutation};
use lockstep_psi::{Limits, Mode, Request, SetupFormat, SetupParams, Starter};

use super::link_files::{read_pairs, read_permutation, write_permutation};
use super::records::Table;
use super::{Context, Timing, thousands};
use crate::args::{InputArgs, ResolveArgs, RespondArgs, SetupArgs};
use crate::files::{Files, read_key, read_message};
use crate::usage::usage;

/// The key spec of a party's `--column` and `--normalize` flags.
pub(crate) fn spec(input: &InputArgs) -> KeySpec {
    KeySpec {
        columns: input.column.clone(),
        normalize: input.normalize,
    }
}

/// Reads a party's records and their distinct keys, reporting rows left out.
///
/// # Errors
/// The file cannot be read, its keys cannot be taken, or no row has a key.
pub(crate) fn load(ctx: &Context, input: &InputArgs) -> anyhow::Result<(Table, KeyTable)> {
    let spec = spec(input);
    let table = Table::read("--input", &input.input, &spec)?;
    let keys = table.keys(&spec)?;
    if let Some(first) = keys.empty_rows().first() {
        ctx.note(&format!(
            "{}: left out {} rows with an empty key (first: row {})",
            input.input.display(),
            thousands(keys.empty_rows().len()),
            first + 1
        ));
    }
    if keys.is_empty() {
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
        usage!("--permutation-out needs --format raw: only a raw setup has positions to map back");
    }
    let params = SetupParams {
        format: args.format,
        fpr: args.fpr,
        joiner_count: args.joiner_count,
    };
    // The flags' own checks, before any file is touched.
    if let Err(e) = params.validate() {
        usage!("{e} (--fpr, --joiner-count)");
    }
    let mut files = Files::new();
    files
        .input("--key", &args.key)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let permutation_out = args
        .permutation_out
        .as_deref()
        .map(|p| files.output("--permutation-out", p, false));
    let mut staged = ctx.prepare(&files)?;
    let key = read_key(&args.key, ctx.allow_open_key)?;
    let (_, keys) = load(ctx, &args.input)?;
    let starter = Starter::new(&key, Mode::Reveal, ctx.backend)?;
    let pool = ctx.pool(keys.len())?;
    let step = ctx.step("setup", keys.len());
    let setup = starter.setup(&pool, step.control(), keys.values(), &params)?;
    let timing = step.finish();
    let bytes = setup.message.to_bytes()?;
    staged.write(out, &bytes)?;
    if let (Some(id), Some(order)) = (permutation_out, &setup.permutation) {
        let permutation = Permutation::new(order, &keys, Digest::of(&bytes))?;
        let shown = staged.shown(id).display().to_string();
        write_permutation(staged.file(id), &permutation, &spec(&args.input))
            .with_context(|| format!("writing {shown}"))?;
    }
    // Both files are complete before either replaces anything.
    staged.commit()?;
    ctx.note(&format!(
        "setup: {} distinct keys masked in {:.2} s ({:.0} rows/s, {} workers, {} backend) -> {} ({} setup, {} bytes)",
        thousands(keys.len()),
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
    if args.joiner_count == 0 {
        usage!("--joiner-count must be at least 1");
    }
    let mut files = Files::new();
    files
        .input("--key", &args.key)
        .input("--request", &args.request);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.prepare(&files)?;
    let key = read_key(&args.key, ctx.allow_open_key)?;
    let limits = Limits::max_elements(args.joiner_count);
    let request = Request::read(
        read_message("--request", &args.request, "request", limits)?,
        limits,
    )
    .with_context(|| args.request.display().to_string())?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let starter = Starter::new(&key, mode, ctx.backend)?;
    let pool = ctx.pool(request.elements.len())?;
    let step = ctx.step("respond", request.elements.len());
    let response = starter
        .respond(&pool, step.control(), &request)
        .with_context(|| args.request.display().to_string())?;
    let timing = step.finish();
    staged.write(out, &response.to_bytes())?;
    staged.commit()?;
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

/// `psi resolve`: the joiner's pairs, through the permutation, to the starter's rows.
/// Returns the matched `(joiner row, starter row)` pairs, 1-based.
pub(crate) fn resolve(ctx: &Context, args: &ResolveArgs) -> anyhow::Result<Vec<(usize, usize)>> {
    let mut files = Files::new();
    files
        .input("--permutation", &args.permutation)
        .input("--matches", &args.matches)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.prepare(&files)?;
    let (permutation, made_with) = read_permutation(&args.permutation)?;
    let spec = spec(&args.input);
    if made_with != spec {
        usage!(
            "{} was made with {}; this run asks for {}: give resolve the --column and --normalize flags of the setup",
            args.permutation.display(),
            describe(&made_with),
            describe(&spec)
        );
    }
    let table = Table::read("--input", &args.input.input, &spec)?;
    let keys = table.keys(&spec)?;
    let pairs = read_pairs(&args.matches)?;
    let resolved = linkage::resolve(&permutation, &keys, &pairs).map_err(|e| {
        let file = match e {
            LinkageError::RowCountChanged { .. } | LinkageError::KeysChanged => &args.input.input,
            _ => &args.matches,
        };
        anyhow::Error::new(e).context(file.display().to_string())
    })?;
    let rows = resolved.iter().map(|p| {
        let numbers = [
            (p.joiner_row + 1).to_string(),
            (p.starter_row + 1).to_string(),
        ];
        (numbers, p.starter_row)
    });
    table
        .write_rows(staged.file(out), ["joiner_row", "starter_row"], rows)
        .with_context(|| format!("writing {}", args.out.display()))?;
    staged.commit()?;
    ctx.note(&format!(
        "resolve: {} matched row pairs -> {}",
        thousands(resolved.len()),
        args.out.display()
    ));
    Ok(resolved
        .iter()
        .map(|p| (p.joiner_row + 1, p.starter_row + 1))
        .collect())
}

/// A key spec as its flags: `--column name --column dob --normalize`.
fn describe(spec: &KeySpec) -> String {
    let mut text: Vec<String> = spec
        .columns
        .iter()
        .map(|c| format!("--column {c:?}"))
        .collect();
    if text.is_empty() {
        text.push("no --column (one value per line)".to_owned());
    }
    if spec.normalize {
        text.push("--normalize".to_owned());
    }
    text.join(" ")
}
