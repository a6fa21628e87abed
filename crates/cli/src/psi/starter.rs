//! The starter's commands: setup, respond, resolve.

use std::io::BufWriter;

use anyhow::Context as _;
use lockstep_files::{Files, open_input};
use lockstep_psi::linkage::link_files::{PairsFile, PermutationFile};
use lockstep_psi::linkage::{KeyReader, KeySpec, LinkageError};
use lockstep_psi::streaming::{self, LinkageFile, StreamingError};
use lockstep_psi::{GRAIN, Limits, Mode, SetupFormat, SetupParams, Starter};

use super::{Context, in_file, open_message, spec, spool, streaming_error};
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
    let work = ctx.work_dir(&args.out)?;
    let budget = ctx.budget(&work);
    let index = ctx.index(&args.input, &args.input.input, &budget)?;
    let starter = Starter::new(&key, Mode::Reveal, ctx.backend)?;
    let pool = ctx.session.pool(index.len(), GRAIN)?;
    let step = ctx.session.step("setup", Some(index.len() as u64), "rows");
    // Two handles on the staged files: the setup and its permutation are written together.
    let out_file = staged.file(out).try_clone().context("the staged setup")?;
    let permutation = match permutation_out {
        Some(id) => Some(BufWriter::with_capacity(
            1 << 20,
            staged
                .file(id)
                .try_clone()
                .context("the staged permutation")?,
        )),
        None => None,
    };
    let written = streaming::setup(
        &starter,
        &pool,
        step.control(),
        &index,
        &params,
        &spec(&args.input),
        &budget,
        BufWriter::with_capacity(1 << 20, out_file),
        permutation,
    );
    let (written, _, _) = written.map_err(|e| match (e, permutation_out) {
        (StreamingError::Output(_, e), Some(id)) => in_file(e, staged.shown(id)),
        (StreamingError::Write(e), _) => {
            anyhow::Error::new(e).context(format!("writing {}", staged.shown(out).display()))
        }
        (e, _) => streaming_error(e, &args.input.input, None),
    })?;
    let timing = step.finish();
    // Both files are complete before either replaces anything.
    staged.commit()?;
    ctx.session.note(&format!(
        "setup: {} distinct keys masked in {:.2} s ({:.0} rows/s, {}, {} backend) -> {} ({} setup, {} bytes)",
        thousands(index.len()),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        ctx.backend,
        args.out.display(),
        written.format,
        thousands(usize::try_from(written.bytes).unwrap_or(usize::MAX))
    ));
    Ok(timing)
}

/// `psi respond`: the request read twice, once to check it whole (its mode may follow its
/// elements) and once to re-mask it a block at a time, written as it goes; a size-only response
/// is sorted within `--memory` (`lockstep_psi::streaming`).
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
    let work = ctx.work_dir(&args.out)?;
    let budget = ctx.budget(&work);
    let shown = args.request.display().to_string();
    // A pipe is read once: its bytes are kept in the work folder and read from there.
    let request_path = spool("--request", &args.request, &work, "request", limits)?;
    let request_path = request_path.as_deref().unwrap_or(&args.request);
    let open = || open_message("--request", request_path, "request", limits);
    let scan = streaming::scan_request(open()?, limits).with_context(|| shown.clone())?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let starter = Starter::new(&key, mode, ctx.backend)?;
    let count = usize::try_from(scan.elements).unwrap_or(usize::MAX);
    let pool = ctx.session.pool(count, GRAIN)?;
    let step = ctx.session.step("respond", Some(scan.elements), "rows");
    let out_shown = staged.shown(out).to_owned();
    let written = streaming::respond(
        &starter,
        &pool,
        step.control(),
        scan,
        open()?,
        limits,
        &budget,
        BufWriter::with_capacity(1 << 20, staged.file(out)),
    );
    // The request's own errors name it; the folder's, the output's and a cancellation speak
    // for themselves.
    written.map_err(|e| match e {
        StreamingError::Write(e) => {
            anyhow::Error::new(e).context(format!("writing {}", out_shown.display()))
        }
        e @ (StreamingError::Psi(_) | StreamingError::Changed { .. }) => {
            anyhow::Error::new(e).context(shown.clone())
        }
        e => e.into(),
    })?;
    let timing = step.finish();
    staged.commit()?;
    ctx.session.note(&format!(
        "respond: {} elements re-masked in {:.2} s ({:.0} rows/s, {}) -> {}",
        thousands(count),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        args.out.display()
    ));
    Ok(timing)
}

/// `psi resolve`: the joiner's pairs, through the permutation, to the starter's rows, within
/// `--memory` (`lockstep_psi::streaming::resolve`). Returns how many row pairs were written.
pub(crate) fn resolve(ctx: &Context, args: &ResolveArgs) -> anyhow::Result<u64> {
    let mut files = Files::new();
    files
        .input("--permutation", &args.permutation)
        .input("--matches", &args.matches)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.session.prepare(&files)?;
    let permutation = PermutationFile::open(open_input("--permutation", &args.permutation)?)
        .map_err(|e| in_file(e, &args.permutation))?;
    let spec = spec(&args.input);
    if permutation.spec != spec {
        usage!(
            "{} was made with {}; this run asks for {}: give resolve the --column and --normalize flags of the setup",
            args.permutation.display(),
            describe(&permutation.spec),
            describe(&spec)
        );
    }
    let pairs = PairsFile::open(open_input("--matches", &args.matches)?)
        .map_err(|e| in_file(e, &args.matches))?;
    let work = ctx.work_dir(&args.out)?;
    let budget = ctx.budget(&work);
    // The records are read twice: a pipe is kept first.
    let copy = spool("--input", &args.input.input, &work, "input", Limits::NONE)?;
    let input = copy.as_deref().unwrap_or(&args.input.input);
    let index = ctx.index(&args.input, input, &budget)?;
    let records = KeyReader::new(open_input("--input", input)?, &spec)
        .map_err(|e| in_file(e, &args.input.input))?;
    let pool = ctx.session.sort_pool()?;
    let step = ctx.session.step("resolve", None, "rows");
    let written = streaming::resolve(
        &pool,
        step.control(),
        permutation,
        &index,
        pairs,
        records,
        &budget,
        staged.file(out),
    )
    .map_err(|e| {
        let file = match &e {
            StreamingError::Linkage(
                LinkageError::RowCountChanged { .. } | LinkageError::KeysChanged,
            ) => &args.input.input,
            StreamingError::Linkage(LinkageError::InvalidPermutation(_)) => &args.permutation,
            StreamingError::Linkage(_) | StreamingError::Reading(LinkageFile::Pairs, _) => {
                &args.matches
            }
            StreamingError::Reading(..) => &args.permutation,
            StreamingError::Output(..) => &args.out,
            _ => return streaming_error(e, &args.input.input, None),
        };
        match e {
            StreamingError::Output(_, e) | StreamingError::Reading(_, e) => in_file(e, file),
            e => anyhow::Error::new(e).context(file.display().to_string()),
        }
    })?;
    step.finish();
    staged.commit()?;
    ctx.session.note(&format!(
        "resolve: {} matched row pairs -> {}",
        thousands(usize::try_from(written).unwrap_or(usize::MAX)),
        args.out.display()
    ));
    Ok(written)
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
