//! The SRS commons of phase 1: the powers of tau in G1 and G2, times alpha and beta.

use blstrs::{G1Affine, G2Affine};

use lockstep_shard::memory;

use crate::codec::CodecError;
use crate::curve;
use crate::phase1::file::names;

/// The circuit-independent part of a Groth16 SRS (gnark's `SrsCommons`), for domain size
/// `N = 2^power`:
/// `g1_tau[i] = [tau^i]_1` for `i < 2N-1`, `g2_tau[i] = [tau^i]_2`, `alpha_tau[i] =
/// [alpha tau^i]_1`, `beta_tau[i] = [beta tau^i]_1` for `i < N`, and `beta_g2 = [beta]_2`.
///
/// # Invariants
/// The vector lengths are as above for one `N`, a power of two of at least 2 (1 only for a
/// [`truncated`](Srs::truncated) SRS, which phase 2 uses and no file holds), and
/// `g1_tau[0]`, `g2_tau[0]` are the generators (they are not stored in files). Constructors and
/// readers keep these; the fields are public for reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Srs {
    /// `[tau^i]_1`, `0 <= i <= 2N-2`.
    pub g1_tau: Vec<G1Affine>,
    /// `[tau^i]_2`, `0 <= i <= N-1`.
    pub g2_tau: Vec<G2Affine>,
    /// `[alpha tau^i]_1`, `0 <= i <= N-1`.
    pub alpha_tau: Vec<G1Affine>,
    /// `[beta tau^i]_1`, `0 <= i <= N-1`.
    pub beta_tau: Vec<G1Affine>,
    /// `[beta]_2`.
    pub beta_g2: G2Affine,
}

/// `len` copies of `point` for the vector `what`, or the error naming it.
fn filled<P: Clone>(what: &'static str, len: usize, point: P) -> Result<Vec<P>, CodecError> {
    memory::try_filled(len, point).map_err(|source| CodecError::Memory {
        what,
        refused: source,
    })
}

impl Srs {
    /// The SRS of the initial object: tau = alpha = beta = 1, every point a generator.
    ///
    /// # Errors
    /// [`CodecError::Memory`] naming the vector that cannot be allocated (at power 28, 96 GiB).
    ///
    /// # Panics
    /// If `power` is 0, above 40, or too large for this target's `usize` (a caller's bug: the
    /// CLI and readers bound it).
    pub fn one(power: u32) -> Result<Self, CodecError> {
        assert!(
            (1..=40).contains(&power) && power < usize::BITS - 2,
            "invariant: power checked by the caller"
        );
        let n = 1usize << power;
        Ok(Self {
            g1_tau: filled(names::G1_TAU, 2 * n - 1, curve::g1())?,
            g2_tau: filled(names::G2_TAU, n, curve::g2())?,
            alpha_tau: filled(names::ALPHA_TAU, n, curve::g1())?,
            beta_tau: filled(names::BETA_TAU, n, curve::g1())?,
            beta_g2: curve::g2(),
        })
    }

    /// The domain size `N`.
    pub fn n(&self) -> usize {
        self.g2_tau.len()
    }

    /// `log2(N)`.
    pub fn power(&self) -> u32 {
        self.n().trailing_zeros()
    }

    /// Points stored in a file (every vector, less the two generators, plus `[beta]_2`):
    /// `5N - 2`, the unit of progress for reading, writing and updating.
    pub fn stored_points(&self) -> u64 {
        5 * self.n() as u64 - 2
    }

    /// The SRS of the smaller domain `2^power` (the same tau, alpha and beta): each vector's
    /// first points, as a circuit whose domain is smaller than the ceremony's uses them. Power
    /// 0 (`N = 1`: one point in each vector) is a circuit of one constraint's, as gnark cuts
    /// it; no phase 1 file holds it.
    ///
    /// # Panics
    /// If `power` is above [`power`](Self::power).
    pub fn truncated(mut self, power: u32) -> Self {
        assert!(power <= self.power(), "invariant: a smaller domain");
        let n = 1usize << power;
        // In place: the first points stay where they are, the rest is given back (a copy
        // would hold both SRSs at once).
        for (v, len) in [
            (&mut self.g1_tau, 2 * n - 1),
            (&mut self.alpha_tau, n),
            (&mut self.beta_tau, n),
        ] {
            v.truncate(len);
            v.shrink_to_fit();
        }
        self.g2_tau.truncate(n);
        self.g2_tau.shrink_to_fit();
        self
    }
}
