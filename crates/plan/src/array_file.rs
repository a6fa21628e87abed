//! Arrays in files, as every front end reads and writes them: numpy's `.npy` when the file's
//! name ends in `.npy` (any case), raw little-endian elements of the dtype otherwise; and plan
//! inputs and outputs bound to files by name.

use std::io::{Read, Write};

use crate::npy::{self, NpyError};
use crate::quote::{escaped, quoted};
use crate::stream::{self, StreamError};
use crate::{Array, DType, LengthError, Plan};

/// How an array is stored in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayFormat {
    /// numpy's `.npy` (see [`npy`]): the file says its dtype, which must be the plan's.
    Npy,
    /// Raw little-endian elements of the plan's dtype, nothing else.
    Raw,
}

/// Why a file's bytes are not the array a plan input needs.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArrayFileError {
    /// Not a `.npy` this crate reads.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// Raw bytes that are not whole elements.
    #[error(transparent)]
    Length(#[from] LengthError),
    /// A `.npy` of another dtype than the input's.
    #[error(
        "the file holds {found} ('{}') but the plan's input {} is {expected} ('{}')",
        npy::descr_of(*.found),
        quoted(.input),
        npy::descr_of(*.expected)
    )]
    DType {
        /// The input's id.
        input: String,
        /// The file's dtype.
        found: DType,
        /// The input's.
        expected: DType,
    },
    /// A file named as raw that starts with numpy's magic: its header would be read as values.
    #[error(
        "the file starts with numpy's .npy magic but its name does not end in .npy: rename it, or give raw little-endian elements"
    )]
    NpyUnderOtherName,
    /// Reading or allocating failed, or the file holds more than the run can use.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

impl ArrayFileError {
    /// Whether the file held more than the bound it was read with.
    pub fn too_large(&self) -> bool {
        matches!(
            self,
            Self::Stream(StreamError::TooLarge { .. })
                | Self::Npy(NpyError::Stream(StreamError::TooLarge { .. }))
        )
    }
}

impl ArrayFormat {
    /// The format of a file named `name`: `.npy` by its extension, raw otherwise.
    pub fn of_name(name: &std::path::Path) -> Self {
        if name
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
        {
            Self::Npy
        } else {
            Self::Raw
        }
    }

    /// The array in `bytes`, for the plan input `input` of `dtype`.
    ///
    /// # Errors
    /// [`ArrayFileError`]: a `.npy` that is malformed or of another dtype; raw bytes that are
    /// not whole elements.
    pub fn read(self, bytes: &[u8], input: &str, dtype: DType) -> Result<Array, ArrayFileError> {
        match self {
            Self::Npy => {
                let array = npy::read(bytes)?;
                if array.dtype() != dtype {
                    return Err(ArrayFileError::DType {
                        input: input.to_owned(),
                        found: array.dtype(),
                        expected: dtype,
                    });
                }
                Ok(array)
            }
            Self::Raw => Ok(Array::from_le_bytes(dtype, bytes)?),
        }
    }

    /// `array`'s bytes in this format.
    pub fn write(self, array: &Array) -> Vec<u8> {
        match self {
            Self::Npy => npy::write(array),
            Self::Raw => array.to_le_bytes(),
        }
    }

    /// The array in the file `reader` reads, for the plan input `input` of `dtype`, streamed
    /// into the array (memory: the array and one 64 KiB chunk; no copy of the file), at most
    /// `max_bytes` bytes of elements; `hint`, the file's length if known, is reserved at once.
    ///
    /// # Errors
    /// As [`read`](Self::read); [`ArrayFileError::NpyUnderOtherName`] for a raw file that is a
    /// `.npy`; [`ArrayFileError::Stream`] when reading or allocating fails or the elements pass
    /// `max_bytes` (a `.npy` is refused by its header, before its data is read).
    pub fn read_from(
        self,
        mut reader: impl Read,
        input: &str,
        dtype: DType,
        max_bytes: u64,
        hint: Option<u64>,
    ) -> Result<Array, ArrayFileError> {
        match self {
            Self::Npy => {
                let array = npy::read_from(reader, max_bytes)?;
                if array.dtype() != dtype {
                    return Err(ArrayFileError::DType {
                        input: input.to_owned(),
                        found: array.dtype(),
                        expected: dtype,
                    });
                }
                Ok(array)
            }
            Self::Raw => {
                let mut lead = Vec::with_capacity(npy::MAGIC.len());
                (&mut reader)
                    .take(npy::MAGIC.len() as u64)
                    .read_to_end(&mut lead)
                    .map_err(|e| StreamError::Read(e.to_string()))?;
                if lead == npy::MAGIC {
                    return Err(ArrayFileError::NpyUnderOtherName);
                }
                Ok(stream::read_elements(
                    std::io::Cursor::new(lead).chain(reader),
                    dtype,
                    None,
                    max_bytes,
                    hint,
                )?)
            }
        }
    }

    /// Writes `array` in this format to `out`, a chunk at a time (no copy of the array).
    ///
    /// # Errors
    /// The writer's.
    pub fn write_to(self, array: &Array, out: impl Write) -> std::io::Result<()> {
        match self {
            Self::Npy => npy::write_to(array, out),
            Self::Raw => stream::write_elements(array, out),
        }
    }
}

/// Which side of a plan a binding is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The plan's inputs.
    Input,
    /// The plan's outputs.
    Output,
}

impl Side {
    /// `input` or `output`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Output => "output",
        }
    }
}

/// Why named bindings do not name each of a plan's inputs (or outputs) exactly once.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindingError {
    /// A binding names no input (output) of the plan.
    #[error("the plan has no {} named {} (it has: {known})", .side.name(), quoted(.name))]
    Unknown {
        /// Inputs or outputs.
        side: Side,
        /// The name given.
        name: String,
        /// The plan's names, comma-separated.
        known: String,
    },
    /// Two bindings name one input (output).
    #[error("the plan's {} {} is bound twice", .side.name(), quoted(.name))]
    Twice {
        /// Inputs or outputs.
        side: Side,
        /// The name.
        name: String,
    },
    /// An input (output) no binding names.
    #[error("the plan's {} {} is not bound", .side.name(), quoted(.name))]
    Missing {
        /// Inputs or outputs.
        side: Side,
        /// The plan's name.
        name: String,
    },
}

impl Plan {
    /// `given` (name, value) bindings put in the plan's order of inputs (or outputs): each named
    /// exactly once, nothing else named. Errors come in `given`'s order (unknown or repeated
    /// names), then the plan's (missing ones).
    ///
    /// # Errors
    /// [`BindingError`] for the first name that breaks the rule.
    pub fn bind_by_name<'a, T>(
        &self,
        side: Side,
        given: &'a [(String, T)],
    ) -> Result<Vec<&'a T>, BindingError> {
        let wanted: Vec<&str> = match side {
            Side::Input => self.inputs().iter().map(|i| i.id.as_str()).collect(),
            Side::Output => self.outputs().iter().map(|o| o.id.as_str()).collect(),
        };
        for (name, _) in given {
            if !wanted.contains(&name.as_str()) {
                return Err(BindingError::Unknown {
                    side,
                    name: name.clone(),
                    known: listed(&wanted),
                });
            }
            if given.iter().filter(|(n, _)| n == name).count() > 1 {
                return Err(BindingError::Twice {
                    side,
                    name: name.clone(),
                });
            }
        }
        wanted
            .iter()
            .map(|name| {
                given
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, value)| value)
                    .ok_or_else(|| BindingError::Missing {
                        side,
                        name: (*name).to_owned(),
                    })
            })
            .collect()
    }
}

/// The first ids of a list, escaped, for an error (a plan may have thousands).
fn listed(ids: &[&str]) -> String {
    const SHOWN: usize = 16;
    let mut list: Vec<String> = ids
        .iter()
        .take(SHOWN)
        .map(|id| escaped(id).to_string())
        .collect();
    if ids.len() > SHOWN {
        list.push(format!("… {} more", ids.len() - SHOWN));
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn formats_by_name_and_dtypes_checked() {
        assert_eq!(ArrayFormat::of_name(Path::new("x.NPY")), ArrayFormat::Npy);
        assert_eq!(ArrayFormat::of_name(Path::new("x.raw")), ArrayFormat::Raw);
        assert_eq!(ArrayFormat::of_name(Path::new("npy")), ArrayFormat::Raw);
        let array = Array::from(vec![1.5f32, -2.0]);
        for format in [ArrayFormat::Npy, ArrayFormat::Raw] {
            let bytes = format.write(&array);
            assert_eq!(format.read(&bytes, "x", DType::F32).unwrap(), array);
        }
        let wide = ArrayFormat::Npy.write(&Array::from(vec![1.0f64]));
        assert_eq!(
            ArrayFormat::Npy
                .read(&wide, "x", DType::F32)
                .unwrap_err()
                .to_string(),
            "the file holds f64 ('<f8') but the plan's input \"x\" is f32 ('<f4')"
        );
        assert!(matches!(
            ArrayFormat::Raw.read(&[0; 7], "k", DType::I32),
            Err(ArrayFileError::Length(_))
        ));
        // Streamed: the same arrays, and a .npy named as raw is refused (its header was read
        // as elements).
        for format in [ArrayFormat::Npy, ArrayFormat::Raw] {
            let mut bytes = Vec::new();
            format.write_to(&array, &mut bytes).unwrap();
            assert_eq!(bytes, format.write(&array));
            let back = format
                .read_from(&bytes[..], "x", DType::F32, 8, None)
                .unwrap();
            assert_eq!(back, array);
        }
        let npy = ArrayFormat::Npy.write(&array);
        assert_eq!(
            ArrayFormat::Raw.read_from(&npy[..], "x", DType::F32, u64::MAX, None),
            Err(ArrayFileError::NpyUnderOtherName)
        );
        assert!(matches!(
            ArrayFormat::Raw.read_from(&[0u8; 12][..], "x", DType::F32, 8, None),
            Err(ArrayFileError::Stream(StreamError::TooLarge { max: 8 }))
        ));
    }

    #[test]
    fn bindings_name_each_input_once() {
        let plan = Plan::from_json(
            r#"{"version":1,"inputs":[{"id":"x","dtype":"f32"},{"id":"k","dtype":"f32"}],
                "nodes":[{"id":"y","op":"add","args":["x","k"]}],
                "outputs":[{"id":"out","from":"y"}]}"#,
        )
        .unwrap();
        let given = |names: &[&str]| -> Vec<(String, usize)> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| ((*n).to_owned(), i))
                .collect()
        };
        let two = given(&["k", "x"]);
        assert_eq!(plan.bind_by_name(Side::Input, &two).unwrap(), [&1, &0]);
        assert_eq!(
            plan.bind_by_name(Side::Input, &given(&["x", "q"]))
                .unwrap_err()
                .to_string(),
            "the plan has no input named \"q\" (it has: x, k)"
        );
        assert!(matches!(
            plan.bind_by_name(Side::Input, &given(&["x", "x", "k"])),
            Err(BindingError::Twice { .. })
        ));
        assert_eq!(
            plan.bind_by_name(Side::Input, &given(&["x"])).unwrap_err(),
            BindingError::Missing {
                side: Side::Input,
                name: "k".to_owned()
            }
        );
        assert_eq!(
            plan.bind_by_name(Side::Output, &given(&["out"])).unwrap(),
            [&0]
        );
    }
}
