//! A phase 1 chain verified file by file: where it may start, what each next file must be,
//! and whether a sealed SRS is the chain's seal. A front end reads each file (a pipe, with its
//! progress bar) and hands it over in order; the rules are here.

use lockstep_shard::{Control, Pool};

use super::{Phase1, Srs, VerifyError, seal, verify_contribution};
use crate::chain::{ChainError, Verdict};
use crate::codec::Limits;

/// A phase 1 chain verified up to its last file. It holds that file's object alone (one
/// object's memory, however long the chain).
#[derive(Debug)]
pub struct Chain {
    last: Phase1,
    last_hash: [u8; 32],
    contributions: usize,
}

impl Chain {
    /// A chain from its first file: the initial object of its power (nothing to verify), or a
    /// first contribution, verified against the initial object of its power (made here).
    ///
    /// # Errors
    /// [`ChainError::Rejected`] for a contribution that does not verify;
    /// [`ChainError::Run`] if the initial object cannot be made or the run is cancelled.
    pub fn from_first(
        pool: &Pool,
        control: &Control,
        first: Phase1,
        hash: [u8; 32],
    ) -> Result<(Self, Verdict), ChainError> {
        if first.is_initial() {
            let power = first.srs.power();
            let chain = Self {
                last: first,
                last_hash: hash,
                contributions: 0,
            };
            return Ok((chain, Verdict::Initial { power }));
        }
        let initial = Phase1::initial(first.srs.power()).map_err(ChainError::run)?;
        let initial_hash = initial
            .write(pool, &Control::new(), std::io::sink())
            .map_err(ChainError::run)?;
        let mut chain = Self::after(initial, initial_hash);
        let verdict = chain.push(pool, control, first, hash)?;
        Ok((chain, verdict))
    }

    /// A chain continuing `previous` (whose bytes hash to `hash`), taken as it is: a chain
    /// verified in parts, from the last file a person verified before. It is not counted.
    pub fn after(previous: Phase1, hash: [u8; 32]) -> Self {
        Self {
            last: previous,
            last_hash: hash,
            contributions: 0,
        }
    }

    /// The limits the next file is read with: the chain's power, so a file of another power is
    /// refused from its first bytes, before its points are read.
    pub fn next_limits(&self) -> Limits {
        Limits {
            power: Some(self.last.srs.power()),
            ..Limits::default()
        }
    }

    /// Verifies `next` (whose bytes hash to `hash`) as the contribution after the chain's last
    /// file, and makes it the last.
    ///
    /// # Errors
    /// [`ChainError::Rejected`] naming the first check that fails
    /// ([`verify_contribution`]'s order); [`ChainError::Run`] if the run is cancelled. The
    /// chain is unchanged on an error.
    pub fn push(
        &mut self,
        pool: &Pool,
        control: &Control,
        next: Phase1,
        hash: [u8; 32],
    ) -> Result<Verdict, ChainError> {
        verify_contribution(pool, control, &self.last, &self.last_hash, &next).map_err(
            |error| match error {
                VerifyError::Run(reason) => ChainError::Run(reason),
                refused => ChainError::rejected(refused),
            },
        )?;
        self.last = next;
        self.last_hash = hash;
        self.contributions += 1;
        Ok(Verdict::Contribution { hash })
    }

    /// The contributions verified (a first file's, and every pushed one).
    pub fn contributions(&self) -> usize {
        self.contributions
    }

    /// The chain's power.
    pub fn power(&self) -> u32 {
        self.last.srs.power()
    }

    /// The points one file of the chain stores (for reports).
    pub fn stored_points(&self) -> u64 {
        self.last.srs.stored_points()
    }

    /// Checks that `sealed` (whose bytes hash to `hash`) is the seal of the chain with the
    /// beacon bytes `challenge` (the beacon after its delay, [`super::beacon_challenge_with`];
    /// `iterations` names the delay in the refusal): the seal is recomputed and compared.
    ///
    /// # Errors
    /// [`ChainError::Rejected`] if it is not; [`ChainError::Run`] if sealing is cancelled.
    pub fn check_seal(
        self,
        pool: &Pool,
        control: &Control,
        sealed: &Srs,
        hash: [u8; 32],
        challenge: &[u8],
        iterations: u64,
    ) -> Result<Verdict, ChainError> {
        let expected = seal(pool, control, self.last, &self.last_hash, challenge)
            .map_err(|error| ChainError::run(format_args!("sealing: {error}")))?;
        if *sealed != expected {
            return Err(ChainError::rejected(format_args!(
                "not the seal of the chain with this beacon and {iterations} iterations"
            )));
        }
        Ok(Verdict::Sealed { hash })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase1::{Secrets, beacon_challenge, contribute};

    fn hashed(pool: &Pool, object: &Phase1) -> [u8; 32] {
        object
            .write(pool, &Control::new(), std::io::sink())
            .unwrap()
    }

    #[test]
    fn a_chain_verifies_from_either_start_and_refuses_a_skipped_step() {
        let pool = Pool::new(2).unwrap();
        let control = Control::new();
        let c0 = Phase1::initial(3).unwrap();
        let h0 = hashed(&pool, &c0);
        let c1 = contribute(&pool, &control, c0.clone(), &h0, &Secrets::random(b"a")).unwrap();
        let h1 = hashed(&pool, &c1);
        let c2 = contribute(&pool, &control, c1.clone(), &h1, &Secrets::random(b"b")).unwrap();
        let h2 = hashed(&pool, &c2);

        let (mut chain, verdict) = Chain::from_first(&pool, &control, c0.clone(), h0).unwrap();
        assert_eq!(verdict, Verdict::Initial { power: 3 });
        assert_eq!(chain.next_limits().power, Some(3));
        assert_eq!(
            chain.push(&pool, &control, c1.clone(), h1).unwrap(),
            Verdict::Contribution { hash: h1 }
        );
        chain.push(&pool, &control, c2.clone(), h2).unwrap();
        assert_eq!(chain.contributions(), 2);

        // From a first contribution: checked against the initial object, and counted.
        let (chain, verdict) = Chain::from_first(&pool, &control, c1.clone(), h1).unwrap();
        assert_eq!(
            (verdict, chain.contributions()),
            (Verdict::Contribution { hash: h1 }, 1)
        );

        // A skipped step is refused, naming the challenge; the chain keeps its last file.
        let mut chain = Chain::after(c0.clone(), h0);
        let error = chain.push(&pool, &control, c2.clone(), h2).unwrap_err();
        assert_eq!(error.code(), "CEREMONY_REJECTED");
        assert!(
            error.to_string().starts_with("REJECTED: challenge:"),
            "{error}"
        );
        assert_eq!(chain.contributions(), 0);
        chain.push(&pool, &control, c1.clone(), h1).unwrap();

        // The seal: its own beacon passes, another is refused.
        let beacon = beacon_challenge(b"\x01\x02", 3);
        let sealed = seal(&pool, &control, c2.clone(), &h2, &beacon).unwrap();
        let chain = Chain::after(c2.clone(), h2);
        let verdict = chain
            .check_seal(&pool, &control, &sealed, [7; 32], &beacon, 3)
            .unwrap();
        assert_eq!(verdict, Verdict::Sealed { hash: [7; 32] });
        let error = Chain::after(c2, h2)
            .check_seal(&pool, &control, &sealed, [7; 32], b"other", 0)
            .unwrap_err();
        assert!(
            error.to_string().contains("not the seal of the chain"),
            "{error}"
        );
    }

    #[test]
    fn a_cancelled_verification_is_a_run_error_not_a_rejection() {
        let pool = Pool::new(2).unwrap();
        let c0 = Phase1::initial(3).unwrap();
        let h0 = hashed(&pool, &c0);
        let c1 = contribute(
            &pool,
            &Control::new(),
            c0.clone(),
            &h0,
            &Secrets::random(b"a"),
        )
        .unwrap();
        let h1 = hashed(&pool, &c1);
        let control = Control::new();
        control.cancel_token().cancel();
        let error = Chain::after(c0, h0)
            .push(&pool, &control, c1, h1)
            .unwrap_err();
        assert_eq!(error.code(), "CEREMONY_RUN", "{error}");
    }
}
