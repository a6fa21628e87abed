//! The one face of lockstep's engines that every binding stands on: the Node addon
//! (`bindings/node`, napi-rs), the wasm module (`bindings/wasm`, wasm-bindgen), and the Python
//! module (`bindings/python`, PyO3). No binding framework is named here; a binding converts its types to
//! the plain ones below and back, and nothing else, so every front end refuses the same
//! arguments with the same words and codes and gives the same bytes.
//!
//! - [`ABI_VERSION`]: the version of the exports every binding makes from this face, defined
//!   here alone; each binding exports it as `abiVersion`, and the package refuses a binary of
//!   another.
//! - [`fields`]: a call's options as one object a binding reads by field name ([`Fields`]):
//!   which fields a call takes and the words a wrong one is refused with are written here.
//! - [`number`]: the numbers a JS (or Python) caller passes, read as whole counts by one rule.
//! - [`progress`]: one bridge from the runtime's progress to a caller's callback ([`Callback`]):
//!   a step started from a callback is refused, and what a callback throws ends the step and is
//!   handed back as it was thrown ([`Failure::Thrown`]).
//! - [`psi`]: a PSI party ([`PsiParty`]) and its helper ([`PsiHelper`]) as a front end holds
//!   them, their steps' arguments and results as plain types, the one-call request, the parts'
//!   split and the sample data.
//! - [`openmined`]: OpenMined PSI's own `server` and `client` ([`openmined::Server`],
//!   [`openmined::Client`]), for a module that stands in for `openmined.psi`.
//! - [`plan`]: a plan run's arguments (shapes by dtype name, a byte budget, a worker count) and
//!   its layout as numbers.
//! - `ceremony` (feature `ceremony`, for a native binding: blst's C underneath): the ceremony's
//!   files by path: what a file holds (`ceremony::info`) and
//!   the verifications (`ceremony::verify_*`), the engine's rules and words.
//! - `cluster` (feature `cluster`, native: files by path): a step's parts masked on a
//!   cluster's executors and assembled on its driver: the key file, keys of column values, a
//!   request handed out packed, the messages and the permutation written in order.
//! - [`workers`]: a call's worker count by the CLI's rule, in its engine's grain and code.
//! - [`Coded`]: a refusal as every front end reports it, a stable code and the engine's words.
//!
//! The engines keep their own concepts ([`lockstep_psi::party::Party`],
//! [`lockstep_psi::party::Keyed`], [`lockstep_plan::CompiledPlan`]); this crate only reads a
//! front end's arguments into them and their results out.

#[cfg(feature = "ceremony")]
pub mod ceremony;
#[cfg(feature = "cluster")]
pub mod cluster;
mod error;
pub mod fields;
pub mod number;
pub mod openmined;
pub mod plan;
pub mod progress;
pub mod psi;
pub mod workers;

pub use error::{Coded, Failure};
pub use fields::{Fields, Found, Kind, Value};
pub use progress::{Callback, Domain, with_progress};
pub use psi::{PartMaps, PsiHelper, PsiParty};

/// The version of the exports every binding makes from this face. It changes whenever an
/// export's name, arguments or meaning change; a worker reports it in its handshake and the
/// npm package (`js/src/abi.js`) refuses a module or an addon of another version.
///
/// 2: `psiRequest` masks distinct keys and takes `normalize`. 3: `PsiParty`, both roles' steps
/// with the key inside the module. 4: steps in parts (`*Begin`, `*Part`, `*Finish`),
/// `PsiHelper`, `psiRanges`, `psiSample`. 5: `PlanProgram`, plans on the fused executor.
/// 6: one face under every binding: the addon holds PSI too, the wasm module's whole-step
/// methods (`setup`, `respond`, `request`, `intersect`) are gone (steps come in parts alone).
/// 7: `setupBegin`, `requestBegin` and `layout` (`tryLayout`) take their options as one object
/// ([`Fields`]), and a plan run's 0 workers reads `LOCKSTEP_WORKERS` as the CLI does.
pub const ABI_VERSION: u32 = 7;
