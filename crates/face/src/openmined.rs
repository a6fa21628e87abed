//! OpenMined PSI's own API, `server` and `client` as `openmined.psi` has them, for a front end
//! that stands in for it (the Python module `lockstep.psi`): a [`Server`] or [`Client`] holding
//! its key, taking values and messages as bytes and giving messages and indexes back.
//!
//! The rules are [`lockstep_psi::compat`]'s (what OpenMined accepts and the order of its
//! intersection); what is here is the key's keeping, the worker count, and how the messages'
//! bytes are read and written. The binding chooses the pool (by [`workers`]) and the control
//! (its progress and cancellation) and runs each step on them.
//!
//! # Where key material travels
//! A key passed in ([`Server::import`], [`Client::import`]) is read from the caller's bytes,
//! which are wiped on every path; the scalar lives in the engine's zeroized
//! [`Key`] inside the object (with the engine's masking state, which holds
//! it too) until [`free`](Server::free) or the drop. [`export_key`](Server::export_key) is the
//! only way out, in a [`Zeroizing`] array the binding copies from.

use lockstep_psi::{
    Backend, GRAIN, Joiner, Key, Mode, PsiError, Response, ServerSetup, SetupFormat, Starter,
    compat,
};
use lockstep_shard::{Control, Pool};
use zeroize::{Zeroize, Zeroizing};

use crate::Coded;

pub use crate::workers::MAX_WORKERS;

/// The engine's side of a party: a [`Starter`] or a [`Joiner`], made from a key and a mode.
pub trait Side: Sized {
    /// The side with `key`, in `mode`, masking on `backend`.
    ///
    /// # Errors
    /// The backend's failure to start.
    fn new(key: &Key, mode: Mode, backend: Backend) -> Result<Self, PsiError>;

    /// The mode it was made in.
    fn mode(&self) -> Mode;
}

impl Side for Starter {
    fn new(key: &Key, mode: Mode, backend: Backend) -> Result<Self, PsiError> {
        Starter::new(key, mode, backend)
    }

    fn mode(&self) -> Mode {
        Starter::mode(self)
    }
}

impl Side for Joiner {
    fn new(key: &Key, mode: Mode, backend: Backend) -> Result<Self, PsiError> {
        Joiner::new(key, mode, backend)
    }

    fn mode(&self) -> Mode {
        Joiner::mode(self)
    }
}

/// A party's key with the engine's side of it.
struct Keyed<T> {
    key: Key,
    side: T,
}

/// One of OpenMined's two parties, its key inside: [`Server`] or [`Client`]. Made by
/// [`generate`](Self::generate) (`CreateWithNewKey`) or [`import`](Self::import)
/// (`CreateFromKey`); [`free`](Self::free) wipes the key and every later call is refused with
/// `PSI_USAGE`.
pub struct Party<T>(Option<Keyed<T>>);

/// OpenMined's `server`: masks its set into a setup and answers requests.
pub type Server = Party<Starter>;

/// OpenMined's `client`: masks its values into a request and finds them in a setup.
pub type Client = Party<Joiner>;

impl<T: Side> Party<T> {
    /// A party with a fresh key from the platform's generator, of `reveal`'s mode (a server
    /// answers only requests of it), masking on `backend`.
    ///
    /// # Errors
    /// `PSI_INTERNAL` if randomness or the backend fails.
    pub fn generate(reveal: bool, backend: Backend) -> Result<Self, Coded> {
        Self::with(Key::generate()?, reveal, backend)
    }

    /// A party with the key in `key` (big-endian, leading zeros ignored, as OpenMined reads
    /// it), which is wiped on every path.
    ///
    /// # Errors
    /// `PSI_KEY` for a key out of range or weak.
    pub fn import(key: &mut [u8], reveal: bool, backend: Backend) -> Result<Self, Coded> {
        let read = Key::from_bytes(key);
        key.zeroize();
        Self::with(read?, reveal, backend)
    }

    fn with(key: Key, reveal: bool, backend: Backend) -> Result<Self, Coded> {
        let mode = if reveal { Mode::Reveal } else { Mode::SizeOnly };
        let side = T::new(&key, mode, backend)?;
        Ok(Self(Some(Keyed { key, side })))
    }

    fn side(&self) -> Result<&T, Coded> {
        self.0.as_ref().map(|held| &held.side).ok_or_else(closed)
    }

    /// Whether it reveals the intersection (a server: answers revealing requests).
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free).
    pub fn reveal(&self) -> Result<bool, Coded> {
        Ok(self.side()?.mode() == Mode::Reveal)
    }

    /// The key's 32 big-endian bytes (`GetPrivateKeyBytes`): the only way the key leaves.
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free).
    pub fn export_key(&self) -> Result<Zeroizing<[u8; 32]>, Coded> {
        let held = self.0.as_ref().ok_or_else(closed)?;
        Ok(held.key.to_bytes())
    }

    /// Drops the key and the engine's state (wiped); every later call is refused.
    pub fn free(&mut self) {
        self.0 = None;
    }
}

impl Party<Starter> {
    /// `CreateSetupMessage(fpr, num_client_inputs, inputs, ds)`'s bytes: `values` masked on
    /// `pool` into a setup of `format` (`"raw"`, `"gcs"` or `"bloom"`), by
    /// [`compat::setup`]'s rules. Byte-identical at every worker count.
    ///
    /// # Errors
    /// `PSI_USAGE` for another format or after [`free`](Self::free); as [`compat::setup`].
    pub fn setup<V: AsRef<[u8]> + Sync>(
        &self,
        pool: &Pool,
        control: &Control,
        values: &[V],
        format: &str,
        fpr: f64,
        joiner_count: i64,
    ) -> Result<Vec<u8>, Coded> {
        let starter = self.side()?;
        let format: SetupFormat = format
            .parse()
            .map_err(|e: String| Coded::new("PSI_USAGE", e))?;
        control.progress().start(Some(values.len() as u64));
        let setup = compat::setup(starter, pool, control, values, format, fpr, joiner_count)?;
        Ok(setup.to_bytes()?)
    }

    /// `ProcessRequest(request)`'s bytes: the request's elements masked again on `pool`, in its
    /// order (sorted by bytes for a size-only request).
    ///
    /// # Errors
    /// `PSI_MESSAGE` for bytes that are not a request; `PSI_ROUND` for a request of the other
    /// mode; `PSI_MESSAGE` naming the first element off the curve.
    pub fn respond(
        &self,
        pool: &Pool,
        control: &Control,
        request: &[u8],
    ) -> Result<Vec<u8>, Coded> {
        let starter = self.side()?;
        let request = compat::read_request(request)?;
        control
            .progress()
            .start(Some(request.elements.len() as u64));
        Ok(starter.respond(pool, control, &request)?.to_bytes())
    }
}

impl Party<Joiner> {
    /// `CreateRequest(values)`'s bytes: `values` masked on `pool`, in order (may be empty).
    ///
    /// # Errors
    /// `PSI_USAGE` after [`free`](Self::free); `PSI_CANCELLED`.
    pub fn request<V: AsRef<[u8]> + Sync>(
        &self,
        pool: &Pool,
        control: &Control,
        values: &[V],
    ) -> Result<Vec<u8>, Coded> {
        let joiner = self.side()?;
        control.progress().start(Some(values.len() as u64));
        Ok(compat::request(joiner, pool, control, values)?.to_bytes())
    }

    /// `GetIntersection(setup, response)`: the indexes of this client's values found, in
    /// OpenMined's order ([`compat::intersect`]).
    ///
    /// # Errors
    /// `PSI_MESSAGE` for bytes that are not a setup or a response; `PSI_ROUND` for a size-only
    /// client; as [`compat::intersect`].
    pub fn intersect(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &[u8],
        response: &[u8],
    ) -> Result<Vec<u64>, Coded> {
        let joiner = self.side()?;
        let (setup, response) = messages(setup, response, control)?;
        let found = compat::intersect(joiner, pool, control, &setup, &response)?;
        Ok(found.into_iter().map(|i| i as u64).collect())
    }

    /// `GetIntersectionSize(setup, response)`: how many of this client's values were found.
    ///
    /// # Errors
    /// As [`intersect`](Self::intersect), in either mode.
    pub fn intersection_size(
        &self,
        pool: &Pool,
        control: &Control,
        setup: &[u8],
        response: &[u8],
    ) -> Result<u64, Coded> {
        let joiner = self.side()?;
        let (setup, response) = messages(setup, response, control)?;
        let size = compat::intersection_size(joiner, pool, control, &setup, &response)?;
        Ok(size as u64)
    }
}

/// A setup and a response read from their bytes, the step's progress started with the
/// response's count (the elements it unmasks).
fn messages(
    setup: &[u8],
    response: &[u8],
    control: &Control,
) -> Result<(ServerSetup, Response), Coded> {
    let setup = ServerSetup::from_bytes(setup)?;
    let response = Response::from_bytes(response)?;
    control
        .progress()
        .start(Some(response.elements.len() as u64));
    Ok((setup, response))
}

/// One of the three messages, read by the engine's decoders: what a front end's message classes
/// expose as fields (`request.encrypted_elements`, `setup.gcs.div`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A server's setup.
    Setup(ServerSetup),
    /// A client's request (may be empty, as OpenMined makes one for an empty set).
    Request(lockstep_psi::Request),
    /// A server's response.
    Response(Response),
}

/// The `kind` message (`"setup"`, `"request"` or `"response"`) in `bytes`, read as OpenMined's
/// API reads it ([`compat::read_request`] for a request).
///
/// # Errors
/// `PSI_MESSAGE` for bytes that are not a `kind` message, in the decoder's words; `PSI_USAGE`
/// for another kind.
pub fn read_message(kind: &str, bytes: &[u8]) -> Result<Message, Coded> {
    Ok(match kind {
        "setup" => Message::Setup(ServerSetup::from_bytes(bytes)?),
        "request" => Message::Request(compat::read_request(bytes)?),
        "response" => Message::Response(Response::from_bytes(bytes)?),
        other => {
            return Err(Coded::new(
                "PSI_USAGE",
                format!("no message kind {other:?}"),
            ));
        }
    })
}

/// Whether `bytes` are a `kind` message ([`read_message`]), so a front end's message class can
/// refuse another's bytes when loaded (`ServerSetup.Load`).
///
/// # Errors
/// As [`read_message`].
pub fn check_message(kind: &str, bytes: &[u8]) -> Result<(), Coded> {
    read_message(kind, bytes).map(drop)
}

/// The workers a step over `items` values takes ([`crate::workers::by_policy`] in PSI's
/// grain).
///
/// # Errors
/// `PSI_USAGE` past [`MAX_WORKERS`] or for a `LOCKSTEP_WORKERS` that is not a count.
pub fn workers(asked: u32, items: usize) -> Result<usize, Coded> {
    crate::workers::by_policy(asked, items, GRAIN, "PSI_USAGE")
}

fn closed() -> Coded {
    Coded::new("PSI_USAGE", "this object has been closed")
}

impl From<PsiError> for Coded {
    fn from(error: PsiError) -> Self {
        Self::new(error.code(), error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_of_bytes_and_a_closed_object_refused() {
        let (pool, control) = (Pool::new(2).unwrap(), Control::new());
        let mut server = Server::generate(true, Backend::fastest()).unwrap();
        let client = Client::generate(true, Backend::fastest()).unwrap();
        let setup = server
            .setup(&pool, &control, &["a", "b"], "gcs", 0.01, 2)
            .unwrap();
        let request = client.request(&pool, &control, &["b", "c"]).unwrap();
        let response = server.respond(&pool, &control, &request).unwrap();
        assert_eq!(
            client
                .intersect(&pool, &control, &setup, &response)
                .unwrap(),
            [0]
        );
        assert_eq!(
            client
                .intersection_size(&pool, &control, &setup, &response)
                .unwrap(),
            1
        );
        // The key travels out and back in to the same bytes.
        let mut key = *server.export_key().unwrap();
        let again = Server::import(&mut key, true, Backend::fastest()).unwrap();
        assert_eq!(key, [0; 32], "the caller's bytes are wiped");
        assert_eq!(again.respond(&pool, &control, &request).unwrap(), response);
        // Bad inputs, each with its code.
        let code = |r: Result<Vec<u8>, Coded>| r.unwrap_err().code;
        assert_eq!(
            code(server.setup(&pool, &control, &["a"], "csv", 0.1, 1)),
            "PSI_USAGE"
        );
        assert_eq!(code(server.respond(&pool, &control, &setup)), "PSI_MESSAGE");
        assert_eq!(check_message("setup", &setup), Ok(()));
        assert_eq!(
            check_message("response", &[0xff, 0xff]).unwrap_err().code,
            "PSI_MESSAGE"
        );
        assert_eq!(
            Server::import(&mut [0; 32], true, Backend::fastest())
                .err()
                .unwrap()
                .code,
            "PSI_KEY"
        );
        server.free();
        assert_eq!(code(server.respond(&pool, &control, &request)), "PSI_USAGE");
        assert_eq!(workers(257, 10).unwrap_err().code, "PSI_USAGE");
        assert_eq!(workers(3, 10).unwrap(), 3);
    }
}
