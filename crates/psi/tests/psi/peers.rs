//! Cross-party rounds against the peers (filled in below).
