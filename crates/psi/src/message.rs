//! The wire format: the three `psi_proto` messages two parties exchange (OpenMined PSI 2.x),
//! byte for byte.
//!
//! - `types`: the messages as values ([`ServerSetup`] raw, GCS or Bloom; [`Request`];
//!   [`Response`]) and the structure a lookup relies on ([`ServerSetup::validate`]);
//! - `encode`: `to_bytes`, prost over the proto declarations (`proto`);
//! - `stream`: [`ElementWriter`], a request, response or raw setup written an element at a
//!   time (the bytes `to_bytes` gives), for steps that never hold every element;
//! - `decode`: `from_bytes` and `read`, streaming decoders bounded by [`Limits`] over the
//!   protobuf `scanner`.
//!
//! Every decoder refuses what the protocol cannot use with a [`PsiError`](crate::PsiError)
//! naming the message, the element and the fault: malformed protobuf, a message of another type,
//! elements that are not 33-byte compressed points, unsorted raw setups, impossible GCS or Bloom
//! parameters, more elements than a [`Limits`] allows. Decoding streams: a bad element fails
//! before the bytes after it are read. Whether a request's or response's element lies on the
//! curve is checked when it is multiplied.

pub(crate) mod decode;
mod encode;
pub(crate) mod proto;
mod scanner;
mod stream;
mod types;

pub use decode::{ElementReader, Limits, RawSetupReader, StreamedSetup};
pub use stream::{ElementWriter, StreamError};
pub use types::{Bloom, Gcs, Mode, Request, Response, ServerSetup};
