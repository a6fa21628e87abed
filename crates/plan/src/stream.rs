//! Arrays to and from byte streams a chunk at a time: no copy of a whole array is ever made,
//! and memory is reserved fallibly, so an array that does not fit is an error, never an abort.
//!
//! Memory: the array itself and one chunk of [`CHUNK`] bytes.

use std::io::{Read, Write};

use crate::dtype::with_type;
use crate::{Array, DType, LengthError};

/// Bytes read or written at a time.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Why elements could not be read from a stream.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// The stream failed.
    #[error("reading failed: {0}")]
    Read(String),
    /// The array's memory could not be reserved.
    #[error("{bytes} bytes cannot be allocated for it")]
    OutOfMemory {
        /// The bytes asked for.
        bytes: u64,
    },
    /// More bytes than the run can use.
    #[error("it holds more than {max} bytes, more than the run can use")]
    TooLarge {
        /// The most bytes accepted.
        max: u64,
    },
    /// Not a whole number of elements.
    #[error(transparent)]
    Length(#[from] LengthError),
    /// Fewer bytes than the elements announced.
    #[error("{found} bytes of data where {expected} were announced")]
    Short {
        /// The bytes announced.
        expected: u64,
        /// The bytes present.
        found: u64,
    },
    /// Bytes after the elements announced.
    #[error("more than the {expected} bytes of data announced")]
    Trailing {
        /// The bytes announced.
        expected: u64,
    },
}

/// Reads little-endian elements of `dtype` to the end of `reader`: exactly `exact` elements
/// when given (anything after them is an error), else as many as there are, at most
/// `max_bytes` bytes. `hint`: the bytes expected (a file's length), reserved at once.
///
/// # Errors
/// [`StreamError`]: the stream fails, memory cannot be reserved, more than `max_bytes`, a
/// partial last element, fewer or more elements than `exact`.
pub(crate) fn read_elements(
    mut reader: impl Read,
    dtype: DType,
    exact: Option<usize>,
    max_bytes: u64,
    hint: Option<u64>,
) -> Result<Array, StreamError> {
    let size = dtype.size();
    let oom = |elements: usize| StreamError::OutOfMemory {
        bytes: (elements as u64).saturating_mul(size as u64),
    };
    with_type!(dtype, T => {
        let mut values: Vec<T> = Vec::new();
        let reserve = match exact {
            Some(n) => n,
            None => usize::try_from(hint.unwrap_or(0).min(max_bytes) / size as u64).unwrap_or(0),
        };
        values.try_reserve_exact(reserve).map_err(|_| oom(reserve))?;
        let mut buf = vec![0u8; CHUNK];
        let (mut carry, mut total) = (0usize, 0u64);
        loop {
            let got = match reader.read(&mut buf[carry..]) {
                Ok(0) => break,
                Ok(got) => got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(StreamError::Read(e.to_string())),
            };
            total += got as u64;
            if total > max_bytes {
                return Err(StreamError::TooLarge { max: max_bytes });
            }
            let available = carry + got;
            let whole = available - available % size;
            let count = whole / size;
            if let Some(n) = exact
                && values.len() + count > n
            {
                return Err(StreamError::Trailing { expected: (n * size) as u64 });
            }
            values.try_reserve(count).map_err(|_| oom(values.len() + count))?;
            values.extend(buf[..whole].chunks_exact(size).map(|chunk| {
                let mut raw = [0u8; size_of::<T>()];
                raw.copy_from_slice(chunk);
                T::from_le_bytes(raw)
            }));
            buf.copy_within(whole..available, 0);
            carry = available - whole;
        }
        if let Some(n) = exact
            && values.len() < n
        {
            return Err(StreamError::Short {
                expected: (n * size) as u64,
                found: total,
            });
        }
        if carry != 0 {
            return Err(LengthError {
                dtype,
                bytes: usize::try_from(total).unwrap_or(usize::MAX),
            }
            .into());
        }
        Ok(Array::from(values))
    })
}

/// Writes `array`'s elements little-endian to `out`, a chunk at a time.
///
/// # Errors
/// The writer's.
pub(crate) fn write_elements(array: &Array, mut out: impl Write) -> std::io::Result<()> {
    let size = array.dtype().size();
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    crate::dtype::each_array!(array, values => {
        for chunk in values.chunks(CHUNK / size) {
            buf.clear();
            buf.extend(chunk.iter().flat_map(|x| x.to_le_bytes()));
            out.write_all(&buf)?;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader handing out a few bytes at a time, to cross element boundaries.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn elements_round_trip_whatever_the_reads() {
        let array = Array::from((0..70_000).map(|i| i as f32 * 0.5).collect::<Vec<f32>>());
        let mut bytes = Vec::new();
        write_elements(&array, &mut bytes).unwrap();
        assert_eq!(bytes, array.to_le_bytes());
        let back = read_elements(&bytes[..], DType::F32, Some(70_000), u64::MAX, None).unwrap();
        assert_eq!(back, array);
        let small = [1u8, 0, 2, 0, 3, 0];
        let back = read_elements(Trickle(&small), DType::U16, None, 6, None).unwrap();
        assert_eq!(back, Array::from(vec![1u16, 2, 3]));
    }

    #[test]
    fn bounds_and_partial_elements_are_errors() {
        let bytes = [0u8; 10];
        assert_eq!(
            read_elements(&bytes[..], DType::I32, None, u64::MAX, None),
            Err(StreamError::Length(LengthError {
                dtype: DType::I32,
                bytes: 10
            }))
        );
        assert_eq!(
            read_elements(&bytes[..], DType::U8, None, 9, None),
            Err(StreamError::TooLarge { max: 9 })
        );
        assert_eq!(
            read_elements(&bytes[..], DType::U8, Some(12), u64::MAX, None),
            Err(StreamError::Short {
                expected: 12,
                found: 10
            })
        );
        assert_eq!(
            read_elements(&bytes[..], DType::U8, Some(4), u64::MAX, None),
            Err(StreamError::Trailing { expected: 4 })
        );
        assert!(matches!(
            read_elements(&bytes[..], DType::F64, Some(usize::MAX / 8), u64::MAX, None),
            Err(StreamError::OutOfMemory { .. })
        ));
    }
}
