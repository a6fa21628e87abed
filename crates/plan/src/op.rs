//! The element-wise ops a node can apply, and the dtype rules each one checks.

use crate::DType;

/// An element-wise op. Names in plans are the lowercase names below (`"fma"`, `"lt"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`; for integers, a zero divisor is an error naming the node and the element.
    Div,
    /// `a < b ? a : b`.
    Min,
    /// `a > b ? a : b`.
    Max,
    /// `-a`.
    Neg,
    /// `|a|`.
    Abs,
    /// The square root (floats only).
    Sqrt,
    /// `a * b + c`, rounded once for floats.
    Fma,
    /// `a` converted to the node's `to` dtype.
    Cast,
    /// `a == b` as `u8` 1 or 0.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `mask != 0 ? a : b`, with `mask` of dtype `u8`.
    Select,
}

impl Op {
    /// Every op.
    pub const ALL: [Op; 18] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Min,
        Op::Max,
        Op::Neg,
        Op::Abs,
        Op::Sqrt,
        Op::Fma,
        Op::Cast,
        Op::Eq,
        Op::Ne,
        Op::Lt,
        Op::Le,
        Op::Gt,
        Op::Ge,
        Op::Select,
    ];

    /// The op's name in plans.
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Div => "div",
            Op::Min => "min",
            Op::Max => "max",
            Op::Neg => "neg",
            Op::Abs => "abs",
            Op::Sqrt => "sqrt",
            Op::Fma => "fma",
            Op::Cast => "cast",
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Lt => "lt",
            Op::Le => "le",
            Op::Gt => "gt",
            Op::Ge => "ge",
            Op::Select => "select",
        }
    }

    /// The op named `name` in plans.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// How many arguments the op takes.
    pub fn arity(self) -> usize {
        match self {
            Op::Neg | Op::Abs | Op::Sqrt | Op::Cast => 1,
            Op::Fma | Op::Select => 3,
            _ => 2,
        }
    }

    /// Whether the op compares (its result is a `u8` mask).
    pub fn is_compare(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// The result dtype for arguments of `args` dtypes (`to` for a cast), or why they do not
    /// fit: explicit casts only, so every other op wants equal dtypes (`select`: a `u8` mask,
    /// then two equal dtypes).
    pub(crate) fn result(self, args: &[DType], to: Option<DType>) -> Result<DType, String> {
        let first = args[0];
        match self {
            Op::Cast => to.ok_or_else(|| "a cast needs a \"to\" dtype".to_owned()),
            Op::Select => {
                if args[0] != DType::U8 {
                    return Err(format!("the mask (argument 0) must be u8, not {}", args[0]));
                }
                if args[1] != args[2] {
                    return Err(format!(
                        "arguments 1 and 2 must have one dtype (explicit casts only), not {} and {}",
                        args[1], args[2]
                    ));
                }
                Ok(args[1])
            }
            _ => {
                if let Some((i, other)) = args.iter().enumerate().find(|(_, d)| **d != first) {
                    return Err(format!(
                        "arguments must have one dtype (explicit casts only): argument 0 is {first}, argument {i} is {other}"
                    ));
                }
                if self == Op::Sqrt && !first.is_float() {
                    return Err(format!("sqrt needs a float argument, not {first}"));
                }
                Ok(if self.is_compare() { DType::U8 } else { first })
            }
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
