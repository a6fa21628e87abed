//! One window's buckets over one range of points, accumulated in affine coordinates a batch at
//! a time.
//!
//! Adding `P` to an affine bucket `B` (distinct x) costs `lambda = (Py - By) / (Px - Bx)`,
//! `x = lambda^2 - Bx - Px`, `y = lambda (Bx - x) - By`: with one inversion shared by a whole
//! batch (Montgomery's trick, three multiplications an element), five multiplications and a
//! squaring an addition, against about eleven for a mixed projective one.
//!
//! A batch takes each bucket at most once. A point for a bucket already in the batch waits in a
//! bounded queue and joins a later batch; when the queue is full it goes to the bucket's
//! projective overflow sum instead, so a run of points for one bucket (a witness of ones, a
//! repeated point) costs a projective addition each, never a batch of one. `P = B` doubles
//! the bucket and `P = -B` empties it, outside the batch. The sum is exact whatever the batch
//! and queue sizes: they change the cost only.

#[cfg(not(target_arch = "x86_64"))]
use blst::{blst_fp, blst_fp2};
use group::Group;

use crate::curve::Curve;
use crate::field::Coordinate;

/// A base field's batch-affine kernel over many additions at once, where the CPU has one
/// (`ifma.rs`: Fp and Fp2 on AVX-512 IFMA); the buckets add one at a time otherwise.
pub(crate) trait Lanes: Coordinate {
    /// The kernel's buffers, kept between batches.
    type Scratch: Default + Send;
    /// Whether the kernel runs on this CPU.
    fn has_kernel() -> bool;
    /// Applies every addition to its slot (`slots[a.bucket] += (a.x, a.y)`), the slots of a
    /// batch distinct and each addition's x distinct from its slot's.
    fn add_batch(scratch: &mut Self::Scratch, slots: &mut [(Self, Self)], batch: &[Addition<Self>]);
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for blst_fp2 {
    type Scratch = ();
    fn has_kernel() -> bool {
        false
    }
    fn add_batch(_: &mut (), _: &mut [(Self, Self)], _: &[Addition<Self>]) {
        unreachable!("invariant: no kernel is ever chosen off x86-64")
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for blst_fp {
    type Scratch = ();
    fn has_kernel() -> bool {
        false
    }
    fn add_batch(_: &mut (), _: &mut [(Self, Self)], _: &[Addition<Self>]) {
        unreachable!("invariant: no kernel is ever chosen off x86-64")
    }
}

/// Segments of the batch-affine reduction: one batch of this many additions a step.
const LANES: usize = 256;

/// Segment `s` as a bucket index (below [`LANES`]).
fn lane(s: usize) -> u32 {
    u32::try_from(s).expect("invariant: fewer segments than u32::MAX")
}

/// A bucket's state.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    Filled,
    /// Filled, and the target of an addition in the current batch.
    Busy,
}

/// An addition waiting in the batch or the queue: the point's coordinates, sign applied.
pub(crate) struct Addition<F> {
    pub(crate) bucket: u32,
    pub(crate) x: F,
    pub(crate) y: F,
}

/// Affine buckets `1..=count` of one window (index `b` holds multiplier `b + 1`).
pub(crate) struct Buckets<C: Curve> {
    slots: Vec<(C::Base, C::Base)>,
    states: Vec<State>,
    overflow: Vec<C::Projective>,
    batch: Vec<Addition<C::Base>>,
    batch_size: usize,
    queue: Vec<Addition<C::Base>>,
    /// The queue being replayed, kept to reuse its allocation.
    replay: Vec<Addition<C::Base>>,
    queue_size: usize,
    /// Products of the denominators before each batch entry.
    prefix: Vec<C::Base>,
    /// Whether batches go through the field's vector kernel.
    vector: bool,
    scratch: <C::Base as Lanes>::Scratch,
}

impl<C: Curve> Buckets<C>
where
    C::Base: Lanes,
{
    /// Empty buckets, adding in batches of `batch_size` with a queue of as many, through the
    /// field's vector kernel when `vector` and the CPU has it.
    pub(crate) fn new(count: usize, batch_size: usize, vector: bool) -> Self {
        let batch_size = batch_size.max(1);
        Self {
            slots: vec![(C::Base::default(), C::Base::default()); count],
            states: vec![State::Empty; count],
            overflow: Vec::new(),
            batch: Vec::with_capacity(2 * batch_size),
            batch_size,
            queue: Vec::with_capacity(batch_size),
            replay: Vec::with_capacity(batch_size),
            queue_size: batch_size,
            prefix: Vec::with_capacity(2 * batch_size),
            vector: vector && <C::Base as Lanes>::has_kernel(),
            scratch: Default::default(),
        }
    }

    /// Reads bucket `bucket` into the cache ahead of an addition to it (a hint: no effect on
    /// any sum).
    #[inline]
    pub(crate) fn prefetch(&self, bucket: u32) {
        crate::ffi::prefetch(&self.states[bucket as usize]);
        crate::ffi::prefetch(&self.slots[bucket as usize]);
    }

    /// Adds the point `(x, y)` to bucket `bucket`.
    #[inline]
    pub(crate) fn add(&mut self, bucket: u32, x: C::Base, y: C::Base) {
        self.schedule(Addition { bucket, x, y });
        if self.batch.len() >= self.batch_size {
            self.run_batch();
        }
    }

    /// The window's sum, `sum (b + 1) * bucket_b`, once every point is added.
    ///
    /// With [`LANES`] buckets or more, batch-affine: the buckets are cut into `LANES` segments of
    /// `m`, and every segment runs its own running sum `R_s` and total `T_s = sum (j + 1)
    /// B_(s m + j)` in step with the others, each step one batch of `LANES` additions into the
    /// runnings and one into the totals (two affine additions a bucket, against a mixed and a
    /// projective one); then `sum T_s + m sum s R_s`. Fewer buckets: projective running sums.
    pub(crate) fn sum(mut self) -> C::Projective {
        self.flush();
        let count = self.slots.len();
        let mut total = if count >= 4 * LANES {
            self.sum_in_segments()
        } else {
            let mut running = C::Projective::identity();
            let mut total = C::Projective::identity();
            for b in (0..count).rev() {
                if let Some(point) = self.point(b) {
                    running += &point;
                }
                total += &running;
            }
            total
        };
        if !self.overflow.is_empty() {
            let mut running = C::Projective::identity();
            let mut extra = C::Projective::identity();
            for sum in self.overflow.iter().rev() {
                running += sum;
                extra += &running;
            }
            total += &extra;
        }
        total
    }

    /// The plain sum of every point added, whatever its bucket: `sum bucket_b` (for points of
    /// scalar one, spread over the buckets only so that a batch's additions do not collide).
    pub(crate) fn total(mut self) -> C::Projective {
        self.flush();
        let mut total = C::Projective::identity();
        for b in 0..self.slots.len() {
            if let Some(point) = self.point(b) {
                total += &point;
            }
        }
        for sum in &self.overflow {
            total += sum;
        }
        total
    }

    /// Runs batches until every addition is applied.
    fn flush(&mut self) {
        while !self.batch.is_empty() || !self.queue.is_empty() {
            self.run_batch();
        }
    }

    /// Bucket `b`'s affine point, if it holds one (its overflow aside).
    fn point(&self, b: usize) -> Option<C::Affine> {
        (self.states[b] == State::Filled).then(|| {
            let (x, y) = self.slots[b];
            C::from_coordinates(x, y)
        })
    }

    /// [`sum`](Self::sum)'s batch-affine reduction of the affine buckets (`4 LANES` or more, a
    /// power of two).
    fn sum_in_segments(&self) -> C::Projective {
        let count = self.slots.len();
        assert!(
            count.is_power_of_two() && count >= LANES,
            "invariant: 2^(c-1) buckets, at least one a segment"
        );
        let m = count / LANES;
        let mut running = Buckets::<C>::new(LANES, LANES, self.vector);
        let mut totals = Buckets::<C>::new(LANES, LANES, self.vector);
        for j in (0..m).rev() {
            for s in 0..LANES {
                let b = s * m + j;
                if self.states[b] == State::Filled {
                    let (x, y) = self.slots[b];
                    running.add(lane(s), x, y);
                }
            }
            running.flush();
            for s in 0..LANES {
                if running.states[s] == State::Filled {
                    let (x, y) = running.slots[s];
                    totals.add(lane(s), x, y);
                }
            }
            totals.flush();
        }
        // sum T_s, then m sum s R_s by a running sum over the segments and doublings (m is a
        // power of two).
        let mut sum = C::Projective::identity();
        for s in 0..LANES {
            if let Some(point) = totals.point(s) {
                sum += &point;
            }
        }
        let mut acc = C::Projective::identity();
        let mut weighted = C::Projective::identity();
        for s in (1..LANES).rev() {
            if let Some(point) = running.point(s) {
                acc += &point;
            }
            weighted += &acc;
        }
        for _ in 0..m.trailing_zeros() {
            weighted = weighted.double();
        }
        sum + weighted
    }

    fn schedule(&mut self, addition: Addition<C::Base>) {
        let b = addition.bucket as usize;
        match self.states[b] {
            State::Busy => {
                if self.queue.len() < self.queue_size {
                    self.queue.push(addition);
                } else {
                    if self.overflow.is_empty() {
                        self.overflow = vec![C::Projective::identity(); self.slots.len()];
                    }
                    self.overflow[b] += &C::from_coordinates(addition.x, addition.y);
                }
            }
            State::Empty => {
                self.slots[b] = (addition.x, addition.y);
                self.states[b] = State::Filled;
            }
            State::Filled => {
                let (bx, by) = self.slots[b];
                if bx.equals(&addition.x) {
                    // The same point (doubled) or its negative (the bucket empties); rare, so
                    // outside the batch, through the projective form.
                    let point = C::from_coordinates(bx, by);
                    let mut sum = C::Projective::identity();
                    sum += &point;
                    sum += &C::from_coordinates(addition.x, addition.y);
                    match C::coordinates(&C::to_affine(&sum)) {
                        Some(xy) => self.slots[b] = xy,
                        None => self.states[b] = State::Empty,
                    }
                } else {
                    self.states[b] = State::Busy;
                    self.batch.push(addition);
                }
            }
        }
    }

    /// Applies the batch with one inversion, then schedules the queue again.
    fn run_batch(&mut self) {
        if self.vector && self.batch.len() >= 8 {
            <C::Base as Lanes>::add_batch(&mut self.scratch, &mut self.slots, &self.batch);
            for addition in &self.batch {
                self.states[addition.bucket as usize] = State::Filled;
            }
            self.batch.clear();
        } else if !self.batch.is_empty() {
            // prefix[k] = d_0 d_1 ... d_k for the denominators d_k = x_k - Bx_k.
            self.prefix.clear();
            let mut product = C::Base::default();
            for (k, addition) in self.batch.iter().enumerate() {
                let dx = addition.x.sub(&self.slots[addition.bucket as usize].0);
                product = if k == 0 { dx } else { product.mul(&dx) };
                self.prefix.push(product);
            }
            assert!(
                !product.is_zero(),
                "invariant: distinct x in every addition"
            );
            let mut inverse = product.inverse();
            for k in (0..self.batch.len()).rev() {
                let addition = &self.batch[k];
                let b = addition.bucket as usize;
                let (bx, by) = self.slots[b];
                // 1 / d_k, then the inverse of the product before it.
                let inv_dx = if k == 0 {
                    inverse
                } else {
                    let inv_dx = inverse.mul(&self.prefix[k - 1]);
                    inverse = inverse.mul(&addition.x.sub(&bx));
                    inv_dx
                };
                let lambda = addition.y.sub(&by).mul(&inv_dx);
                let x = lambda.square().sub(&bx).sub(&addition.x);
                let y = lambda.mul(&bx.sub(&x)).sub(&by);
                self.slots[b] = (x, y);
                self.states[b] = State::Filled;
            }
            self.batch.clear();
        }
        std::mem::swap(&mut self.queue, &mut self.replay);
        let mut replay = std::mem::take(&mut self.replay);
        for addition in replay.drain(..) {
            self.schedule(addition);
        }
        self.replay = replay;
    }
}
