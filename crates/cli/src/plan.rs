//! `lockstep plan validate | run`: plans over arrays in files (raw little-endian or `.npy`, as
//! `lockstep_plan::ArrayFormat` tells them apart).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lockstep_files::{Files, open_input};
use lockstep_plan::{Array, ArrayFormat, BindingError, GRAIN, Plan, RunOptions, Side};

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
    std::io::Read::read_to_string(&mut open_input("PLAN", path)?, &mut text)
        .with_context(|| format!("{}", path.display()))?;
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
                .map(|i| format!("{} ({})", i.id, i.dtype))
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
                .map(|o| format!("{} ({})", o.id, o.dtype))
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
        BindingError::Unknown { name, .. } => usage!("{flag} {name}=...: {error}"),
        BindingError::Twice { name, .. } => usage!("{flag} {name}=... is given twice"),
        BindingError::Missing { name, .. } => usage!(
            "the plan's {} \"{name}\" needs {flag} {name}=FILE",
            side.name()
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

    let mut inputs: Vec<Array> = Vec::with_capacity(input_paths.len());
    for (input, path) in plan.inputs().iter().zip(&input_paths) {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut open_input("--input", path)?, &mut bytes)
            .with_context(|| format!("{}", path.display()))?;
        let array = ArrayFormat::of_name(path)
            .read(&bytes, &input.id, input.dtype)
            .with_context(|| format!("--input {}={}", input.id, path.display()))?;
        inputs.push(array);
    }
    let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
    let mut outputs = plan.output_arrays(&refs)?;
    let n = plan.element_count(&refs)?;
    let pool = session.pool(n, GRAIN)?;
    let step = session.step("running", Some(n as u64), "elements");
    {
        let mut views: Vec<_> = outputs.iter_mut().map(Array::as_array_mut).collect();
        plan.run(
            &pool,
            step.control(),
            &refs,
            &mut views,
            &RunOptions {
                budget: args.budget,
            },
        )?;
    }
    let timing = step.finish();
    for ((array, path), id) in outputs.iter().zip(&output_paths).zip(ids) {
        staged.write(id, &ArrayFormat::of_name(path).write(array))?;
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
