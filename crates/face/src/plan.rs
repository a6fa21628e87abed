//! A plan run's arguments as a front end passes them, read the same way by each: shapes as
//! dtype names and JS numbers, a byte budget as a JS number, a worker count (0: the shard
//! policy's, the CLI's rule), and the layout packed into the numbers a caller reads back. The checks and their
//! messages are these functions', so every front end refuses the same arguments with the same
//! words (`PLAN_BINDING`, `PLAN_BUDGET`).

use lockstep_plan::{CompiledPlan, DType, GRAIN, Layout, Plan, RunError};
use lockstep_shard::{DEFAULT_CAP, ShardPolicy, WORKERS_ENV};

use crate::Coded;
use crate::fields::{Fields, Reader};
use crate::number::whole;

/// The most workers a run may ask for: the shard policy's cap ([`DEFAULT_CAP`]).
pub const MAX_WORKERS: usize = DEFAULT_CAP;

/// The plan of format v1 in `text`, validated and compiled.
///
/// # Errors
/// `PLAN_INVALID`, naming the item and field.
pub fn compile(text: &str) -> Result<CompiledPlan, Coded> {
    Ok(CompiledPlan::new(Plan::from_json(text)?))
}

/// `(dtype, length)` shapes from dtype names (`"f32"`, ...) and lengths, in order; `side`
/// (`"inputs"` or `"outputs"`) names them in errors.
///
/// # Errors
/// `PLAN_BINDING` for lists of different lengths, an unknown dtype name or a length that is not
/// a whole number (the first such index).
pub fn shapes(
    dtypes: &[String],
    lengths: &[f64],
    side: &str,
) -> Result<Vec<(DType, usize)>, Coded> {
    if dtypes.len() != lengths.len() {
        return Err(binding(
            side,
            format!("{} dtypes for {} lengths", dtypes.len(), lengths.len()),
        ));
    }
    dtypes
        .iter()
        .zip(lengths)
        .enumerate()
        .map(|(i, (name, &len))| {
            let at = format!("{side}[{i}]");
            let dtype =
                DType::from_name(name).ok_or_else(|| binding(&at, format!("no dtype {name:?}")))?;
            let len = whole(len)
                .and_then(|len| usize::try_from(len).ok())
                .ok_or_else(|| binding(&at, format!("{len} is not a length")))?;
            Ok((dtype, len))
        })
        .collect()
}

/// A byte budget as a front end passes it (`None`: no budget).
///
/// # Errors
/// `PLAN_BINDING` for a budget that is not a whole number.
pub fn budget(value: Option<f64>) -> Result<Option<u64>, Coded> {
    value
        .map(|b| {
            whole(b).ok_or_else(|| {
                binding(
                    "budget",
                    format!("must be a whole number of bytes, not {b}"),
                )
            })
        })
        .transpose()
}

/// `asked` workers checked against [`MAX_WORKERS`] (0 asks for the policy's count).
///
/// # Errors
/// [`RunError::Binding`] for more than [`MAX_WORKERS`].
pub fn check_workers(asked: u32) -> Result<(), RunError> {
    match asked as usize {
        n if n > MAX_WORKERS => Err(RunError::Binding {
            at: "workers".to_owned(),
            message: format!("at most {MAX_WORKERS}, not {n}"),
        }),
        _ => Ok(()),
    }
}

/// The workers a run of `elements` takes: `asked` (at most [`MAX_WORKERS`]), or for 0 the shard
/// policy's count for the plan's grain, by the CLI's rule ([`ShardPolicy::from_env`]):
/// `LOCKSTEP_WORKERS` where the process has it set (read at each call), else the detected
/// parallelism, lowered for a run smaller than the grain.
///
/// # Errors
/// As [`check_workers`]; [`RunError::Binding`] at `workers` for a `LOCKSTEP_WORKERS` that is not
/// a worker count, in the policy's words.
pub fn workers(asked: u32, elements: usize) -> Result<usize, RunError> {
    workers_by(asked, elements, std::env::var(WORKERS_ENV).ok().as_deref())
}

/// [`workers`] with `env` as the value of `LOCKSTEP_WORKERS` (`None`: unset).
fn workers_by(asked: u32, elements: usize, env: Option<&str>) -> Result<usize, RunError> {
    check_workers(asked)?;
    Ok(match asked {
        0 => ShardPolicy::detected()
            .with_env_value(env)
            .map_err(|error| RunError::Binding {
                at: "workers".to_owned(),
                message: error.to_string(),
            })?
            .workers_for(elements, GRAIN),
        n => n as usize,
    })
}

/// The layout of a run of `plan` over inputs of these dtype names and lengths, into outputs of
/// these (`None`: outputs the front end allocates), on `count(elements)` workers (the front
/// end's count for the run's element count), held to `budget_bytes` bytes of inputs, outputs and
/// working memory, packed ([`packed`]).
///
/// # Errors
/// As [`shapes`], [`budget`] and `count`; as [`CompiledPlan::layout`] for shapes that do not
/// fit the plan; `PLAN_BUDGET` over the budget.
pub fn packed_layout(
    plan: &CompiledPlan,
    (dtypes, lengths): (&[String], &[f64]),
    outputs: Option<(&[String], &[f64])>,
    count: impl FnOnce(usize) -> Result<usize, RunError>,
    budget_bytes: Option<f64>,
) -> Result<Vec<f64>, Coded> {
    let inputs = shapes(dtypes, lengths, "inputs")?;
    let outputs = outputs
        .map(|(dtypes, lengths)| shapes(dtypes, lengths, "outputs"))
        .transpose()?;
    let budget_bytes = budget(budget_bytes)?;
    // The worker count depends on the element count, which the layout finds: two steps when it
    // is not one.
    let first = plan.layout(&inputs, outputs.as_deref(), 1)?;
    let count = count(first.elements)?;
    let layout = if count == 1 {
        first
    } else {
        plan.layout(&inputs, outputs.as_deref(), count)?
    };
    layout.memory.check(budget_bytes)?;
    Ok(packed(&layout))
}

/// [`packed_layout`] with its arguments in one options object, as a front end passes them:
/// `dtypes` and `lengths` (the inputs' dtype names and lengths), `outDtypes` and `outLengths`
/// (the outputs', both absent for outputs the front end allocates), `workers` (a whole number;
/// absent counts as 0) and `budget` (bytes; absent: none). `count(asked, elements)` gives the
/// workers a run of `elements` takes when `asked` for ([`workers`] natively, one for wasm).
///
/// # Errors
/// `PLAN_BINDING` for an option missing or of another kind (`layout: ...`), and a `workers`
/// that is not a whole number; as [`packed_layout`].
pub fn layout_of<F: Fields + ?Sized>(
    plan: &CompiledPlan,
    options: &F,
    count: impl FnOnce(u32, usize) -> Result<usize, RunError>,
) -> Result<Vec<f64>, Coded> {
    let options = Reader::new(options, "layout", "PLAN_BINDING");
    let dtypes: Vec<String> = options.required("dtypes")?;
    let lengths: Vec<f64> = options.required("lengths")?;
    let out_dtypes: Option<Vec<String>> = options.optional("outDtypes")?;
    let out_lengths: Option<Vec<f64>> = options.optional("outLengths")?;
    let asked = match options.optional::<f64>("workers")? {
        None => 0,
        Some(n) => whole(n)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| binding("workers", format!("must be a whole number, not {n}")))?,
    };
    let budget_bytes = options.optional("budget")?;
    packed_layout(
        plan,
        (&dtypes, &lengths),
        out_dtypes.as_deref().zip(out_lengths.as_deref()),
        |elements| count(asked, elements),
        budget_bytes,
    )
}

/// A layout as numbers: `[elements, input bytes, output bytes, working bytes, output
/// lengths..., output covered (1) or not (0)...]`.
#[allow(
    clippy::cast_precision_loss,
    reason = "counts of bytes and elements a caller's arrays hold, below 2^53"
)]
pub fn packed(layout: &Layout) -> Vec<f64> {
    let mut out = vec![
        layout.elements as f64,
        layout.memory.inputs as f64,
        layout.memory.outputs as f64,
        layout.memory.working as f64,
    ];
    out.extend(layout.outputs.iter().map(|&len| len as f64));
    out.extend(layout.covered.iter().map(|&c| f64::from(u8::from(c))));
    out
}

fn binding(at: &str, message: String) -> Coded {
    RunError::Binding {
        at: at.to_owned(),
        message,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> CompiledPlan {
        compile(
            r#"{"version":1,"inputs":[{"id":"x","dtype":"f32"}],
                "nodes":[{"id":"y","op":"sqrt","args":["x"]}],
                "outputs":[{"id":"out","from":"y"}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn shapes_budgets_and_workers_are_read_or_refused_by_index() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            shapes(&names(&["f32", "u8"]), &[3.0, 0.0], "inputs").unwrap(),
            [(DType::F32, 3), (DType::U8, 0)]
        );
        for (dtypes, lengths, message) in [
            (names(&["f32"]), vec![], "inputs: 1 dtypes for 0 lengths"),
            (
                names(&["f32", "f16"]),
                vec![1.0, 1.0],
                "inputs[1]: no dtype \"f16\"",
            ),
            (names(&["f32"]), vec![1.5], "inputs[0]: 1.5 is not a length"),
            (names(&["f32"]), vec![-1.0], "inputs[0]: -1 is not a length"),
            (
                names(&["f32"]),
                vec![f64::NAN],
                "inputs[0]: NaN is not a length",
            ),
        ] {
            let error = shapes(&dtypes, &lengths, "inputs").unwrap_err();
            assert_eq!(
                (error.message.as_str(), error.code),
                (message, "PLAN_BINDING")
            );
        }
        assert_eq!(budget(None).unwrap(), None);
        assert_eq!(budget(Some(4096.0)).unwrap(), Some(4096));
        assert_eq!(
            budget(Some(0.5)).unwrap_err().message,
            "budget: must be a whole number of bytes, not 0.5"
        );
        assert_eq!(workers(256, 10).unwrap(), 256);
        assert_eq!(
            workers(257, 10).unwrap_err().to_string(),
            "workers: at most 256, not 257"
        );
        assert!(workers(0, 1 << 24).unwrap() >= 1);
        // 0: LOCKSTEP_WORKERS as the CLI reads it, lowered for a small run; refused in its words.
        assert_eq!(workers_by(0, 1 << 24, Some(" 5 ")).unwrap(), 5);
        assert_eq!(workers_by(0, 1, Some("5")).unwrap(), 1);
        assert_eq!(workers_by(3, 1 << 24, Some("5")).unwrap(), 3);
        assert_eq!(
            workers_by(0, 1 << 24, Some("two")).unwrap_err().to_string(),
            "workers: LOCKSTEP_WORKERS must be a positive whole number of workers, got \"two\""
        );
        assert_eq!(compile("{").unwrap_err().code, "PLAN_INVALID");
    }

    #[test]
    fn a_layout_reads_its_options_object_with_the_packed_layouts_words() {
        use crate::fields::tests::{Map, V};
        let plan = plan();
        let options = || {
            Map::default()
                .with("dtypes", V::Ts(vec!["f32"]))
                .with("lengths", V::Ns(vec![1000.0]))
        };
        let one = |_: u32, _: usize| Ok::<_, RunError>(1);
        let dtypes = ["f32".to_owned()];
        assert_eq!(
            layout_of(&plan, &options(), one).unwrap(),
            packed_layout(&plan, (&dtypes, &[1000.0]), None, |_| Ok(1), None).unwrap()
        );
        let asked = std::cell::Cell::new(None);
        let _ = layout_of(&plan, &options().with("workers", V::N(3.0)), |n, _| {
            asked.set(Some(n));
            Ok(1)
        });
        assert_eq!(asked.get(), Some(3));
        for (options, message) in [
            (
                Map::default(),
                "layout: dtypes is missing: it must be an array of strings",
            ),
            (
                options().with("lengths", V::T("1000")),
                "layout: lengths must be an array of numbers, not a string",
            ),
            (
                options().with("workers", V::N(1.5)),
                "workers: must be a whole number, not 1.5",
            ),
            (
                options().with("lengths", V::Ns(vec![1.5])),
                "inputs[0]: 1.5 is not a length",
            ),
        ] {
            let error = layout_of(&plan, &options, one).unwrap_err();
            assert_eq!(
                (error.code, error.message.as_str()),
                ("PLAN_BINDING", message)
            );
        }
    }

    #[test]
    fn the_packed_layout_is_the_engine_layout_at_the_front_ends_worker_count() {
        let plan = plan();
        let dtypes = ["f32".to_owned()];
        for count in [1, 2, 5] {
            let numbers = packed_layout(
                &plan,
                (&dtypes, &[1000.0]),
                None,
                |_| Ok::<_, RunError>(count),
                None,
            )
            .unwrap();
            let layout = plan.layout(&[(DType::F32, 1000)], None, count).unwrap();
            assert_eq!(numbers, packed(&layout));
            assert_eq!(numbers[..2], [1000.0, 4000.0]);
            assert_eq!(numbers[4..], [1000.0, 1.0]);
        }
        let mut asked = None;
        packed_layout(
            &plan,
            (&dtypes, &[77.0]),
            None,
            |n| Ok::<_, RunError>(*asked.insert(n)),
            None,
        )
        .unwrap();
        assert_eq!(asked, Some(77), "the count is asked for the run's elements");
        let within = packed_layout(
            &plan,
            (&dtypes, &[10.0]),
            None,
            |_| Ok::<_, RunError>(1),
            None,
        )
        .unwrap();
        let total = within[1] + within[2] + within[3];
        packed_layout(
            &plan,
            (&dtypes, &[10.0]),
            None,
            |_| Ok::<_, RunError>(1),
            Some(total),
        )
        .unwrap();
        let error = packed_layout(
            &plan,
            (&dtypes, &[10.0]),
            None,
            |_| Ok::<_, RunError>(1),
            Some(total - 1.0),
        )
        .unwrap_err();
        assert_eq!(error.code, "PLAN_BUDGET");
        let outs = ["f32".to_owned()];
        let error = packed_layout(
            &plan,
            (&dtypes, &[10.0]),
            Some((&outs, &[9.0])),
            |_| Ok::<_, RunError>(1),
            None,
        )
        .unwrap_err();
        assert_eq!(error.code, "PLAN_BINDING");
        let error =
            packed_layout(&plan, (&dtypes, &[10.0]), None, |n| workers(300, n), None).unwrap_err();
        assert_eq!(error.message, "workers: at most 256, not 300");
    }
}
