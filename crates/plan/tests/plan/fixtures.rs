//! Arrays with the values that find bugs: NaN, infinities, -0.0, subnormals, integer extremes.

use lockstep_plan::{Array, DType};

/// `n` elements of `dtype`: a deterministic mix of special values and pseudo-random ones.
pub(crate) fn values(dtype: DType, n: usize, seed: u64) -> Array {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    macro_rules! ints {
        ($T:ty) => {{
            let special = [<$T>::MIN, <$T>::MAX, 0, 1, 0, 2, <$T>::MIN.wrapping_add(1)];
            Array::from(
                (0..n)
                    .map(|i| {
                        let r = next();
                        if i % 5 == 0 {
                            special[(r % special.len() as u64) as usize]
                        } else {
                            r as $T
                        }
                    })
                    .collect::<Vec<$T>>(),
            )
        }};
    }
    macro_rules! floats {
        ($T:ty) => {{
            let special = [
                <$T>::NAN,
                <$T>::INFINITY,
                <$T>::NEG_INFINITY,
                0.0,
                -0.0,
                <$T>::MIN_POSITIVE / 4.0,
                <$T>::MAX,
                <$T>::MIN,
                1.0,
                -1.0,
            ];
            Array::from(
                (0..n)
                    .map(|i| {
                        let r = next();
                        if i % 4 == 0 {
                            special[(r % special.len() as u64) as usize]
                        } else {
                            ((r >> 11) as $T / (1u64 << 40) as $T - 4096.0)
                                * if r & 1 == 0 { 1.0 } else { 1e-3 }
                        }
                    })
                    .collect::<Vec<$T>>(),
            )
        }};
    }
    match dtype {
        DType::I8 => ints!(i8),
        DType::U8 => ints!(u8),
        DType::I16 => ints!(i16),
        DType::U16 => ints!(u16),
        DType::I32 => ints!(i32),
        DType::U32 => ints!(u32),
        DType::F32 => floats!(f32),
        DType::F64 => floats!(f64),
    }
}

/// `array` with every zero replaced by 1 (divisors that must not fail).
pub(crate) fn nonzero(array: Array) -> Array {
    macro_rules! fix {
        ($v:expr) => {
            $v.into_iter()
                .map(|x| if x == 0 { 1 } else { x })
                .collect::<Vec<_>>()
                .into()
        };
    }
    match array {
        Array::I8(v) => fix!(v),
        Array::U8(v) => fix!(v),
        Array::I16(v) => fix!(v),
        Array::U16(v) => fix!(v),
        Array::I32(v) => fix!(v),
        Array::U32(v) => fix!(v),
        other => other,
    }
}
