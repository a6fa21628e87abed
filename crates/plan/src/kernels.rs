//! Slice kernels of the fused executor: one plain loop per op and dtype, written so the
//! compiler vectorizes them (zip over equal-length slices, no bounds checks, no branches but
//! selects). They compute exactly what `elem` defines, element by element, so they agree with the
//! reference bit for bit. All `#[inline(always)]`: they are compiled into the block runner of
//! each instruction set (see `dispatch`).

use crate::Op;
use crate::elem::{CastFrom, Elem};

/// `out[i] = a[i] op b[i]` for add, sub, mul, min, max, and float div.
#[inline(always)]
pub(crate) fn binary<T: Elem>(op: Op, a: &[T], b: &[T], out: &mut [T]) {
    let (a, b) = (&a[..out.len()], &b[..out.len()]);
    macro_rules! each {
        ($f:path) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = $f(x, y);
            }
        };
    }
    match op {
        Op::Add => each!(T::add),
        Op::Sub => each!(T::sub),
        Op::Mul => each!(T::mul),
        Op::Div => each!(T::div),
        Op::Min => each!(T::min),
        Op::Max => each!(T::max),
        _ => unreachable!("invariant: a binary op"),
    }
}

/// Integer division: `out[i] = a[i] / b[i]`, 0 where `b[i]` is 0; returns the first such index.
#[inline(always)]
pub(crate) fn divide_checked<T: Elem>(a: &[T], b: &[T], out: &mut [T]) -> Option<usize> {
    let (a, b) = (&a[..out.len()], &b[..out.len()]);
    let first_zero = b.iter().position(|y| y.is_zero());
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = if y.is_zero() {
            T::default()
        } else {
            T::div(x, y)
        };
    }
    first_zero
}

/// `out[i] = op a[i]` for neg, abs, sqrt.
#[inline(always)]
pub(crate) fn unary<T: Elem>(op: Op, a: &[T], out: &mut [T]) {
    let a = &a[..out.len()];
    macro_rules! each {
        ($f:path) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = $f(x);
            }
        };
    }
    match op {
        Op::Neg => each!(T::neg),
        Op::Abs => each!(T::abs),
        Op::Sqrt => each!(T::sqrt),
        _ => unreachable!("invariant: a unary op"),
    }
}

/// `out[i] = fma(a[i], b[i], c[i])`.
#[inline(always)]
pub(crate) fn fma<T: Elem>(a: &[T], b: &[T], c: &[T], out: &mut [T]) {
    let (a, b, c) = (&a[..out.len()], &b[..out.len()], &c[..out.len()]);
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = T::fma(x, y, z);
    }
}

/// `out[i] = (a[i] op b[i]) as u8`.
#[inline(always)]
pub(crate) fn compare<T: Elem>(op: Op, a: &[T], b: &[T], out: &mut [u8]) {
    let (a, b) = (&a[..out.len()], &b[..out.len()]);
    macro_rules! each {
        ($cmp:tt) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = u8::from(x $cmp y);
            }
        };
    }
    match op {
        Op::Eq => each!(==),
        Op::Ne => each!(!=),
        Op::Lt => each!(<),
        Op::Le => each!(<=),
        Op::Gt => each!(>),
        Op::Ge => each!(>=),
        _ => unreachable!("invariant: a compare op"),
    }
}

/// `out[i] = if mask[i] != 0 { a[i] } else { b[i] }`.
#[inline(always)]
pub(crate) fn select<T: Elem>(mask: &[u8], a: &[T], b: &[T], out: &mut [T]) {
    let (mask, a, b) = (&mask[..out.len()], &a[..out.len()], &b[..out.len()]);
    for (((o, &m), &x), &y) in out.iter_mut().zip(mask).zip(a).zip(b) {
        *o = if m != 0 { x } else { y };
    }
}

/// `out[i] = a[i] as U`.
#[inline(always)]
pub(crate) fn cast<F: Copy, U: CastFrom<F>>(a: &[F], out: &mut [U]) {
    let a = &a[..out.len()];
    for (o, &x) in out.iter_mut().zip(a) {
        *o = U::cast_from(x);
    }
}

/// `out[i] = data[start + i * stride]`: a strided view's block, gathered.
#[inline(always)]
pub(crate) fn gather<T: Copy>(data: &[T], start: usize, stride: usize, out: &mut [T]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = data[start + i * stride];
    }
}

/// `data[i * stride] = block[i].canonical()`: a block written to an output through a strided
/// view, each NaN as the one NaN outputs hold ([`Elem::canonical`]).
#[inline(always)]
pub(crate) fn scatter<T: Elem>(block: &[T], stride: usize, data: &mut [T]) {
    if stride == 1 {
        for (to, &x) in data[..block.len()].iter_mut().zip(block) {
            *to = x.canonical();
        }
    } else {
        for (i, &x) in block.iter().enumerate() {
            data[i * stride] = x.canonical();
        }
    }
}
