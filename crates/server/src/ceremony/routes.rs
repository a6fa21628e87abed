//! A ceremony's HTTP face ([`super::wire`]): each handler authenticates, runs one change of
//! the ceremony's records, and hands CPU work (the initial object, a verification, the seal)
//! to the server's worker pool off the async threads.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post, put};
use lockstep_ceremony::phase1::MAX_BEACON_ITERATIONS;

use super::page;
use super::records::{Ceremony, Contribution, FileRef, Participant, Unfinished};
use super::rules::{CeremonyError, CeremonyKind, Phase, Status};
use super::steps::{self, SealInputs, StepError};
use super::wire::{
    AcceptedView, CeremonyCreated, Entry, FileView, NamedInvitation, NewCeremony, Register,
    SealRequest, SealView, TranscriptView, TurnView, UploadView,
};
use crate::app::{Refused, bearer, now, receive, receive_staged, round_id, serve_file};
use crate::{DbError, Relay, RoundId, Store as _, StoreError};

/// The most JSON an operator's or a registrant's request may carry.
const JSON_LIMIT: usize = 64 << 10;

/// The ceremony routes, merged into the relay's router.
pub(crate) fn routes() -> Router<Arc<Relay>> {
    Router::new()
        .route("/v1/ceremonies", post(create))
        .route("/v1/ceremonies/{id}/inputs/{which}", put(put_input))
        .route("/v1/ceremonies/{id}/participants", post(register))
        .route("/v1/ceremonies/{id}/queue", post(join).delete(leave))
        .route("/v1/ceremonies/{id}/turn", get(turn))
        .route(
            "/v1/ceremonies/{id}/contribution",
            put(upload).get(upload_state),
        )
        .route("/v1/ceremonies/{id}/seal", post(seal))
        .route("/v1/ceremonies/{id}/transcript", get(transcript))
        .route("/v1/ceremonies/{id}/files/{digest}", get(file))
        .route("/ceremonies/{id}", get(page))
}

impl From<CeremonyError> for Refused {
    fn from(error: CeremonyError) -> Self {
        let (status, code) = match &error {
            CeremonyError::NotOpen(_) => (StatusCode::CONFLICT, "not-open"),
            CeremonyError::NotYourTurn => (StatusCode::CONFLICT, "not-your-turn"),
            CeremonyError::Late { .. } => (StatusCode::CONFLICT, "late"),
            CeremonyError::AlreadyContributed => (StatusCode::CONFLICT, "already-contributed"),
            CeremonyError::Verifying => (StatusCode::CONFLICT, "verifying"),
            CeremonyError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            CeremonyError::Oversized { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too-large"),
            CeremonyError::Offset { .. } => (StatusCode::CONFLICT, "offset"),
            CeremonyError::Registration(_) => (StatusCode::CONFLICT, "registration"),
            CeremonyError::Operator(_) => (StatusCode::BAD_REQUEST, "bad-request"),
        };
        Self::new(status, code, error.to_string())
    }
}

impl From<StepError> for Refused {
    fn from(error: StepError) -> Self {
        match error {
            StepError::Invalid(words) => CeremonyError::Invalid(words).into(),
            StepError::Store(e) => e.into(),
            StepError::Server(words) => {
                tracing::error!(error = %words, "ceremony step");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the server failed",
                )
            }
        }
    }
}

fn bad(words: impl Into<String>) -> Refused {
    Refused::new(StatusCode::BAD_REQUEST, "bad-request", words)
}

fn operator(relay: &Relay, headers: &HeaderMap) -> Result<(), Refused> {
    if relay.operator.matches(&bearer(headers)?) {
        return Ok(());
    }
    Err(Refused::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this is not the operator's token",
    ))
}

async fn json<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, Refused> {
    let bytes = axum::body::to_bytes(body, JSON_LIMIT).await.map_err(|_| {
        Refused::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            format!("a request is at most {JSON_LIMIT} bytes of JSON"),
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))
}

/// Runs `step` on the server's pool, off the async threads.
async fn on_workers<T: Send + 'static>(
    relay: &Arc<Relay>,
    step: impl FnOnce(&lockstep_shard::Pool, &crate::DiskStore) -> T + Send + 'static,
) -> T {
    let relay = relay.clone();
    tokio::task::spawn_blocking(move || relay.workers.run(|pool| step(pool, &relay.store)))
        .await
        .expect("invariant: a ceremony step returns its errors, it does not panic")
}

fn view(file: FileRef) -> FileView {
    FileView {
        digest: file.digest.to_string(),
        len: file.len,
    }
}

async fn create(
    State(relay): State<Arc<Relay>>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, axum::Json<CeremonyCreated>), Refused> {
    operator(&relay, &headers)?;
    let asked: NewCeremony = json(body).await?;
    let caps = relay.caps;
    let kind = match (asked.kind.as_str(), asked.power) {
        ("phase1", Some(power)) if (1..=caps.max_power).contains(&power) => {
            CeremonyKind::Phase1 { power }
        }
        ("phase1", power) => {
            return Err(bad(format!(
                "a phase 1 ceremony's power is 1 to {} on this server; given {power:?}",
                caps.max_power
            )));
        }
        ("phase2", None) => CeremonyKind::Phase2,
        ("zkey", None) => CeremonyKind::Zkey,
        ("phase2" | "zkey", Some(_)) => {
            return Err(bad(
                "a phase 2 ceremony takes its power from its circuit; give no power",
            ));
        }
        (other, _) => return Err(bad(format!("kind {other:?}: phase1, phase2 or zkey"))),
    };
    if asked.turn_secs == 0 || asked.turn_secs > caps.max_turn_secs {
        return Err(bad(format!(
            "turn_secs is {}; this server allows 1 to {}",
            asked.turn_secs, caps.max_turn_secs
        )));
    }
    let people = asked.participants.len() as u64;
    if people.saturating_add(asked.open_slots) > caps.max_participants {
        return Err(bad(format!(
            "{people} invited and {} open slots; this server allows {} participants a ceremony",
            asked.open_slots, caps.max_participants
        )));
    }
    let title_chars = asked.title.chars().count();
    if title_chars == 0 || title_chars > 200 || asked.title.chars().any(char::is_control) {
        return Err(bad(
            "a title is 1 to 200 characters without control characters",
        ));
    }
    let initial = match kind {
        CeremonyKind::Phase1 { power } => {
            let made = on_workers(&relay, move |pool, store| {
                steps::initial_phase1(pool, store, power)
            })
            .await?;
            Some(made)
        }
        CeremonyKind::Phase2 | CeremonyKind::Zkey => None,
    };
    let (id, tokens) = relay
        .db
        .create_ceremony(
            kind,
            &asked.title,
            &asked.participants,
            asked.open_slots,
            asked.turn_secs,
            initial,
            now(),
        )
        .await?;
    relay
        .metrics
        .count("lockstep_ceremonies_created_total", String::new());
    tracing::info!(ceremony = %id, kind = kind.name(), invited = people, open_slots = asked.open_slots, "ceremony created");
    Ok((
        StatusCode::CREATED,
        axum::Json(CeremonyCreated {
            ceremony: id.to_string(),
            phase: if initial.is_some() { "open" } else { "pending" }.to_owned(),
            invitations: tokens
                .into_iter()
                .map(|(name, token)| NamedInvitation {
                    name,
                    invitation: format!("{id}.{}", token.reveal()),
                })
                .collect(),
        }),
    ))
}

/// Stores a body of at most `limit` bytes; returns the file.
async fn store_body(
    relay: &Arc<Relay>,
    body: Body,
    what: &str,
    limit: u64,
) -> Result<FileRef, Refused> {
    let mut staging = relay.store.stage()?;
    let len = receive_staged(body, relay.body_idle, what, &mut staging, limit, || {
        Refused::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            format!("the {what} is more than this server's {limit} bytes"),
        )
    })
    .await?;
    let store = relay.store.clone();
    let digest = tokio::task::spawn_blocking(move || store.commit(staging))
        .await
        .expect("invariant: committing a file does not panic")?;
    Ok(FileRef { digest, len })
}

async fn put_input(
    State(relay): State<Arc<Relay>>,
    Path((id, which)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, axum::Json<TranscriptView>), Refused> {
    let id = round_id(&id)?;
    operator(&relay, &headers)?;
    // A `.zkey` ceremony's powers of tau (a `.ptau`) take the phase 1's place.
    if !matches!(which.as_str(), "r1cs" | "phase1" | "ptau") {
        return Err(Refused::not_found());
    }
    let row = relay.db.ceremony(&id).await.map_err(not_found)?;
    if row.phase != Phase::Pending {
        return Err(CeremonyError::Operator(format!(
            "the ceremony is {}; its inputs are set",
            row.phase.name()
        ))
        .into());
    }
    let file = store_body(&relay, body, &which, relay.caps.max_bytes).await?;
    let mut change = relay.db.begin(&id, now()).await?;
    if change.row.phase != Phase::Pending {
        return Err(CeremonyError::Operator("its inputs are set".into()).into());
    }
    match which.as_str() {
        "r1cs" => change.row.r1cs = Some(file),
        _ => change.row.phase1 = Some(file),
    }
    let row = change.row.clone();
    change.commit().await?;
    if let (Some(r1cs), Some(phase1)) = (row.r1cs, row.phase1) {
        let kind = row.kind;
        let derived = on_workers(&relay, move |pool, store| {
            steps::initial(pool, store, kind, r1cs, phase1)
        })
        .await;
        let (initial, power) = match derived {
            Ok(made) => made,
            Err(error) => {
                // The input just given is dropped, so the operator can give it again.
                let mut change = relay.db.begin(&id, now()).await?;
                match which.as_str() {
                    "r1cs" => change.row.r1cs = None,
                    _ => change.row.phase1 = None,
                }
                change.commit().await?;
                return Err(error.into());
            }
        };
        let mut change = relay.db.begin(&id, now()).await?;
        if change.row.phase == Phase::Pending {
            change.row.phase = Phase::Open;
            change.row.power = power;
            change.row.initial = Some(initial);
            change.row.head = Some(initial);
        }
        change.commit().await?;
        tracing::info!(ceremony = %id, power, "ceremony open: the initial object derived");
    }
    Ok((
        StatusCode::CREATED,
        axum::Json(transcript_of(&relay, &id).await?),
    ))
}

/// An unknown ceremony on a public or operator path: not found, not unauthorized.
fn not_found(error: DbError) -> Refused {
    match error {
        DbError::Unauthorized => Refused::not_found(),
        other => other.into(),
    }
}

async fn register(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    body: Body,
) -> Result<(StatusCode, axum::Json<NamedInvitation>), Refused> {
    let id = round_id(&id)?;
    let asked: Register = json(body).await?;
    let token = relay
        .db
        .register(&id, &asked.name, now())
        .await
        .map_err(not_found)?;
    tracing::info!(ceremony = %id, "participant registered");
    Ok((
        StatusCode::CREATED,
        axum::Json(NamedInvitation {
            name: asked.name,
            invitation: format!("{id}.{}", token.reveal()),
        }),
    ))
}

/// The participant of ceremony `id` the request's bearer is.
async fn participant(
    relay: &Relay,
    id: &RoundId,
    headers: &HeaderMap,
) -> Result<Participant, Refused> {
    let token = bearer(headers)?;
    relay
        .db
        .participant_of(id, &token)
        .await
        .map_err(|e| match e {
            DbError::Unauthorized => Refused::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "no ceremony with this id holds this token",
            ),
            other => other.into(),
        })
}

async fn turn_view(relay: &Relay, id: &RoundId, headers: &HeaderMap) -> Result<TurnView, Refused> {
    let mut row = relay.db.ceremony(id).await?;
    if relay.db.turn_would_move(&row, now()).await? {
        let change = relay.db.begin(id, now()).await?;
        row = change.row.clone();
        change.commit().await?;
    }
    let me = participant(relay, id, headers).await?;
    let ahead = match (me.status, me.ticket) {
        (Status::Queued, Some(ticket)) => Some(relay.db.ahead_of(&row, ticket).await?),
        (Status::Holding, _) => Some(0),
        _ => None,
    };
    let deadline = row.turn.filter(|t| t.holder == me.seq).map(|t| t.deadline);
    Ok(TurnView {
        ceremony: id.to_string(),
        kind: row.kind.name().to_owned(),
        phase: row.phase.name().to_owned(),
        name: me.name,
        status: me.status.name().to_owned(),
        ahead,
        deadline,
        now: now(),
        head_index: row.head_index,
        head: row.head.map(view),
        reason: me.reason,
    })
}

async fn turn(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<axum::Json<TurnView>, Refused> {
    let id = round_id(&id)?;
    participant(&relay, &id, &headers).await?;
    relay
        .metrics
        .count("lockstep_ceremony_polls_total", String::new());
    Ok(axum::Json(turn_view(&relay, &id, &headers).await?))
}

async fn join(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<axum::Json<TurnView>, Refused> {
    let id = round_id(&id)?;
    let me = participant(&relay, &id, &headers).await?;
    let mut change = relay.db.begin(&id, now()).await?;
    if matches!(change.row.phase, Phase::Sealing | Phase::Sealed) {
        return Err(CeremonyError::NotOpen(change.row.phase.name()).into());
    }
    let current = change.participant(me.seq).await?;
    match current.status {
        Status::Contributed => return Err(CeremonyError::AlreadyContributed.into()),
        Status::Queued | Status::Holding => {}
        _ => {
            let ticket = change.ticket();
            change
                .set(me.seq, Status::Queued, Some(ticket), None)
                .await?;
        }
    }
    change.commit().await?;
    Ok(axum::Json(turn_view(&relay, &id, &headers).await?))
}

async fn leave(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<axum::Json<TurnView>, Refused> {
    let id = round_id(&id)?;
    let me = participant(&relay, &id, &headers).await?;
    let mut change = relay.db.begin(&id, now()).await?;
    let current = change.participant(me.seq).await?;
    match current.status {
        Status::Queued => change.set(me.seq, Status::Left, None, None).await?,
        Status::Holding => {
            if change.row.turn.is_some_and(|t| t.verifying) {
                return Err(CeremonyError::Verifying.into());
            }
            change.row.turn = None;
            change.set(me.seq, Status::Left, None, None).await?;
        }
        _ => {}
    }
    change.commit().await?;
    tracing::info!(ceremony = %id, "participant left the queue");
    Ok(axum::Json(turn_view(&relay, &id, &headers).await?))
}

/// Where a holder's upload collects during its turn: one file per place in the queue (its
/// ticket), so a participant who joins again starts a new upload, and a turn given back after the
/// server's failure keeps its bytes.
fn partial_path(relay: &Relay, id: &RoundId, me: &Participant) -> Result<PathBuf, Refused> {
    let ticket = me.ticket.ok_or(CeremonyError::NotYourTurn)?;
    Ok(relay.uploads.join(format!("{id}-{}-{ticket}", me.seq)))
}

/// The holder's upload target: the head, and the bytes a contribution on it has.
fn holding(row: &Ceremony, me: &Participant, at: u64) -> Result<(FileRef, u64), CeremonyError> {
    if row.phase != Phase::Open {
        return Err(CeremonyError::NotOpen(row.phase.name()));
    }
    if me.status == Status::Contributed {
        return Err(CeremonyError::AlreadyContributed);
    }
    let turn = row
        .turn
        .filter(|t| t.holder == me.seq)
        .ok_or(CeremonyError::NotYourTurn)?;
    if turn.verifying {
        return Err(CeremonyError::Verifying);
    }
    if turn.lapsed(at) {
        return Err(CeremonyError::Late {
            deadline: turn.deadline,
        });
    }
    let head = row.head.expect("invariant: an open ceremony has a head");
    let expected = match row.kind {
        // The participant's name is recorded in the key (the server checks it is theirs).
        CeremonyKind::Zkey => lockstep_ceremony::zkey::contribution_len(head.len, Some(&me.name)),
        _ => lockstep_ceremony::contribution_len(head.len, row.head_index == 0),
    };
    Ok((head, expected))
}

fn held_bytes(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

async fn upload_state(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<axum::Json<UploadView>, Refused> {
    let id = round_id(&id)?;
    let me = participant(&relay, &id, &headers).await?;
    let row = relay.db.ceremony(&id).await?;
    let (_, expected) = holding(&row, &me, now())?;
    let received = held_bytes(&partial_path(&relay, &id, &me)?);
    Ok(axum::Json(UploadView { received, expected }))
}

fn header_u64(headers: &HeaderMap, name: &str) -> Result<Option<u64>, Refused> {
    headers
        .get(name)
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| bad(format!("{name} is a byte count")))
        })
        .transpose()
}

async fn upload(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Refused> {
    let id = round_id(&id)?;
    let me = participant(&relay, &id, &headers).await?;
    let row = relay.db.ceremony(&id).await?;
    let (_, expected) = holding(&row, &me, now())?;
    let offset = header_u64(&headers, "upload-offset")?.unwrap_or(0);
    let total = header_u64(&headers, "upload-length")?
        .ok_or_else(|| bad("Upload-Length (the whole upload's bytes) is required"))?;
    let path = partial_path(&relay, &id, &me)?;
    if total > expected {
        // Not a contribution on this head, whatever it holds: refused before a byte is read.
        refuse(
            &relay,
            &id,
            me.seq,
            &CeremonyError::Oversized { expected }.to_string(),
        )
        .await?;
        let _ = std::fs::remove_file(&path);
        return Err(CeremonyError::Oversized { expected }.into());
    }
    let held = held_bytes(&path);
    if offset != held {
        return Err(CeremonyError::Offset { held, sent: offset }.into());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|source| StoreError::Io {
            action: "open an upload",
            path: path.clone(),
            source,
        })?;
    let mut written = held;
    let received = receive(body, relay.body_idle, "contribution", |data| {
        if written + data.len() as u64 > total {
            return Err(bad(format!(
                "the body runs past the Upload-Length of {total} bytes"
            )));
        }
        written += data.len() as u64;
        file.write_all(data).map_err(|source| {
            StoreError::Io {
                action: "write an upload",
                path: path.clone(),
                source,
            }
            .into()
        })
    })
    .await;
    // What arrived is kept for a resumed upload, even when the body broke off.
    file.sync_all().map_err(|source| StoreError::Io {
        action: "sync an upload",
        path: path.clone(),
        source,
    })?;
    drop(file);
    received?;
    if written < total {
        return Ok((
            StatusCode::ACCEPTED,
            axum::Json(UploadView {
                received: written,
                expected,
            }),
        )
            .into_response());
    }
    // Complete: the turn holds no deadline from now on, and the verdict comes next.
    let mut change = relay.db.begin(&id, now()).await?;
    let current = change.participant(me.seq).await?;
    holding(&change.row, &current, change.now())?;
    change
        .row
        .turn
        .as_mut()
        .expect("invariant: holding() found the turn")
        .verifying = true;
    change.commit().await?;
    let accepted = verify_and_accept(&relay, &id, me.seq).await?;
    Ok((StatusCode::CREATED, axum::Json(accepted)).into_response())
}

/// Refuses participant `seq`'s upload: its status `refused` with `reason`, the turn passed on.
async fn refuse(relay: &Relay, id: &RoundId, seq: u64, reason: &str) -> Result<(), Refused> {
    let mut change = relay.db.begin(id, now()).await?;
    if change.row.turn.is_some_and(|t| t.holder == seq) {
        change.row.turn = None;
        change.set(seq, Status::Refused, None, Some(reason)).await?;
    }
    change.commit().await?;
    relay
        .metrics
        .count("lockstep_contributions_total", "outcome=\"refused\"".into());
    tracing::info!(ceremony = %id, reason, "contribution refused");
    Ok(())
}

/// The accept path: participant `seq`'s complete upload verified against the head on the
/// server's pool, stored, and only then made the new head with its transcript row, in one
/// change. A refusal keeps the head and passes the turn. Run by the upload that completes, and
/// at start for an upload a killed server was verifying.
pub(crate) async fn verify_and_accept(
    relay: &Arc<Relay>,
    id: &RoundId,
    seq: u64,
) -> Result<AcceptedView, Refused> {
    let row = relay.db.ceremony(id).await?;
    let head = row.head.expect("invariant: a verifying turn has a head");
    let holder = relay.db.participant_at(id, seq).await?;
    let path = partial_path(relay, id, &holder)?;
    let len = held_bytes(&path);
    let kind = row.kind;
    let started = Instant::now();
    let candidate = path.clone();
    let name = holder.name.clone();
    let verified = on_workers(relay, move |pool, store| {
        steps::verify(pool, store, kind, head, (&candidate, len), &name)
    })
    .await;
    let verify_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let hash = match verified {
        Ok(hash) => hash,
        Err(StepError::Invalid(words)) => {
            refuse(relay, id, seq, &words).await?;
            let _ = std::fs::remove_file(&path);
            return Err(CeremonyError::Invalid(words).into());
        }
        Err(other) => {
            // The server's failure, not the participant's: the turn is given back with a fresh
            // deadline and the upload kept, so completing it again retries the verification.
            let mut change = relay.db.begin(id, now()).await?;
            let turn_secs = change.row.turn_secs;
            let at = change.now();
            if let Some(turn) = change.row.turn.as_mut().filter(|t| t.holder == seq) {
                turn.verifying = false;
                turn.deadline = at + turn_secs;
            }
            change.commit().await?;
            return Err(other.into());
        }
    };
    // Stored before the head moves: a server killed between the two leaves a body no ceremony
    // names, collected at the next start, and the head where it was.
    let store = relay.store.clone();
    let source = path.clone();
    let file = tokio::task::spawn_blocking(move || -> Result<FileRef, StoreError> {
        use crate::Staging as _;
        let mut staging = store.stage()?;
        let io = |action| {
            let path = source.clone();
            move |source| StoreError::Io {
                action,
                path,
                source,
            }
        };
        let mut input = std::fs::File::open(&source).map_err(io("open an upload"))?;
        std::io::copy(&mut input, &mut staging).map_err(io("store an upload"))?;
        let len = staging.written();
        let digest = store.commit(staging)?;
        Ok(FileRef { digest, len })
    })
    .await
    .expect("invariant: storing a file does not panic")?;
    let mut change = relay.db.begin(id, now()).await?;
    let holds = change
        .row
        .turn
        .is_some_and(|t| t.holder == seq && t.verifying);
    if !holds || change.row.head != Some(head) {
        return Err(CeremonyError::NotYourTurn.into());
    }
    let me = change.participant(seq).await?;
    let entry = Contribution {
        index: change.row.head_index + 1,
        participant: me.name.clone(),
        file,
        hash: hex::encode(&hash),
        verify_ms,
        accepted_at: change.now(),
    };
    change.accept(&entry).await?;
    change.set(seq, Status::Contributed, None, None).await?;
    change.commit().await?;
    let participant_name = me.name;
    let _ = std::fs::remove_file(&path);
    relay.metrics.count(
        "lockstep_contributions_total",
        "outcome=\"accepted\"".into(),
    );
    let index = row.head_index + 1;
    tracing::info!(ceremony = %id, index, participant = %participant_name, digest = %file.digest, verify_ms, "contribution accepted");
    Ok(AcceptedView {
        index,
        digest: file.digest.to_string(),
        contribution_hash: hex::encode(hash),
        verify_ms,
    })
}

/// A beacon's bytes from its hex (a `0x` prefix allowed), never empty.
fn beacon_bytes(text: &str) -> Result<Vec<u8>, Refused> {
    let digits = text.trim().strip_prefix("0x").unwrap_or(text.trim());
    match hex::decode(digits) {
        Ok(bytes) if !bytes.is_empty() => Ok(bytes),
        _ => Err(bad("the beacon is hex digits, at least one byte")),
    }
}

async fn seal(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<axum::Json<TranscriptView>, Refused> {
    let id = round_id(&id)?;
    operator(&relay, &headers)?;
    let asked: SealRequest = json(body).await?;
    let beacon = beacon_bytes(&asked.beacon)?;
    if asked.iterations > MAX_BEACON_ITERATIONS {
        return Err(bad(format!(
            "iterations {}: at most {MAX_BEACON_ITERATIONS}",
            asked.iterations
        )));
    }
    let mut change = relay.db.begin(&id, now()).await.map_err(not_found)?;
    if change.row.phase != Phase::Open {
        return Err(CeremonyError::NotOpen(change.row.phase.name()).into());
    }
    if change.row.head_index == 0 {
        return Err(CeremonyError::Operator(
            "no contribution yet: a seal of the initial object would be the beacon's alone, which is public".into(),
        )
        .into());
    }
    if let Some(turn) = change.row.turn {
        if turn.verifying {
            return Err(CeremonyError::Verifying.into());
        }
        change
            .set(
                turn.holder,
                Status::Invited,
                None,
                Some("the ceremony was sealed before your upload was complete"),
            )
            .await?;
        change.row.turn = None;
    }
    change.row.phase = Phase::Sealing;
    change.row.beacon = Some((hex::encode(&beacon), asked.iterations));
    change.commit().await?;
    tracing::info!(ceremony = %id, iterations = asked.iterations, "sealing");
    finish_seal(&relay, &id).await?;
    Ok(axum::Json(transcript_of(&relay, &id).await?))
}

/// Computes a sealing ceremony's result and records it: run by the seal, and at start for a
/// seal a killed server was computing (the same bytes: the seal is deterministic).
pub(crate) async fn finish_seal(relay: &Arc<Relay>, id: &RoundId) -> Result<(), Refused> {
    let row = relay.db.ceremony(id).await?;
    let (Some((beacon, iterations)), Some(head)) = (row.beacon.clone(), row.head) else {
        return Err(StepError::Server("a sealing ceremony without its beacon".into()).into());
    };
    let beacon = hex::decode(beacon)
        .map_err(|_| Refused::from(DbError::Corrupt("a ceremony's beacon".into())))?;
    let inputs = SealInputs {
        head,
        r1cs: row.r1cs,
        phase1: row.phase1,
    };
    let kind = row.kind;
    let (result, vk) = on_workers(relay, move |pool, store| {
        steps::seal(pool, store, kind, &inputs, &beacon, iterations)
    })
    .await?;
    let mut change = relay.db.begin(id, now()).await?;
    change.row.phase = Phase::Sealed;
    change.row.sealed = Some(result);
    change.row.sealed_vk = vk;
    change.commit().await?;
    tracing::info!(ceremony = %id, digest = %result.digest, "sealed");
    Ok(())
}

/// Finishes what a killed server left: verifications and seals (each logged on failure); and
/// removes uploads of turns that are over (lapsed, left, or sealed away).
pub(crate) async fn resume(relay: &Arc<Relay>) -> Result<(), DbError> {
    let mut current = std::collections::BTreeSet::new();
    for (id, seq) in relay.db.holders().await? {
        let holder = relay.db.participant_at(&id, seq).await?;
        if let Ok(path) = partial_path(relay, &id, &holder) {
            current.insert(path);
        }
    }
    if let Ok(entries) = std::fs::read_dir(&relay.uploads) {
        for entry in entries.flatten() {
            if !current.contains(&entry.path()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    for work in relay.db.unfinished().await? {
        let relay = relay.clone();
        tokio::spawn(async move {
            let result = match work {
                Unfinished::Verify { id, seq } => {
                    verify_and_accept(&relay, &id, seq).await.map(drop)
                }
                Unfinished::Seal { id } => finish_seal(&relay, &id).await,
            };
            tracing::info!(?work, ok = result.is_ok(), "resumed after a restart");
        });
    }
    Ok(())
}

pub(crate) async fn transcript_of(relay: &Relay, id: &RoundId) -> Result<TranscriptView, Refused> {
    let row = relay.db.ceremony(id).await.map_err(not_found)?;
    let contributions = relay.db.contributions(id).await?;
    let queue = relay.db.queue(id).await?;
    Ok(TranscriptView {
        ceremony: id.to_string(),
        title: row.title.clone(),
        kind: row.kind.name().to_owned(),
        power: row.power,
        phase: row.phase.name().to_owned(),
        turn_secs: row.turn_secs,
        r1cs: row.r1cs.map(view),
        phase1: row.phase1.map(view),
        initial: row.initial.map(view),
        contributions: contributions
            .into_iter()
            .map(|c| Entry {
                index: c.index,
                participant: c.participant,
                file: view(c.file),
                contribution_hash: c.hash,
                verify_ms: c.verify_ms,
                accepted_at: c.accepted_at,
            })
            .collect(),
        queue,
        seal: row.beacon.map(|(beacon, iterations)| SealView {
            beacon,
            iterations,
            result: row.sealed.map(view),
            verifying_key: row.sealed_vk.map(view),
        }),
    })
}

async fn transcript(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
) -> Result<axum::Json<TranscriptView>, Refused> {
    let id = round_id(&id)?;
    Ok(axum::Json(transcript_of(&relay, &id).await?))
}

async fn page(
    State(relay): State<Arc<Relay>>,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let id = round_id(&id)?;
    let transcript = transcript_of(&relay, &id).await?;
    Ok((
        [(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'",
        )],
        Html(page::render(&transcript)),
    )
        .into_response())
}

async fn file(
    State(relay): State<Arc<Relay>>,
    Path((id, digest)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let id = round_id(&id)?;
    let digest: crate::Digest = digest.parse().map_err(|_| Refused::not_found())?;
    let row = relay.db.ceremony(&id).await.map_err(not_found)?;
    let named = [
        row.initial,
        row.head,
        row.r1cs,
        row.phase1,
        row.sealed,
        row.sealed_vk,
    ]
    .into_iter()
    .flatten()
    .find(|f| f.digest == digest);
    let found = match named {
        Some(file) => Some(file),
        None => relay
            .db
            .contributions(&id)
            .await?
            .into_iter()
            .map(|c| c.file)
            .find(|f| f.digest == digest),
    };
    let file = found.ok_or_else(Refused::not_found)?;
    relay
        .metrics
        .count("lockstep_ceremony_downloads_total", String::new());
    serve_file(&relay, file.digest, file.len, &headers).await
}
