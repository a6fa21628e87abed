//! The joiner's commands: request, intersect.

use std::io::Write;

use anyhow::Context as _;
use lockstep_psi::{Joiner, Mode, Request, Response, ServerSetup};

use super::files::{CsvOutput, read_key, read_message, write_file};
use super::starter::load;
use super::{Context, Timing, thousands};
use crate::args::{IntersectArgs, RequestArgs};

/// `psi request`.
pub(crate) fn request(ctx: &Context, args: &RequestArgs) -> anyhow::Result<Timing> {
    let key = read_key(&args.key)?;
    let (_, keys) = load(ctx, &args.input)?;
    let mode = if args.size_only {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    let pool = ctx.pool(keys.values.len())?;
    let step = ctx.step("request", keys.values.len());
    let request = joiner.request(&pool, step.control(), &keys.values)?;
    let timing = step.finish();
    write_file(&args.out, &request.to_bytes())?;
    ctx.note(&format!(
        "request: {} distinct keys masked in {:.2} s ({:.0} rows/s, {} workers) -> {} ({mode}); \
         tell the starter --joiner-count {}",
        thousands(keys.values.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        args.out.display(),
        keys.values.len()
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
    let key = read_key(&args.key)?;
    let setup = ServerSetup::from_bytes(&read_message(&args.setup, "setup")?)
        .with_context(|| format!("setup {}", args.setup.display()))?;
    let response = Response::from_bytes(&read_message(&args.response, "response")?)
        .with_context(|| format!("response {}", args.response.display()))?;
    let raw = matches!(setup, ServerSetup::Raw(_));
    if args.pairs_out.is_some() && !raw {
        anyhow::bail!("--pairs-out needs a raw setup: GCS and Bloom setups carry no positions");
    }
    let (table, keys) = load(ctx, &args.input)?;
    let n = keys.values.len();
    if response.elements.len() != n {
        anyhow::bail!(
            "the response holds {} elements but {} has {n} distinct keys: was the request made from this input, with the same --column and --normalize?",
            response.elements.len(),
            args.input.input.display()
        );
    }
    if let Some(path) = &args.request {
        let request = Request::from_bytes(&read_message(path, "request")?)
            .with_context(|| format!("request {}", path.display()))?;
        if request.elements.len() != n {
            anyhow::bail!(
                "{}: the request holds {} elements, but the input has {n} distinct keys",
                path.display(),
                request.elements.len()
            );
        }
        if request.mode == Mode::SizeOnly && !args.size {
            anyhow::bail!(
                "the request was size-only: its response reveals the intersection size only; use --size"
            );
        }
    }
    // A size-only response is sorted by bytes; eight or more sorted elements are no accident
    // (a chance of 1 in 40,320), and reading them as request order would pair the wrong rows.
    // Below eight, only the request can tell.
    if !args.size && args.request.is_none() {
        if n < 8 {
            anyhow::bail!(
                "with fewer than 8 keys a size-only response cannot be told from its order: pass --request (or --size)"
            );
        }
        if response.elements.windows(2).all(|w| w[0] <= w[1]) {
            anyhow::bail!(
                "the response is sorted: it answers a size-only request and reveals the intersection size only; use --size"
            );
        }
    }
    let mode = if args.size {
        Mode::SizeOnly
    } else {
        Mode::Reveal
    };
    let joiner = Joiner::new(&key, mode, ctx.backend)?;
    let pool = ctx.pool(n)?;
    let step = ctx.step("intersect", n);
    let mut pairs = Vec::new();
    let size = if args.size {
        joiner.intersection_size(&pool, step.control(), &setup, &response, n)?
    } else if matches!(setup, ServerSetup::Raw(_)) {
        let table_pairs = joiner.association_table(&pool, step.control(), &setup, &response, n)?;
        let mut distinct: Vec<usize> = table_pairs.iter().map(|m| m.joiner_index).collect();
        distinct.sort_unstable();
        distinct.dedup();
        for m in &table_pairs {
            pairs.extend(
                keys.rows[m.joiner_index]
                    .iter()
                    .map(|&row| (row, Some(m.setup_position))),
            );
        }
        distinct.len()
    } else {
        let found = joiner.intersect(&pool, step.control(), &setup, &response, n)?;
        for &k in &found {
            pairs.extend(keys.rows[k].iter().map(|&row| (row, None)));
        }
        found.len()
    };
    let timing = step.finish();
    pairs.sort_unstable();

    // Every output is written before any is renamed into place.
    let mut outputs = Vec::new();
    if let Some(path) = &args.out {
        let mut out = CsvOutput::create(path)?;
        let mut header = vec![b"joiner_row".to_vec()];
        if raw {
            header.push(b"setup_position".to_vec());
        }
        header.extend(table.header_fields());
        out.row(&header)?;
        for &(row, position) in &pairs {
            let mut fields = vec![(row + 1).to_string().into_bytes()];
            if let Some(p) = position {
                fields.push(p.to_string().into_bytes());
            }
            if let Some(record) = table.row(row) {
                fields.extend(record.iter().map(<[u8]>::to_vec));
            }
            out.row(&fields)?;
        }
        outputs.push(out.finish()?);
    }
    if let Some(path) = &args.pairs_out {
        let mut out = CsvOutput::create(path)?;
        out.row(["joiner_row", "setup_position"])?;
        for &(row, position) in &pairs {
            out.row([(row + 1).to_string(), position.unwrap_or(0).to_string()])?;
        }
        outputs.push(out.finish()?);
    }
    for output in outputs {
        output.commit()?;
    }
    if args.size {
        writeln!(std::io::stdout().lock(), "{size}")?;
    }
    ctx.note(&format!(
        "intersect: {} of {} distinct keys found ({} rows) in {:.2} s ({:.0} rows/s, {} workers, {} setup)",
        thousands(size),
        thousands(n),
        thousands(pairs.len()),
        timing.elapsed.as_secs_f64(),
        timing.rows_per_second(),
        pool.workers(),
        setup.format_name()
    ));
    Ok(Found {
        timing,
        pairs,
        size,
    })
}
