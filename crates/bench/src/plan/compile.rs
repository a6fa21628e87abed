//! `lockstep-bench plan --compile`: reading and compiling chains of 1,000 to 200,000 additions
//! (issue 28 found compilation quadratic: 40,000 nodes took 46 s). Times, the median of
//! `--repeats`: `Plan::from_json` (parse and validate) and `CompiledPlan::new` (slots, fusion),
//! each in ms and ns a node, and the growth of the per-node time against the smallest chain
//! (1.00x: linear).

use std::io::Write;
use std::time::Instant;

use lockstep_plan::{CompiledPlan, MAX_NODES, Plan};

use crate::BenchPlanArgs;

/// The chain lengths timed.
const NODES: [usize; 6] = [1_000, 5_000, 10_000, 40_000, 100_000, MAX_NODES];

fn chain_json(nodes: usize) -> String {
    let mut text = String::from(
        r#"{"version":1,"inputs":[{"id":"x","dtype":"f32"}],"constants":[{"id":"one","dtype":"f32","value":1}],"nodes":["#,
    );
    for i in 0..nodes {
        if i > 0 {
            text.push(',');
        }
        let arg = if i == 0 {
            "x".to_owned()
        } else {
            format!("n{}", i - 1)
        };
        text.push_str(&format!(
            r#"{{"id":"n{i}","op":"add","args":["{arg}","one"]}}"#
        ));
    }
    text.push_str(&format!(
        r#"],"outputs":[{{"id":"y","from":"n{}"}}]}}"#,
        nodes - 1
    ));
    text
}

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

pub(crate) fn run(args: &BenchPlanArgs) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let repeats = args.repeats.max(1);
    writeln!(
        out,
        "plan compile bench: chains of f32 additions; medians of {repeats} runs\n"
    )?;
    writeln!(
        out,
        "| nodes | JSON MB | from_json ms | compile ms | from_json ns/node | compile ns/node | per-node growth (from_json, compile) |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|")?;
    let mut first: Option<(f64, f64)> = None;
    for nodes in NODES {
        let text = chain_json(nodes);
        let (mut read, mut compile) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            let started = Instant::now();
            let plan = Plan::from_json(&text)?;
            read.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            let compiled = CompiledPlan::new(plan);
            compile.push(started.elapsed().as_secs_f64() * 1e3);
            drop(compiled);
        }
        let (read, compile) = (median(read), median(compile));
        let per = |ms: f64| ms * 1e6 / nodes as f64;
        let (read_per, compile_per) = (per(read), per(compile));
        let (base_read, base_compile) = *first.get_or_insert((read_per, compile_per));
        writeln!(
            out,
            "| {nodes} | {:.2} | {read:.1} | {compile:.1} | {read_per:.0} | {compile_per:.0} | {:.2}x, {:.2}x |",
            text.len() as f64 / 1e6,
            read_per / base_read,
            compile_per / base_compile,
        )?;
    }
    Ok(())
}
