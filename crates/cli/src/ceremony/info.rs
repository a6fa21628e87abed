//! `ceremony info FILE`: the engine's description of a ceremony file
//! (`lockstep_ceremony::describe`), printed as its text.

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_ceremony::describe::{self, Description};
use lockstep_ceremony::{FileKind, Limits};

use super::Context;

/// Prints what any ceremony file the engine reads holds, after reading (and checking) all of
/// it: gnark's files are read once (a pipe works), snarkjs's and circom's through their
/// section tables (a file).
pub(crate) fn print(ctx: &Context, path: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let opened = ctx.open("FILE", path)?;
    let pool = ctx.pool_for(&opened)?;
    let Some(kind) = opened.kind() else {
        anyhow::bail!(
            "{} is not a ceremony file: its first bytes are those of no phase 1 object, sealed SRS, .ptau, phase 2 object, R1CS, Groth16 key, proof or witness",
            path.display()
        );
    };
    let size = opened.len;
    let step = ctx
        .session
        .step("reading", size.and_then(|l| kind.points_in(l)), "points");
    // A gnark R1CS is read up to its length; from a pipe at most what the machine's memory
    // could hold of it (the reader keeps the sections it reads), as `phase2 new` reads one.
    let file_len = match (size, kind) {
        (None, FileKind::R1cs) => lockstep_files::physical_memory(),
        _ => size,
    };
    let limits = Limits {
        file_len,
        ..Limits::default()
    };
    let described: Description = if kind.is_sectioned() {
        drop(opened);
        let input = super::zkey::open_sectioned("FILE", path, kind)?;
        describe::read_sectioned(&pool, step.control(), kind, input, &limits)
    } else {
        describe::read_stream(&pool, step.control(), kind, opened.reader, &limits)
    }
    .with_context(|| path.display().to_string())?;
    step.finish();
    let shown = path.display().to_string();
    ctx.session
        .print(&describe::file_text(&shown, size, &described))?;
    ctx.done("info", described.points, started, &pool);
    Ok(())
}
