//! What each op does to one element, per dtype: the semantics both the reference and the fused
//! kernels use, so the two agree bit for bit.
//!
//! - Integers wrap (two's complement): `add`, `sub`, `mul`, `neg`, `abs` (`abs(i8::MIN)` is
//!   `i8::MIN`), `fma` (`a * b + c`, each step wrapping), `div` (`MIN / -1` is `MIN`). Division by
//!   zero is an error the caller checks before calling [`Elem::div`].
//! - Floats are IEEE 754 with round-to-nearest-even; `fma` rounds once (`mul_add`), every other
//!   op rounds each step (no contraction).
//! - `min(a, b)` is `if a < b { a } else { b }` and `max(a, b)` is `if a > b { a } else { b }`
//!   (x86's `minps`/`maxps`): for floats, a NaN in `a` gives `b`, a NaN in `b` gives NaN, and of
//!   two zeros the second is returned.
//! - Comparisons are IEEE (every comparison with NaN is false, except `ne`) and give `u8` 1 or 0.
//! - `cast` is Rust's `as`: integers wrap to narrower integers and sign-extend or zero-extend to
//!   wider ones; floats to integers round toward zero and saturate, NaN gives 0; integers and
//!   `f64` to floats round to nearest-even.
//! - A NaN written to an output is the quiet NaN with sign 0 and no payload (`0x7fc0_0000`,
//!   `0x7ff8_0000_0000_0000`), see [`Elem::canonical`]: IEEE leaves a NaN result's sign and
//!   payload open, and x86 (sign 1), WebAssembly (sign 0) and the compiler's operand order differ
//!   on them, so the only NaN every worker count and every front end writes alike is a fixed one.

/// An element type's arithmetic, as the ops define it (see the module documentation).
pub(crate) trait Elem:
    Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static
{
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    /// For integers, `b` is not zero (checked by the caller).
    fn div(a: Self, b: Self) -> Self;
    fn is_zero(self) -> bool;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    /// Floats only (validation refuses `sqrt` on integers).
    fn sqrt(a: Self) -> Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// The value as an output holds it: itself, except that every float NaN becomes the one quiet
    /// NaN with sign 0 and no payload. Nothing else in a run looks at a NaN's bits (no op
    /// reinterprets them), so fixing them where outputs are written fixes them everywhere.
    #[inline(always)]
    fn canonical(self) -> Self {
        self
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        if a < b { a } else { b }
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        if a > b { a } else { b }
    }
}

macro_rules! int_elem {
    ($($T:ty => $abs:expr;)*) => {$(
        impl Elem for $T {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self { a.wrapping_div(b) }
            #[inline(always)]
            fn is_zero(self) -> bool { self == 0 }
            #[inline(always)]
            fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)]
            fn abs(a: Self) -> Self { $abs(a) }
            #[inline(always)]
            fn sqrt(_: Self) -> Self { unreachable!("invariant: validation refuses sqrt on integers") }
            #[inline(always)]
            fn fma(a: Self, b: Self, c: Self) -> Self { a.wrapping_mul(b).wrapping_add(c) }
        }
    )*};
}

int_elem! {
    i8 => i8::wrapping_abs;
    u8 => std::convert::identity;
    i16 => i16::wrapping_abs;
    u16 => std::convert::identity;
    i32 => i32::wrapping_abs;
    u32 => std::convert::identity;
}

macro_rules! float_elem {
    ($($T:ty => $nan:expr;)*) => {$(
        impl Elem for $T {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { a - b }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a * b }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self { a / b }
            #[inline(always)]
            fn is_zero(self) -> bool { false } // float division by zero is IEEE, not an error
            #[inline(always)]
            fn neg(a: Self) -> Self { -a }
            #[inline(always)]
            fn abs(a: Self) -> Self { a.abs() }
            #[inline(always)]
            fn sqrt(a: Self) -> Self { a.sqrt() }
            #[inline(always)]
            fn fma(a: Self, b: Self, c: Self) -> Self { a.mul_add(b, c) }
            #[inline(always)]
            fn canonical(self) -> Self { if self.is_nan() { <$T>::from_bits($nan) } else { self } }
        }
    )*};
}

float_elem! {
    f32 => 0x7fc0_0000;
    f64 => 0x7ff8_0000_0000_0000;
}

/// `as` from `T` to `Self`.
pub(crate) trait CastFrom<T> {
    fn cast_from(value: T) -> Self;
}

macro_rules! cast_from {
    ($($to:ty),*) => {
        cast_from!(@each [$($to),*] [i8, u8, i16, u16, i32, u32, f32, f64]);
    };
    (@each [$($to:ty),*] $from:tt) => {
        $(cast_from!(@one $to, $from);)*
    };
    (@one $to:ty, [$($from:ty),*]) => {
        $(
            impl CastFrom<$from> for $to {
                #[inline(always)]
                #[allow(clippy::cast_possible_truncation, clippy::cast_lossless, clippy::cast_possible_wrap,
                        clippy::cast_sign_loss, clippy::cast_precision_loss, clippy::unnecessary_cast,
                        reason = "`as` is the documented cast semantics")]
                fn cast_from(value: $from) -> Self { value as $to }
            }
        )*
    };
}
cast_from!(i8, u8, i16, u16, i32, u32, f32, f64);

/// Typed access to the arrays of [`Elem`]'s dtype.
pub(crate) trait Typed: Elem {
    fn of(array: &crate::Array) -> &Vec<Self>;
    fn of_mut(array: &mut crate::Array) -> &mut Vec<Self>;
    fn of_ref<'a>(array: crate::ArrayRef<'a>) -> &'a [Self];
    fn of_out<'a, 'b>(array: &'b mut crate::ArrayMut<'a>) -> &'b mut [Self];
}

macro_rules! typed {
    ($($T:ty => $V:ident),*) => {$(
        impl Typed for $T {
            #[inline(always)]
            fn of(array: &crate::Array) -> &Vec<Self> {
                match array {
                    crate::Array::$V(v) => v,
                    other => unreachable!("invariant: a {} array where {} was planned", other.dtype(), stringify!($T)),
                }
            }
            #[inline(always)]
            fn of_mut(array: &mut crate::Array) -> &mut Vec<Self> {
                match array {
                    crate::Array::$V(v) => v,
                    other => unreachable!("invariant: a {} array where {} was planned", other.dtype(), stringify!($T)),
                }
            }
            #[inline(always)]
            fn of_ref<'a>(array: crate::ArrayRef<'a>) -> &'a [Self] {
                match array {
                    crate::ArrayRef::$V(v) => v,
                    other => unreachable!("invariant: a {} array where {} was bound", other.dtype(), stringify!($T)),
                }
            }
            #[inline(always)]
            fn of_out<'a, 'b>(array: &'b mut crate::ArrayMut<'a>) -> &'b mut [Self] {
                match array {
                    crate::ArrayMut::$V(v) => v,
                    other => unreachable!("invariant: a {} array where {} was bound", other.dtype(), stringify!($T)),
                }
            }
        }
    )*};
}
typed!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, f32 => F32, f64 => F64);
