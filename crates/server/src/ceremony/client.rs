//! A participant's and an operator's side of a ceremony: the calls of [`super::wire`] with the
//! relay client's retries, downloads resumed and checked by digest, and uploads resumed from
//! what the server holds. Blocking (a command-line client's shape).

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::StatusCode;

use super::wire::{
    AcceptedView, CeremonyCreated, FileView, NamedInvitation, NewCeremony, Register, SealRequest,
    TranscriptView, TurnView, UploadView,
};
use crate::client::{ClientError, Conn, answer};
use crate::wire::PartyInvitation;
use crate::{RoundId, Token};

/// A participant's connection to its ceremony (its invitation `CEREMONY.TOKEN`).
#[derive(Debug)]
pub struct Participant {
    conn: Conn,
    invitation: PartyInvitation,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ClientError + '_ {
    move |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Participant {
    /// A participant of the ceremony in `invitation` on the server at `server`, trusting `ca`.
    ///
    /// # Errors
    /// [`ClientError::Url`], [`ClientError::Certificate`], [`ClientError::Io`].
    pub fn new(
        server: &str,
        ca: Option<&Path>,
        invitation: PartyInvitation,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            conn: Conn::new(server, ca, patience)?,
            invitation,
        })
    }

    fn url(&self, tail: &str) -> String {
        format!(
            "{}/v1/ceremonies/{}/{tail}",
            self.conn.base, self.invitation.round
        )
    }

    fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: reqwest::Method,
        tail: &str,
    ) -> Result<T, ClientError> {
        let url = self.url(tail);
        let response = self.conn.send(Some(&self.invitation.token), || {
            Ok(self.conn.http.request(method.clone(), &url))
        })?;
        answer(response)
    }

    /// Joins the queue (a no-op when in it or holding the turn).
    ///
    /// # Errors
    /// [`ClientError`]: a refusal (contributed already, the ceremony sealed) in its words.
    pub fn join(&self) -> Result<TurnView, ClientError> {
        self.call(reqwest::Method::POST, "queue")
    }

    /// Leaves the queue (or gives the turn up).
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn leave(&self) -> Result<TurnView, ClientError> {
        self.call(reqwest::Method::DELETE, "queue")
    }

    /// Where this participant stands.
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn turn(&self) -> Result<TurnView, ClientError> {
        self.call(reqwest::Method::GET, "turn")
    }

    /// Downloads the ceremony's file `file` to `dest` (resumed, digest checked).
    ///
    /// # Errors
    /// [`ClientError::Digest`], [`ClientError`].
    pub fn download(&self, file: &FileView, dest: &Path) -> Result<(), ClientError> {
        self.conn.download(
            &self.url(&format!("files/{}", file.digest)),
            None,
            dest,
            (file.len, &file.digest),
            "head",
        )
    }

    /// Uploads the contribution at `path`, resuming from what the server holds after a
    /// dropped connection, and waits for the verdict.
    ///
    /// # Errors
    /// [`ClientError::Refused`] with the server's words: the engine's for an invalid
    /// contribution, `late` past the deadline, `not-your-turn`; [`ClientError`].
    pub fn upload(&self, path: &Path) -> Result<AcceptedView, ClientError> {
        let total = std::fs::metadata(path).map_err(io_error(path))?.len();
        let started = Instant::now();
        loop {
            let held: UploadView = self.call(reqwest::Method::GET, "contribution")?;
            let offset = held.received.min(total);
            let url = self.url("contribution");
            let sent = self.conn.send(Some(&self.invitation.token), || {
                let mut file = File::open(path).map_err(io_error(path))?;
                file.seek(SeekFrom::Start(offset)).map_err(io_error(path))?;
                let rest = total - offset;
                Ok(self
                    .conn
                    .http
                    .put(&url)
                    .header("upload-offset", offset)
                    .header("upload-length", total)
                    .header(reqwest::header::CONTENT_LENGTH, rest)
                    .body(reqwest::blocking::Body::sized(file.take(rest), rest)))
            });
            match sent {
                Ok(response) if response.status() == StatusCode::CREATED => {
                    return answer(response);
                }
                // More to come (the body was cut short on the way): resume.
                Ok(_) => {}
                // A resumable failure: the connection broke off mid-body, or the offsets
                // crossed; ask what the server holds and go on from there.
                Err(ClientError::Refused { code, .. })
                    if (code == "offset" || code == "timeout")
                        && started.elapsed() < self.conn.patience => {}
                Err(ClientError::Unreachable { .. }) if started.elapsed() < self.conn.patience => {}
                Err(other) => return Err(other),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// An operator's connection to a server.
#[derive(Debug)]
pub struct Operator {
    conn: Conn,
    token: Token,
}

impl Operator {
    /// The operator of the server at `server`, with its token.
    ///
    /// # Errors
    /// [`ClientError::Url`], [`ClientError::Certificate`], [`ClientError::Io`].
    pub fn new(
        server: &str,
        ca: Option<&Path>,
        token: Token,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            conn: Conn::new(server, ca, patience)?,
            token,
        })
    }

    /// Creates a ceremony: its id and the invited participants' invitations.
    ///
    /// # Errors
    /// [`ClientError`]: a refusal (a wrong token, a spec past the server's caps) in its words.
    pub fn create(&self, asked: &NewCeremony) -> Result<CeremonyCreated, ClientError> {
        let url = format!("{}/v1/ceremonies", self.conn.base);
        answer(self.conn.send(Some(&self.token), || {
            Ok(self.conn.http.post(&url).json(asked))
        })?)
    }

    /// Gives a phase 2 ceremony its circuit (`which`: `r1cs`) or sealed phase 1 (`phase1`);
    /// once both are in, the server derives the initial object and opens the ceremony.
    ///
    /// # Errors
    /// [`ClientError`]: the engine's words for a circuit or phase 1 it cannot use.
    pub fn input(
        &self,
        ceremony: &RoundId,
        which: &str,
        path: &Path,
    ) -> Result<TranscriptView, ClientError> {
        let url = format!("{}/v1/ceremonies/{ceremony}/inputs/{which}", self.conn.base);
        answer(self.conn.send(Some(&self.token), || {
            let file = File::open(path).map_err(io_error(path))?;
            let len = file.metadata().map_err(io_error(path))?.len();
            Ok(self
                .conn
                .http
                .put(&url)
                .header(reqwest::header::CONTENT_LENGTH, len)
                .body(reqwest::blocking::Body::sized(file, len)))
        })?)
    }

    /// Seals the ceremony with a public beacon; the server computes and publishes the result.
    ///
    /// # Errors
    /// [`ClientError`]: a refusal (no contribution yet, a verification in progress).
    pub fn seal(
        &self,
        ceremony: &RoundId,
        asked: &SealRequest,
    ) -> Result<TranscriptView, ClientError> {
        let url = format!("{}/v1/ceremonies/{ceremony}/seal", self.conn.base);
        answer(self.conn.send(Some(&self.token), || {
            Ok(self.conn.http.post(&url).json(asked))
        })?)
    }
}

/// A ceremony's public side: its transcript and files, and open registration.
#[derive(Debug)]
pub struct Public {
    conn: Conn,
    ceremony: RoundId,
}

impl Public {
    /// The ceremony `ceremony` on the server at `server`.
    ///
    /// # Errors
    /// [`ClientError::Url`], [`ClientError::Certificate`], [`ClientError::Io`].
    pub fn new(
        server: &str,
        ca: Option<&Path>,
        ceremony: RoundId,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            conn: Conn::new(server, ca, patience)?,
            ceremony,
        })
    }

    /// The ceremony of a transcript page's URL (`https://host:port/ceremonies/ID`).
    ///
    /// # Errors
    /// [`ClientError::Url`] for another shape of URL; as [`Public::new`].
    pub fn from_page(
        url: &str,
        ca: Option<&Path>,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        let shape = || {
            ClientError::Url(format!(
                "{url}: a ceremony's page is https://HOST[:PORT]/ceremonies/ID (32 hex digits)"
            ))
        };
        let trimmed = url.trim_end_matches('/');
        let (server, id) = trimmed.rsplit_once("/ceremonies/").ok_or_else(shape)?;
        let id = id.parse().map_err(|_| shape())?;
        Self::new(server, ca, id, patience)
    }

    /// The transcript.
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn transcript(&self) -> Result<TranscriptView, ClientError> {
        let url = format!(
            "{}/v1/ceremonies/{}/transcript",
            self.conn.base, self.ceremony
        );
        answer(self.conn.send(None, || Ok(self.conn.http.get(&url)))?)
    }

    /// Downloads the ceremony's file `file` to `dest` (resumed, digest checked).
    ///
    /// # Errors
    /// [`ClientError::Digest`], [`ClientError`].
    pub fn download(&self, file: &FileView, what: &str, dest: &Path) -> Result<(), ClientError> {
        let url = format!(
            "{}/v1/ceremonies/{}/files/{}",
            self.conn.base, self.ceremony, file.digest
        );
        self.conn
            .download(&url, None, dest, (file.len, &file.digest), what)
    }

    /// Registers `name` while the ceremony's open slots last: an invitation.
    ///
    /// # Errors
    /// [`ClientError`]: the registration's refusal (full, a name taken) in its words.
    pub fn register(&self, name: &str) -> Result<NamedInvitation, ClientError> {
        let url = format!(
            "{}/v1/ceremonies/{}/participants",
            self.conn.base, self.ceremony
        );
        let asked = Register {
            name: name.to_owned(),
        };
        answer(
            self.conn
                .send(None, || Ok(self.conn.http.post(&url).json(&asked)))?,
        )
    }

    /// The ceremony's id.
    pub fn ceremony(&self) -> RoundId {
        self.ceremony
    }
}
