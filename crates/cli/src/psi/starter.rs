//! The starter's commands: setup, respond, resolve.

use anyhow::Context as _;
use lockstep_files::{Files, open_input};
use lockstep_psi::linkage::{
    self, FileError, KeySpec, LinkageError, Records, RowPair, read_pairs, read_permutation,
    write_permutation,
};
use lockstep_psi::{
    ElementWriter, GRAIN, Limits, Mode, Request, SetupFormat, SetupParams, Starter,
};

use super::{Context, in_file, open_message, spec, write_message};
use crate::args::{ResolveArgs, RespondArgs, SetupArgs};
use crate::session::{Timing, thousands, workers};
use crate::usage::usage;

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
    let mut staged = ctx.session.prepare(&files)?;
    let key = ctx.read_key(&args.key)?;
    let party = ctx.load(&args.input)?;
    let keys = party.keys();
    let starter = Starter::new(&key, Mode::Reveal, ctx.backend)?;
    let pool = ctx.session.pool(keys.len(), GRAIN)?;
    let step = ctx.session.step("setup", Some(keys.len() as u64), "rows");
    let setup = linkage::setup(&starter, &pool, step.control(), keys, &params)?;
    let timing = step.finish();
    staged.write(out, &setup.bytes)?;
    if let (Some(id), Some(permutation)) = (permutation_out, &setup.permutation) {
        write_permutation(staged.file(id), permutation, &spec(&args.input))
            .map_err(|e| in_file(e, staged.shown(id)))?;
    }
    // Both files are complete before either replaces anything.
    staged.commit()?;
    ctx.session.note(&format!(
        "setup: {} distinct keys masked in {:.2} s ({:.0} rows/s, {}, {} backend) -> {} ({} setup, {} bytes)",
        thousands(keys.len()),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        ctx.backend,
        args.out.display(),
        setup.message.format_name(),
        thousands(setup.bytes.len())
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
    let mut staged = ctx.session.prepare(&files)?;
    let key = ctx.read_key(&args.key)?;
    let limits = Limits::max_elements(args.joiner_count);
    let request = Request::read(
        open_message("--request", &args.request, "request", limits)?,
        limits,
    )
    .with_context(|| args.request.display().to_string())?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let starter = Starter::new(&key, mode, ctx.backend)?;
    let pool = ctx.session.pool(request.elements.len(), GRAIN)?;
    let step = ctx
        .session
        .step("respond", Some(request.elements.len() as u64), "rows");
    let response = starter
        .respond(&pool, step.control(), &request)
        .with_context(|| args.request.display().to_string())?;
    let timing = step.finish();
    write_message(
        &mut staged,
        out,
        |w| ElementWriter::response(w),
        &response.elements,
    )?;
    staged.commit()?;
    ctx.session.note(&format!(
        "respond: {} elements re-masked in {:.2} s ({:.0} rows/s, {}) -> {}",
        thousands(response.elements.len()),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        args.out.display()
    ));
    Ok(timing)
}

/// `psi resolve`: the joiner's pairs, through the permutation, to the starter's rows.
/// Returns the matched pairs (0-based rows).
pub(crate) fn resolve(ctx: &Context, args: &ResolveArgs) -> anyhow::Result<Vec<RowPair>> {
    let mut files = Files::new();
    files
        .input("--permutation", &args.permutation)
        .input("--matches", &args.matches)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.session.prepare(&files)?;
    let (permutation, made_with) =
        read_permutation(open_input("--permutation", &args.permutation)?)
            .map_err(|e| in_file(e, &args.permutation))?;
    let spec = spec(&args.input);
    if made_with != spec {
        usage!(
            "{} was made with {}; this run asks for {}: give resolve the --column and --normalize flags of the setup",
            args.permutation.display(),
            describe(&made_with),
            describe(&spec)
        );
    }
    let records = Records::read(open_input("--input", &args.input.input)?, &spec)
        .map_err(|e| in_file(e, &args.input.input))?;
    let keys = records
        .keys(&spec)
        .map_err(|e| in_file(FileError::from(e), &args.input.input))?;
    let pairs = read_pairs(open_input("--matches", &args.matches)?)
        .map_err(|e| in_file(e, &args.matches))?;
    let resolved = linkage::resolve(&permutation, &keys, &pairs).map_err(|e| {
        let file = match e {
            LinkageError::RowCountChanged { .. } | LinkageError::KeysChanged => &args.input.input,
            _ => &args.matches,
        };
        anyhow::Error::new(e).context(file.display().to_string())
    })?;
    linkage::write_resolved(&records, &resolved, staged.file(out))
        .map_err(|e| in_file(e, &args.out))?;
    staged.commit()?;
    ctx.session.note(&format!(
        "resolve: {} matched row pairs -> {}",
        thousands(resolved.len()),
        args.out.display()
    ));
    Ok(resolved)
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
