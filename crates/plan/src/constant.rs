//! Constants as plans write them: a JSON number that fits the dtype, or for floats one of the
//! strings "nan", "inf", "-inf" (JSON has no such numbers). An `f32` constant is the JSON
//! number read as `f64`, then rounded to `f32` (as numpy's `np.float32(0.1)` is).

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
                        "\"{other}\" is not a number (a float constant is a JSON number, \"nan\", \"inf\" or \"-inf\")"
                    ));
                }
            },
            other => return Err(format!("{other} is not a number")),
        };
        #[allow(
            clippy::cast_possible_truncation,
            reason = "f32 constants round from f64"
        )]
        return Ok(match dtype {
            DType::F32 => Array::F32(vec![x as f32]),
            _ => Array::F64(vec![x]),
        });
    }
    let serde_json::Value::Number(n) = value else {
        return Err(format!("{value} is not an integer"));
    };
    let wide: i128 = if let Some(i) = n.as_i64() {
        i128::from(i)
    } else if let Some(u) = n.as_u64() {
        i128::from(u)
    } else {
        return Err(format!("{n} is not an integer"));
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
        .map_err(|_| format!("{wide} does not fit {dtype}"))
}
