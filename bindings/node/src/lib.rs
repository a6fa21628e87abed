//! The napi-rs addon of lockstep's npm package: the plan engine (`lockstep_plan`) and PSI
//! parties (`lockstep_psi::party` on the native backend) natively in Node, as the platform
//! package `lockstep-<platform>-<arch>-<libc>` ships it.
//!
//! # Brief overview
//!
//! - [`abi_version`] (`abiVersion`): the version of the exports, `lockstep_face`'s
//!   [`ABI_VERSION`], the wasm module's too (`bindings/wasm`), so the package's JS drives both
//!   the same way and refuses a build of another version by that one number.
//! - [`JsPlan`] (`PlanProgram`): a plan of format v1, validated; `layout` checks a run over
//!   arrays of given dtypes and lengths (the engine's binding checks and budget) before any
//!   array is touched; `run` runs on the calling thread, reading and writing the caller's typed
//!   arrays in place (no copy); `runAsync` runs on the addon's threads and resolves when done,
//!   so the calling thread's event loop keeps turning.
//! - [`JsControl`] (`PlanControl`): a run's cancel flag (checked between blocks) and progress.
//! - `PsiParty`, `PsiHelper`, `psiRequest`, `psiRanges`, `psiSample` (module `psi`): the
//!   face's PSI ([`lockstep_face::psi`]) on OpenSSL's P-256, the wasm module's exports of the
//!   same ABI, byte for byte the same results; its notes say where key material travels.
//!
//! Every argument check, limit and message is the face's (`lockstep_face`); this crate converts
//! napi-rs's types to the face's and back. Its one `unsafe` file is `js_memory`.
//! - `flights` (internal): the runs in flight on the addon's threads per JS environment, which
//!   the environment's teardown cancels and waits for.
//!
//! Runs use the engine's fused executor on a native pool of the shard runtime, the worker count
//! the caller's or the shard policy's over the plan's grain; bytes are the same at every count
//! and equal `lockstep plan run`'s.
//!
//! Errors carry the engine's codes (`PLAN_INVALID`, `PLAN_BINDING`, `PLAN_BUDGET`,
//! `PLAN_DIVISION_BY_ZERO`, `PLAN_CANCELLED`, ...) as the JS error's `code`.
//!
//! # Threads and the caller's memory
//! `runAsync` holds references to the typed arrays it was given (they stay alive until it
//! settles) and the addon's threads read the inputs and write the outputs while the promise is
//! pending: the caller must not touch those arrays until then. The package only passes arrays it
//! owns there (a worker's snapshot of the inputs and the outputs sent to it). When the JS
//! environment that started a run is torn down (a worker terminated), the run is cancelled and
//! waited for, which takes at most a block.

#![deny(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use lockstep_face::{ABI_VERSION, Coded};
use lockstep_plan::{ArrayMut, ArrayRef, CompiledPlan, RunError, RunOptions};
use lockstep_shard::{Control, Pool, Pools, Progress};
use napi::Env;
use napi::bindgen_prelude::{
    Either, Either8, Float32Array, Float64Array, Int8Array, Int16Array, Int32Array, Object,
    Uint8Array, Uint16Array, Uint32Array,
};
use napi_derive::napi;

mod fields;
mod flights;
#[allow(unsafe_code, reason = "the addon's one fenced file of unsafe code")]
mod js_memory;
pub mod psi;

use fields::JsFields;

use js_memory::{check_disjoint, output_mut};

/// The version of this addon's exports: the face's [`ABI_VERSION`], the wasm module's too.
#[napi(js_name = "abiVersion")]
pub fn abi_version() -> u32 {
    ABI_VERSION
}

/// A JS typed array of one of the eight dtypes, held by reference.
type JsArray = Either8<
    Int8Array,
    Uint8Array,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
>;

/// An error for JS with the engine's `code`.
type CodedError = napi::Error<String>;

fn coded(message: String, code: &str) -> CodedError {
    napi::Error::new(code.to_owned(), message)
}

/// A refusal of the face as a JS error with its `code`.
fn from_face(refused: Coded) -> CodedError {
    coded(refused.message, refused.code)
}

/// # Outcome
/// The `try*` calls a front end makes on its own thread return a failure as `[code, message]`
/// instead of throwing it: Node treats an exception an addon throws as uncaught even when the
/// JS around the call catches it, so under `--abort-on-uncaught-exception` a refused plan or
/// layout would end the process (nodejs/node#28409). `runAsync` already settles so.
fn outcome<T>(result: Result<T, CodedError>) -> Either<T, Vec<String>> {
    match result {
        Ok(value) => Either::A(value),
        Err(error) => Either::B(failure(&error)),
    }
}

/// A failure as `[code, message]`.
fn failure(error: &CodedError) -> Vec<String> {
    vec![error.status.clone(), error.reason.clone()]
}

fn run_error(error: &RunError) -> CodedError {
    coded(error.to_string(), error.code())
}

fn input_ref(array: &JsArray) -> ArrayRef<'_> {
    match array {
        Either8::A(v) => ArrayRef::I8(v),
        Either8::B(v) => ArrayRef::U8(v),
        Either8::C(v) => ArrayRef::I16(v),
        Either8::D(v) => ArrayRef::U16(v),
        Either8::E(v) => ArrayRef::I32(v),
        Either8::F(v) => ArrayRef::U32(v),
        Either8::G(v) => ArrayRef::F32(v),
        Either8::H(v) => ArrayRef::F64(v),
    }
}

/// The native pools, one per worker count, made on first use and reused (a pool's threads are
/// pinned: a run pays no thread start), the threads kept bounded ([`Pools`]: a process asking
/// every count from 1 to 256 would otherwise keep 32,896 threads).
fn pool(workers: usize) -> Result<Arc<Pool>, CodedError> {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    POOLS
        .get_or_init(Pools::for_process)
        .get(workers)
        .map_err(|e| coded(format!("a pool of {workers} workers: {e}"), "PLAN_RUNTIME"))
}

/// A validated plan.
#[napi(js_name = "PlanProgram")]
pub struct JsPlan {
    plan: Arc<CompiledPlan>,
}

#[napi]
impl JsPlan {
    /// The plan of format v1 in `text`, validated.
    ///
    /// # Errors
    /// `PLAN_INVALID`, naming the item and field.
    #[napi(factory, js_name = "fromJson")]
    pub fn from_json(text: String) -> Result<JsPlan, CodedError> {
        let plan = lockstep_face::plan::compile(&text).map_err(from_face)?;
        Ok(JsPlan {
            plan: Arc::new(plan),
        })
    }

    /// [`from_json`](Self::from_json) with its failure returned as `[code, message]`, not thrown
    /// (`outcome`, "Outcome").
    #[napi(
        js_name = "tryFromJson",
        ts_return_type = "PlanProgram | [string, string]"
    )]
    pub fn try_from_json(text: String) -> Either<JsPlan, Vec<String>> {
        outcome(Self::from_json(text))
    }

    /// The plan's inputs and outputs (ids and dtypes, in order) as JSON
    /// ([`lockstep_plan::Plan::signature_json`]).
    #[napi]
    pub fn describe(&self) -> String {
        self.plan.plan().signature_json()
    }

    /// Whether a run can fail after writing part of its outputs ([`lockstep_plan::Plan::can_fail_midway`]).
    #[napi(js_name = "canFailMidway")]
    pub fn can_fail_midway(&self) -> bool {
        self.plan.plan().can_fail_midway()
    }

    /// The layout of a run ([`lockstep_face::plan::layout_of`]: the inputs' dtypes and
    /// lengths, the outputs' or none for outputs the caller allocates as long as the layout says,
    /// `workers`, 0 for the engine's policy, and a `budget` of bytes, in one options object):
    /// `[elements, input bytes, output bytes, working bytes, output lengths..., output covered
    /// (1) or not (0)...]` ([`lockstep_plan::Layout`]).
    ///
    /// # Errors
    /// `PLAN_BINDING` as a run over such arrays would fail; `PLAN_BUDGET` over the budget.
    #[napi]
    pub fn layout(
        &self,
        #[napi(
            ts_arg_type = "{ dtypes: string[]; lengths: number[]; outDtypes?: string[]; outLengths?: number[]; workers?: number; budget?: number }"
        )]
        options: Object<'_>,
    ) -> Result<Vec<f64>, CodedError> {
        lockstep_face::plan::layout_of(&self.plan, &JsFields(options), lockstep_face::plan::workers)
            .map_err(from_face)
    }

    /// [`layout`](Self::layout) with its failure returned as `[code, message]`, not thrown
    /// (`outcome`, "Outcome"): the layout comes as a `Float64Array`, a failure as an `Array`.
    #[napi(
        js_name = "tryLayout",
        ts_return_type = "Float64Array | [string, string]"
    )]
    pub fn try_layout(
        &self,
        #[napi(
            ts_arg_type = "{ dtypes: string[]; lengths: number[]; outDtypes?: string[]; outLengths?: number[]; workers?: number; budget?: number }"
        )]
        options: Object<'_>,
    ) -> Either<Float64Array, Vec<String>> {
        outcome(self.layout(options).map(Float64Array::from))
    }

    /// Runs the plan on the calling thread (blocking it) over `inputs`, writing `outputs` in
    /// place through their views, on `workers` native workers (0: the policy's count).
    ///
    /// # Errors
    /// The engine's, with their codes; after `PLAN_DIVISION_BY_ZERO` the outputs are partly
    /// written.
    #[napi]
    pub fn run(
        &self,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        inputs: Vec<JsArray>,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        mut outputs: Vec<JsArray>,
        workers: u32,
    ) -> Result<(), CodedError> {
        run_plan(&self.plan, &inputs, &mut outputs, workers, &Control::new())
            .map_err(|e| run_error(&e))
    }

    /// [`run`](Self::run) with its failure returned as `[code, message]` (`null`: done), not
    /// thrown (`outcome`, "Outcome").
    #[napi(js_name = "tryRun", ts_return_type = "[string, string] | null")]
    pub fn try_run(
        &self,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        inputs: Vec<JsArray>,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        outputs: Vec<JsArray>,
        workers: u32,
    ) -> Option<Vec<String>> {
        match self.run(inputs, outputs, workers) {
            Ok(()) => None,
            Err(error) => Some(failure(&error)),
        }
    }

    /// [`run`](Self::run) on a thread of the addon's own: resolves to `null` when done, or to
    /// `[code, message]` when the run failed (a promise of an outcome, so the engine's code
    /// reaches JS as is). `control` cancels it (between blocks) and reads its progress. The
    /// calling thread's event loop keeps turning, and no thread of libuv's shared pool is held.
    ///
    /// When the calling JS environment is torn down (a worker terminated mid-run), its cleanup
    /// cancels the run and waits for its thread, which stops within a block: the arrays the run
    /// holds are freed only after it has let go of them.
    ///
    /// # Errors
    /// `PLAN_RUNTIME` if the promise or the thread cannot be made.
    #[napi(
        js_name = "runAsync",
        ts_return_type = "Promise<[string, string] | null>"
    )]
    pub fn run_async<'env>(
        &self,
        env: &'env Env,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        inputs: Vec<JsArray>,
        #[napi(
            ts_arg_type = "Array<Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array>"
        )]
        outputs: Vec<JsArray>,
        workers: u32,
        control: &JsControl,
    ) -> Result<Object<'env>, CodedError> {
        let runtime = |e: napi::Error| coded(e.reason.clone(), "PLAN_RUNTIME");
        let flight = flights::of(env).map_err(runtime)?;
        let (deferred, promise) = env
            .create_deferred::<Option<Vec<String>>, _>()
            .map_err(runtime)?;
        let plan = Arc::clone(&self.plan);
        let control = control.control.clone();
        let id = flight.enter(control.cancel_token().clone());
        let leave = Arc::clone(&flight);
        let thread = std::thread::Builder::new()
            .name("lockstep-plan".to_owned())
            .spawn(move || {
                let mut outputs = outputs;
                let outcome = run_plan(&plan, &inputs, &mut outputs, workers, &control).err();
                leave.leave(id);
                // The arrays go back with the resolver, released on the JS thread.
                deferred.resolve(move |_env| {
                    drop((inputs, outputs));
                    Ok(outcome.map(|error| vec![error.code().to_owned(), error.to_string()]))
                });
            });
        match thread {
            Ok(handle) => {
                flight.started(id, handle);
                Ok(promise)
            }
            Err(e) => {
                flight.leave(id);
                Err(coded(format!("a thread for the run: {e}"), "PLAN_RUNTIME"))
            }
        }
    }
}

fn run_plan(
    plan: &CompiledPlan,
    inputs: &[JsArray],
    outputs: &mut [JsArray],
    workers: u32,
    control: &Control,
) -> Result<(), RunError> {
    lockstep_face::plan::check_workers(workers)?;
    check_disjoint(inputs, outputs).map_err(|(i, other)| RunError::Binding {
        at: format!("outputs[{i}]"),
        message: format!("shares memory with {other}"),
    })?;
    let refs: Vec<ArrayRef<'_>> = inputs.iter().map(input_ref).collect();
    let elements = plan.plan().element_count(&refs)?;
    let pool = pool(lockstep_face::plan::workers(workers, elements)?)
        .map_err(|e| RunError::Runtime(e.reason.clone()))?;
    let mut views: Vec<ArrayMut<'_>> = outputs.iter_mut().map(output_mut).collect();
    plan.run(&pool, control, &refs, &mut views, &RunOptions::default())
}

/// A run's cancel flag and progress, shared with the addon's threads.
#[napi(js_name = "PlanControl")]
pub struct JsControl {
    control: Control,
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
}

#[napi]
impl JsControl {
    /// A control for one run: not cancelled, no progress.
    #[napi(constructor)]
    #[allow(clippy::new_without_default, reason = "a JS constructor")]
    pub fn new() -> Self {
        let done = Arc::new(AtomicU64::new(0));
        let total = Arc::new(AtomicU64::new(0));
        let (d, t) = (Arc::clone(&done), Arc::clone(&total));
        let progress = Progress::new(move |report| {
            d.store(report.done, Ordering::Relaxed);
            t.store(report.total.unwrap_or(report.done), Ordering::Relaxed);
        });
        JsControl {
            control: Control::new().with_progress(progress),
            done,
            total,
        }
    }

    /// Cancels the run: it stops after the blocks in flight and fails with `PLAN_CANCELLED`.
    #[napi]
    pub fn cancel(&self) {
        self.control.cancel_token().cancel();
    }

    /// `[done, total]` elements of the run so far (`[0, 0]` before its first report).
    #[napi]
    pub fn progress(&self) -> Vec<f64> {
        vec![
            self.done.load(Ordering::Relaxed) as f64,
            self.total.load(Ordering::Relaxed) as f64,
        ]
    }
}
