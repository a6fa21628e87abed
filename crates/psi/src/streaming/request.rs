//! The joiner's request, masked block by block and written as it goes.

use std::io::Write;

use lockstep_shard::{Control, Pool};

use super::{Budget, KeyIndex, StreamingError, mask_in_blocks};
use crate::{ElementWriter, Joiner, PsiError};

/// Writes the joiner's request over `index`'s distinct keys to `out`: the bytes
/// [`linkage::request`](crate::linkage::request) then `to_bytes` give for the same rows (element
/// `i` masks the `i`-th distinct key in order of first appearance), masking `budget.block` keys
/// at a time. Returns `out`.
///
/// Progress: one step per key.
///
/// # Errors
/// [`PsiError::EmptySet`] for an index without keys; [`StreamingError::Write`] if `out` fails
/// (nothing more is written); [`StreamingError::Index`]; [`PsiError::Cancelled`] and runtime
/// failures.
pub fn request<W: Write>(
    joiner: &Joiner,
    pool: &Pool,
    control: &Control,
    index: &KeyIndex,
    budget: &Budget<'_>,
    out: W,
) -> Result<W, StreamingError> {
    if index.is_empty() {
        return Err(PsiError::EmptySet("joiner's").into());
    }
    let mut writer = ElementWriter::request(out, joiner.mode())?;
    mask_in_blocks(
        index,
        budget,
        |block| joiner.mask(pool, control, block),
        |_, element| Ok(writer.push(&element)?),
    )?;
    Ok(writer.finish()?)
}
