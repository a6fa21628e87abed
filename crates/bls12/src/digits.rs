//! Signed window digits of a 128-bit half-scalar, read one window at a time.
//!
//! With windows of `c` bits, `h = sum_j d_j 2^(c j)` with every digit in `(-2^(c-1), 2^(c-1)]`:
//! that digit set is a complete residue system modulo `2^c`, so the representation is unique,
//! and a window's digit follows from `h` alone: its `c` bits, plus one when the bits below the
//! window exceed `2^(c-1) (1 + 2^c + ... + 2^(c(j-1)))`, the largest value the lower digits
//! reach (their carry). No digit array is kept: a task reads its window's digits straight from
//! the halves. Buckets hold `|d|` from 1 to `2^(c-1)`, half as many as unsigned digits need.

/// The widest window: digits and bucket indices fit `u32` with room, and `2^(c-1)` buckets of
/// G2 points (192 bytes each) stay within 400 MB.
pub(crate) const MAX_WINDOW: u32 = 21;

/// Windows of `c` bits that cover halves of `bits` bits, a final carry included.
pub(crate) fn windows(bits: u32, c: u32) -> u32 {
    (bits + 1).div_ceil(c)
}

/// Window `j` of `c` bits: what reading its digit from a half needs, computed once a window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    c: u32,
    shift: u32,
    /// The most the digits below this window sum to; more carries one into it.
    carry_bound: u128,
}

impl Window {
    /// Window `j` of `c` bits, for `c` in `2..=MAX_WINDOW` and `j < windows(128, c)`.
    ///
    /// # Panics
    /// Outside those bounds (an invariant of the callers' plans).
    pub(crate) fn new(c: u32, j: u32) -> Self {
        assert!(
            (2..=MAX_WINDOW).contains(&c),
            "invariant: a window of 2 to 21 bits"
        );
        assert!(
            c * j <= 128,
            "invariant: a window that starts within 128 bits"
        );
        // 2^(c-1) (1 + 2^c + ... + 2^(c(j-1))): bits c-1, 2c-1, ..., cj-1 <= 127.
        let carry_bound = (0..j).fold(0u128, |bound, i| bound | 1u128 << (c * i + c - 1));
        Self {
            c,
            shift: c * j,
            carry_bound,
        }
    }

    /// The digit of `h` in this window: `(magnitude, negative)`, magnitude 0 for none.
    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the bits are masked to c <= 21 first"
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
            ((h >> self.shift) & ((1u128 << self.c) - 1)) as u32
        };
        let value = bits + carry;
        if value > 1u32 << (self.c - 1) {
            ((1u32 << self.c) - value, true)
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
    fn recoded(h: u128, c: u32) -> Vec<i64> {
        let mut carry = 0u128;
        let mut out = Vec::new();
        for j in 0..windows(128, c) {
            let shift = c * j;
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
        }
        assert_eq!(carry, 0, "the windows hold the final carry");
        out
    }

    fn read(h: u128, c: u32) -> Vec<i64> {
        (0..windows(128, c))
            .map(|j| {
                let (m, negative) = Window::new(c, j).digit(h);
                assert!(m <= 1 << (c - 1));
                if negative {
                    -i64::from(m)
                } else {
                    i64::from(m)
                }
            })
            .collect()
    }

    fn value(digits: &[i64], c: u32) -> i128 {
        // Sums fit i128 only through 127 bits; compare as wrapping u128 instead.
        digits.iter().rev().fold(0i128, |acc, &d| {
            acc.wrapping_shl(c).wrapping_add(i128::from(d))
        })
    }

    #[test]
    fn edge_halves_read_as_recoded() {
        for c in 2..=MAX_WINDOW {
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
                assert_eq!(read(h, c), recoded(h, c), "h = {h:#x}, c = {c}");
                assert_eq!(value(&read(h, c), c) as u128, h);
            }
        }
    }

    proptest! {
        #[test]
        fn random_halves_read_as_recoded(h in any::<u128>(), c in 2..=MAX_WINDOW) {
            prop_assert_eq!(read(h, c), recoded(h, c));
            prop_assert_eq!(value(&read(h, c), c) as u128, h);
        }
    }
}
