//! Plans in this module (`PlanProgram` in JS): the engine's fused executor on the current-thread
//! pool, so a run gives the bytes `lockstep plan run` gives at any worker count.
//!
//! A run crosses the boundary by copies, one each way: each input is copied once into this
//! module's memory (`setInput`), each output once out of it (`takeOutput`, a new typed array).
//! An output the caller passed in is copied in first (`setOutput`), so the elements its view
//! skips keep their values, as a native run into the caller's array keeps them.
//!
//! Every error is a JS `Error` with the engine's message and `code` (`PLAN_INVALID`,
//! `PLAN_BINDING`, `PLAN_BUDGET`, `PLAN_DIVISION_BY_ZERO`, ...: [`lockstep_plan::RunError::code`]).

use js_sys::Function;
use lockstep_face::progress::{Domain, with_progress};
use lockstep_face::{Coded, plan as face};
use lockstep_plan::{Array, ArrayMut, ArrayRef, CompiledPlan, RunOptions};
use lockstep_shard::Pool;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::fields::JsFields;
use crate::js_party::{Beat, thrown};

/// A JS `Error` with `message` and `code`: this binding's refusals of the arrays and slots it
/// holds (copies in this module's memory, which no other front end has).
fn coded(message: &str, code: &'static str) -> JsValue {
    crate::js_party::coded(&Coded::new(code, message))
}

/// A validated plan, the arrays of its next run (`inputs`, `preset`: the caller's outputs copied
/// in), and the results of its last (`results`, taken out one by one). A run clears the results
/// of the one before, whatever was taken of them.
#[wasm_bindgen(js_name = PlanProgram)]
pub struct JsPlan {
    plan: CompiledPlan,
    inputs: Vec<Option<Array>>,
    preset: Vec<Option<Array>>,
    results: Vec<Option<Array>>,
    node_by_node: bool,
}

#[wasm_bindgen(js_class = PlanProgram)]
impl JsPlan {
    /// The plan of format v1 in `text`, validated.
    ///
    /// # Errors
    /// `PLAN_INVALID`, naming the item and field.
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(text: &str) -> Result<JsPlan, JsValue> {
        let plan = face::compile(text).map_err(|e| crate::js_party::coded(&e))?;
        Ok(JsPlan {
            inputs: vec![None; plan.plan().inputs().len()],
            preset: vec![None; plan.plan().outputs().len()],
            results: vec![None; plan.plan().outputs().len()],
            plan,
            node_by_node: false,
        })
    }

    /// The plan's inputs and outputs, in declaration order, as JSON:
    /// `{ "inputs": [{ "id": "x", "dtype": "f32" }, ...], "outputs": [...] }`.
    pub fn describe(&self) -> String {
        self.plan.plan().signature_json()
    }

    /// The layout of a run ([`lockstep_plan::Plan::layout`] through
    /// [`face::layout_of`]: the inputs' dtypes and lengths, the outputs' or none for outputs this
    /// module allocates, `workers` and a `budget` of bytes, in one options object):
    /// `[elements, input bytes, output bytes, working bytes, output lengths..., output covered
    /// (1) or not (0)...]` ([`lockstep_plan::Layout`]). A run here takes the workers asked for
    /// (the package asks for one: the module runs on its instance's thread).
    ///
    /// # Errors
    /// `PLAN_BINDING`, as a run over such arrays would fail; `PLAN_BUDGET` over the budget.
    pub fn layout(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "{ dtypes: string[]; lengths: number[]; outDtypes?: string[]; outLengths?: number[]; workers?: number; budget?: number }"
        )]
        options: &JsValue,
    ) -> Result<Vec<f64>, JsValue> {
        face::layout_of(&self.plan, &JsFields(options), |workers, _| {
            face::check_workers(workers).map(|()| workers as usize)
        })
        .map_err(|e| crate::js_party::coded(&e))
    }

    /// Runs node by node from now on (`true`) or fused (`false`, the default): the bench's
    /// baseline of the prior system's way ([`lockstep_plan::Plan::node_by_node_executor`]: the same kernels, no
    /// fused runs, every node a full pass into a full-size intermediate). Same bytes.
    #[wasm_bindgen(js_name = setNodeByNode)]
    pub fn set_node_by_node(&mut self, on: bool) {
        self.node_by_node = on;
    }

    /// Whether a run can fail after writing part of its outputs ([`lockstep_plan::Plan::can_fail_midway`]).
    #[wasm_bindgen(js_name = canFailMidway)]
    pub fn can_fail_midway(&self) -> bool {
        self.plan.plan().can_fail_midway()
    }

    /// Copies `array` (any of the eight typed arrays) in as input `index` of the next run.
    ///
    /// # Errors
    /// `PLAN_BINDING` for an index past the inputs or a value that is not one of the typed
    /// arrays.
    #[wasm_bindgen(js_name = setInput)]
    pub fn set_input(&mut self, index: usize, array: &JsValue) -> Result<(), JsValue> {
        let array = copied(array, &format!("inputs[{index}]"))?;
        *slot(&mut self.inputs, index, "inputs")? = Some(array);
        Ok(())
    }

    /// Copies `array` in as output `index` of the next run (a caller's output: the elements its
    /// view skips keep their values). An output not set is allocated, zeroed.
    ///
    /// # Errors
    /// As [`set_input`](Self::set_input).
    #[wasm_bindgen(js_name = setOutput)]
    pub fn set_output(&mut self, index: usize, array: &JsValue) -> Result<(), JsValue> {
        let array = copied(array, &format!("outputs[{index}]"))?;
        *slot(&mut self.preset, index, "outputs")? = Some(array);
        Ok(())
    }

    /// Runs the plan over the inputs set, into the outputs set or new ones; the inputs are
    /// dropped either way. `progress(done, total)` is called as elements finish (a few dozen times a run at most);
    /// an exception it throws ends the run with that exception.
    ///
    /// # Errors
    /// The engine's errors with their codes; nothing is kept of a failed run's outputs.
    pub fn run(&mut self, progress: Option<Function>) -> Result<(), JsValue> {
        let inputs: Vec<Array> = std::mem::take(&mut self.inputs)
            .into_iter()
            .enumerate()
            .map(|(i, input)| {
                input.ok_or_else(|| coded(&format!("inputs[{i}]: not set"), "PLAN_BINDING"))
            })
            .collect::<Result<_, _>>()
            .inspect_err(|_| self.reset())?;
        self.inputs = vec![None; self.plan.plan().inputs().len()];
        let refs: Vec<ArrayRef<'_>> = inputs.iter().map(Array::as_array_ref).collect();
        let result = self.run_over(&refs, progress);
        if result.is_err() {
            self.reset();
        }
        result
    }

    /// Output `index` of the last run copied into `target`, a typed array of its dtype and
    /// length (moved out, as [`take_output`](Self::take_output)): one copy, no new array.
    ///
    /// # Errors
    /// `PLAN_BINDING` if there is no such output or `target` is not an array of its dtype and
    /// length.
    #[wasm_bindgen(js_name = takeOutputInto)]
    pub fn take_output_into(&mut self, index: usize, target: &JsValue) -> Result<(), JsValue> {
        let array = slot(&mut self.results, index, "outputs")?
            .take()
            .ok_or_else(|| {
                coded(
                    &format!("outputs[{index}]: no run wrote it"),
                    "PLAN_BINDING",
                )
            })?;
        macro_rules! into {
            ($js:ty, $v:expr) => {
                match target.dyn_ref::<$js>() {
                    Some(out) if out.length() as usize == $v.len() => {
                        out.copy_from($v);
                        return Ok(());
                    }
                    _ => {}
                }
            };
        }
        match &array {
            Array::I8(v) => into!(js_sys::Int8Array, v),
            Array::U8(v) => into!(js_sys::Uint8Array, v),
            Array::I16(v) => into!(js_sys::Int16Array, v),
            Array::U16(v) => into!(js_sys::Uint16Array, v),
            Array::I32(v) => into!(js_sys::Int32Array, v),
            Array::U32(v) => into!(js_sys::Uint32Array, v),
            Array::F32(v) => into!(js_sys::Float32Array, v),
            Array::F64(v) => into!(js_sys::Float64Array, v),
        }
        Err(coded(
            &format!(
                "outputs[{index}]: the target is not {} elements of {}",
                array.len(),
                array.dtype()
            ),
            "PLAN_BINDING",
        ))
    }

    /// Output `index` of the last run as a new typed array of its dtype (moved out: a second
    /// take is an error).
    ///
    /// # Errors
    /// `PLAN_BINDING` if there is no such output.
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self, index: usize) -> Result<JsValue, JsValue> {
        let array = slot(&mut self.results, index, "outputs")?
            .take()
            .ok_or_else(|| {
                coded(
                    &format!("outputs[{index}]: no run wrote it"),
                    "PLAN_BINDING",
                )
            })?;
        // A new array of the length, then one copy: constructing from a view of this module's
        // memory took 1.45 ms for 4 MiB, five times the copy (Node 20, a one-off probe).
        macro_rules! out {
            ($js:ty, $v:expr) => {{
                let len = u32::try_from($v.len())
                    .expect("invariant: a wasm32 array holds fewer than 2^32 elements");
                let out = <$js>::new_with_length(len);
                out.copy_from($v);
                out.into()
            }};
        }
        Ok(match &array {
            Array::I8(v) => out!(js_sys::Int8Array, v),
            Array::U8(v) => out!(js_sys::Uint8Array, v),
            Array::I16(v) => out!(js_sys::Int16Array, v),
            Array::U16(v) => out!(js_sys::Uint16Array, v),
            Array::I32(v) => out!(js_sys::Int32Array, v),
            Array::U32(v) => out!(js_sys::Uint32Array, v),
            Array::F32(v) => out!(js_sys::Float32Array, v),
            Array::F64(v) => out!(js_sys::Float64Array, v),
        })
    }
}

impl JsPlan {
    fn reset(&mut self) {
        self.inputs = vec![None; self.plan.plan().inputs().len()];
        self.preset = vec![None; self.plan.plan().outputs().len()];
        self.results = vec![None; self.plan.plan().outputs().len()];
    }

    fn run_over(
        &mut self,
        inputs: &[ArrayRef<'_>],
        progress: Option<Function>,
    ) -> Result<(), JsValue> {
        let (plan, preset, node_by_node) = (&self.plan, &mut self.preset, self.node_by_node);
        let outputs = with_progress(Domain::Plan, progress.map(Beat), |control| {
            let shapes: Vec<_> = inputs.iter().map(|a| (a.dtype(), a.len())).collect();
            let layout = plan.layout(&shapes, None, 1)?;
            let mut outputs: Vec<Array> = Vec::with_capacity(preset.len());
            for (i, (slot, output)) in preset.iter_mut().zip(plan.plan().outputs()).enumerate() {
                outputs.push(match slot.take() {
                    Some(array) => array,
                    None => Array::try_zeros(output.dtype, layout.outputs[i]).ok_or_else(|| {
                        Coded::new(
                            "PLAN_BINDING",
                            format!(
                                "outputs[{i}]: {} elements of {} cannot be allocated",
                                layout.outputs[i], output.dtype
                            ),
                        )
                    })?,
                });
            }
            let mut views: Vec<ArrayMut<'_>> =
                outputs.iter_mut().map(Array::as_array_mut).collect();
            let (pool, options) = (Pool::current_thread(), RunOptions::default());
            if node_by_node {
                plan.plan()
                    .node_by_node_executor(layout.elements)
                    .run(&pool, control, inputs, &mut views, &options)?;
            } else {
                plan.run(&pool, control, inputs, &mut views, &options)?;
            }
            Ok::<_, Coded>(outputs)
        })
        .map_err(thrown)?;
        self.results = outputs.into_iter().map(Some).collect();
        Ok(())
    }
}

fn slot<'a>(
    slots: &'a mut [Option<Array>],
    index: usize,
    side: &str,
) -> Result<&'a mut Option<Array>, JsValue> {
    let count = slots.len();
    slots.get_mut(index).ok_or_else(|| {
        coded(
            &format!("{side}[{index}]: the plan has {count} {side}"),
            "PLAN_BINDING",
        )
    })
}

/// The typed array `value` copied into an engine array of its dtype.
fn copied(value: &JsValue, at: &str) -> Result<Array, JsValue> {
    macro_rules! try_each {
        ($($js:ty),*) => {$(
            if let Some(array) = value.dyn_ref::<$js>() {
                return Ok(Array::from(array.to_vec()));
            }
        )*};
    }
    try_each!(
        js_sys::Int8Array,
        js_sys::Uint8Array,
        js_sys::Int16Array,
        js_sys::Uint16Array,
        js_sys::Int32Array,
        js_sys::Uint32Array,
        js_sys::Float32Array,
        js_sys::Float64Array
    );
    Err(coded(
        &format!(
            "{at}: not one of Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array"
        ),
        "PLAN_BINDING",
    ))
}
