//! The joiner's request, masked block by block and written as it goes.

use std::io::Write;

use lockstep_shard::{Control, Pool};

use super::{Budget, KeyIndex, StreamingError};
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
    let mut block = Vec::with_capacity(budget.block().min(index.len()));
    let mut keys = index.first_keys()?;
    loop {
        let key = keys.next().transpose()?;
        let ended = key.is_none();
        block.extend(key);
        if block.len() == budget.block() || (ended && !block.is_empty()) {
            for element in joiner.mask(pool, control, &block)? {
                writer.push(&element)?;
            }
            block.clear();
        }
        if ended {
            return Ok(writer.finish()?);
        }
    }
}
