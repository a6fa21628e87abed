//! Plan format v1 as it is written (JSON): the raw shapes serde reads before validation.
//!
//! ```json
//! {
//!   "version": 1,
//!   "inputs":    [{ "id": "x", "dtype": "f32", "view": { "offset": 0, "stride": 2, "length": 1000 } }],
//!   "constants": [{ "id": "half", "dtype": "f32", "value": 0.5 }],
//!   "nodes":     [{ "id": "y", "op": "mul", "args": ["x", "half"] },
//!                 { "id": "n", "op": "cast", "args": ["y"], "to": "i32" }],
//!   "outputs":   [{ "id": "out", "from": "n" }]
//! }
//! ```
//!
//! Every field is checked by [`Plan::from_json`](crate::Plan::from_json); unknown fields are
//! errors. `plan-v1.schema.json` beside this crate's manifest is the JSON Schema of this shape.

use serde::Deserialize;

/// The plan format version this crate reads.
pub const FORMAT_VERSION: u64 = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlan {
    pub(crate) version: u64,
    pub(crate) inputs: Vec<RawInput>,
    #[serde(default)]
    pub(crate) constants: Vec<RawConstant>,
    pub(crate) nodes: Vec<RawNode>,
    pub(crate) outputs: Vec<RawOutput>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawInput {
    pub(crate) id: String,
    pub(crate) dtype: String,
    #[serde(default)]
    pub(crate) view: RawView,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConstant {
    pub(crate) id: String,
    pub(crate) dtype: String,
    pub(crate) value: serde_json::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNode {
    pub(crate) id: String,
    pub(crate) op: String,
    pub(crate) args: Vec<String>,
    #[serde(default)]
    pub(crate) to: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOutput {
    pub(crate) id: String,
    pub(crate) from: String,
    #[serde(default)]
    pub(crate) view: RawView,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawView {
    #[serde(default)]
    pub(crate) offset: Option<u64>,
    #[serde(default)]
    pub(crate) stride: Option<u64>,
    #[serde(default)]
    pub(crate) length: Option<u64>,
}
