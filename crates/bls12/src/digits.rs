//! Signed window digits of a 128-bit half-scalar, read one window at a time.
//!
//! Windows `j` of `w_j` bits at offsets `o_j`: `h = sum_j d_j 2^(o_j)` with every digit in
//! `(-2^(w_j-1), 2^(w_j-1)]`. Each digit set is a complete residue system modulo `2^(w_j)`, so
//! the representation is unique, and a window's digit follows from `h` alone: its `w_j` bits,
//! plus one when the bits below the window exceed `sum_(i<j) 2^(o_i + w_i - 1)`, the largest
//! value the lower digits reach (their carry). No digit array is kept: a task reads its
//! window's digits straight from the halves. Buckets hold `|d|` from 1 to `2^(w_j-1)`, half as
//! many as unsigned digits need.
//!
//! # Widths
//! [`layout`] spreads the bits evenly: `k` windows of `floor(B / k)` or `ceil(B / k)` bits,
//! `B` the halves' bits plus one for the final carry, never a top window of a few bits.
//! Windows of one width `c` over 128 bits leave the top one `128 - c (k - 1)` bits (2 at
//! `c = 14`, none but the carry at 16): every half's digit then falls in a handful of buckets,
//! a batch of them collides and each collision is a projective addition, one window costing
//! several.

/// The widest window: digits and bucket indices fit `u32` with room, and `2^(c-1)` buckets of
/// G2 points (192 bytes each) stay within 400 MB.
pub(crate) const MAX_WINDOW: u32 = 21;

/// Windows of at most `c` bits that cover halves of `bits` bits, a final carry included.
pub(crate) fn windows(bits: u32, c: u32) -> u32 {
    (bits + 1).div_ceil(c)
}

/// The widest of the `k` windows [`layout`] spreads `bits` bits and a carry over.
pub(crate) fn widest(bits: u32, k: u32) -> u32 {
    (bits + 1).div_ceil(k)
}

/// `k` windows over halves of `bits` bits and a final carry, lowest first, their widths
/// `floor((bits + 1) / k)` or one more (the wider ones lowest), for `bits <= 128` and `k`
/// from `windows(bits, MAX_WINDOW)` to `bits + 1`.
///
/// # Panics
/// Outside those bounds (an invariant of the callers' plans).
pub(crate) fn layout(bits: u32, k: u32) -> Vec<Window> {
    let total = bits + 1;
    assert!(
        bits <= 128 && k >= 1 && k <= total && widest(bits, k) <= MAX_WINDOW,
        "invariant: 1 to {total} windows of 1 to 21 bits"
    );
    let (narrow, wider) = (total / k, total % k);
    let mut out = Vec::with_capacity(k as usize);
    let mut shift = 0;
    let mut carry_bound = 0u128;
    for j in 0..k {
        let width = narrow + u32::from(j < wider);
        out.push(Window {
            width,
            shift,
            carry_bound,
        });
        // The lower digits' largest sum gains this window's largest digit, 2^(shift + width - 1)
        // (below 2^128: only the top window reaches past bit 127, and nothing is above it).
        if shift + width <= 128 {
            carry_bound |= 1u128 << (shift + width - 1);
        }
        shift += width;
    }
    out
}

/// One window: what reading its digit from a half needs, computed once a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    width: u32,
    shift: u32,
    /// The most the digits below this window sum to; more carries one into it.
    carry_bound: u128,
}

impl Window {
    /// The window's width in bits: its digits' magnitudes run to `2^(width - 1)`.
    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    /// The digit of `h` in this window: `(magnitude, negative)`, magnitude 0 for none.
    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the bits are masked to a width <= 21 first"
    )]
    pub(crate) fn digit(&self, h: u128) -> (u32, bool) {
        let carry = if self.shift == 0 {
            0
        } else {
            let low = if self.shift >= 128 {
                h
            } else {
                h & ((1u128 << self.shift) - 1)
            };
            u32::from(low > self.carry_bound)
        };
        let bits = if self.shift >= 128 {
            0
        } else {
            ((h >> self.shift) & ((1u128 << self.width) - 1)) as u32
        };
        let value = bits + carry;
        if value > 1u32 << (self.width - 1) {
            ((1u32 << self.width) - value, true)
        } else {
            (value, false)
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "limb and digit splits in test references"
)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The digits by the usual carry-propagating recoding, window after window.
    fn recoded(h: u128, widths: &[u32]) -> Vec<i64> {
        let mut carry = 0u128;
        let mut shift = 0;
        let mut out = Vec::new();
        for &c in widths {
            let bits = if shift >= 128 {
                0
            } else {
                (h >> shift) & ((1u128 << c) - 1)
            };
            let value = bits + carry;
            if value > 1u128 << (c - 1) {
                out.push(value as i64 - (1i64 << c));
                carry = 1;
            } else {
                out.push(value as i64);
                carry = 0;
            }
            shift += c;
        }
        assert_eq!(carry, 0, "the windows hold the final carry");
        out
    }

    fn read(h: u128, windows: &[Window]) -> Vec<i64> {
        windows
            .iter()
            .map(|w| {
                let (m, negative) = w.digit(h);
                assert!(m <= 1 << (w.width() - 1));
                if negative {
                    -i64::from(m)
                } else {
                    i64::from(m)
                }
            })
            .collect()
    }

    fn value(digits: &[i64], widths: &[u32]) -> u128 {
        // Sums fit i128 only through 127 bits; compare as wrapping u128 instead.
        digits
            .iter()
            .zip(widths)
            .rev()
            .fold(0i128, |acc, (&d, &c)| {
                acc.wrapping_shl(c).wrapping_add(i128::from(d))
            }) as u128
    }

    fn check(h: u128, bits: u32, k: u32) {
        let windows = layout(bits, k);
        let widths: Vec<u32> = windows.iter().map(Window::width).collect();
        assert_eq!(widths.len(), k as usize);
        assert_eq!(widths.iter().sum::<u32>(), bits + 1, "{widths:?}");
        assert!(
            widths.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
            "{widths:?}"
        );
        let digits = read(h, &windows);
        assert_eq!(digits, recoded(h, &widths), "h = {h:#x}, {widths:?}");
        assert_eq!(value(&digits, &widths), h, "h = {h:#x}, {widths:?}");
    }

    #[test]
    fn edge_halves_read_as_recoded() {
        for c in 2..=MAX_WINDOW {
            let k = windows(128, c);
            assert!(widest(128, k) <= c);
            for h in [
                0,
                1,
                2,
                u128::MAX,
                u128::MAX >> 1,
                1 << 127,
                (1 << 127) - 1,
                0x8000,
            ] {
                check(h, 128, k);
            }
        }
    }

    #[test]
    fn narrow_halves_and_many_windows_read_as_recoded() {
        for bits in [1, 2, 63, 64, 65, 100, 127] {
            for k in [windows(bits, MAX_WINDOW), windows(bits, 7), bits + 1] {
                let h = u128::MAX >> (128 - bits);
                check(h, bits, k);
                check(h >> 1, bits, k);
                check(1, bits, k);
            }
        }
    }

    proptest! {
        #[test]
        fn random_halves_read_as_recoded(h in any::<u128>(), c in 2..=MAX_WINDOW) {
            check(h, 128, windows(128, c));
        }

        #[test]
        fn random_short_halves_read_as_recoded(h in any::<u64>(), k in 4u32..=65) {
            check(u128::from(h), 64, k);
        }
    }
}
