//! Integration tests of the ceremony engine.
//!
//! - `equivalence`: every parallel step (update, contribute, seal, encode, decode) equals its
//!   serial reference byte for byte at 1, 2, 3 and 5 workers and on a current-thread pool.
//! - `bad_input`: every kind of bad file or bad contribution gets its own clear error.
//! - `gnark`: files go both ways between us and gnark v0.15 (the harness in `interop/gnark/`).
//! - `zkey`: snarkjs's phase 2 (prepare, zkey new, beacon, the key's codec, verify) on every
//!   pool against its serial reference.

#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "helpers of tests: a failure is a test failure"
)]

mod bad_input;
mod equivalence;
mod gnark;
mod gnark_prove;
mod phase2;
mod zkey;

use std::sync::OnceLock;

use blstrs::Scalar;
use lockstep_ceremony::Limits;
use lockstep_ceremony::phase1::{self, Phase1, Secrets};
use lockstep_shard::{Control, Pool};

/// Worker counts every parallel path is compared at (odd counts find boundary bugs).
pub(crate) const WORKER_COUNTS: [usize; 4] = [1, 2, 3, 5];

/// A pool at each of [`WORKER_COUNTS`] and a current-thread pool, named.
pub(crate) fn pools() -> Vec<(String, Pool)> {
    let mut pools: Vec<(String, Pool)> = WORKER_COUNTS
        .iter()
        .map(|&w| (format!("{w} workers"), Pool::new(w).unwrap()))
        .collect();
    pools.push(("current thread".to_owned(), Pool::current_thread()));
    pools
}

/// Fixed secrets, different for each `seed`.
pub(crate) fn secrets(seed: u64) -> Secrets {
    Secrets::from_scalars(
        Scalar::from(0x1234_5678_9abc_def1 ^ seed) * Scalar::from(0xfeed_beef_u64),
        Scalar::from(0x0bad_cafe_u64 + seed),
        Scalar::from(0x5eed_u64 * (seed + 3)),
    )
}

/// A power-12 object after one contribution with fixed secrets: every stored point distinct
/// (`G1 Tau` crosses the 4,096-point chunk boundary), built once.
pub(crate) fn fixture() -> &'static (Phase1, Vec<u8>) {
    static FIXTURE: OnceLock<(Phase1, Vec<u8>)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let pool = Pool::new(2).unwrap();
        let control = Control::new();
        let initial = Phase1::initial(12).unwrap();
        let hash = lockstep_ceremony::reference::phase1_bytes(&initial);
        let hash: [u8; 32] =
            sha2::Digest::finalize(sha2::Digest::chain_update(sha2::Sha256::default(), &hash))
                .into();
        let object = phase1::contribute(&pool, &control, initial, &hash, &secrets(1)).unwrap();
        let bytes = lockstep_ceremony::reference::phase1_bytes(&object);
        (object, bytes)
    })
}

/// Reads a phase 1 object from bytes on `pool`.
pub(crate) fn read(
    pool: &Pool,
    bytes: &[u8],
) -> Result<(Phase1, [u8; 32]), lockstep_ceremony::CodecError> {
    Phase1::read(pool, &Control::new(), bytes, &Limits::default())
}

/// Writes a phase 1 object to bytes on `pool`.
pub(crate) fn write(pool: &Pool, object: &Phase1) -> (Vec<u8>, [u8; 32]) {
    let mut out = Vec::new();
    let hash = object.write(pool, &Control::new(), &mut out).unwrap();
    (out, hash)
}
