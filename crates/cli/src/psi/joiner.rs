//! The joiner's commands: request, intersect.

use std::io::BufWriter;

use anyhow::Context as _;
use lockstep_files::Files;
use lockstep_psi::linkage::{self, DigestingReader, Intersection, Learn, write_pairs};
use lockstep_psi::streaming;
use lockstep_psi::{GRAIN, Joiner, Limits, Mode, PsiError, Request, Response, ServerSetup};

use super::{Context, in_file, open_message, streaming_error};
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
    let index = ctx.index(&args.input, &budget)?;
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
    pub(crate) intersection: Intersection,
}

/// `psi intersect`.
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
    let party = ctx.load(&args.input)?;
    let keys = party.keys();
    let n = keys.len();

    // The setup is hashed as it is decoded: the pairs name the setup they answer.
    let mut setup_reader =
        DigestingReader::new(open_message("--setup", &args.setup, "setup", Limits::NONE)?);
    let setup = ServerSetup::read(&mut setup_reader, Limits::NONE)
        .with_context(|| args.setup.display().to_string())?;
    let setup_digest = setup_reader.digest();
    if args.pairs_out.is_some() && !matches!(setup, ServerSetup::Raw(_)) {
        usage!(
            "--pairs-out needs a raw setup: {} is a {} setup, which carries no positions",
            args.setup.display(),
            setup.format_name()
        );
    }
    // A response, and the request it answers, hold one element per distinct key.
    let limits = Limits::max_elements(n as u64);
    let response = Response::read(
        open_message("--response", &args.response, "response", limits)?,
        limits,
    )
    .with_context(|| args.response.display().to_string())?;
    let request = match &args.request {
        Some(path) => Some(
            Request::read(open_message("--request", path, "request", limits)?, limits)
                .with_context(|| path.display().to_string())?,
        ),
        None => None,
    };
    let (mode, learn) = if args.size {
        (Mode::SizeOnly, Learn::Size)
    } else {
        (Mode::Reveal, Learn::Rows)
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    joiner
        .check_response(&response, n, request.as_ref())
        .map_err(|e| response_hint(e, args))?;

    let pool = ctx.session.pool(n, GRAIN)?;
    let step = ctx.session.step("intersect", Some(n as u64), "rows");
    let intersection = linkage::intersect(
        &joiner,
        &pool,
        step.control(),
        &setup,
        setup_digest,
        &response,
        keys,
        learn,
    )
    .map_err(|e| message_error(e, args))?;
    let timing = step.finish();

    if let Some(id) = out {
        intersection
            .write_rows(party.records(), staged.file(id))
            .map_err(|e| in_file(e, staged.shown(id)))?;
    }
    if let (Some(id), Some(pairs)) = (pairs_out, &intersection.pairs) {
        write_pairs(staged.file(id), pairs).map_err(|e| in_file(e, staged.shown(id)))?;
    }
    if let Some(id) = printed {
        staged.write(id, format!("{}\n", intersection.size).as_bytes())?;
    }
    // Every output is complete before any replaces anything.
    staged.commit()?;
    ctx.session.note(&format!(
        "intersect: {} of {} distinct keys found ({} rows) in {:.2} s ({:.0} rows/s, {}, {} setup)",
        thousands(intersection.size),
        thousands(n),
        thousands(intersection.rows.len()),
        timing.elapsed.as_secs_f64(),
        timing.per_second(),
        workers(pool.workers()),
        setup.format_name()
    ));
    Ok(Found {
        timing,
        intersection,
    })
}

/// An engine error with the message file it is about: a bad element of the response (found
/// when decrypting) or a setup that fails to decode while looked up (a truncated Golomb code).
fn message_error(error: PsiError, args: &IntersectArgs) -> anyhow::Error {
    let file = match &error {
        PsiError::InvalidSetup(_) => Some(&args.setup),
        PsiError::Element { .. } | PsiError::ResponseLength { .. } => Some(&args.response),
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
