//! The one spelling of a fixed-length id (a digest, a token, a round id): lowercase hex.

/// `text` as `N` bytes when it is exactly `2N` lowercase hex digits; `None` for any other text,
/// upper case, `..`, `%2e%2e` and surrounding whitespace included, so an id taken from a path or a
/// header can name nothing but itself.
pub(crate) fn lower_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut bytes = [0u8; N];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(bytes)
}
