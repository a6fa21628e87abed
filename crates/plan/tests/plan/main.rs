//! Integration tests of the plan engine.
//!
//! - `validation`: every validation and binding error, by item and field; budgets; a plan of
//!   10,000 nodes on a small stack.
//! - `equivalence`: the fused executor against the node-by-node reference, bit for bit, at 1, 2,
//!   3 and 5 workers and on a current-thread pool: every op x dtype, views, special values,
//!   integer division by zero.
//! - `random_plans`: random DAGs of random ops and dtypes against the reference (proptest).
//! - `schema`: the committed JSON Schema agrees with the reader.

#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "helpers of tests: a failure is a test failure"
)]

mod equivalence;
mod fixtures;
mod random_plans;
mod schema;
mod validation;
