//! The numbers a front end's caller passes (a JS number, a Python int or float), read as whole
//! counts by one rule: finite, not negative, no fraction, at most 2^53 (the largest whole
//! number a JS number holds exactly, so a count means the same on every front end).

/// The largest whole number a JS number holds exactly: 2^53.
pub const MAX_WHOLE: u64 = 1 << 53;

/// `value` as a whole count in `[0, 2^53]`, else `None`.
pub fn whole(value: f64) -> Option<u64> {
    #[allow(clippy::cast_precision_loss, reason = "2^53 is exact in an f64")]
    let max = MAX_WHOLE as f64;
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= max {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a whole number in [0, 2^53]"
        )]
        Some(value as u64)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_counts_are_finite_non_negative_unfractioned_and_at_most_2_pow_53() {
        assert_eq!(whole(0.0), Some(0));
        assert_eq!(whole(-0.0), Some(0));
        assert_eq!(whole(4096.0), Some(4096));
        assert_eq!(whole(9_007_199_254_740_992.0), Some(1 << 53));
        for refused in [
            -1.0,
            0.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            18_014_398_509_481_984.0,
        ] {
            assert_eq!(whole(refused), None, "{refused}");
        }
    }
}
