//! Which ceremony file a stream holds, told from its first bytes, and how much work a file of a
//! given length is (for worker counts and progress bars, before it is read).
//!
//! # How kinds are told apart
//! Every file the ceremony reads or writes, and the circom and snarkjs files beside them, is
//! told from its first [`SNIFF_LEN`] bytes by features no other kind has:
//! - circom's and snarkjs's binary files start with a magic: `ptau`, `zkey`, `r1cs`, `wtns`;
//! - gnark's files that start with a compressed point (phase 1 object, verifying key, proof)
//!   are told apart by where their points start: a compressed point's first byte has the flag
//!   bit 0x80 set, while a coordinate's first byte never does (it is below p's, 0x1a). A phase
//!   1 object is G1, G2, G1, G2 (flags at bytes 0, 48, 144, 192, not 96); a verifying key G1,
//!   G1, G2, G2 (0, 48, 96, 192, not 144); a proof G1, G2, G1 then a u32 count (0, 48, 144, not
//!   96 or 192);
//! - gnark's R1CS starts with its length and gnark's version as u64 little-endian words: major
//!   0, a minor from 10 (the oldest its reader takes);
//! - a public witness with its two u32 counts, the secret one 0, and the vector's length equal
//!   to the public count; a full witness the same with a secret count above 0 and the length
//!   their sum;
//! - a phase 2 object with its commitment count, a u16 of at most 169 (so a 0 byte), then a
//!   compressed G1 point at byte 2;
//! - a sealed SRS and a proving key with `N`, a u64 big-endian power of two of at most 2^40,
//!   then a compressed G2 point for the SRS (`[beta]_2`, flag at byte 8) and `N^-1`, a 32-byte
//!   scalar below r (no flag), for the key.
//!
//! A sniff says what a file looks like; the reader of the kind a command expects still checks
//! the whole file.

use crate::phase1::{phase1_len, srs_len};
use crate::r1cs::MAX_COMMITMENTS;

/// The ceremony files lockstep reads or writes, and the circom and snarkjs files beside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A phase 1 object (`Phase1.WriteTo`): update proofs, SRS commons, challenge.
    Phase1,
    /// A sealed SRS (`SrsCommons.WriteTo`).
    Srs,
    /// A snarkjs `.ptau` file.
    Ptau,
    /// A gnark phase 2 object (`Phase2.WriteTo`).
    Phase2,
    /// gnark's serialized R1CS (`(*cs.R1CS).WriteTo`).
    R1cs,
    /// A gnark Groth16 proving key.
    ProvingKey,
    /// A gnark Groth16 verifying key.
    VerifyingKey,
    /// A gnark Groth16 proof.
    Proof,
    /// A gnark public witness (`witness.Public().WriteTo`).
    PublicWitness,
    /// A gnark full witness (`witness.WriteTo`: public and secret values).
    Witness,
    /// A snarkjs `.zkey`.
    Zkey,
    /// A circom `.r1cs`.
    CircomR1cs,
    /// A circom witness, `.wtns`.
    Wtns,
}

/// The bytes [`FileKind::sniff`] looks at: enough for the fifth point of a phase 1 object.
pub const SNIFF_LEN: usize = 200;

impl FileKind {
    /// The kind of file whose first bytes (up to [`SNIFF_LEN`]) are `prefix`, `None` for none
    /// of them (see the module's documentation). A kind whose features lie past a short
    /// prefix is not told.
    pub fn sniff(prefix: &[u8]) -> Option<Self> {
        match prefix.get(..4)? {
            b"ptau" => return Some(Self::Ptau),
            b"zkey" => return Some(Self::Zkey),
            b"r1cs" => return Some(Self::CircomR1cs),
            b"wtns" => return Some(Self::Wtns),
            _ => {}
        }
        let flag = |at: usize| prefix.get(at).map(|b| b & 0x80 != 0);
        if flag(0) == Some(true) {
            return match (flag(48)?, flag(96)?, flag(144)?, flag(192)) {
                (true, false, true, Some(true)) => Some(Self::Phase1),
                (true, true, false, Some(true)) => Some(Self::VerifyingKey),
                (true, false, true, Some(false)) => Some(Self::Proof),
                _ => None,
            };
        }
        let u32_be = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(prefix.get(at..at + 4)?.try_into().ok()?))
        };
        let u64_le = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(prefix.get(at..at + 8)?.try_into().ok()?))
        };
        if let (Some(0), Some(minor), Some(patch)) = (u64_le(8), u64_le(16), u64_le(24))
            && (10..1 << 16).contains(&minor)
            && patch < 1 << 16
            && u64_le(0).is_some_and(|total| total > 0)
        {
            return Some(Self::R1cs);
        }
        // A witness without public inputs is its 12 bytes of counts alone.
        if let (Some(public), Some(0), Some(len)) = (u32_be(0), u32_be(4), u32_be(8))
            && public == len
            && (public > 0 || prefix.len() == 12)
        {
            return Some(Self::PublicWitness);
        }
        if let (Some(public), Some(secret), Some(len)) = (u32_be(0), u32_be(4), u32_be(8))
            && secret > 0
            && u64::from(public) + u64::from(secret) == u64::from(len)
        {
            return Some(Self::Witness);
        }
        let commitments = u16::from_be_bytes(prefix.get(..2)?.try_into().ok()?);
        if usize::from(commitments) <= MAX_COMMITMENTS && flag(2)? {
            return Some(Self::Phase2);
        }
        let n = u64::from_be_bytes(prefix.get(..8)?.try_into().ok()?);
        if n.is_power_of_two() && n <= 1 << 40 {
            return Some(if flag(8)? {
                Self::Srs
            } else {
                Self::ProvingKey
            });
        }
        None
    }

    /// The kind, for messages: `a phase 1 object`, `a sealed SRS`, `a snarkjs .ptau file`...
    pub fn described(self) -> &'static str {
        match self {
            Self::Phase1 => "a phase 1 object",
            Self::Srs => "a sealed SRS",
            Self::Ptau => "a snarkjs .ptau file",
            Self::Phase2 => "a phase 2 object",
            Self::R1cs => "a gnark R1CS",
            Self::ProvingKey => "a Groth16 proving key",
            Self::VerifyingKey => "a Groth16 verifying key",
            Self::Proof => "a Groth16 proof",
            Self::PublicWitness => "a public witness",
            Self::Witness => "a gnark witness",
            Self::Zkey => "a snarkjs .zkey file",
            Self::CircomR1cs => "a circom .r1cs file",
            Self::Wtns => "a circom .wtns witness",
        }
    }

    /// Whether files of this kind are read through a section table (snarkjs's and circom's:
    /// `.ptau`, `.zkey`, `.r1cs`, `.wtns`), which needs a seekable input; gnark's are read as a
    /// stream (a pipe works).
    pub fn is_sectioned(self) -> bool {
        matches!(
            self,
            Self::Ptau | Self::Zkey | Self::CircomR1cs | Self::Wtns
        )
    }

    /// What reads a file of this kind, for a message that refuses it elsewhere: `` `lockstep
    /// ceremony ptau import` reads it``.
    pub fn read_by(self) -> &'static str {
        match self {
            Self::Phase1 => "`lockstep ceremony phase1 contribute/verify/seal` read it",
            Self::Srs => "`lockstep ceremony phase2 new --phase1` and `ptau export` read it",
            Self::Ptau => "`lockstep ceremony ptau import` reads it",
            Self::Phase2 => "`lockstep ceremony phase2 contribute/verify/seal` read it",
            Self::R1cs => "`lockstep ceremony phase2 new --r1cs` reads it",
            Self::ProvingKey => "`lockstep groth16 prove --pk` reads it",
            Self::VerifyingKey => "`lockstep ceremony groth16 verify --vk` reads it",
            Self::Proof => "`lockstep ceremony groth16 verify --proof` reads it",
            Self::PublicWitness => "`lockstep ceremony groth16 verify --public` reads it",
            Self::Witness => "`lockstep groth16 prove --pk .. --witness` reads it",
            Self::Zkey => "`lockstep ceremony zkey contribute/beacon/verify/export-vkey` read it",
            Self::CircomR1cs => "`lockstep ceremony zkey new` and `zkey verify` read it",
            Self::Wtns => "`lockstep ceremony info` reads it",
        }
    }

    /// The points (`5N - 2`) a file of this kind and `len` bytes stores, if `len` fits one (a
    /// challenge of 0 or 32 bytes for a phase 1 object; `None` for other kinds, whose contents
    /// say); for a progress bar.
    pub fn points_in(self, len: u64) -> Option<u64> {
        // Both files grow by the same bytes per unit of N (phase1_len(1, 0) - phase1_len(0, 0)).
        let per_n = phase1_len(1, 0) - phase1_len(0, 0);
        let n = match self {
            Self::Phase1 => len.saturating_sub(phase1_len(0, 0)) / per_n,
            Self::Srs => len.saturating_add(per_n - srs_len(1)) / per_n,
            _ => return None,
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
    fn sizes_of_real_files() {
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
    }

    #[test]
    fn magics_and_short_prefixes() {
        assert_eq!(FileKind::sniff(b"ptau\x01"), Some(FileKind::Ptau));
        assert_eq!(FileKind::sniff(b"zkey"), Some(FileKind::Zkey));
        assert_eq!(FileKind::sniff(b"r1cs"), Some(FileKind::CircomR1cs));
        assert_eq!(FileKind::sniff(b"wtns"), Some(FileKind::Wtns));
        assert_eq!(FileKind::sniff(b"pta"), None);
        assert_eq!(FileKind::sniff(b"{\"version\": 1}"), None);
        assert_eq!(FileKind::sniff(b""), None);
        // A point first, but too short to tell which file starts with it.
        assert_eq!(FileKind::sniff(&[0x80; 100]), None);
        assert_eq!(FileKind::sniff(&[0; 200]), None);
        assert_eq!(FileKind::sniff(&[0; 12]), Some(FileKind::PublicWitness));
        let mut full = [0u8; 12 + 32 * 5];
        full[3] = 2;
        full[7] = 3;
        full[11] = 5;
        assert_eq!(FileKind::sniff(&full), Some(FileKind::Witness));
        full[11] = 4;
        assert_ne!(FileKind::sniff(&full), Some(FileKind::Witness));
    }
}
