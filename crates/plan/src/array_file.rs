//! Arrays in files, as every front end reads and writes them: numpy's `.npy` when the file's
//! name ends in `.npy` (any case), raw little-endian elements of the dtype otherwise; and plan
//! inputs and outputs bound to files by name.

use crate::npy::{self, NpyError};
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
        "the file holds {found} ('{}') but the plan's input \"{input}\" is {expected} ('{}')",
        npy::descr_of(*.found),
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
    #[error("the plan has no {} named \"{name}\" (it has: {known})", .side.name())]
    Unknown {
        /// Inputs or outputs.
        side: Side,
        /// The name given.
        name: String,
        /// The plan's names, comma-separated.
        known: String,
    },
    /// Two bindings name one input (output).
    #[error("the plan's {} \"{name}\" is bound twice", .side.name())]
    Twice {
        /// Inputs or outputs.
        side: Side,
        /// The name.
        name: String,
    },
    /// An input (output) no binding names.
    #[error("the plan's {} \"{name}\" is not bound", .side.name())]
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
                    known: wanted.join(", "),
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
