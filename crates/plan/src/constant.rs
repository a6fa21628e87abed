//! Constants as plans write them: a JSON number that fits the dtype, or for floats one of the
//! strings "nan", "inf", "-inf" (JSON has no such numbers). An `f32` constant is the JSON
//! number read as `f64`, then rounded to `f32` (as numpy's `np.float32(0.1)` is).

use crate::quote::quoted;
use crate::{Array, DType};

pub(crate) fn parse(dtype: DType, value: &serde_json::Value) -> Result<Array, String> {
    if dtype.is_float() {
        let x = match value {
            serde_json::Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| format!("{n} is not a number an {dtype} can hold"))?,
            serde_json::Value::String(s) => match s.as_str() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                other => {
                    return Err(format!(
                        "{} is not a number (a float constant is a JSON number, \"nan\", \"inf\" or \"-inf\")",
                        quoted(other)
                    ));
                }
            },
            other => {
                return Err(format!("{} is not a number", quoted(&other.to_string())));
            }
        };
        #[allow(
            clippy::cast_possible_truncation,
            reason = "f32 constants round from f64; a finite value that overflows is refused"
        )]
        return match dtype {
            DType::F32 if x.is_finite() && (x as f32).is_infinite() => Err(format!(
                "{x:e} does not fit f32 (its largest finite value is {:e}); write \"inf\" for infinity",
                f32::MAX
            )),
            DType::F32 => Ok(Array::F32(vec![x as f32])),
            _ => Ok(Array::F64(vec![x])),
        };
    }
    let serde_json::Value::Number(n) = value else {
        return Err(format!("{} is not an integer", quoted(&value.to_string())));
    };
    let (min, max) = range(dtype);
    let wide: i128 = if let Some(i) = n.as_i64() {
        i128::from(i)
    } else if let Some(u) = n.as_u64() {
        i128::from(u)
    } else {
        // A JSON number written with a fraction or an exponent (`1e3`): an integer if its value
        // is one, as numpy's `np.uint32(1e3)` is.
        let x = n.as_f64().unwrap_or(f64::NAN);
        if x.fract() != 0.0 || !x.is_finite() {
            return Err(format!("{n} is not an integer"));
        }
        if x < min as f64 || x > max as f64 {
            return Err(format!("{x:e} does not fit {dtype} ({min} to {max})"));
        }
        #[allow(
            clippy::cast_possible_truncation,
            reason = "an integral value within the dtype's range, checked just above"
        )]
        let exact = x as i128;
        exact
    };
    macro_rules! fit {
        ($($D:ident => $T:ty),*) => {
            match dtype {
                $(DType::$D => <$T>::try_from(wide).map(|v| Array::from(vec![v])),)*
                DType::F32 | DType::F64 => unreachable!("invariant: floats are read above"),
            }
        };
    }
    fit!(I8 => i8, U8 => u8, I16 => i16, U16 => u16, I32 => i32, U32 => u32)
        .map_err(|_| format!("{wide} does not fit {dtype} ({min} to {max})"))
}

/// The smallest and largest values of an integer dtype.
fn range(dtype: DType) -> (i128, i128) {
    match dtype {
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::U8 => (0, u8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::U16 => (0, u16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::U32 => (0, u32::MAX.into()),
        DType::F32 | DType::F64 => (i128::MIN, i128::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_that_do_not_fit_are_refused_and_integral_ones_accepted() {
        // It became +inf silently.
        assert_eq!(
            parse(DType::F32, &json!(1e39)).unwrap_err(),
            "1e39 does not fit f32 (its largest finite value is 3.4028235e38); write \"inf\" for infinity"
        );
        assert_eq!(
            parse(DType::F64, &json!(1e39)).unwrap(),
            Array::F64(vec![1e39])
        );
        assert_eq!(
            parse(DType::F32, &json!("inf")).unwrap(),
            Array::F32(vec![f32::INFINITY])
        );
        // "1000.0 is not an integer" for a u32 1e3; "1.2e+29 is not an integer".
        assert_eq!(
            parse(DType::U32, &json!(1e3)).unwrap(),
            Array::U32(vec![1000])
        );
        assert_eq!(
            parse(DType::U32, &json!(1.2e29)).unwrap_err(),
            "1.2e29 does not fit u32 (0 to 4294967295)"
        );
        assert_eq!(
            parse(DType::I8, &json!(2.5)).unwrap_err(),
            "2.5 is not an integer"
        );
        assert_eq!(
            parse(DType::U8, &json!(300)).unwrap_err(),
            "300 does not fit u8 (0 to 255)"
        );
        let long = json!("x".repeat(10_000));
        assert!(parse(DType::I32, &long).unwrap_err().len() < 100);
    }
}
