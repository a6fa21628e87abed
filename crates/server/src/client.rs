//! A party's side of the relay: the HTTP calls of [`crate::wire`] with retries, resumable
//! downloads checked by digest, and [`next_step`], which says what a party does next from the
//! round's state and its own files. Blocking (a command-line client's shape).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::{Client as Http, Response};
use reqwest::header::{AUTHORIZATION, RANGE};
use sha2::Digest as _;

use crate::wire::{PartyInvitation, PostedView, Refusal, RoundView};
use crate::{Digest, Kind, Role};

/// Why a client call failed. Never repeats a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server refused, with its code and words.
    #[error("the server refused ({status}, {code}): {words}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The refusal's stable code.
        code: String,
        /// The server's words.
        words: String,
    },
    /// The server could not be reached or broke off, past the client's patience.
    #[error("the server at {server} could not be reached for {waited} s: {last}")]
    Unreachable {
        /// The server.
        server: String,
        /// How long the client kept trying.
        waited: u64,
        /// The last failure.
        last: String,
    },
    /// A URL the client refuses: plain `http://` to another host than loopback (the token
    /// would travel in clear), or not a URL.
    #[error("{0}")]
    Url(String),
    /// A local file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A downloaded file is not the one the server named.
    #[error("the {what} downloaded has digest {got}; the server named {expected}")]
    Digest {
        /// The message or file.
        what: String,
        /// What arrived.
        got: String,
        /// What the round said.
        expected: String,
    },
    /// A certificate file the client cannot use.
    #[error("{path}: not a PEM certificate: {words}")]
    Certificate {
        /// The file.
        path: PathBuf,
        /// Why.
        words: String,
    },
}

/// A party's connection to its round on a relay. Every call retries what may pass (the
/// server unreachable or restarting, the database away: 502, 503, 504) for up to `patience`,
/// with growing pauses; a refusal is returned at once.
#[derive(Debug)]
pub struct Client {
    conn: Conn,
    invitation: PartyInvitation,
}

/// An HTTP connection to a relay, with the client's patience: [`Conn::send`] retries what may
/// pass, [`Conn::download`] resumes and checks by digest. Shared by a round's parties and a
/// ceremony's participants.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) http: Http,
    pub(crate) base: String,
    pub(crate) patience: Duration,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ClientError + '_ {
    move |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Client {
    /// A client of the round in `invitation` on the relay at `server` (`https://host:port`,
    /// or `http://` on loopback only), trusting `ca` (a PEM certificate, such as `lockstep
    /// serve --dev`'s) besides the usual roots.
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

    fn url(&self, kind: Option<Kind>) -> String {
        match kind {
            Some(kind) => format!(
                "{}/v1/rounds/{}/{kind}",
                self.conn.base, self.invitation.round
            ),
            None => format!("{}/v1/rounds/{}", self.conn.base, self.invitation.round),
        }
    }

    fn send(
        &self,
        request: impl Fn() -> Result<reqwest::blocking::RequestBuilder, ClientError>,
    ) -> Result<Response, ClientError> {
        self.conn.send(Some(&self.invitation.token), request)
    }

    /// The round as this party sees it.
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn view(&self) -> Result<RoundView, ClientError> {
        let response = self.send(|| Ok(self.conn.http.get(self.url(None))))?;
        answer(response)
    }

    /// Posts the file at `path` as this party's `kind`; a retry of bytes the round holds is
    /// accepted as such.
    ///
    /// # Errors
    /// [`ClientError`], a refusal with the server's (the decoder's) words among them.
    pub fn post(&self, kind: Kind, path: &Path) -> Result<PostedView, ClientError> {
        let response = self.send(|| {
            let file = File::open(path).map_err(io_error(path))?;
            let len = file.metadata().map_err(io_error(path))?.len();
            Ok(self
                .conn
                .http
                .put(self.url(Some(kind)))
                .header(reqwest::header::CONTENT_LENGTH, len)
                .body(reqwest::blocking::Body::sized(file, len)))
        })?;
        answer(response)
    }

    /// Downloads the other party's `kind` to `dest`, resuming from `dest.part` if an earlier
    /// try left one, and renames it into place only once its digest is `posted`'s.
    ///
    /// # Errors
    /// [`ClientError::Digest`] (the partial file removed), [`ClientError`].
    pub fn fetch(&self, kind: Kind, dest: &Path, posted: &PostedView) -> Result<(), ClientError> {
        self.conn.download(
            &self.url(Some(kind)),
            Some(&self.invitation.token),
            dest,
            (posted.len, &posted.digest),
            &kind.to_string(),
        )
    }

    /// Closes the round: the relay removes its messages.
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn close(&self) -> Result<(), ClientError> {
        self.send(|| Ok(self.conn.http.delete(self.url(None))))
            .map(drop)
    }
}

impl Conn {
    /// A connection to `server` (`https://host:port`, or `http://` on loopback only), trusting
    /// `ca` besides the usual roots.
    pub(crate) fn new(
        server: &str,
        ca: Option<&Path>,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            http: http_client(server, ca)?,
            base: server.trim_end_matches('/').to_owned(),
            patience,
        })
    }

    /// Sends what `request` builds (with `bearer`'s token, if any) until it is answered with
    /// anything but a passing failure (unreachable, 502, 503, 504), for up to the patience, with
    /// growing pauses; a refusal is returned at once.
    pub(crate) fn send(
        &self,
        bearer: Option<&crate::Token>,
        request: impl Fn() -> Result<reqwest::blocking::RequestBuilder, ClientError>,
    ) -> Result<Response, ClientError> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let mut built = request()?;
            if let Some(token) = bearer {
                built = built.header(AUTHORIZATION, format!("Bearer {}", token.reveal()));
            }
            let last = match built.send() {
                Ok(response)
                    if !matches!(
                        response.status(),
                        StatusCode::BAD_GATEWAY
                            | StatusCode::SERVICE_UNAVAILABLE
                            | StatusCode::GATEWAY_TIMEOUT
                    ) =>
                {
                    return refused(response);
                }
                Ok(response) => format!("{}", response.status()),
                // reqwest's words name the URL, never a header.
                Err(e) => e.to_string(),
            };
            if started.elapsed() >= self.patience {
                return Err(ClientError::Unreachable {
                    server: self.base.clone(),
                    waited: started.elapsed().as_secs(),
                    last,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Downloads `url` (`len` bytes of SHA-256 `digest`) to `dest`, resuming from `dest.part`
    /// if an earlier try left one, and renames it into place only once its digest is the one
    /// named. `what` names the file in errors.
    ///
    /// # Errors
    /// [`ClientError::Digest`] (the partial file removed), [`ClientError`].
    pub(crate) fn download(
        &self,
        url: &str,
        bearer: Option<&crate::Token>,
        dest: &Path,
        (len, digest): (u64, &str),
        what: &str,
    ) -> Result<(), ClientError> {
        let part = part_path(dest);
        let started = Instant::now();
        loop {
            let have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
            if have > len {
                fs::remove_file(&part).map_err(io_error(&part))?;
                continue;
            }
            if have < len {
                let response = self.send(bearer, || {
                    let request = self.http.get(url);
                    Ok(if have > 0 {
                        request.header(RANGE, format!("bytes={have}-"))
                    } else {
                        request
                    })
                })?;
                let mut file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&part)
                    .map_err(io_error(&part))?;
                if have > 0 && response.status() != StatusCode::PARTIAL_CONTENT {
                    file.set_len(0).map_err(io_error(&part))?;
                }
                if let Err(e) = copy_body(response, &mut file) {
                    // A connection dropped mid-body: keep what arrived and resume.
                    if started.elapsed() < self.patience {
                        std::thread::sleep(Duration::from_millis(200));
                        continue;
                    }
                    return Err(ClientError::Unreachable {
                        server: self.base.clone(),
                        waited: started.elapsed().as_secs(),
                        last: e.to_string(),
                    });
                }
                file.sync_all().map_err(io_error(&part))?;
                continue;
            }
            let got = file_digest(&part)?;
            if got.to_string() != digest {
                fs::remove_file(&part).map_err(io_error(&part))?;
                return Err(ClientError::Digest {
                    what: what.to_owned(),
                    got: got.to_string(),
                    expected: digest.to_owned(),
                });
            }
            fs::rename(&part, dest).map_err(io_error(dest))?;
            return Ok(());
        }
    }
}

/// An HTTP client for `server`, refusing plain `http://` except to loopback, trusting `ca`
/// besides the usual roots.
fn http_client(server: &str, ca: Option<&Path>) -> Result<Http, ClientError> {
    let url = reqwest::Url::parse(server)
        .map_err(|e| ClientError::Url(format!("--server {server:?}: {e}")))?;
    let host = url.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(ClientError::Url(format!(
                "--server {server}: plain http only to loopback; the token would travel in clear"
            )));
        }
        other => {
            return Err(ClientError::Url(format!(
                "--server {server}: {other} is not http or https"
            )));
        }
    }
    let mut builder = Http::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(None)
        .https_only(!loopback);
    if let Some(path) = ca {
        let pem = fs::read(path).map_err(io_error(path))?;
        let cert = reqwest::Certificate::from_pem(&pem).map_err(|e| ClientError::Certificate {
            path: path.to_path_buf(),
            words: e.to_string(),
        })?;
        builder = builder.add_root_certificate(cert);
    }
    builder
        .build()
        .map_err(|e| ClientError::Url(format!("the HTTP client: {e}")))
}

/// Creates a round on the relay at `server` with the operator's token: the two invitations.
///
/// # Errors
/// [`ClientError`]: a refusal (a wrong token, a limit past the server's caps) in its words.
pub fn invite(
    server: &str,
    ca: Option<&Path>,
    operator: &crate::Token,
    asked: &crate::wire::NewRound,
) -> Result<crate::wire::RoundCreated, ClientError> {
    let http = http_client(server, ca)?;
    let response = http
        .post(format!("{}/v1/rounds", server.trim_end_matches('/')))
        .header(AUTHORIZATION, format!("Bearer {}", operator.reveal()))
        .json(asked)
        .send()
        .map_err(|e| ClientError::Unreachable {
            server: server.to_owned(),
            waited: 0,
            last: e.to_string(),
        })?;
    answer(refused(response)?)
}

/// The most of a JSON answer or a refusal the client reads: a relay's are a few hundred bytes,
/// and a hostile or broken server's larger body is cut here, not held whole.
const ANSWER_LIMIT: u64 = 64 << 10;

/// The first [`ANSWER_LIMIT`] bytes of a response's body (as much as it sent, if less).
fn small_body(response: Response) -> Vec<u8> {
    let mut bytes = Vec::new();
    // A body that breaks off reads as what arrived; the JSON or the words then say so.
    let _ = response.take(ANSWER_LIMIT).read_to_end(&mut bytes);
    bytes
}

/// A relay's JSON answer, read within [`ANSWER_LIMIT`].
pub(crate) fn answer<T: serde::de::DeserializeOwned>(response: Response) -> Result<T, ClientError> {
    serde_json::from_slice(&small_body(response))
        .map_err(|e| ClientError::Url(format!("the server's answer: {e}")))
}

fn copy_body(mut response: Response, file: &mut File) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0;
    loop {
        let n = response.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        file.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// A success as is; a refusal as [`ClientError::Refused`] with the server's code and words.
pub(crate) fn refused(response: Response) -> Result<Response, ClientError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = String::from_utf8_lossy(&small_body(response)).into_owned();
    let (code, words) = match serde_json::from_str::<Refusal>(&text) {
        Ok(refusal) => (refusal.code, refusal.error),
        Err(_) => ("http".to_owned(), text.chars().take(200).collect()),
    };
    Err(ClientError::Refused {
        status: status.as_u16(),
        code,
        words,
    })
}

/// Where a download collects before its digest is checked.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

/// The SHA-256 of a file, streamed.
///
/// # Errors
/// [`ClientError::Io`].
pub fn file_digest(path: &Path) -> Result<Digest, ClientError> {
    let mut file = File::open(path).map_err(io_error(path))?;
    let mut hash = sha2::Sha256::new();
    io::copy(&mut file, &mut hash).map_err(io_error(path))?;
    Ok(Digest(hash.finalize().into()))
}

/// What a party does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Make its own message of this kind locally (the file is missing).
    Make(Kind),
    /// Post its message of this kind (made, not yet on the relay).
    Post(Kind),
    /// Download the other's message of this kind.
    Fetch(Kind),
    /// Wait for the other party to post this kind.
    Wait(Kind),
    /// Everything is in: the joiner intersects; the starter is done.
    Done,
}

/// Why a party cannot go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The relay holds other bytes than the party's file of its own kind (another key, other
    /// records): the round cannot be finished with this file.
    #[error(
        "the round holds another {kind} (digest {held}) than the local file (digest {local}); was it made with another key or input?"
    )]
    Diverged {
        /// The message.
        kind: Kind,
        /// What the relay holds.
        held: String,
        /// What the local file hashes to.
        local: String,
    },
}

/// What `role` does next, from the round's state and the digests of the party's local files
/// (`local(kind)`: `None` if the file is missing). The order:
///
/// - starter: wait for the request, fetch it; make and post the setup (sized for the request's
///   count); make and post the response; done.
/// - joiner: make and post the request; wait for and fetch the setup, then the response; done.
///
/// A file of the other's kind whose digest differs from the round's is fetched again.
///
/// # Errors
/// [`StepError::Diverged`] when the party's own file is not what it posted.
pub fn next_step(
    role: Role,
    view: &RoundView,
    local: impl Fn(Kind) -> Option<Digest>,
) -> Result<Step, StepError> {
    // Both parties walk the same order: the request first, since the starter sizes its setup
    // for the request's count.
    for kind in [Kind::Request, Kind::Setup, Kind::Response] {
        let held = view.posted(kind);
        let mine = local(kind).map(|d| d.to_string());
        if kind.poster() == role {
            match (held, mine) {
                (_, None) => return Ok(Step::Make(kind)),
                (None, Some(_)) => return Ok(Step::Post(kind)),
                (Some(held), Some(mine)) if held.digest != mine => {
                    return Err(StepError::Diverged {
                        kind,
                        held: held.digest.clone(),
                        local: mine,
                    });
                }
                _ => {}
            }
        } else {
            match held {
                None => return Ok(Step::Wait(kind)),
                Some(held) if mine.as_deref() != Some(held.digest.as_str()) => {
                    return Ok(Step::Fetch(kind));
                }
                _ => {}
            }
        }
    }
    Ok(Step::Done)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn view(held: &[(Kind, u8)]) -> RoundView {
        RoundView {
            round: "r".into(),
            role: "starter".into(),
            format: "raw".into(),
            size_only: false,
            max_rows: 10,
            max_bytes: 100,
            expires_at: 1,
            messages: held
                .iter()
                .map(|&(kind, byte)| {
                    (
                        kind.to_string(),
                        PostedView {
                            digest: Digest([byte; 32]).to_string(),
                            len: 1,
                            elements: None,
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn local(files: &[(Kind, u8)]) -> impl Fn(Kind) -> Option<Digest> + '_ {
        move |kind| {
            files
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|&(_, b)| Digest([b; 32]))
        }
    }

    #[test]
    fn each_party_walks_the_round_in_protocol_order() {
        use Kind::*;
        use Step::*;
        let starter = |held: &[(Kind, u8)], files: &[(Kind, u8)]| {
            next_step(Role::Starter, &view(held), local(files)).unwrap()
        };
        let joiner = |held: &[(Kind, u8)], files: &[(Kind, u8)]| {
            next_step(Role::Joiner, &view(held), local(files)).unwrap()
        };
        assert_eq!(joiner(&[], &[]), Make(Request));
        assert_eq!(joiner(&[], &[(Request, 2)]), Post(Request));
        assert_eq!(starter(&[], &[]), Wait(Request));
        assert_eq!(starter(&[(Request, 2)], &[]), Fetch(Request));
        // A stale or partial copy of the other's message is fetched again.
        assert_eq!(starter(&[(Request, 2)], &[(Request, 9)]), Fetch(Request));
        assert_eq!(starter(&[(Request, 2)], &[(Request, 2)]), Make(Setup));
        assert_eq!(
            starter(&[(Request, 2)], &[(Request, 2), (Setup, 1)]),
            Post(Setup)
        );
        assert_eq!(joiner(&[(Request, 2)], &[(Request, 2)]), Wait(Setup));
        let both = [(Request, 2), (Setup, 1)];
        assert_eq!(starter(&both, &both), Make(Response));
        assert_eq!(joiner(&both, &[(Request, 2)]), Fetch(Setup));
        assert_eq!(joiner(&both, &both), Wait(Response));
        let all = [(Request, 2), (Setup, 1), (Response, 3)];
        assert_eq!(starter(&both, &all), Post(Response));
        assert_eq!(starter(&all, &all), Done);
        assert_eq!(joiner(&all, &both), Fetch(Response));
        assert_eq!(joiner(&all, &all), Done);
    }

    #[test]
    fn a_party_whose_own_file_differs_from_what_it_posted_is_stopped() {
        let error = next_step(
            Role::Joiner,
            &view(&[(Kind::Request, 2)]),
            local(&[(Kind::Request, 3)]),
        )
        .unwrap_err();
        assert!(matches!(
            error,
            StepError::Diverged {
                kind: Kind::Request,
                ..
            }
        ));
    }
}
