//! The BLS12-381 core under lockstep's ceremony and prover engines.
//!
//! - [`ffi`]'s safe wrappers: the blst calls blstrs does not expose (batch affine conversion,
//!   decompression with blst's error codes, single-threaded Pippenger, hashing, wiping).
//! - [`msm`]: a deterministic parallel multi-scalar multiplication for public scalars in G1
//!   and G2: the GLV split (an endomorphism of one field multiplication), signed window digits, batch-affine bucket
//!   accumulation with a bounded collision queue, windows and point ranges as tasks on a
//!   [`lockstep_shard::Pool`], the plan chosen by a cost model ([`Plan`]).
//! - [`fft`]: the group FFT (the Lagrange basis of a vector of powers, as gnark's and snarkjs's
//!   setups compute it), its passes parallel under the worker budget, the same points at every
//!   worker count; the domains' roots of unity of both tools.
//! - [`public_mul`]: multiplication by a public scalar in variable time (GLV on G1, the four-way
//!   split by `psi` on G2, NAF digits, affine tables shared by a batch).
//! - [`Canonical`] scalars, as files hold them, checked below r.
//!
//! # Unsafe code
//! Denied in the whole crate but `ffi.rs`, which calls blst (each block with its `SAFETY`
//! argument).
#![deny(unsafe_code)]

mod buckets;
mod curve;
mod digits;
pub mod ffi;
pub mod fft;
mod field;
mod glv;
#[cfg(target_arch = "x86_64")]
mod ifma;
pub mod msm;
pub mod public_mul;
mod scalar;

pub use field::{Coordinate, MONTGOMERY_ONE, P};
pub use msm::{MsmError, Plan};
pub use public_mul::{g1_mul_public, g1_mul_public_batch, g2_mul_public, g2_mul_public_batch};
pub use scalar::{Canonical, NotCanonical, scalars_from_le_bytes};
