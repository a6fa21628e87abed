//! The joiner's commands: request, intersect.

use std::io::BufWriter;

use std::path::Path;

use anyhow::Context as _;
use lockstep_files::{Files, open_input};
use lockstep_psi::linkage::{DigestingReader, KeyReader, Learn};
use lockstep_psi::streaming::{self, LinkageFile, RowsOut, StreamingError};
use lockstep_psi::{GRAIN, Joiner, Limits, MessageKind, Mode, PsiError, StreamedSetup};

use super::{Context, in_file, open_message, spec, spool, streaming_error};
use crate::args::{IntersectArgs, RequestArgs};
use crate::session::{Timing, thousands, workers};
use crate::usage::usage;

/// `psi request`: the input's keys indexed on disk, then masked a block at a time and written
/// as they go (`lockstep_psi::streaming`), within `--memory`.
pub(crate) fn request(ctx: &Context, args: &RequestArgs) -> anyhow::Result<Timing> {
    let mut files = Files::new();
    files
        .input("--key", &args.key)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.session.prepare(&files)?;
    let key = ctx.read_key(&args.key)?;
    let work = ctx.work_dir(&args.out)?;
    let budget = ctx.budget(&work);
    let index = ctx.index(&args.input, &args.input.input, &budget)?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    let pool = ctx.session.pool(index.len(), GRAIN)?;
    let step = ctx
        .session
        .step("request", Some(index.len() as u64), "rows");
    let shown = staged.shown(out).to_owned();
    let written = streaming::request(
        &joiner,
        &pool,
        step.control(),
        &index,
        &budget,
        BufWriter::with_capacity(1 << 20, staged.file(out)),
    );
    written.map_err(|e| streaming_error(e, &args.input.input, Some(&shown)))?;
    let timing = step.finish();
    staged.commit()?;
    ctx.session.note(&format!(
        "request: {} distinct keys masked in {:.2} s ({:.0} rows/s, {}) -> {} ({mode}); \
         tell the starter --joiner-count {}",
        thousands(index.len()),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        args.out.display(),
        index.len()
    ));
    Ok(timing)
}

/// What `psi intersect` found, and how long it took.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub(crate) timing: Timing,
    /// Distinct keys found.
    pub(crate) size: usize,
}

/// `psi intersect`: the input's keys indexed on disk; the response (and request) checked
/// whole, then unmasked a block at a time and joined with the setup on disk; matched rows and
/// pairs written as the sorts give them, within `--memory` (`lockstep_psi::streaming`).
pub(crate) fn intersect(ctx: &Context, args: &IntersectArgs) -> anyhow::Result<Found> {
    let mut files = Files::new();
    files
        .input("--key", &args.key)
        .input("--setup", &args.setup)
        .input("--response", &args.response)
        .input("--input", &args.input.input);
    if let Some(path) = &args.request {
        files.input("--request", path);
    }
    let out = args.out.as_deref().map(|p| files.output("--out", p, true));
    let pairs_out = args
        .pairs_out
        .as_deref()
        .map(|p| files.output("--pairs-out", p, false));
    // The size is the command's result on standard output (--size has no file outputs).
    let printed = args.size.then(|| files.printed());
    let mut staged = ctx.session.prepare(&files)?;
    let key = ctx.read_key(&args.key)?;
    let work = ctx.work_dir(
        args.out
            .as_deref()
            .or(args.pairs_out.as_deref())
            .unwrap_or(Path::new("-")),
    )?;
    let budget = ctx.budget(&work);
    // The records are read twice when the matched rows are written: a pipe is kept first.
    let input = match out {
        Some(_) => spool("--input", &args.input.input, &work, "input", Limits::NONE)?,
        None => None,
    };
    let input_path = input.as_deref().unwrap_or(&args.input.input);
    let index = ctx.index(&args.input, input_path, &budget)?;
    let n = index.len();

    // A response, and the request it answers, hold one element per distinct key: each is read
    // whole first (checked), then again.
    let limits = Limits::max_elements(n as u64);
    let response_path = spool("--response", &args.response, &work, "response", limits)?;
    let response_path = response_path.as_deref().unwrap_or(&args.response);
    let open_response = || open_message("--response", response_path, "response", limits);
    let scan = streaming::scan_response(open_response()?, limits)
        .with_context(|| args.response.display().to_string())?;
    let request = match &args.request {
        Some(path) => {
            let copy = spool("--request", path, &work, "request", limits)?;
            let opened = open_message(
                "--request",
                copy.as_deref().unwrap_or(path),
                "request",
                limits,
            )?;
            Some(
                streaming::scan_request(opened, limits)
                    .with_context(|| path.display().to_string())?,
            )
        }
        None => None,
    };
    let (mode, learn) = if args.size {
        (Mode::SizeOnly, Learn::Size)
    } else {
        (Mode::Reveal, Learn::Rows)
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    let count = |c: u64| usize::try_from(c).unwrap_or(usize::MAX);
    joiner
        .check_response_facts(
            count(scan.elements),
            || scan.sorted,
            n,
            request.map(|r| (count(r.elements), r.mode)),
        )
        .map_err(|e| response_hint(e, args))?;

    // The setup is hashed as it is read: the pairs name the setup they answer.
    let setup = StreamedSetup::read(
        DigestingReader::new(open_message("--setup", &args.setup, "setup", Limits::NONE)?),
        Limits::NONE,
    )
    .with_context(|| args.setup.display().to_string())?;
    let format = match &setup {
        StreamedSetup::Raw(_) => "raw",
        StreamedSetup::Whole(s) => s.format_name(),
    };
    if args.pairs_out.is_some() && format != "raw" {
        usage!(
            "--pairs-out needs a raw setup: {} is a {format} setup, which carries no positions",
            args.setup.display(),
        );
    }
    let rows_out = match out {
        Some(id) => Some(RowsOut {
            records: KeyReader::new(open_input("--input", input_path)?, &spec(&args.input))
                .map_err(|e| in_file(e, &args.input.input))?,
            out: staged
                .file(id)
                .try_clone()
                .context("the staged matched rows")?,
        }),
        None => None,
    };
    let pairs_file = match pairs_out {
        Some(id) => Some(staged.file(id).try_clone().context("the staged pairs")?),
        None => None,
    };

    let pool = ctx.session.pool(n, GRAIN)?;
    let step = ctx.session.step("intersect", Some(n as u64), "rows");
    let found = streaming::intersect(
        &joiner,
        &pool,
        step.control(),
        &index,
        setup,
        scan,
        open_response()?,
        limits,
        learn,
        &budget,
        rows_out,
        pairs_file,
    )
    .map_err(|e| match e {
        StreamingError::Output(LinkageFile::Rows, e) => {
            in_file(e, args.out.as_deref().unwrap_or(Path::new("-")))
        }
        StreamingError::Output(_, e) => {
            in_file(e, args.pairs_out.as_deref().unwrap_or(Path::new("-")))
        }
        StreamingError::Psi(e) => message_error(e, args),
        e => streaming_error(e, &args.input.input, None),
    })?;
    let timing = step.finish();

    if let Some(id) = printed {
        staged.write(id, format!("{}\n", found.size).as_bytes())?;
    }
    // Every output is complete before any replaces anything.
    staged.commit()?;
    ctx.session.note(&format!(
        "intersect: {} of {} distinct keys found ({} rows) in {:.2} s ({:.0} rows/s, {}, {format} setup)",
        thousands(found.size),
        thousands(n),
        thousands(count(found.rows)),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
    ));
    Ok(Found {
        timing,
        size: found.size,
    })
}

/// An engine error with the message file it is about: a bad element of the response (found
/// when decrypting) or a setup that fails to decode while looked up (a truncated Golomb code).
fn message_error(error: PsiError, args: &IntersectArgs) -> anyhow::Error {
    // The setup is read as it is joined: its errors come here too, named by their message.
    let of = |kind: &MessageKind| match kind {
        MessageKind::Setup => Some(&args.setup),
        MessageKind::Response => Some(&args.response),
        MessageKind::Request => args.request.as_ref(),
    };
    let file = match &error {
        PsiError::InvalidSetup(_) => Some(&args.setup),
        PsiError::ResponseLength { .. } => Some(&args.response),
        PsiError::Element { kind, .. }
        | PsiError::Protobuf { kind, .. }
        | PsiError::Read { kind, .. }
        | PsiError::TooManyElements { kind, .. } => of(kind),
        PsiError::WrongMessage { expected, .. } => of(expected),
        _ => None,
    };
    match file {
        Some(file) => anyhow::Error::new(error).context(file.display().to_string()),
        None => error.into(),
    }
}

/// A refused response, with what the user can do about it.
fn response_hint(error: PsiError, args: &IntersectArgs) -> anyhow::Error {
    let hint = match &error {
        PsiError::ResponseLength { .. } | PsiError::RequestLength { .. } => format!(
            "was the request made from {}, with the same --column and --normalize?",
            args.input.input.display()
        ),
        PsiError::ResponseOrderUnknown(_) => "pass --request (or --size)".to_owned(),
        PsiError::ResponseSorted | PsiError::SizeOnlyRequest => "use --size".to_owned(),
        _ => String::new(),
    };
    let error = anyhow::Error::new(error).context(args.response.display().to_string());
    if hint.is_empty() {
        error
    } else {
        anyhow::anyhow!("{error:#}: {hint}")
    }
}
