//! Which ceremony file a stream holds, told from its first bytes, and how much work a file of a
//! given length is (for worker counts and progress bars, before it is read).

use crate::phase1::{phase1_len, srs_len};

/// The ceremony files lockstep reads: gnark v0.15's two phase 1 files and snarkjs's `.ptau`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A phase 1 object (`Phase1.WriteTo`): update proofs, SRS commons, challenge.
    Phase1,
    /// A sealed SRS (`SrsCommons.WriteTo`).
    Srs,
    /// A snarkjs `.ptau` file.
    Ptau,
}

/// The bytes [`FileKind::sniff`] looks at: enough for the `.ptau` magic.
pub const SNIFF_LEN: usize = 4;

impl FileKind {
    /// The kind of file whose first bytes (up to [`SNIFF_LEN`]) are `prefix`, `None` for none
    /// of them: a phase 1 object starts with a compressed G1 point (flag bit 0x80 set); a sealed
    /// SRS with N, a big-endian u64 whose first byte is 0 for every accepted size; a `.ptau` with
    /// the magic `ptau`. It tells the kinds apart and nothing more: the reader then checks the
    /// whole file.
    pub fn sniff(prefix: &[u8]) -> Option<Self> {
        match prefix {
            [first, ..] if first & 0x80 != 0 => Some(Self::Phase1),
            [0, ..] => Some(Self::Srs),
            [b'p', b't', b'a', b'u', ..] => Some(Self::Ptau),
            _ => None,
        }
    }

    /// The kind, for messages: `a phase 1 object`, `a sealed SRS`, `a snarkjs .ptau file`.
    pub fn described(self) -> &'static str {
        match self {
            Self::Phase1 => "a phase 1 object",
            Self::Srs => "a sealed SRS",
            Self::Ptau => "a snarkjs .ptau file",
        }
    }

    /// The points (`5N - 2`) a file of this kind and `len` bytes stores, if `len` fits one (a
    /// challenge of 0 or 32 bytes for a phase 1 object; `None` for a `.ptau`, whose sections
    /// say); for a progress bar.
    pub fn points_in(self, len: u64) -> Option<u64> {
        // Both files grow by the same bytes per unit of N (phase1_len(1, 0) - phase1_len(0, 0)).
        let per_n = phase1_len(1, 0) - phase1_len(0, 0);
        let n = match self {
            Self::Phase1 => len.saturating_sub(phase1_len(0, 0)) / per_n,
            Self::Srs => len.saturating_add(per_n - srs_len(1)) / per_n,
            Self::Ptau => return None,
        };
        (n > 0).then(|| 5 * n - 2)
    }
}

/// The most points a ceremony file of `len` bytes can hold (compressed G1 points are the
/// smallest, 48 bytes): the work to size a pool by before the file is read.
pub fn points_at_most(len: u64) -> u64 {
    len / 48
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_sizes_of_real_files() {
        for power in [1u32, 10] {
            let n = 1u64 << power;
            assert_eq!(
                FileKind::Phase1.points_in(phase1_len(n, 32)),
                Some(5 * n - 2)
            );
            assert_eq!(
                FileKind::Phase1.points_in(phase1_len(n, 0)),
                Some(5 * n - 2)
            );
            assert_eq!(FileKind::Srs.points_in(srs_len(n)), Some(5 * n - 2));
        }
        assert_eq!(FileKind::Phase1.points_in(10), None);
        assert_eq!(FileKind::sniff(&[0x80 | 0x20]), Some(FileKind::Phase1));
        assert_eq!(FileKind::sniff(&[0, 0, 0, 0]), Some(FileKind::Srs));
        assert_eq!(FileKind::sniff(b"ptau"), Some(FileKind::Ptau));
        assert_eq!(FileKind::sniff(b"pta"), None);
        assert_eq!(FileKind::sniff(b"{\"ve"), None);
        assert_eq!(FileKind::sniff(b""), None);
    }
}
