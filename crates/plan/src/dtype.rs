//! The eight element types and the arrays that hold them.

use serde::{Deserialize, Serialize};

/// An element type. Names in plans: `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `f32`, `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 8-bit signed integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit signed integer.
    I16,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl DType {
    /// Every dtype, in the order above.
    pub const ALL: [DType; 8] = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::F32,
        DType::F64,
    ];

    /// The plan name of this dtype.
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// The dtype of a plan name (`"f32"`), `None` for any other string.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|dtype| dtype.name() == name)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    /// Whether this is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// Whether this is a signed integer or a float.
    pub fn is_signed(self) -> bool {
        !matches!(self, DType::U8 | DType::U16 | DType::U32)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Calls `$body` with `$T` bound to the Rust type of `$dtype` (an expression of type [`DType`]).
macro_rules! with_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::I16 => {
                type $T = i16;
                $body
            }
            $crate::DType::U16 => {
                type $T = u16;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_type;

/// An owned array of one dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum Array {
    /// `i8` elements.
    I8(Vec<i8>),
    /// `u8` elements.
    U8(Vec<u8>),
    /// `i16` elements.
    I16(Vec<i16>),
    /// `u16` elements.
    U16(Vec<u16>),
    /// `i32` elements.
    I32(Vec<i32>),
    /// `u32` elements.
    U32(Vec<u32>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
}

/// Calls `$body` with `$v` bound to the vector (or reference to it) inside `$array`.
macro_rules! each_array {
    ($array:expr, $v:ident => $body:expr) => {
        match $array {
            $crate::Array::I8($v) => $body,
            $crate::Array::U8($v) => $body,
            $crate::Array::I16($v) => $body,
            $crate::Array::U16($v) => $body,
            $crate::Array::I32($v) => $body,
            $crate::Array::U32($v) => $body,
            $crate::Array::F32($v) => $body,
            $crate::Array::F64($v) => $body,
        }
    };
}
pub(crate) use each_array;

impl Array {
    /// `len` zeros of `dtype`.
    pub fn zeros(dtype: DType, len: usize) -> Self {
        with_type!(dtype, T => Array::from(vec![T::default(); len]))
    }

    /// `len` zeros of `dtype`, or `None` if the memory cannot be reserved.
    pub fn try_zeros(dtype: DType, len: usize) -> Option<Self> {
        with_type!(dtype, T => {
            let mut v: Vec<T> = Vec::new();
            v.try_reserve_exact(len).ok()?;
            v.resize(len, T::default());
            Some(Array::from(v))
        })
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Array::I8(_) => DType::I8,
            Array::U8(_) => DType::U8,
            Array::I16(_) => DType::I16,
            Array::U16(_) => DType::U16,
            Array::I32(_) => DType::I32,
            Array::U32(_) => DType::U32,
            Array::F32(_) => DType::F32,
            Array::F64(_) => DType::F64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        each_array!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as little-endian bytes (what raw files and `.npy` hold).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        each_array!(self, v => v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// The array of `dtype` whose little-endian bytes are `bytes`.
    ///
    /// # Errors
    /// [`LengthError`] if `bytes` is not a whole number of elements.
    pub fn from_le_bytes(dtype: DType, bytes: &[u8]) -> Result<Self, LengthError> {
        let size = dtype.size();
        if !bytes.len().is_multiple_of(size) {
            return Err(LengthError {
                dtype,
                bytes: bytes.len(),
            });
        }
        Ok(with_type!(dtype, T => Array::from(
            bytes
                .chunks_exact(size)
                .map(|chunk| {
                    let mut raw = [0u8; size_of::<T>()];
                    raw.copy_from_slice(chunk);
                    T::from_le_bytes(raw)
                })
                .collect::<Vec<T>>()
        )))
    }

    /// Whether the two arrays hold the same dtype and the same bits (NaN payloads and the sign
    /// of zero included): the equality the executor promises against the reference.
    pub fn bits_eq(&self, other: &Array) -> bool {
        self.dtype() == other.dtype() && self.to_le_bytes() == other.to_le_bytes()
    }
}

/// Bytes that are not a whole number of elements.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{bytes} bytes are not a whole number of {dtype} elements ({} bytes each)", dtype.size())]
pub struct LengthError {
    /// The dtype asked for.
    pub dtype: DType,
    /// The byte count given.
    pub bytes: usize,
}

macro_rules! array_from {
    ($($T:ty => $variant:ident),*) => {$(
        impl From<Vec<$T>> for Array {
            fn from(v: Vec<$T>) -> Self {
                Array::$variant(v)
            }
        }
    )*};
}
array_from!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, f32 => F32, f64 => F64);

/// A borrowed array of one dtype (an input of a run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrayRef<'a> {
    /// `i8` elements.
    I8(&'a [i8]),
    /// `u8` elements.
    U8(&'a [u8]),
    /// `i16` elements.
    I16(&'a [i16]),
    /// `u16` elements.
    U16(&'a [u16]),
    /// `i32` elements.
    I32(&'a [i32]),
    /// `u32` elements.
    U32(&'a [u32]),
    /// `f32` elements.
    F32(&'a [f32]),
    /// `f64` elements.
    F64(&'a [f64]),
}

/// A mutably borrowed array of one dtype (an output of a run).
#[derive(Debug, PartialEq)]
pub enum ArrayMut<'a> {
    /// `i8` elements.
    I8(&'a mut [i8]),
    /// `u8` elements.
    U8(&'a mut [u8]),
    /// `i16` elements.
    I16(&'a mut [i16]),
    /// `u16` elements.
    U16(&'a mut [u16]),
    /// `i32` elements.
    I32(&'a mut [i32]),
    /// `u32` elements.
    U32(&'a mut [u32]),
    /// `f32` elements.
    F32(&'a mut [f32]),
    /// `f64` elements.
    F64(&'a mut [f64]),
}

macro_rules! view_common {
    ($name:ident) => {
        impl $name<'_> {
            /// The dtype of the elements.
            pub fn dtype(&self) -> DType {
                match self {
                    $name::I8(_) => DType::I8,
                    $name::U8(_) => DType::U8,
                    $name::I16(_) => DType::I16,
                    $name::U16(_) => DType::U16,
                    $name::I32(_) => DType::I32,
                    $name::U32(_) => DType::U32,
                    $name::F32(_) => DType::F32,
                    $name::F64(_) => DType::F64,
                }
            }

            /// The number of elements.
            pub fn len(&self) -> usize {
                match self {
                    $name::I8(v) => v.len(),
                    $name::U8(v) => v.len(),
                    $name::I16(v) => v.len(),
                    $name::U16(v) => v.len(),
                    $name::I32(v) => v.len(),
                    $name::U32(v) => v.len(),
                    $name::F32(v) => v.len(),
                    $name::F64(v) => v.len(),
                }
            }

            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
}
view_common!(ArrayRef);
view_common!(ArrayMut);

impl Array {
    /// The elements, borrowed.
    pub fn as_array_ref(&self) -> ArrayRef<'_> {
        match self {
            Array::I8(v) => ArrayRef::I8(v),
            Array::U8(v) => ArrayRef::U8(v),
            Array::I16(v) => ArrayRef::I16(v),
            Array::U16(v) => ArrayRef::U16(v),
            Array::I32(v) => ArrayRef::I32(v),
            Array::U32(v) => ArrayRef::U32(v),
            Array::F32(v) => ArrayRef::F32(v),
            Array::F64(v) => ArrayRef::F64(v),
        }
    }

    /// The elements, mutably borrowed.
    pub fn as_array_mut(&mut self) -> ArrayMut<'_> {
        match self {
            Array::I8(v) => ArrayMut::I8(v),
            Array::U8(v) => ArrayMut::U8(v),
            Array::I16(v) => ArrayMut::I16(v),
            Array::U16(v) => ArrayMut::U16(v),
            Array::I32(v) => ArrayMut::I32(v),
            Array::U32(v) => ArrayMut::U32(v),
            Array::F32(v) => ArrayMut::F32(v),
            Array::F64(v) => ArrayMut::F64(v),
        }
    }
}
