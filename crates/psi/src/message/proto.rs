//! The `psi_proto` protobuf messages of OpenMined PSI 2.x (`private_set_intersection/proto/
//! psi.proto`), declared with prost derives so no `protoc` runs at build time. Field numbers and
//! types are the proto's; prost writes fields in tag order and omits proto3 defaults, as the C++
//! and JavaScript serializers do, so encodings match byte for byte.

#![allow(missing_docs, unreachable_pub)]

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ServerSetup {
    #[prost(oneof = "DataStructure", tags = "1, 2, 3")]
    pub(crate) data_structure: Option<DataStructure>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum DataStructure {
    #[prost(message, tag = "1")]
    Raw(RawInfo),
    #[prost(message, tag = "2")]
    Gcs(GcsInfo),
    #[prost(message, tag = "3")]
    BloomFilter(BloomFilterInfo),
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RawInfo {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub(crate) encrypted_elements: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct GcsInfo {
    #[prost(int32, tag = "1")]
    pub(crate) div: i32,
    #[prost(int64, tag = "2")]
    pub(crate) hash_range: i64,
    #[prost(bytes = "vec", tag = "3")]
    pub(crate) bits: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BloomFilterInfo {
    #[prost(int32, tag = "1")]
    pub(crate) num_hash_functions: i32,
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) bits: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Request {
    #[prost(bool, tag = "1")]
    pub(crate) reveal_intersection: bool,
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub(crate) encrypted_elements: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Response {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub(crate) encrypted_elements: Vec<Vec<u8>>,
}
