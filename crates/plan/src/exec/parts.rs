//! The parts of the arrays a task touches: its inputs as views ([`InPart`]), its outputs cut
//! into the pool's blocks ([`Outs`]), and an operand's block read from either. The leaf of the
//! executor: it uses none of the other modules.

use std::ops::Range;

use lockstep_shard::Parts;

use super::ir::Operand;
use crate::elem::Typed;
use crate::{Array, ArrayMut, ArrayRef};

/// An input as tasks read it: element `i` at `offset + i * stride`.
#[derive(Clone, Copy)]
pub(crate) struct InPart<'a> {
    pub(crate) data: ArrayRef<'a>,
    pub(crate) offset: usize,
    pub(crate) stride: usize,
}

/// The outputs a task writes: each a view's elements from the task's first one.
pub(crate) struct Outs<'a>(pub(super) Vec<OutPart<'a>>);

/// One output's part: its elements from the part's first, `stride` apart.
pub(super) struct OutPart<'a> {
    pub(super) data: ArrayMut<'a>,
    pub(super) stride: usize,
    pub(super) len: usize,
}

impl Parts for Outs<'_> {
    fn len(&self) -> usize {
        self.0.first().map_or(0, |part| part.len)
    }

    fn lengths_agree(&self) -> bool {
        self.0.iter().all(|part| part.len == self.len())
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (mut left, mut right) = (
            Vec::with_capacity(self.0.len()),
            Vec::with_capacity(self.0.len()),
        );
        for part in self.0 {
            let at = mid.saturating_mul(part.stride).min(part.data.len());
            let (l, r) = split_array(part.data, at);
            left.push(OutPart {
                data: l,
                stride: part.stride,
                len: mid,
            });
            right.push(OutPart {
                data: r,
                stride: part.stride,
                len: part.len - mid,
            });
        }
        (Outs(left), Outs(right))
    }
}

fn split_array(data: ArrayMut<'_>, at: usize) -> (ArrayMut<'_>, ArrayMut<'_>) {
    macro_rules! split {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => {
                    let (l, r) = v.split_at_mut(at);
                    (ArrayMut::$V(l), ArrayMut::$V(r))
                })*
            }
        };
    }
    split!(I8, U8, I16, U16, I32, U32, F32, F64)
}

pub(super) fn sub_array<'a>(data: ArrayMut<'a>, range: Range<usize>) -> ArrayMut<'a> {
    macro_rules! sub {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => ArrayMut::$V(&mut v[range]),)*
            }
        };
    }
    sub!(I8, U8, I16, U16, I32, U32, F32, F64)
}

/// A shorter borrow of an output's array.
pub(super) fn reborrow<'b>(data: &'b mut ArrayMut<'_>) -> ArrayMut<'b> {
    macro_rules! re {
        ($($V:ident),*) => {
            match data {
                $(ArrayMut::$V(v) => ArrayMut::$V(&mut v[..]),)*
            }
        };
    }
    re!(I8, U8, I16, U16, I32, U32, F32, F64)
}

// An operand's block: a dense input's elements in place, or a slot's first `len`.
#[inline(always)]
pub(crate) fn read<'s, T: Typed>(
    operand: Operand,
    ins: &[InPart<'s>],
    slots: &'s [Array],
    start: usize,
    len: usize,
) -> &'s [T] {
    match operand {
        Operand::Dense(i) => {
            let part = ins[i];
            &<T as Typed>::of_ref(part.data)[part.offset + start..part.offset + start + len]
        }
        Operand::Slot(s) => &<T as Typed>::of(&slots[s])[..len],
    }
}
