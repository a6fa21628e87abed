//! The joiner's commands: request, intersect.

use std::io::Write;

use anyhow::Context as _;
use lockstep_psi::linkage::{DigestingReader, Pairs};
use lockstep_psi::{Joiner, Limits, Mode, PsiError, Request, Response, ServerSetup};

use super::link_files::write_pairs;
use super::starter::load;
use super::{Context, Timing, thousands};
use crate::args::{IntersectArgs, RequestArgs};
use crate::files::{Files, read_key, read_message};
use crate::usage::usage;

/// `psi request`.
pub(crate) fn request(ctx: &Context, args: &RequestArgs) -> anyhow::Result<Timing> {
    let mut files = Files::new();
    files
        .input("--key", &args.key)
        .input("--input", &args.input.input);
    let out = files.output("--out", &args.out, true);
    let mut staged = ctx.prepare(&files)?;
    let key = read_key(&args.key, ctx.allow_open_key)?;
    let (_, keys) = load(ctx, &args.input)?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    let pool = ctx.pool(keys.len())?;
    let step = ctx.step("request", keys.len());
    let request = joiner.request(&pool, step.control(), keys.values())?;
    let timing = step.finish();
    staged.write(out, &request.to_bytes())?;
    staged.commit()?;
    ctx.note(&format!(
        "request: {} distinct keys masked in {:.2} s ({:.0} rows/s, {} workers) -> {} ({mode}); \
         tell the starter --joiner-count {}",
        thousands(keys.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        args.out.display(),
        keys.len()
    ));
    Ok(timing)
}

/// What `psi intersect` found.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub(crate) timing: Timing,
    /// Matching `(joiner row, setup position)` pairs, 0-based rows; the position is `None` for
    /// GCS and Bloom setups. Empty with `--size`.
    pub(crate) pairs: Vec<(usize, Option<usize>)>,
    /// Distinct keys found in the setup.
    pub(crate) size: usize,
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
    let mut staged = ctx.prepare(&files)?;
    let key = read_key(&args.key, ctx.allow_open_key)?;
    let (table, keys) = load(ctx, &args.input)?;
    let n = keys.len();

    // The setup is hashed as it is decoded: the pairs name the setup they answer.
    let mut setup_reader =
        DigestingReader::new(read_message("--setup", &args.setup, "setup", Limits::NONE)?);
    let setup = ServerSetup::read(&mut setup_reader, Limits::NONE)
        .with_context(|| args.setup.display().to_string())?;
    let setup_digest = setup_reader.digest();
    let raw = matches!(setup, ServerSetup::Raw(_));
    if args.pairs_out.is_some() && !raw {
        usage!(
            "--pairs-out needs a raw setup: {} is a {} setup, which carries no positions",
            args.setup.display(),
            setup.format_name()
        );
    }
    // A response, and the request it answers, hold one element per distinct key.
    let limits = Limits::max_elements(n as u64);
    let response = Response::read(
        read_message("--response", &args.response, "response", limits)?,
        limits,
    )
    .with_context(|| args.response.display().to_string())?;
    let request = match &args.request {
        Some(path) => Some(
            Request::read(read_message("--request", path, "request", limits)?, limits)
                .with_context(|| path.display().to_string())?,
        ),
        None => None,
    };
    let mode = if args.size {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    joiner
        .check_response(&response, n, request.as_ref())
        .map_err(|e| response_hint(e, args))?;

    let pool = ctx.pool(n)?;
    let step = ctx.step("intersect", n);
    let mut found_pairs = Vec::new();
    let mut pairs_file = None;
    let in_file = |e: PsiError| message_error(e, args);
    let size = if args.size {
        joiner
            .intersection_size(&pool, step.control(), &setup, &response, n)
            .map_err(in_file)?
    } else if raw {
        let table_pairs = joiner
            .association_table(&pool, step.control(), &setup, &response, n)
            .map_err(in_file)?;
        let pairs = Pairs::from_table(&table_pairs, &keys, setup_digest)?;
        found_pairs = pairs
            .pairs
            .iter()
            .map(|p| (p.joiner_row, Some(p.setup_position)))
            .collect();
        let mut distinct: Vec<usize> = table_pairs.iter().map(|m| m.joiner_index).collect();
        distinct.sort_unstable();
        distinct.dedup();
        pairs_file = Some(pairs);
        distinct.len()
    } else {
        let found = joiner
            .intersect(&pool, step.control(), &setup, &response, n)
            .map_err(in_file)?;
        found_pairs = keys
            .rows_of(&found)
            .into_iter()
            .map(|r| (r, None))
            .collect();
        found.len()
    };
    let timing = step.finish();

    if let Some(id) = out {
        let shown = staged.shown(id).display().to_string();
        let file = staged.file(id);
        let written = if raw {
            let rows = found_pairs.iter().map(|&(row, position)| {
                let position = position.map_or_else(String::new, |p| p.to_string());
                ([(row + 1).to_string(), position], row)
            });
            table.write_rows(file, ["joiner_row", "setup_position"], rows)
        } else {
            let rows = found_pairs
                .iter()
                .map(|&(row, _)| ([(row + 1).to_string()], row));
            table.write_rows(file, ["joiner_row"], rows)
        };
        written.with_context(|| format!("writing {shown}"))?;
    }
    if let (Some(id), Some(pairs)) = (pairs_out, &pairs_file) {
        let shown = staged.shown(id).display().to_string();
        write_pairs(staged.file(id), pairs).with_context(|| format!("writing {shown}"))?;
    }
    // Every output is complete before any replaces anything.
    staged.commit()?;
    if args.size {
        writeln!(std::io::stdout().lock(), "{size}")?;
    }
    ctx.note(&format!(
        "intersect: {} of {} distinct keys found ({} rows) in {:.2} s ({:.0} rows/s, {} workers, {} setup)",
        thousands(size),
        thousands(n),
        thousands(found_pairs.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        setup.format_name()
    ));
    Ok(Found {
        timing,
        pairs: found_pairs,
        size,
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
