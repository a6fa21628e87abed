//! numpy's `.npy` files, one-dimensional and little-endian, so Python users can hand arrays
//! over: `np.save("x.npy", np.arange(10, dtype=np.float32))`.
//!
//! Read: format versions 1.0, 2.0 and 3.0; dtypes `i1 u1 i2 u2 i4 u4 f4 f8` (little-endian or
//! byte-order free); shape `(n,)`. Written: version 1.0, the header padded to 64 bytes as numpy
//! does.

use crate::{Array, DType};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Why bytes are not a `.npy` this crate reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NpyError {
    /// The file does not start with numpy's magic string.
    #[error("not a .npy file (no \\x93NUMPY magic)")]
    Magic,
    /// A format version other than 1.0, 2.0, 3.0.
    #[error(".npy format version {0}.{1} is not supported (1.0, 2.0, 3.0 are)")]
    Version(u8, u8),
    /// The header is cut short or is not the dictionary numpy writes.
    #[error(".npy header: {0}")]
    Header(String),
    /// A dtype other than the eight lockstep computes in.
    #[error(".npy dtype '{0}' is not supported (i1, u1, i2, u2, i4, u4, f4, f8, little-endian)")]
    Dtype(String),
    /// More or fewer than one dimension.
    #[error(".npy shape {0} is not one-dimensional (a plan's arrays are (n,))")]
    Shape(String),
    /// The data after the header is not `n` elements.
    #[error(".npy data: the header says {expected} bytes, the file holds {found}")]
    Length {
        /// Bytes the header's shape and dtype need.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
}

/// The array a `.npy` file holds.
///
/// # Errors
/// [`NpyError`] naming what is wrong: magic, version, header, dtype, shape or data length.
pub fn read(bytes: &[u8]) -> Result<Array, NpyError> {
    let rest = bytes.strip_prefix(MAGIC).ok_or(NpyError::Magic)?;
    let [major, minor, rest @ ..] = rest else {
        return Err(NpyError::Header("cut short".to_owned()));
    };
    let (header_len, rest) = match major {
        1 => {
            let [a, b, rest @ ..] = rest else {
                return Err(NpyError::Header("cut short".to_owned()));
            };
            (usize::from(u16::from_le_bytes([*a, *b])), rest)
        }
        2 | 3 => {
            let [a, b, c, d, rest @ ..] = rest else {
                return Err(NpyError::Header("cut short".to_owned()));
            };
            let len = u32::from_le_bytes([*a, *b, *c, *d]);
            (usize::try_from(len).unwrap_or(usize::MAX), rest)
        }
        _ => return Err(NpyError::Version(*major, *minor)),
    };
    if *minor != 0 {
        return Err(NpyError::Version(*major, *minor));
    }
    let header = rest
        .get(..header_len)
        .ok_or_else(|| NpyError::Header(format!("{header_len} bytes announced, fewer present")))?;
    let header =
        std::str::from_utf8(header).map_err(|_| NpyError::Header("not text".to_owned()))?;
    let data = &rest[header_len..];
    let descr = field(header, "descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.strip_suffix('\''))
        .ok_or_else(|| NpyError::Header(format!("descr {descr} is not a quoted string")))?;
    let dtype = dtype_of(descr)?;
    let shape = field(header, "shape")?;
    let n = one_dimension(shape)?;
    let expected = (n as u64).saturating_mul(dtype.size() as u64);
    if expected != data.len() as u64 {
        return Err(NpyError::Length {
            expected,
            found: data.len() as u64,
        });
    }
    Array::from_le_bytes(dtype, data).map_err(|e| NpyError::Header(e.to_string()))
}

/// `array` as a version 1.0 `.npy` file.
pub fn write(array: &Array) -> Vec<u8> {
    let header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}",
        descr_of(array.dtype()),
        array.len()
    );
    // Magic (6) + version (2) + length (2) + header + padding + '\n', a multiple of 64.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    let padded = unpadded.div_ceil(64) * 64;
    let header_len = padded - MAGIC.len() - 4;
    let mut out = Vec::with_capacity(padded + array.len() * array.dtype().size());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // A one-dimensional header is under 128 bytes: its length always fits the u16 field.
    let [low, high, ..] = header_len.to_le_bytes();
    out.extend_from_slice(&[low, high]);
    out.extend_from_slice(header.as_bytes());
    out.resize(padded - 1, b' ');
    out.push(b'\n');
    out.extend_from_slice(&array.to_le_bytes());
    out
}

/// The `.npy` descr of `dtype` (`'<f4'`, `'|u1'`, ...).
pub fn descr_of(dtype: DType) -> &'static str {
    match dtype {
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I16 => "<i2",
        DType::U16 => "<u2",
        DType::I32 => "<i4",
        DType::U32 => "<u4",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

fn dtype_of(descr: &str) -> Result<DType, NpyError> {
    let (order, code) = descr.split_at(descr.len().min(1));
    let dtype = match code {
        "i1" => DType::I8,
        "u1" => DType::U8,
        "i2" => DType::I16,
        "u2" => DType::U16,
        "i4" => DType::I32,
        "u4" => DType::U32,
        "f4" => DType::F32,
        "f8" => DType::F64,
        _ => return Err(NpyError::Dtype(descr.to_owned())),
    };
    let little = order == "<"
        || (order == "|" && dtype.size() == 1)
        || (order == "=" && cfg!(target_endian = "little"));
    if !little {
        return Err(NpyError::Dtype(descr.to_owned()));
    }
    Ok(dtype)
}

// The text of `key`'s value in numpy's header dictionary (up to the next top-level comma).
fn field<'h>(header: &'h str, key: &str) -> Result<&'h str, NpyError> {
    let quoted = format!("'{key}':");
    let at = header
        .find(&quoted)
        .ok_or_else(|| NpyError::Header(format!("no '{key}' entry")))?;
    let value = header[at + quoted.len()..].trim_start();
    let mut depth = 0usize;
    for (i, c) in value.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' | '}' if depth == 0 => return Ok(value[..i].trim()),
            _ => {}
        }
    }
    Err(NpyError::Header(format!("the '{key}' entry is not closed")))
}

fn one_dimension(shape: &str) -> Result<usize, NpyError> {
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| NpyError::Shape(shape.to_owned()))?;
    let dims: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    match dims.as_slice() {
        [n] => n.parse().map_err(|_| NpyError::Shape(shape.to_owned())),
        _ => Err(NpyError::Shape(shape.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip_with_numpy_header_layout() {
        for dtype in DType::ALL {
            let array = Array::zeros(dtype, 5);
            let bytes = write(&array);
            assert_eq!(
                bytes.len() % 64,
                (5 * dtype.size()) % 64,
                "header padded to 64"
            );
            assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
            assert_eq!(read(&bytes).unwrap(), array);
        }
    }

    #[test]
    fn wrong_files_get_clear_errors() {
        let good = write(&Array::from(vec![1.0f32, 2.0]));
        // The header with `from` replaced by `to` (same length: the data stays in place).
        let swap = |from: &str, to: &str| {
            let at = good
                .windows(from.len())
                .position(|w| w == from.as_bytes())
                .unwrap();
            let mut bytes = good.clone();
            bytes.splice(at..at + from.len(), to.bytes());
            bytes
        };
        assert_eq!(read(b"PK\x03\x04"), Err(NpyError::Magic));
        assert_eq!(
            read(&swap("'<f4'", "'>f4'")),
            Err(NpyError::Dtype(">f4".to_owned()))
        );
        assert_eq!(
            read(&swap("'<f4'", "'<c8'")),
            Err(NpyError::Dtype("<c8".to_owned()))
        );
        assert_eq!(
            read(&swap("(2,)", "(1,2)")),
            Err(NpyError::Shape("(1,2)".to_owned()))
        );
        assert_eq!(
            read(&good[..good.len() - 1]),
            Err(NpyError::Length {
                expected: 8,
                found: 7
            })
        );
        let mut v9 = good.clone();
        v9[6] = 9;
        assert_eq!(read(&v9), Err(NpyError::Version(9, 0)));
        assert_eq!(
            read(&swap("'descr'", "'desc_'")),
            Err(NpyError::Header("no 'descr' entry".to_owned()))
        );
    }
}
