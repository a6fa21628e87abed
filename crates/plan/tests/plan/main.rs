//! Integration tests of the plan engine.
//!
//! - `validation`: every validation and binding error, by item and field; budgets; a plan of
//!   10,000 nodes on a small stack.
//! - `equivalence`: the fused executor against the node-by-node reference, bit for bit, at 1, 2,
//!   3 and 5 workers and on a current-thread pool: every op x dtype, views, special values,
//!   integer division by zero.

#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "helpers of tests: a failure is a test failure"
)]

mod equivalence;
mod fixtures;
mod validation;
