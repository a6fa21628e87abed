//! Budgeted fork-join: branches that run in parallel, each with a share of the worker budget.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::panic_message;
use crate::{Control, Error, Pool, split};

impl Pool {
    /// Runs `branch(i, view)` for each branch `i` in parallel and returns the results in branch
    /// order. A budget decides how a branch splits its work, not which threads run it: every
    /// thread of the pool may take any branch's tasks. Branch `i` covers the input positions from `starts[i]` on (increasing); its `view`
    /// is this pool's threads with a share of its worker budget (`workers / branches`, the
    /// first branches taking the remainder; at least 1), on which the branch runs its own
    /// operations: stage `s` of an FFT is `2^s` branches of `budget / 2^s` workers.
    ///
    /// A branch reports failures in its own positions (from 0); they are moved by `starts[i]`
    /// ([`Error::shifted`]), so the failure of the lowest branch wins, as in the serial loop
    /// `for i in branches { branch(i)? }`. A branch's own work is watched through the runs it
    /// starts. A failing branch does not stop the others early (a branch has no stop check of
    /// its own; its runs use the caller's control): they finish, and their results are dropped.
    ///
    /// # Errors
    /// [`Error::Cancelled`]; the failure at the lowest position, a panic of a branch at its
    /// start; a stall of a branch's run.
    pub fn branches<T, E>(
        &self,
        control: &Control,
        starts: &[usize],
        branch: impl Fn(usize, &Pool) -> Result<T, Error<E>> + Sync,
    ) -> Result<Vec<T>, Error<E>>
    where
        T: Send,
        E: Send,
    {
        let budgets = budgets(self.workers(), starts.len());
        let tasks = starts
            .iter()
            .zip(budgets)
            .enumerate()
            .map(|(i, (&start, budget))| (start, (i, budget)))
            .collect();
        self.run_watched(control, tasks, false, |_, start, (i, budget)| {
            branch(i, &self.with_budget(budget)).map_err(|e| e.shifted(start))
        })
    }

    /// Runs `left` and `right` in parallel, each on a view of this pool with half its worker
    /// budget (the left taking the odd one), and returns both results: a fork-join that keeps
    /// the contract. `left` covers the positions before `split`, `right` those from `split` on
    /// (its failures are moved by `split`), so the left branch's failure wins over the right's.
    /// In parallel, a failing left branch does not stop the right one early: it runs to its end
    /// and its result is dropped (on one worker the right branch never starts).
    ///
    /// # Errors
    /// [`Error::Cancelled`]; the left branch's failure, else the right's; a panic of a branch
    /// at its start (0 or `split`).
    pub fn join<A, B, E>(
        &self,
        control: &Control,
        split: usize,
        left: impl FnOnce(&Pool) -> Result<A, Error<E>> + Send,
        right: impl FnOnce(&Pool) -> Result<B, Error<E>> + Send,
    ) -> Result<(A, B), Error<E>>
    where
        A: Send,
        B: Send,
        E: Send,
    {
        if control.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let shares = budgets(self.workers(), 2);
        let (left_view, right_view) = (self.with_budget(shares[0]), self.with_budget(shares[1]));
        let left = move || caught(0, || left(&left_view));
        let right = move || caught(0, || right(&right_view)).map_err(|e| e.shifted(split));
        let (a, b) = match self.threads() {
            Some(threads) if self.workers() > 1 => {
                threads.rayon.install(|| rayon::join(left, right))
            }
            // The serial loop stops at the left branch's failure.
            _ => (Ok(left()?), right()),
        };
        if control.is_cancelled() {
            return Err(Error::Cancelled);
        }
        match (a, b) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
            // Both failed: as a run decides, the positioned failure first (the left's is lower),
            // then the left's.
            (Err(left), Err(right)) => Err(match (left.position(), right.position()) {
                (None, Some(_)) => right,
                _ => left,
            }),
        }
    }
}

/// `count` shares of `workers` (the first ones one larger), each at least 1.
fn budgets(workers: usize, count: usize) -> Vec<usize> {
    if count == 0 {
        return Vec::new();
    }
    let mut shares: Vec<usize> = split::balanced(workers.max(count), count)
        .into_iter()
        .map(|r| r.len())
        .collect();
    if workers < count {
        shares.iter_mut().for_each(|s| *s = 1);
    }
    shares
}

/// `body`'s result, or its panic as [`Error::Panic`] at `position`.
fn caught<T, E>(
    position: usize,
    body: impl FnOnce() -> Result<T, Error<E>>,
) -> Result<T, Error<E>> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(Error::Panic {
            position,
            message: panic_message(payload.as_ref()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::budgets;

    #[test]
    fn budgets_share_the_workers() {
        assert_eq!(budgets(8, 2), [4, 4]);
        assert_eq!(budgets(5, 2), [3, 2]);
        assert_eq!(budgets(16, 4), [4, 4, 4, 4]);
        assert_eq!(budgets(2, 8), [1; 8]);
        assert!(budgets(4, 0).is_empty());
    }
}
