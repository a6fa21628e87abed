//! `lockstep plan validate | run`: plans over arrays in files (raw little-endian or `.npy`).

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;
use lockstep_plan::{Array, DType, Plan, RunOptions, npy};
use lockstep_shard::{Control, Pool, ShardPolicy};

use crate::args::{PlanCommand, PlanRunArgs};
use crate::files::{Files, open_input};
use crate::progress::StepBar;
use crate::usage::usage;

pub(crate) fn run(command: &PlanCommand, policy: ShardPolicy, quiet: bool) -> anyhow::Result<()> {
    match command {
        PlanCommand::Validate { plan } => validate(plan),
        PlanCommand::Run(args) => run_plan(args, &policy, quiet),
    }
}

fn read_plan(path: &Path) -> anyhow::Result<Plan> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_input("PLAN", path)?, &mut text)
        .with_context(|| format!("{}", path.display()))?;
    Plan::from_json(&text).with_context(|| format!("{}", path.display()))
}

fn validate(path: &Path) -> anyhow::Result<()> {
    let plan = read_plan(path)?;
    let list = |items: Vec<String>| items.join(", ");
    let mut out = std::io::stdout().lock();
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
    Ok(())
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

// An input file as the plan's `dtype`: `.npy` (its dtype must match) or raw little-endian.
fn read_array(name: &str, path: &Path, dtype: DType) -> anyhow::Result<Array> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_input("--input", path)?, &mut bytes)
        .with_context(|| format!("{}", path.display()))?;
    let shown = path.display();
    if is_npy(path) {
        let array = npy::read(&bytes).with_context(|| format!("--input {name}={shown}"))?;
        if array.dtype() != dtype {
            anyhow::bail!(
                "--input {name}={shown}: the file holds {} ('{}') but the plan's input \"{name}\" is {dtype} ('{}')",
                array.dtype(),
                npy::descr_of(array.dtype()),
                npy::descr_of(dtype)
            );
        }
        Ok(array)
    } else {
        Array::from_le_bytes(dtype, &bytes).with_context(|| format!("--input {name}={shown}"))
    }
}

fn run_plan(args: &PlanRunArgs, policy: &ShardPolicy, quiet: bool) -> anyhow::Result<()> {
    let plan = read_plan(&args.plan)?;
    // Every plan input and output named exactly once, and nothing else.
    let bindings = |flag: &str, given: &[(String, std::path::PathBuf)], wanted: Vec<&str>| {
        for (name, _) in given {
            if !wanted.contains(&name.as_str()) {
                usage!(
                    "{flag} {name}=...: the plan has no {} named \"{name}\" (it has: {})",
                    &flag[2..],
                    wanted.join(", ")
                );
            }
            if given.iter().filter(|(n, _)| n == name).count() > 1 {
                usage!("{flag} {name}=... is given twice");
            }
        }
        let mut paths = Vec::with_capacity(wanted.len());
        for name in &wanted {
            match given.iter().find(|(n, _)| n == name) {
                Some((_, path)) => paths.push(path.clone()),
                None => usage!(
                    "the plan's {} \"{name}\" needs {flag} {name}=FILE",
                    &flag[2..]
                ),
            }
        }
        Ok::<_, anyhow::Error>(paths)
    };
    let input_paths = bindings(
        "--input",
        &args.inputs,
        plan.inputs().iter().map(|i| i.id.as_str()).collect(),
    )?;
    let output_paths = bindings(
        "--output",
        &args.outputs,
        plan.outputs().iter().map(|o| o.id.as_str()).collect(),
    )?;

    let mut files = Files::new();
    files.input("PLAN", &args.plan);
    for path in &input_paths {
        files.input("--input", path);
    }
    let ids: Vec<_> = output_paths
        .iter()
        .map(|path| files.output("--output", path, false))
        .collect();
    let note = |line: &str| {
        if !quiet {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    };
    let mut staged = files.prepare(&note)?;

    let inputs: Vec<Array> = plan
        .inputs()
        .iter()
        .zip(&input_paths)
        .map(|(input, path)| read_array(&input.id, path, input.dtype))
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<_> = inputs.iter().map(Array::as_array_ref).collect();
    let mut outputs = plan.output_arrays(&refs)?;
    let n = plan.element_count(&refs)?;
    let decision = policy.decide(n.div_ceil(lockstep_plan::MIN_PER_WORKER));
    if let Some(lowered) = &decision.lowered {
        note(&lowered.to_string());
    }
    let pool = Pool::new(decision.workers)?;
    let bar = StepBar::counting("running", Some(n as u64), "elements", quiet);
    let control = Control::new().with_progress(bar.progress().clone());
    let started = Instant::now();
    {
        let mut views: Vec<_> = outputs.iter_mut().map(Array::as_array_mut).collect();
        plan.run(
            &pool,
            &control,
            &refs,
            &mut views,
            &RunOptions {
                budget: args.budget,
            },
        )?;
    }
    bar.finish();
    let elapsed = started.elapsed();
    for ((array, path), id) in outputs.iter().zip(&output_paths).zip(ids) {
        let bytes = if is_npy(path) {
            npy::write(array)
        } else {
            array.to_le_bytes()
        };
        staged.write(id, &bytes)?;
    }
    staged.commit()?;
    note(&format!(
        "plan: {n} elements through {} nodes in {:.1} ms on {} workers ({})",
        plan.nodes().len(),
        elapsed.as_secs_f64() * 1e3,
        pool.workers(),
        lockstep_plan::instruction_set()
    ));
    Ok(())
}
