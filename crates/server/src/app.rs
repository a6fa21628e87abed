//! The relay's HTTP face: one handler per act of [`crate::wire`], each a thin call of the
//! round's rules ([`RoundState`], [`check_message`], [`Db`], [`Store`]), plus the answers they
//! give as statuses.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body_util::BodyExt as _;
use lockstep_psi::{Mode, SetupFormat};
use std::io::{Read as _, Seek as _, Write as _};
use tokio::sync::mpsc;

use crate::metrics::Metrics;
use crate::wire::{NewRound, PostedView, Refusal, RoundCreated, RoundView};
use crate::{
    Db, DbError, DiskStore, Kind, Role, RoundError, RoundId, RoundSpec, RoundState, Staging as _,
    Store, StoreError, Token, TokenHash, check_message, may_read,
};

/// The most an operator may allow a round (its rows, its bytes a message, its life).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// The most rows a round may allow.
    pub max_rows: u64,
    /// The most bytes a round may allow one message.
    pub max_bytes: u64,
    /// The longest a round may live, in seconds.
    pub max_expiry: u64,
    /// The largest power of two a phase 1 ceremony may have.
    pub max_power: u32,
    /// The longest a ceremony's turn may last, in seconds.
    pub max_turn_secs: u64,
    /// The most participants a ceremony may have (invited and open slots).
    pub max_participants: u64,
}

impl Default for Caps {
    /// 10 million rows, 2 GiB a message (a raw setup of 10M rows is about 340 MB), 30 days;
    /// ceremonies up to 2^24 (a phase 1 file of about 1.6 GB), turns of a day, 10,000
    /// participants.
    fn default() -> Self {
        Self {
            max_rows: 10_000_000,
            max_bytes: 2 << 30,
            max_expiry: 30 * 24 * 3600,
            max_power: 24,
            max_turn_secs: 24 * 3600,
            max_participants: 10_000,
        }
    }
}

/// What every handler shares: the database, the store, the operator's token hash, the caps
/// and the counters.
#[derive(Debug)]
pub struct Relay {
    /// Rounds and their messages' metadata.
    pub db: Db,
    /// Message bodies.
    pub store: Arc<DiskStore>,
    /// The operator token's hash (the token itself is never held).
    pub operator: TokenHash,
    /// What a round may allow.
    pub caps: Caps,
    /// The counters `/metrics` shows.
    pub metrics: Arc<Metrics>,
    /// How long an upload's body may go without a byte before it is dropped (slow senders).
    pub body_idle: Duration,
    /// The worker pool ceremony steps run on, one at a time.
    pub workers: Arc<crate::ceremony::Workers>,
    /// Where ceremony uploads collect until verified (`STORE/uploads`).
    pub uploads: std::path::PathBuf,
}

/// The relay's routes (see [`crate::wire`]), with refusals counted by code.
pub fn router(relay: Arc<Relay>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/rounds", axum::routing::post(create_round))
        .route("/v1/rounds/{id}", get(view_round).delete(close_round))
        .route(
            "/v1/rounds/{id}/{kind}",
            get(read_message).put(post_message),
        )
        .merge(crate::ceremony::routes::routes())
        .fallback(|| async { Refused::not_found() })
        .layer(middleware::from_fn_with_state(relay.clone(), count))
        .with_state(relay)
}

/// The CORS layer for `origins` (each `scheme://host[:port]`): their pages may create, read,
/// post and close with an `Authorization` header, and read the `ETag` and request id. No
/// origin given: no page of another origin may call the relay (no CORS headers at all).
///
/// # Errors
/// The first text that is not a web origin.
pub(crate) fn cors(origins: &[String]) -> Result<tower_http::cors::CorsLayer, String> {
    use axum::http::Method;
    let mut allowed = Vec::new();
    for origin in origins {
        let (scheme, host) = origin.split_once("://").ok_or_else(|| origin.clone())?;
        let well_formed = matches!(scheme, "http" | "https")
            && !host.is_empty()
            && !host.contains(['/', '?', '#', '@', ' '])
            && !origin.ends_with('/');
        if !well_formed {
            return Err(origin.clone());
        }
        allowed.push(HeaderValue::from_str(origin).map_err(|_| origin.clone())?);
    }
    Ok(tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list(allowed))
        .allow_methods([Method::GET, Method::PUT, Method::POST, Method::DELETE])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, header::RANGE])
        .expose_headers([
            header::ETAG,
            header::HeaderName::from_static("x-request-id"),
        ])
        .max_age(Duration::from_secs(600)))
}

/// A refusal: its status, stable code and words.
#[derive(Debug)]
pub(crate) struct Refused {
    status: StatusCode,
    code: &'static str,
    words: String,
}

impl Refused {
    pub(crate) fn new(status: StatusCode, code: &'static str, words: impl Into<String>) -> Self {
        Self {
            status,
            code,
            words: words.into(),
        }
    }

    pub(crate) fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", "no such path")
    }

    pub(crate) fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "no round with this id holds this token",
        )
    }
}

impl From<RoundError> for Refused {
    fn from(error: RoundError) -> Self {
        let (status, code) = match &error {
            RoundError::NotYours { .. } | RoundError::NotReadable { .. } => {
                (StatusCode::FORBIDDEN, "forbidden")
            }
            RoundError::OutOfOrder { .. } => (StatusCode::CONFLICT, "out-of-order"),
            RoundError::AlreadyPosted(_) => (StatusCode::CONFLICT, "already-posted"),
            RoundError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too-large"),
            RoundError::Invalid { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            RoundError::Mismatch { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "mismatch"),
            RoundError::Expired => (StatusCode::GONE, "expired"),
        };
        Self::new(status, code, error.to_string())
    }
}

impl From<DbError> for Refused {
    fn from(error: DbError) -> Self {
        match error {
            DbError::Unauthorized => Self::unauthorized(),
            DbError::Round(e) => e.into(),
            DbError::Ceremony(e) => e.into(),
            DbError::Busy(_) => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                error.to_string(),
            ),
            DbError::Sqlx(_) | DbError::Migrate(_) => {
                tracing::warn!(error = %error, "database");
                Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "the database is unavailable; try again",
                )
            }
            other => {
                tracing::error!(error = %other, "database");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the server failed",
                )
            }
        }
    }
}

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        tracing::error!(error = %error, "store");
        let full = matches!(&error, StoreError::Io { source, .. }
            if matches!(source.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded | std::io::ErrorKind::FileTooLarge));
        if full {
            Self::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "storage",
                "the server's store is full; nothing was stored",
            )
        } else {
            Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "storage",
                "the server's store failed; nothing was stored",
            )
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        tracing::info!(code = self.code, status = self.status.as_u16(), error = %self.words, "refused");
        let mut response = (
            self.status,
            axum::Json(Refusal {
                code: self.code.to_owned(),
                error: self.words,
            }),
        )
            .into_response();
        response.extensions_mut().insert(RefusalCode(self.code));
        response
    }
}

#[derive(Clone, Copy, Debug)]
struct RefusalCode(&'static str);

/// Counts every request, and every refusal by its code.
async fn count(State(relay): State<Arc<Relay>>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    relay
        .metrics
        .count("lockstep_requests_total", String::new());
    if let Some(RefusalCode(code)) = response.extensions().get::<RefusalCode>() {
        relay
            .metrics
            .count("lockstep_refusals_total", format!("code=\"{code}\""));
    }
    response
}

/// Unix seconds now.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("invariant: the clock reads after 1970")
        .as_secs()
}

/// The bearer token of a request; anything else (no header, another scheme, a malformed
/// token) is the one unauthorized answer.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<Token, Refused> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .and_then(|token| token.parse().ok())
        .ok_or_else(Refused::unauthorized)
}

/// A path's round id and kind, read only from their one spelling: anything else names no
/// resource (`..`, `%2e%2e`, upper case).
pub(crate) fn round_id(text: &str) -> Result<RoundId, Refused> {
    text.parse().map_err(|_| Refused::not_found())
}

fn kind(text: &str) -> Result<Kind, Refused> {
    text.parse().map_err(|_| Refused::not_found())
}

/// The round `id` as the request's bearer may act on it, refused once expired.
async fn party(
    relay: &Relay,
    id: &RoundId,
    headers: &HeaderMap,
) -> Result<(RoundSpec, Role), Refused> {
    let token = bearer(headers)?;
    let (spec, role) = relay.db.authenticate(id, &token).await?;
    spec.check_live(now())?;
    Ok((spec, role))
}

async fn healthz(State(relay): State<Arc<Relay>>) -> Result<&'static str, Refused> {
    relay.db.ping().await?;
    Ok("ok\n")
}

async fn metrics(State(relay): State<Arc<Relay>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        relay.metrics.render(),
    )
}

/// The most JSON a round's creation may carry.
const NEW_ROUND_LIMIT: usize = 16 << 10;

async fn create_round(
    State(relay): State<Arc<Relay>>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, axum::Json<RoundCreated>), Refused> {
    let token = bearer(&headers)?;
    if !relay.operator.matches(&token) {
        return Err(Refused::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this is not the operator's token",
        ));
    }
    let bytes = axum::body::to_bytes(body, NEW_ROUND_LIMIT)
        .await
        .map_err(|_| {
            Refused::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too-large",
                format!("a round's request is at most {NEW_ROUND_LIMIT} bytes of JSON"),
            )
        })?;
    let asked: NewRound = serde_json::from_slice(&bytes)
        .map_err(|e| Refused::new(StatusCode::BAD_REQUEST, "bad-request", e.to_string()))?;
    let spec = spec_of(&asked, &relay.caps, now())?;
    let invitation = relay.db.create_round(&spec, now()).await?;
    relay
        .metrics
        .count("lockstep_rounds_created_total", String::new());
    tracing::info!(round = %invitation.id, asked = %asked, "round created");
    let id = invitation.id;
    Ok((
        StatusCode::CREATED,
        axum::Json(RoundCreated {
            round: id.to_string(),
            starter: format!("{id}.{}", invitation.starter.reveal()),
            joiner: format!("{id}.{}", invitation.joiner.reveal()),
            expires_at: spec.expires_at,
        }),
    ))
}

/// A round's spec from what the operator asked, within the server's caps.
fn spec_of(asked: &NewRound, caps: &Caps, now: u64) -> Result<RoundSpec, Refused> {
    let bad = |words: String| Refused::new(StatusCode::BAD_REQUEST, "bad-request", words);
    let format: SetupFormat = asked.format.parse().map_err(bad)?;
    for (name, value, cap) in [
        ("max_rows", asked.max_rows, caps.max_rows),
        ("max_bytes", asked.max_bytes, caps.max_bytes),
        ("expires_in", asked.expires_in, caps.max_expiry),
    ] {
        if value == 0 || value > cap {
            return Err(bad(format!(
                "{name} is {value}; this server allows 1 to {cap}"
            )));
        }
    }
    Ok(RoundSpec {
        format,
        mode: if asked.size_only {
            Mode::SizeOnly
        } else {
            Mode::Reveal
        },
        max_rows: asked.max_rows,
        max_bytes: asked.max_bytes,
        expires_at: now + asked.expires_in,
    })
}

async fn view_round(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<axum::Json<RoundView>, Refused> {
    let id = round_id(&id)?;
    let (spec, role) = party(&relay, &id, &headers).await?;
    let state = relay.db.state(&id).await?;
    Ok(axum::Json(RoundView::new(&id, role, &spec, &state)))
}

async fn close_round(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<StatusCode, Refused> {
    let id = round_id(&id)?;
    party(&relay, &id, &headers).await?;
    let digests = relay.db.remove_round(&id).await?;
    remove_bodies(&relay, digests).await?;
    tracing::info!(round = %id, "round closed");
    Ok(StatusCode::NO_CONTENT)
}

/// Removes expired (and closed) rounds and the bodies only they named.
///
/// # Errors
/// The database's or the store's failure; a body not removed now is collected at the next
/// start.
pub(crate) async fn sweep(relay: &Relay) -> Result<(), Refused> {
    let digests = relay.db.sweep_expired(now()).await?;
    remove_bodies(relay, digests).await
}

/// Removes bodies from the store, off the async threads.
pub(crate) async fn remove_bodies(
    relay: &Relay,
    digests: Vec<crate::Digest>,
) -> Result<(), Refused> {
    let store = relay.store.clone();
    let removed = digests.len() as u64;
    tokio::task::spawn_blocking(move || digests.iter().try_for_each(|d| store.remove(d)))
        .await
        .expect("invariant: removing files does not panic")?;
    if removed > 0 {
        relay
            .metrics
            .add("lockstep_messages_removed_total", String::new(), removed);
    }
    Ok(())
}

async fn post_message(
    State(relay): State<Arc<Relay>>,
    Path((id, kind_text)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, axum::Json<PostedView>), Refused> {
    let id = round_id(&id)?;
    let kind = kind(&kind_text)?;
    let (spec, role) = party(&relay, &id, &headers).await?;
    let state = relay.db.state(&id).await?;
    state.may_post(role, kind)?;
    let too_large = || RoundError::TooLarge {
        kind,
        limit: spec.max_bytes,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > spec.max_bytes) {
        return Err(too_large().into());
    }
    let mut staging = relay.store.stage()?;
    receive_staged(
        body,
        relay.body_idle,
        &kind.to_string(),
        &mut staging,
        spec.max_bytes,
        || too_large().into(),
    )
    .await?;
    let store = relay.store.clone();
    // The check decodes every element: CPU work, off the async threads.
    let (posted, fresh) = tokio::task::spawn_blocking(move || {
        let rewound = staging.rewind().map_err(|source| {
            Refused::from(StoreError::Io {
                action: "read back a staged upload",
                path: "staging".into(),
                source,
            })
        });
        rewound?;
        let posted = check_message(&spec, &state, kind, &mut staging)?;
        debug_assert_eq!(posted.digest, staging.digest());
        let new = state.accept(kind, posted.digest)?;
        if new {
            store.commit(staging)?;
        }
        Ok::<_, Refused>((posted, new))
    })
    .await
    .expect("invariant: the upload check does not panic")?;
    // Two posts racing past `accept` are settled by the database's key: one is new, the other
    // a retry or refused (its committed body, if other bytes, is collected at the next start).
    let new = fresh && relay.db.record(&id, kind, &posted).await?;
    let labels = format!(
        "kind=\"{kind}\",outcome=\"{}\"",
        if new { "new" } else { "retry" }
    );
    relay.metrics.count("lockstep_uploads_total", labels);
    relay
        .metrics
        .add("lockstep_upload_bytes_total", String::new(), posted.len);
    tracing::info!(round = %id, %kind, len = posted.len, digest = %posted.digest, new, "message accepted");
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(PostedView::from(&posted))))
}

/// Reads a request's body frame by frame into `write`, each frame as it arrives (bounded
/// memory), until its end. `what` names the upload in the refusals: a body idle for `idle`, or
/// one that breaks off. What `write` took stays written; the caller decides what it keeps.
///
/// # Errors
/// `write`'s refusal, or the timeout or break-off's.
pub(crate) async fn receive(
    mut body: Body,
    idle: Duration,
    what: &str,
    mut write: impl FnMut(&[u8]) -> Result<(), Refused>,
) -> Result<u64, Refused> {
    let mut received = 0u64;
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_| {
                Refused::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "timeout",
                    format!("no byte of the {what} for {} s", idle.as_secs()),
                )
            })?;
        let Some(frame) = frame else {
            return Ok(received);
        };
        let frame = frame.map_err(|_| {
            Refused::new(
                StatusCode::BAD_REQUEST,
                "bad-request",
                format!("the {what}'s body broke off"),
            )
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        write(&data)?;
        received += data.len() as u64;
    }
}

/// [`receive`] into a store's staging file, refused with `too_large` once past `limit` bytes.
///
/// # Errors
/// As [`receive`]; `too_large()`; the staging file's write failure.
pub(crate) async fn receive_staged(
    body: Body,
    idle: Duration,
    what: &str,
    staging: &mut crate::DiskStaging,
    limit: u64,
    too_large: impl Fn() -> Refused,
) -> Result<u64, Refused> {
    receive(body, idle, what, |data| {
        if staging.written() + data.len() as u64 > limit {
            return Err(too_large());
        }
        staging.write_all(data).map_err(|source| {
            StoreError::Io {
                action: "write a staged upload",
                path: "staging".into(),
                source,
            }
            .into()
        })
    })
    .await
}

/// The first byte a `Range: bytes=N-` asks for: 0 without one; refused for any other form
/// (the client resumes a download from where its copy ends, nothing else).
fn range_start(headers: &HeaderMap, len: u64) -> Result<u64, Refused> {
    let Some(value) = headers.get(header::RANGE) else {
        return Ok(0);
    };
    let start = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("bytes="))
        .and_then(|v| v.strip_suffix('-'))
        .and_then(|v| v.parse::<u64>().ok());
    match start {
        Some(start) if start < len => Ok(start),
        _ => Err(Refused::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "bad-request",
            format!("only `Range: bytes=N-` with N below the message's {len} bytes is served"),
        )),
    }
}

async fn read_message(
    State(relay): State<Arc<Relay>>,
    Path((id, kind_text)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let id = round_id(&id)?;
    let kind = kind(&kind_text)?;
    let (_, role) = party(&relay, &id, &headers).await?;
    may_read(role, kind)?;
    let state: RoundState = relay.db.state(&id).await?;
    let Some(posted) = state.get(kind).copied() else {
        return Err(Refused::new(
            StatusCode::NOT_FOUND,
            "not-yet",
            format!("the {kind} is not in yet"),
        ));
    };
    relay
        .metrics
        .count("lockstep_downloads_total", format!("kind=\"{kind}\""));
    serve_file(&relay, posted.digest, posted.len, &headers).await
}

/// The stored body `digest` of `len` bytes as a response, from the byte `Range: bytes=N-`
/// asks for (`206`) or whole (`200`), streamed from the store with bounded memory; `ETag` its
/// digest.
///
/// # Errors
/// A malformed or unsatisfiable range; the store's failure.
pub(crate) async fn serve_file(
    relay: &Relay,
    digest: crate::Digest,
    len: u64,
    headers: &HeaderMap,
) -> Result<Response, Refused> {
    let start = range_start(headers, len)?;
    let mut reader = {
        let store = relay.store.clone();
        tokio::task::spawn_blocking(move || -> Result<_, StoreError> {
            let mut reader = store.open(&digest)?;
            std::io::copy(&mut (&mut reader).take(start), &mut std::io::sink()).map_err(
                |source| StoreError::Io {
                    action: "read",
                    path: digest.to_string().into(),
                    source,
                },
            )?;
            Ok(reader)
        })
        .await
        .expect("invariant: opening a file does not panic")?
    };
    relay
        .metrics
        .add("lockstep_download_bytes_total", String::new(), len - start);
    // The body streams from a blocking reader through a small channel: bounded memory.
    let (send, receive) = mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let chunk = match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(Bytes::copy_from_slice(&buf[..n])),
                Err(e) => Err(e),
            };
            let failed = chunk.is_err();
            if send.blocking_send(chunk).is_err() || failed {
                return;
            }
        }
    });
    let mut response = Response::new(Body::from_stream(Chunks(receive)));
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(len - start));
    out.insert(
        header::ETAG,
        HeaderValue::from_str(&format!("\"{digest}\"")).expect("invariant: a digest is hex"),
    );
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if start > 0 {
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        response.headers_mut().insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&format!("bytes {start}-{}/{len}", len - 1))
                .expect("invariant: numbers are ASCII"),
        );
    }
    Ok(response)
}

/// A channel's receiving end as a stream of body chunks.
struct Chunks(mpsc::Receiver<std::io::Result<Bytes>>);

impl futures_core::Stream for Chunks {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_origins_are_allowed_for_pages() {
        for good in [
            "https://app.example",
            "http://127.0.0.1:8765",
            "https://[::1]:8443",
        ] {
            assert!(cors(&[good.to_owned()]).is_ok(), "{good}");
        }
        for bad in [
            "app.example",
            "https://app.example/",
            "https://app.example/path",
            "ftp://app.example",
            "https://",
            "https://user@app.example",
            "*",
        ] {
            assert_eq!(cors(&[bad.to_owned()]).err().as_deref(), Some(bad));
        }
    }
}
