//! `lockstep plan validate | run`: plans over arrays in files (raw little-endian or `.npy`, as
//! `lockstep_plan::ArrayFormat` tells them apart).

use std::fmt::Write as _;
use std::io::{BufReader, BufWriter, Read, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_files::{Files, open_input, physical_memory};
use lockstep_plan::{
    Array, ArrayFormat, BindingError, GRAIN, MAX_PLAN_BYTES, Plan, RunOptions, Side, escaped,
};

use crate::args::{PlanCommand, PlanRunArgs};
use crate::session::{Session, thousands, workers};
use crate::usage::usage;

pub(crate) fn run(command: &PlanCommand, session: &Session) -> anyhow::Result<()> {
    match command {
        PlanCommand::Validate { plan } => validate(plan, session),
        PlanCommand::Run(args) => run_plan(args, session),
    }
}

fn read_plan(path: &Path) -> anyhow::Result<Plan> {
    let mut text = String::new();
    let read = open_input("PLAN", path)?
        .take(MAX_PLAN_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {}", path.display()))?;
    if read as u64 > MAX_PLAN_BYTES {
        anyhow::bail!(
            "{}: more than {MAX_PLAN_BYTES} bytes: not a plan (a plan of 10,000 nodes is under 1 MiB)",
            path.display()
        );
    }
    Plan::from_json(&text).with_context(|| format!("{}", path.display()))
}

fn validate(path: &Path, session: &Session) -> anyhow::Result<()> {
    let plan = read_plan(path)?;
    let list = |items: Vec<String>| items.join(", ");
    let mut out = String::new();
    writeln!(out, "{}: valid plan (format v1)", path.display())?;
    writeln!(
        out,
        "  inputs:  {}",
        list(
            plan.inputs()
                .iter()
                .map(|i| format!("{} ({})", escaped(&i.id), i.dtype))
                .collect()
        )
    )?;
    writeln!(
        out,
        "  nodes:   {} ({} constants)",
        plan.nodes().len(),
        plan.constants().len()
    )?;
    writeln!(
        out,
        "  outputs: {}",
        list(
            plan.outputs()
                .iter()
                .map(|o| format!("{} ({})", escaped(&o.id), o.dtype))
                .collect()
        )
    )?;
    if let Some(n) = plan.fixed_length() {
        writeln!(out, "  length:  {n} elements")?;
    }
    session.print(&out)
}

/// The files bound to the plan's inputs (or outputs), in the plan's order; a binding the plan
/// does not take, or one it lacks, is a usage error naming the flag.
fn bound(plan: &Plan, side: Side, given: &[(String, PathBuf)]) -> anyhow::Result<Vec<PathBuf>> {
    let flag = match side {
        Side::Input => "--input",
        Side::Output => "--output",
    };
    let error = match plan.bind_by_name(side, given) {
        Ok(paths) => return Ok(paths.into_iter().cloned().collect()),
        Err(error) => error,
    };
    match &error {
        // The name is the caller's text: said once, escaped and cut (the error quotes it).
        BindingError::Unknown { .. } => usage!("{flag}: {error}"),
        BindingError::Twice { name, .. } => usage!("{flag} {}=... is given twice", escaped(name)),
        BindingError::Missing { name, .. } => usage!(
            "the plan's {} {} needs {flag} {}=FILE",
            side.name(),
            lockstep_plan::quoted(name),
            escaped(name)
        ),
        _ => usage!("{error}"),
    }
}

fn run_plan(args: &PlanRunArgs, session: &Session) -> anyhow::Result<()> {
    let plan = read_plan(&args.plan)?;
    let input_paths = bound(&plan, Side::Input, &args.inputs)?;
    let output_paths = bound(&plan, Side::Output, &args.outputs)?;

    let mut files = Files::new();
    files.input("PLAN", &args.plan);
    for path in &input_paths {
        files.input("--input", path);
    }
    let ids: Vec<_> = output_paths
        .iter()
        .map(|path| files.output("--output", path, false))
        .collect();
    let mut staged = session.prepare(&files)?;

    // Inputs are streamed into their arrays, each at most what the plan can use of it (a fixed
    // length's span), what the budget leaves, or the machine's memory (a pipe has no length).
    let ceiling = args.budget.or_else(physical_memory).unwrap_or(u64::MAX);
    let mut inputs: Vec<Array> = Vec::with_capacity(input_paths.len());
    let mut held = 0u64;
    for (index, (input, path)) in plan.inputs().iter().zip(&input_paths).enumerate() {
        let file = open_input("--input", path)?;
        let hint = file
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len());
        let left = ceiling.saturating_sub(held);
        let capacity = plan.input_capacity(index).unwrap_or(u64::MAX);
        let array = ArrayFormat::of_name(path)
            .read_from(
                BufReader::new(file),
                &input.id,
                input.dtype,
                left.min(capacity),
                hint,
            )
            .map_err(|error| match (args.budget, error.too_large()) {
                (Some(budget), true) if left < capacity => anyhow::anyhow!(
                    "the run needs more than its budget of {budget} bytes: --input {}={} holds more than the {left} bytes the inputs before it leave",
                    input.id,
                    path.display()
                ),
                _ => anyhow::Error::new(error)
                    .context(format!("--input {}={}", input.id, path.display())),
            })?;
        held += (array.len() * array.dtype().size()) as u64;
        inputs.push(array);
    }
    let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
    let n = plan.element_count(&refs)?;
    let pool = session.pool(n, GRAIN)?;
    // The whole run (inputs, outputs, working memory) within --budget, before the outputs are
    // allocated.
    plan.memory(&refs, &pool)?.check(args.budget)?;
    let mut outputs = plan.output_arrays(&refs)?;
    let step = session.step("running", Some(n as u64), "elements");
    {
        let mut views: Vec<_> = outputs.iter_mut().map(Array::as_array_mut).collect();
        plan.run(
            &pool,
            step.control(),
            &refs,
            &mut views,
            &RunOptions::default(),
        )?;
    }
    let timing = step.finish();
    for ((array, path), id) in outputs.iter().zip(&output_paths).zip(ids) {
        let shown = staged.shown(id).display().to_string();
        let mut out = BufWriter::new(staged.file(id));
        ArrayFormat::of_name(path)
            .write_to(array, &mut out)
            .and_then(|()| out.flush())
            .with_context(|| format!("writing {shown}"))?;
    }
    staged.commit()?;
    session.note(&format!(
        "plan: {} elements through {} nodes in {:.1} ms on {} ({})",
        thousands(n),
        plan.nodes().len(),
        timing.elapsed.as_secs_f64() * 1e3,
        workers(pool.workers()),
        lockstep_plan::instruction_set()
    ));
    Ok(())
}
