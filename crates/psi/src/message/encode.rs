//! Encoding the messages: prost over the `psi_proto` declarations (`proto`), which writes
//! fields in tag order and omits proto3 defaults as OpenMined's C++ and JavaScript serializers
//! do, so our bytes are theirs.

use prost::Message as _;

use super::proto;
use super::types::{Mode, Request, Response, ServerSetup};
use crate::PsiError;
use crate::curve::Element;

impl ServerSetup {
    /// The protobuf encoding (`psi_proto.ServerSetup`) of a valid setup.
    ///
    /// # Errors
    /// [`PsiError::InvalidSetup`] if [`validate`](Self::validate) refuses it (the fields are
    /// public): an invalid setup is never encoded.
    ///
    /// # Panics
    /// Never: the integer conversions are within the ranges `validate` has just checked.
    pub fn to_bytes(&self) -> Result<Vec<u8>, PsiError> {
        self.validate()?;
        let data = match self {
            Self::Raw(elements) => proto::DataStructure::Raw(proto::RawInfo {
                encrypted_elements: to_wire(elements),
            }),
            Self::Gcs(g) => proto::DataStructure::Gcs(proto::GcsInfo {
                div: i32::try_from(g.div).expect("invariant: validated div <= 62"),
                hash_range: i64::try_from(g.hash_range)
                    .expect("invariant: validated hash_range < 2^63"),
                bits: g.bits.clone(),
            }),
            Self::Bloom(b) => proto::DataStructure::BloomFilter(proto::BloomFilterInfo {
                num_hash_functions: i32::try_from(b.num_hash_functions)
                    .expect("invariant: validated num_hash_functions <= 1100"),
                bits: b.bits.clone(),
            }),
        };
        Ok(proto::ServerSetup {
            data_structure: Some(data),
        }
        .encode_to_vec())
    }
}

impl Request {
    /// The protobuf encoding (`psi_proto.Request`).
    pub fn to_bytes(&self) -> Vec<u8> {
        proto::Request {
            reveal_intersection: self.mode == Mode::Reveal,
            encrypted_elements: to_wire(&self.elements),
        }
        .encode_to_vec()
    }
}

impl Response {
    /// The protobuf encoding (`psi_proto.Response`).
    pub fn to_bytes(&self) -> Vec<u8> {
        proto::Response {
            encrypted_elements: to_wire(&self.elements),
        }
        .encode_to_vec()
    }
}

fn to_wire(elements: &[Element]) -> Vec<Vec<u8>> {
    elements.iter().map(|e| e.as_bytes().to_vec()).collect()
}
