//! numpy's `.npy` files, one-dimensional and little-endian, so Python users can hand arrays
//! over: `np.save("x.npy", np.arange(10, dtype=np.float32))`.
//!
//! Read as numpy's own reader (`numpy.lib.format`) reads them: format versions 1.0, 2.0 and 3.0;
//! a header of at most 10,000 bytes (numpy's default limit) holding a Python dict literal with
//! exactly the keys `descr`, `fortran_order` and `shape` (a key given twice: the last wins, as in
//! Python, whatever the first held); dtypes `i1 u1 i2 u2 i4 u4 f4 f8` (little-endian, byte-order
//! free, or with no order: the machine's own); `fortran_order` a bool; shape `(n,)` with `n` a
//! non-negative Python integer literal (`1_000`, not `03` or `3_`); then exactly `n` elements. Data is
//! streamed into the array (see `stream`): no copy of the file is held. Written: version 1.0,
//! the header padded to 64 bytes as numpy does.

use std::io::{Read, Write};

use crate::stream::{self, StreamError};
use crate::{Array, DType};

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// The longest header read (numpy's `max_header_size` default).
pub const MAX_HEADER: usize = 10_000;

/// Why bytes are not a `.npy` this crate reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
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
    #[error(
        ".npy dtype {0:?} is not supported (i1, u1, i2, u2, i4, u4, f4, f8, little-endian or \
         native order)"
    )]
    Dtype(String),
    /// More or fewer than one dimension.
    #[error(".npy shape {0} is not one-dimensional (a plan's arrays are (n,))")]
    Shape(String),
    /// A dimension that is no size (negative, or beyond what this machine addresses).
    #[error(".npy shape {shape}: {reason}")]
    Size {
        /// The shape as written.
        shape: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The data after the header is not `n` elements.
    #[error(".npy data: the header says {expected} bytes, the file holds {found}")]
    Length {
        /// Bytes the header's shape and dtype need.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// Bytes after the `n` elements.
    #[error(".npy data: the header says {expected} bytes, the file holds more")]
    Trailing {
        /// Bytes the header's shape and dtype need.
        expected: u64,
    },
    /// Reading or allocating failed, or the data is more than the run can use.
    #[error(".npy data: {0}")]
    Stream(StreamError),
}

/// The array a `.npy` file's bytes hold.
///
/// # Errors
/// [`NpyError`] naming what is wrong: magic, version, header, dtype, shape or data length.
pub fn read(bytes: &[u8]) -> Result<Array, NpyError> {
    read_from(bytes, u64::MAX)
}

/// The array a `.npy` file read from `reader` holds, its data at most `max_bytes` bytes (checked
/// against the header before any of it is read or allocated).
///
/// # Errors
/// As [`read`]; [`NpyError::Stream`] if reading or allocating fails, or the data is larger than
/// `max_bytes`.
pub fn read_from(mut reader: impl Read, max_bytes: u64) -> Result<Array, NpyError> {
    let (dtype, n) = read_header(&mut reader)?;
    let expected = (n as u64).saturating_mul(dtype.size() as u64);
    if expected > max_bytes {
        return Err(NpyError::Stream(StreamError::TooLarge { max: max_bytes }));
    }
    stream::read_elements(reader, dtype, Some(n), u64::MAX, None).map_err(|e| match e {
        StreamError::Short { expected, found } => NpyError::Length { expected, found },
        StreamError::Trailing { expected } => NpyError::Trailing { expected },
        other => NpyError::Stream(other),
    })
}

/// Reads a `.npy` header from `reader` (leaving it at the data): the dtype and the length.
///
/// # Errors
/// As [`read`], for the magic, version, header, dtype and shape.
pub fn read_header(reader: &mut impl Read) -> Result<(DType, usize), NpyError> {
    let short = || NpyError::Header("cut short".to_owned());
    let mut exact = |buf: &mut [u8]| -> Result<(), NpyError> {
        reader.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => short(),
            _ => NpyError::Stream(StreamError::Read(e.to_string())),
        })
    };
    let mut lead = [0u8; 8];
    exact(&mut lead[..MAGIC.len().min(8)])
        .map_err(|e| if e == short() { NpyError::Magic } else { e })?;
    if &lead[..MAGIC.len()] != MAGIC {
        return Err(NpyError::Magic);
    }
    exact(&mut lead[MAGIC.len()..])?;
    let (major, minor) = (lead[6], lead[7]);
    let header_len = match (major, minor) {
        (1, 0) => {
            let mut len = [0u8; 2];
            exact(&mut len)?;
            usize::from(u16::from_le_bytes(len))
        }
        (2 | 3, 0) => {
            let mut len = [0u8; 4];
            exact(&mut len)?;
            usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX)
        }
        _ => return Err(NpyError::Version(major, minor)),
    };
    if header_len > MAX_HEADER {
        return Err(NpyError::Header(format!(
            "{header_len} bytes, more than numpy reads ({MAX_HEADER})"
        )));
    }
    let mut header = vec![0u8; header_len];
    exact(&mut header).map_err(|e| {
        if e == short() {
            NpyError::Header(format!("{header_len} bytes announced, fewer present"))
        } else {
            e
        }
    })?;
    // Version 3 headers are UTF-8, the others latin-1: the keys and values read are ASCII.
    let header =
        std::str::from_utf8(&header).map_err(|_| NpyError::Header("not text".to_owned()))?;
    let dict = header::parse(header)?;
    let dtype = dtype_of(&dict.descr)?;
    let n = match dict.shape.as_slice() {
        [n] => *n,
        _ => return Err(NpyError::Shape(dict.shape_text)),
    };
    let n = if n < 0 {
        return Err(NpyError::Size {
            shape: dict.shape_text,
            reason: format!("{n} is negative"),
        });
    } else {
        usize::try_from(n)
            .ok()
            .filter(|&n| n.checked_mul(dtype.size()).is_some())
            .ok_or_else(|| NpyError::Size {
                shape: dict.shape_text.clone(),
                reason: format!("{n} elements are more than this machine can address"),
            })?
    };
    Ok((dtype, n))
}

/// The header of a version 1.0 `.npy` file of `len` elements of `dtype`.
pub fn header(dtype: DType, len: usize) -> Vec<u8> {
    let header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
        descr_of(dtype),
    );
    // Magic (6) + version (2) + length (2) + header + padding + '\n', a multiple of 64.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    let padded = unpadded.div_ceil(64) * 64;
    let header_len = padded - MAGIC.len() - 4;
    let mut out = Vec::with_capacity(padded);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // A one-dimensional header is under 128 bytes: its length always fits the u16 field.
    let [low, high, ..] = header_len.to_le_bytes();
    out.extend_from_slice(&[low, high]);
    out.extend_from_slice(header.as_bytes());
    out.resize(padded - 1, b' ');
    out.push(b'\n');
    out
}

/// `array` as a version 1.0 `.npy` file.
pub fn write(array: &Array) -> Vec<u8> {
    let mut out = header(array.dtype(), array.len());
    out.extend_from_slice(&array.to_le_bytes());
    out
}

/// Writes `array` as a version 1.0 `.npy` file to `out`, its data a chunk at a time (no copy of
/// the array is made).
///
/// # Errors
/// The writer's.
pub fn write_to(array: &Array, mut out: impl Write) -> std::io::Result<()> {
    out.write_all(&header(array.dtype(), array.len()))?;
    stream::write_elements(array, out)
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
    // numpy's `dtype(descr)`: a byte order `<`, `>`, `|` or `=`, or none (native order).
    let (order, code) = match descr.chars().next() {
        Some('<' | '>' | '|' | '=') => descr.split_at(1),
        _ => ("=", descr),
    };
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

mod header {
    //! The header's Python dict literal, parsed as numpy's `safe_eval` reads it.

    use super::NpyError;

    /// The three entries numpy's header holds.
    pub(super) struct Dict {
        pub(super) descr: String,
        pub(super) shape: Vec<i128>,
        /// The shape as written, for errors.
        pub(super) shape_text: String,
    }

    enum Value {
        Str(String),
        Bool,
        Tuple(Vec<i128>, String),
    }

    fn bad(what: &str) -> NpyError {
        NpyError::Header(what.to_owned())
    }

    /// `{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }` and what numpy accepts like
    /// it: any order, either quotes, a trailing comma, spaces; a repeated key's last value.
    pub(super) fn parse(text: &str) -> Result<Dict, NpyError> {
        let mut p = Parser {
            text: text.trim_end(),
            at: 0,
        };
        p.expect('{')?;
        // Each key's last value (a Python dict literal keeps the last), checked once read.
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        loop {
            p.spaces();
            if p.eat('}') {
                break;
            }
            let key = p.string()?;
            if !["descr", "fortran_order", "shape"].contains(&key.as_str()) {
                return Err(NpyError::Header(format!(
                    "the key {key:?} is not one of descr, fortran_order, shape (numpy refuses it)"
                )));
            }
            p.spaces();
            p.expect(':')?;
            p.spaces();
            let value = p.value()?;
            match key.as_str() {
                "descr" => descr = Some(value),
                "fortran_order" => fortran = Some(value),
                "shape" => shape = Some(value),
                _ => unreachable!("invariant: the key is one of the three, checked above"),
            }
            p.spaces();
            if p.eat('}') {
                break;
            }
            p.expect(',')?;
        }
        if p.at != p.text.len() {
            return Err(bad("text after the dictionary"));
        }
        let missing = [
            ("descr", descr.is_none()),
            ("fortran_order", fortran.is_none()),
            ("shape", shape.is_none()),
        ]
        .into_iter()
        .find(|(_, missing)| *missing);
        if let Some((key, _)) = missing {
            return Err(NpyError::Header(format!("no '{key}' entry")));
        }
        let Some(Value::Str(descr)) = descr else {
            return Err(bad("descr is not a valid dtype descriptor"));
        };
        let Some(Value::Bool) = fortran else {
            return Err(bad("fortran_order is not a valid bool"));
        };
        let Some(Value::Tuple(shape, shape_text)) = shape else {
            return Err(bad("shape is not a tuple of integers"));
        };
        Ok(Dict {
            descr,
            shape,
            shape_text,
        })
    }

    struct Parser<'t> {
        text: &'t str,
        at: usize,
    }

    impl Parser<'_> {
        fn rest(&self) -> &str {
            &self.text[self.at..]
        }

        fn spaces(&mut self) {
            let rest = self.rest();
            self.at += rest.len() - rest.trim_start().len();
        }

        fn eat(&mut self, c: char) -> bool {
            if self.rest().starts_with(c) {
                self.at += c.len_utf8();
                true
            } else {
                false
            }
        }

        fn expect(&mut self, c: char) -> Result<(), NpyError> {
            if self.eat(c) {
                Ok(())
            } else {
                Err(NpyError::Header(format!(
                    "not the dictionary numpy writes (expected {c:?} at byte {})",
                    self.at
                )))
            }
        }

        fn string(&mut self) -> Result<String, NpyError> {
            let quote = match self.rest().chars().next() {
                Some(q @ ('\'' | '"')) => q,
                _ => return Err(bad("a key is not a quoted string")),
            };
            self.at += 1;
            let end = self
                .rest()
                .find(quote)
                .ok_or_else(|| bad("a string is not closed"))?;
            let value = self.rest()[..end].to_owned();
            self.at += end + 1;
            Ok(value)
        }

        fn value(&mut self) -> Result<Value, NpyError> {
            let rest = self.rest();
            if rest.starts_with('\'') || rest.starts_with('"') {
                return self.string().map(Value::Str);
            }
            for word in ["True", "False"] {
                if rest.starts_with(word) {
                    self.at += word.len();
                    return Ok(Value::Bool);
                }
            }
            if !rest.starts_with('(') {
                // An integer, a list or anything else: not a value numpy's keys take.
                let end = rest.find([',', '}']).unwrap_or(rest.len());
                return Err(bad_value(&rest[..end]));
            }
            let start = self.at;
            self.at += 1;
            let mut dims = Vec::new();
            let mut commas = 0;
            loop {
                self.spaces();
                if self.eat(')') {
                    break;
                }
                let rest = self.rest();
                let end = rest.find([',', ')']).unwrap_or(rest.len());
                let dim = rest[..end].trim();
                dims.push(parse_int(dim)?);
                self.at += end;
                self.spaces();
                if self.eat(',') {
                    commas += 1;
                } else {
                    self.expect(')')?;
                    break;
                }
            }
            let written = self.text[start..self.at].to_owned();
            // `(5)` is the integer 5 in Python, not a tuple: numpy refuses it as a shape.
            if dims.len() == 1 && commas == 0 {
                return Err(NpyError::Header(format!(
                    "shape {written} is not a tuple (a one-dimensional shape is written (n,))"
                )));
            }
            Ok(Value::Tuple(dims, written))
        }
    }

    fn bad_value(text: &str) -> NpyError {
        NpyError::Header(format!(
            "{:?} is not a value numpy's header holds",
            text.trim()
        ))
    }

    /// A Python decimal integer literal, as `ast.literal_eval` reads one: an optional sign,
    /// digits with single `_` separators between them (not first, last or doubled), and no
    /// leading zero unless every digit is one (`03` is a syntax error in Python, `00` is 0).
    /// Out of i128's range it saturates (and is then no size anyway).
    fn parse_int(text: &str) -> Result<i128, NpyError> {
        let (negative, literal) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let separated = literal
            .split('_')
            .all(|group| !group.is_empty() && group.bytes().all(|b| b.is_ascii_digit()));
        let digits: String = literal.chars().filter(|&c| c != '_').collect();
        let leading_zero = digits.starts_with('0') && digits.bytes().any(|b| b != b'0');
        if !separated || leading_zero {
            return Err(NpyError::Header(format!(
                "the dimension {text:?} is not an integer"
            )));
        }
        let value = digits.parse::<i128>().unwrap_or(i128::MAX);
        Ok(if negative { -value } else { value })
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
            Err(NpyError::Header(
                "the key \"desc_\" is not one of descr, fortran_order, shape (numpy refuses it)"
                    .to_owned()
            ))
        );
    }

    /// A version 1.0 file of `header` (padded as numpy pads) and `data`.
    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        let padded = format!("{header:<118}\n");
        bytes.extend_from_slice(&u16::try_from(padded.len()).unwrap().to_le_bytes());
        bytes.extend_from_slice(padded.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn headers_are_read_as_numpy_reads_them() {
        let data = [0u8; 8];
        // A key given twice: the last wins, as in a Python dict (the first won).
        let twice = with_header(
            "{'descr': '<f8', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}",
            &data,
        );
        assert_eq!(read(&twice).unwrap(), Array::from(vec![0i32, 0]));
        // Keys numpy does not know are refused (they were ignored).
        let extra = with_header(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
            &data,
        );
        assert!(
            read(&extra)
                .unwrap_err()
                .to_string()
                .contains("the key \"x\" is not one of"),
            "{:?}",
            read(&extra)
        );
        // Shapes that are no size (they were "not one-dimensional").
        let negative = with_header(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (-1000,)}",
            &data,
        );
        assert_eq!(
            read(&negative).unwrap_err().to_string(),
            ".npy shape (-1000,): -1000 is negative"
        );
        let huge = with_header(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
            &data,
        );
        assert!(
            read(&huge)
                .unwrap_err()
                .to_string()
                .ends_with("18446744073709551616 elements are more than this machine can address")
        );
        let int = with_header(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2)}",
            &data,
        );
        assert!(
            read(&int)
                .unwrap_err()
                .to_string()
                .contains("is not a tuple")
        );
        let no_order = with_header("{'descr': '<i4', 'shape': (2,)}", &data);
        assert_eq!(
            read(&no_order),
            Err(NpyError::Header("no 'fortran_order' entry".to_owned()))
        );
        // Double quotes, other spacing and a trailing comma are Python too.
        let python = with_header(
            "{ \"shape\": ( 2 , ), \"fortran_order\": True , \"descr\": \"<i4\" , }",
            &data,
        );
        assert_eq!(read(&python).unwrap(), Array::from(vec![0i32, 0]));
        // A key's first value may be of any type: only the last is read (it was refused).
        let retyped = with_header(
            "{'descr': True, 'shape': 'x', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}",
            &data,
        );
        assert_eq!(read(&retyped).unwrap(), Array::from(vec![0i32, 0]));
        // No byte order is the machine's own, as numpy's dtype('f4') (it was refused).
        let native = with_header(
            "{'descr': 'f4', 'fortran_order': False, 'shape': (2,)}",
            &data,
        );
        assert_eq!(read(&native).unwrap(), Array::from(vec![0f32, 0.0]));
        // Python's integer literals: single underscores between digits, no leading zero.
        for (dim, n) in [("1_0", Some(10)), ("00", Some(0)), ("+2", Some(2))] {
            let header = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({dim},)}}");
            let bytes = with_header(&header, &[0u8; 10][..n.unwrap_or(0)]);
            assert_eq!(read(&bytes).map(|a| a.len()), Ok(n.unwrap_or(0)), "{dim}");
        }
        for dim in ["3_", "_3", "1__0", "03", "0_3", "", "-"] {
            let header = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({dim},)}}");
            let refused = read(&with_header(&header, &[0u8; 3]));
            assert!(
                matches!(&refused, Err(NpyError::Header(m)) if m.contains("is not an integer")),
                "{dim:?}: {refused:?}"
            );
        }
        // Data past the elements is refused, as a short file is.
        let mut long = write(&Array::from(vec![1u8, 2]));
        long.push(3);
        assert_eq!(read(&long), Err(NpyError::Trailing { expected: 2 }));
        // A lying shape allocates nothing before its data arrives: a bound refuses it first.
        let liar = with_header(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}",
            &[],
        );
        assert!(matches!(
            read_from(&liar[..], 1 << 20),
            Err(NpyError::Stream(StreamError::TooLarge { .. }))
        ));
    }
}
