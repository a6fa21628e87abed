//! A ceremony's state in the database: the ceremony's row (its phase, head and turn), its
//! participants and its accepted contributions.
//!
//! Every change is one transaction that first claims the ceremony's row (`version` moved on
//! where it is still the one read: a concurrent change makes the claim miss, and the change is
//! tried again on what is there now), so changes of one ceremony are serialized on SQLite and
//! PostgreSQL alike, and a killed server leaves each change whole or not at all. Reads that
//! would change nothing (a poll while the turn holds) take no claim.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::rules::{CeremonyError, CeremonyKind, Phase, Status, Turn, check_name};
use crate::db::{from_db, hash_from, to_db};
use crate::{Db, DbError, Digest, RoundId, Token};

/// Every digest the store must keep: messages of rounds and every file of every ceremony.
pub(crate) const NAMED_DIGESTS: &str = "SELECT digest FROM messages \
     UNION SELECT digest FROM contributions \
     UNION SELECT head_digest FROM ceremonies WHERE head_digest IS NOT NULL \
     UNION SELECT initial_digest FROM ceremonies WHERE initial_digest IS NOT NULL \
     UNION SELECT r1cs_digest FROM ceremonies WHERE r1cs_digest IS NOT NULL \
     UNION SELECT phase1_digest FROM ceremonies WHERE phase1_digest IS NOT NULL \
     UNION SELECT sealed_digest FROM ceremonies WHERE sealed_digest IS NOT NULL \
     UNION SELECT sealed_vk_digest FROM ceremonies WHERE sealed_vk_digest IS NOT NULL";

/// How many times a change is tried against concurrent ones before [`DbError::Busy`].
const TRIES: u32 = 50;

/// A file a ceremony names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileRef {
    /// Its SHA-256.
    pub digest: Digest,
    /// Its length.
    pub len: u64,
}

/// A ceremony's row.
#[derive(Clone, Debug)]
pub(crate) struct Ceremony {
    /// Its id.
    pub id: RoundId,
    /// Its kind.
    pub kind: CeremonyKind,
    /// Its title.
    pub title: String,
    /// The domain's power (a phase 2's once its circuit is known; 0 before).
    pub power: u32,
    /// Seconds a turn lasts.
    pub turn_secs: u64,
    /// Registrations still open.
    pub open_slots: u64,
    /// Where it is in its life.
    pub phase: Phase,
    version: i64,
    next_ticket: u64,
    /// The head's index (0: the initial object).
    pub head_index: u64,
    /// The head, once open.
    pub head: Option<FileRef>,
    /// The initial object.
    pub initial: Option<FileRef>,
    /// A phase 2's circuit.
    pub r1cs: Option<FileRef>,
    /// A phase 2's sealed phase 1.
    pub phase1: Option<FileRef>,
    /// The turn, if held.
    pub turn: Option<Turn>,
    /// The seal's beacon (hex) and iterations, once asked.
    pub beacon: Option<(String, u64)>,
    /// The sealed result (a phase 1's SRS, a phase 2's proving key).
    pub sealed: Option<FileRef>,
    /// A phase 2's verifying key.
    pub sealed_vk: Option<FileRef>,
}

/// A participant.
#[derive(Clone, Debug)]
pub(crate) struct Participant {
    /// Its number in the ceremony.
    pub seq: u64,
    /// Its public name.
    pub name: String,
    /// Its place.
    pub status: Status,
    /// Its queue ticket while queued or holding (lower goes first).
    pub ticket: Option<u64>,
    /// Why its last upload was refused or its turn lapsed.
    pub reason: Option<String>,
}

/// An accepted contribution.
#[derive(Clone, Debug)]
pub(crate) struct Contribution {
    /// Its index (1 the first).
    pub index: u64,
    /// Its participant's name.
    pub participant: String,
    /// The file.
    pub file: FileRef,
    /// The contribution hash (hex).
    pub hash: String,
    /// Verification time, milliseconds.
    pub verify_ms: u64,
    /// Unix seconds.
    pub accepted_at: u64,
}

/// Work a server must finish after a restart: an upload that was being verified, a seal that
/// was being computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unfinished {
    /// Participant `seq`'s complete upload on head `head_index`.
    Verify {
        /// The ceremony.
        id: RoundId,
        /// The holder.
        seq: u64,
    },
    /// The seal.
    Seal {
        /// The ceremony.
        id: RoundId,
    },
}

fn corrupt(what: &str) -> impl FnOnce(String) -> DbError + '_ {
    move |words| DbError::Corrupt(format!("{what}: {words}"))
}

fn digest_from(text: &str) -> Result<Digest, DbError> {
    text.parse()
        .map_err(|_| DbError::Corrupt("a ceremony's digest".into()))
}

fn file_at(row: &AnyRow, digest: &str, len: &str) -> Result<Option<FileRef>, DbError> {
    let digest: Option<String> = row.try_get(digest)?;
    let len: Option<i64> = row.try_get(len)?;
    match (digest, len) {
        (Some(digest), Some(len)) => Ok(Some(FileRef {
            digest: digest_from(&digest)?,
            len: from_db(len)?,
        })),
        (None, _) => Ok(None),
        (Some(_), None) => Err(DbError::Corrupt("a ceremony file without a length".into())),
    }
}

fn ceremony_from(row: &AnyRow) -> Result<Ceremony, DbError> {
    let id: String = row.try_get("id")?;
    let power = u32::try_from(from_db(row.try_get("power")?)?)
        .map_err(|_| DbError::Corrupt("a ceremony's power".into()))?;
    let kind = match row.try_get::<String, _>("kind")?.as_str() {
        "phase1" => CeremonyKind::Phase1 { power },
        "phase2" => CeremonyKind::Phase2,
        "zkey" => CeremonyKind::Zkey,
        other => return Err(DbError::Corrupt(format!("ceremony kind {other:?}"))),
    };
    let holder: Option<i64> = row.try_get("turn_holder")?;
    let deadline: Option<i64> = row.try_get("turn_deadline")?;
    let turn = match (holder, deadline) {
        (Some(holder), Some(deadline)) => Some(Turn {
            holder: from_db(holder)?,
            deadline: from_db(deadline)?,
            verifying: row.try_get::<i64, _>("turn_verifying")? != 0,
        }),
        (None, None) => None,
        _ => {
            return Err(DbError::Corrupt(
                "a turn without a holder or deadline".into(),
            ));
        }
    };
    let beacon: Option<String> = row.try_get("beacon")?;
    let iterations: Option<i64> = row.try_get("iterations")?;
    Ok(Ceremony {
        id: id
            .parse()
            .map_err(|_| DbError::Corrupt("a ceremony id".into()))?,
        kind,
        title: row.try_get("title")?,
        power,
        turn_secs: from_db(row.try_get("turn_secs")?)?,
        open_slots: from_db(row.try_get("open_slots")?)?,
        phase: row
            .try_get::<String, _>("phase")?
            .parse()
            .map_err(corrupt("phase"))?,
        version: row.try_get("version")?,
        next_ticket: from_db(row.try_get("next_ticket")?)?,
        head_index: from_db(row.try_get("head_index")?)?,
        head: file_at(row, "head_digest", "head_len")?,
        initial: file_at(row, "initial_digest", "initial_len")?,
        r1cs: file_at(row, "r1cs_digest", "r1cs_len")?,
        phase1: file_at(row, "phase1_digest", "phase1_len")?,
        turn,
        beacon: match (beacon, iterations) {
            (Some(b), Some(i)) => Some((b, from_db(i)?)),
            _ => None,
        },
        sealed: file_at(row, "sealed_digest", "sealed_len")?,
        sealed_vk: file_at(row, "sealed_vk_digest", "sealed_vk_len")?,
    })
}

fn participant_from(row: &AnyRow) -> Result<Participant, DbError> {
    let ticket: Option<i64> = row.try_get("ticket")?;
    Ok(Participant {
        seq: from_db(row.try_get("seq")?)?,
        name: row.try_get("name")?,
        status: row
            .try_get::<String, _>("status")?
            .parse()
            .map_err(corrupt("status"))?,
        ticket: ticket.map(from_db).transpose()?,
        reason: row.try_get("reason")?,
    })
}

async fn load(tx: &mut Transaction<'static, Any>, id: &RoundId) -> Result<Ceremony, DbError> {
    let row = sqlx::query("SELECT * FROM ceremonies WHERE id = $1")
        .bind(id.to_string())
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(DbError::Unauthorized)?;
    ceremony_from(&row)
}

/// Claims the row: moves its version on where it is still `row`'s. `false`: another change
/// came first.
async fn claim(tx: &mut Transaction<'static, Any>, row: &mut Ceremony) -> Result<bool, DbError> {
    let claimed =
        sqlx::query("UPDATE ceremonies SET version = version + 1 WHERE id = $1 AND version = $2")
            .bind(row.id.to_string())
            .bind(row.version)
            .execute(&mut **tx)
            .await?
            .rows_affected()
            == 1;
    row.version += 1;
    Ok(claimed)
}

fn opt_digest(file: Option<FileRef>) -> Option<String> {
    file.map(|f| f.digest.to_string())
}

fn opt_len(file: Option<FileRef>) -> Result<Option<i64>, DbError> {
    file.map(|f| to_db(f.len)).transpose()
}

/// Writes the row's changeable columns (after a claim).
async fn save(tx: &mut Transaction<'static, Any>, row: &Ceremony) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE ceremonies SET power = $2, open_slots = $3, phase = $4, next_ticket = $5, head_index = $6, \
         head_digest = $7, head_len = $8, initial_digest = $9, initial_len = $23, r1cs_digest = $10, r1cs_len = $11, \
         phase1_digest = $12, phase1_len = $13, turn_holder = $14, turn_deadline = $15, turn_verifying = $16, \
         beacon = $17, iterations = $18, sealed_digest = $19, sealed_len = $20, sealed_vk_digest = $21, \
         sealed_vk_len = $22 WHERE id = $1",
    )
    .bind(row.id.to_string())
    .bind(i64::from(row.power))
    .bind(to_db(row.open_slots)?)
    .bind(row.phase.name())
    .bind(to_db(row.next_ticket)?)
    .bind(to_db(row.head_index)?)
    .bind(opt_digest(row.head))
    .bind(opt_len(row.head)?)
    .bind(opt_digest(row.initial))
    .bind(opt_digest(row.r1cs))
    .bind(opt_len(row.r1cs)?)
    .bind(opt_digest(row.phase1))
    .bind(opt_len(row.phase1)?)
    .bind(row.turn.map(|t| to_db(t.holder)).transpose()?)
    .bind(row.turn.map(|t| to_db(t.deadline)).transpose()?)
    .bind(i64::from(row.turn.is_some_and(|t| t.verifying)))
    .bind(row.beacon.as_ref().map(|(b, _)| b.clone()))
    .bind(row.beacon.as_ref().map(|(_, i)| to_db(*i)).transpose()?)
    .bind(opt_digest(row.sealed))
    .bind(opt_len(row.sealed)?)
    .bind(opt_digest(row.sealed_vk))
    .bind(opt_len(row.sealed_vk)?)
    .bind(opt_len(row.initial)?)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn set_status(
    tx: &mut Transaction<'static, Any>,
    id: &RoundId,
    seq: u64,
    status: Status,
    ticket: Option<u64>,
    reason: Option<&str>,
) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE participants SET status = $3, ticket = $4, reason = $5 WHERE ceremony_id = $1 AND seq = $2",
    )
    .bind(id.to_string())
    .bind(to_db(seq)?)
    .bind(status.name())
    .bind(ticket.map(to_db).transpose()?)
    .bind(reason.map(str::to_owned))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn participant(
    tx: &mut Transaction<'static, Any>,
    id: &RoundId,
    seq: u64,
) -> Result<Participant, DbError> {
    let row = sqlx::query("SELECT * FROM participants WHERE ceremony_id = $1 AND seq = $2")
        .bind(id.to_string())
        .bind(to_db(seq)?)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| DbError::Corrupt("a turn held by no participant".into()))?;
    participant_from(&row)
}

/// Moves the turn on at `now`: a lapsed holder loses it (status `lapsed`, the reason kept), and
/// a free turn goes to the first queued participant with a fresh deadline.
async fn advance(
    tx: &mut Transaction<'static, Any>,
    row: &mut Ceremony,
    now: u64,
) -> Result<(), DbError> {
    if row.phase != Phase::Open {
        return Ok(());
    }
    if let Some(turn) = row.turn.filter(|t| t.lapsed(now)) {
        let reason = format!(
            "the turn's deadline passed at {} (Unix seconds) with no complete upload",
            turn.deadline
        );
        set_status(
            tx,
            &row.id,
            turn.holder,
            Status::Lapsed,
            None,
            Some(&reason),
        )
        .await?;
        row.turn = None;
    }
    if row.turn.is_none() {
        let next = sqlx::query(
            "SELECT seq, ticket FROM participants WHERE ceremony_id = $1 AND status = 'queued' ORDER BY ticket LIMIT 1",
        )
        .bind(row.id.to_string())
        .fetch_optional(&mut **tx)
        .await?;
        if let Some(next) = next {
            let seq = from_db(next.try_get("seq")?)?;
            let ticket: Option<i64> = next.try_get("ticket")?;
            let ticket = ticket.map(from_db).transpose()?;
            set_status(tx, &row.id, seq, Status::Holding, ticket, None).await?;
            row.turn = Some(Turn {
                holder: seq,
                deadline: now.saturating_add(row.turn_secs),
                verifying: false,
            });
        }
    }
    Ok(())
}

/// What a change of one ceremony sees: the transaction, the claimed row, and the time.
pub(crate) struct Change {
    tx: Transaction<'static, Any>,
    /// The row, claimed and moved on to `now`.
    pub(crate) row: Ceremony,
    now: u64,
}

impl Change {
    /// The participant `seq`, as it is within the change.
    pub(crate) async fn participant(&mut self, seq: u64) -> Result<Participant, DbError> {
        participant(&mut self.tx, &self.row.id, seq).await
    }

    /// Sets participant `seq`'s status, ticket and reason.
    pub(crate) async fn set(
        &mut self,
        seq: u64,
        status: Status,
        ticket: Option<u64>,
        reason: Option<&str>,
    ) -> Result<(), DbError> {
        set_status(&mut self.tx, &self.row.id, seq, status, ticket, reason).await
    }

    /// A new queue ticket.
    pub(crate) fn ticket(&mut self) -> u64 {
        self.row.next_ticket += 1;
        self.row.next_ticket
    }

    /// Records an accepted contribution as the new head (the turn cleared).
    pub(crate) async fn accept(&mut self, entry: &Contribution) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO contributions (ceremony_id, idx, participant, digest, len, hash, verify_ms, accepted_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(self.row.id.to_string())
        .bind(to_db(entry.index)?)
        .bind(&entry.participant)
        .bind(entry.file.digest.to_string())
        .bind(to_db(entry.file.len)?)
        .bind(&entry.hash)
        .bind(to_db(entry.verify_ms)?)
        .bind(to_db(entry.accepted_at)?)
        .execute(&mut *self.tx)
        .await?;
        self.row.head_index = entry.index;
        self.row.head = Some(entry.file);
        self.row.turn = None;
        Ok(())
    }

    /// Unix seconds of the change.
    pub(crate) fn now(&self) -> u64 {
        self.now
    }

    /// Commits the change: the turn moved on (to the next in the queue if the act freed it)
    /// and the row saved, in the change's transaction.
    ///
    /// # Errors
    /// [`DbError::Sqlx`]: nothing of the change is kept.
    pub(crate) async fn commit(mut self) -> Result<(), DbError> {
        advance(&mut self.tx, &mut self.row, self.now).await?;
        save(&mut self.tx, &self.row).await?;
        self.tx.commit().await?;
        Ok(())
    }
}

impl Db {
    /// Begins a change of ceremony `id` at `now` (see the module's words): the row claimed
    /// (tried again while concurrent changes come first) and the turn moved on. The change is
    /// one transaction: [`Change::commit`] moves the turn on again (an act may have freed it)
    /// and saves the row; dropped uncommitted, it leaves nothing, the turn's moving on included.
    ///
    /// # Errors
    /// [`DbError::Unauthorized`] for no such ceremony; [`DbError::Busy`]; [`DbError::Sqlx`].
    pub(crate) async fn begin(&self, id: &RoundId, now: u64) -> Result<Change, DbError> {
        for _ in 0..TRIES {
            let mut tx = self.pool.begin().await?;
            let mut row = load(&mut tx, id).await?;
            if !claim(&mut tx, &mut row).await? {
                tx.rollback().await?;
                continue;
            }
            advance(&mut tx, &mut row, now).await?;
            return Ok(Change { tx, row, now });
        }
        Err(DbError::Busy(TRIES))
    }

    /// Creates a ceremony with its invited participants: its id and their tokens, of which only
    /// the hashes are stored. A phase 1 opens at once on `initial`; a phase 2 waits for its
    /// inputs.
    ///
    /// # Errors
    /// [`CeremonyError::Registration`] for a malformed or repeated name; [`DbError::Random`],
    /// [`DbError::Sqlx`].
    #[allow(clippy::too_many_arguments, reason = "one row's columns")]
    pub(crate) async fn create_ceremony(
        &self,
        kind: CeremonyKind,
        title: &str,
        names: &[String],
        open_slots: u64,
        turn_secs: u64,
        initial: Option<FileRef>,
        now: u64,
    ) -> Result<(RoundId, Vec<(String, Token)>), DbError> {
        for (i, name) in names.iter().enumerate() {
            check_name(name).map_err(CeremonyError::Registration)?;
            if names[..i].contains(name) {
                return Err(CeremonyError::Registration(format!(
                    "the name {name:?} is given twice"
                ))
                .into());
            }
        }
        let id = RoundId::generate().map_err(DbError::Random)?;
        let (power, phase) = match kind {
            CeremonyKind::Phase1 { power } => (power, Phase::Open),
            CeremonyKind::Phase2 | CeremonyKind::Zkey => (0, Phase::Pending),
        };
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO ceremonies (id, kind, title, power, turn_secs, open_slots, phase, version, next_ticket, \
             head_index, head_digest, head_len, initial_digest, initial_len, turn_verifying, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0, 0, $8, $9, $8, $9, 0, $10)",
        )
        .bind(id.to_string())
        .bind(kind.name())
        .bind(title)
        .bind(i64::from(power))
        .bind(to_db(turn_secs)?)
        .bind(to_db(open_slots)?)
        .bind(phase.name())
        .bind(opt_digest(initial))
        .bind(opt_len(initial)?)
        .bind(to_db(now)?)
        .execute(&mut *tx)
        .await?;
        let mut tokens = Vec::with_capacity(names.len());
        for (seq, name) in names.iter().enumerate() {
            let token = insert_participant(&mut tx, &id, seq as u64 + 1, name).await?;
            tokens.push((name.clone(), token));
        }
        tx.commit().await?;
        Ok((id, tokens))
    }

    /// Registers `name` in ceremony `id` while its open slots last: a new token.
    ///
    /// # Errors
    /// [`CeremonyError::Registration`] (closed, full, a name taken or malformed);
    /// [`DbError::Unauthorized`] for no such ceremony.
    pub(crate) async fn register(
        &self,
        id: &RoundId,
        name: &str,
        now: u64,
    ) -> Result<Token, DbError> {
        check_name(name).map_err(CeremonyError::Registration)?;
        let mut change = self.begin(id, now).await?;
        if change.row.open_slots == 0 {
            return Err(CeremonyError::Registration(
                "this ceremony takes no more registrations".into(),
            )
            .into());
        }
        if matches!(change.row.phase, Phase::Sealing | Phase::Sealed) {
            return Err(CeremonyError::NotOpen(change.row.phase.name()).into());
        }
        let top: i64 = sqlx::query(
            "SELECT COALESCE(MAX(seq), 0) AS top FROM participants WHERE ceremony_id = $1",
        )
        .bind(change.row.id.to_string())
        .fetch_one(&mut *change.tx)
        .await?
        .try_get("top")?;
        let top = from_db(top)?;
        let same = sqlx::query("SELECT 1 FROM participants WHERE ceremony_id = $1 AND name = $2")
            .bind(change.row.id.to_string())
            .bind(name)
            .fetch_optional(&mut *change.tx)
            .await?;
        if same.is_some() {
            return Err(CeremonyError::Registration(format!(
                "the name {name:?} is taken in this ceremony"
            ))
            .into());
        }
        change.row.open_slots -= 1;
        let id = change.row.id;
        let token = insert_participant(&mut change.tx, &id, top + 1, name).await?;
        change.commit().await?;
        Ok(token)
    }

    /// The participant of ceremony `id` holding `token`, compared by hash.
    ///
    /// # Errors
    /// [`DbError::Unauthorized`] for no such ceremony or a token of none of its participants.
    pub(crate) async fn participant_of(
        &self,
        id: &RoundId,
        token: &Token,
    ) -> Result<Participant, DbError> {
        let hash = token.hash();
        let row =
            sqlx::query("SELECT * FROM participants WHERE ceremony_id = $1 AND token_hash = $2")
                .bind(id.to_string())
                .bind(hex::encode(hash.0))
                .fetch_optional(&self.pool)
                .await?
                .ok_or(DbError::Unauthorized)?;
        // The lookup was by hash; the comparison that decides is constant-time.
        if !hash_from(&row.try_get::<String, _>("token_hash")?)?.matches(token) {
            return Err(DbError::Unauthorized);
        }
        participant_from(&row)
    }

    /// Participant `seq` of ceremony `id`.
    ///
    /// # Errors
    /// [`DbError::Corrupt`] if there is none; [`DbError::Sqlx`].
    pub(crate) async fn participant_at(
        &self,
        id: &RoundId,
        seq: u64,
    ) -> Result<Participant, DbError> {
        let row = sqlx::query("SELECT * FROM participants WHERE ceremony_id = $1 AND seq = $2")
            .bind(id.to_string())
            .bind(to_db(seq)?)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| DbError::Corrupt("a turn held by no participant".into()))?;
        participant_from(&row)
    }

    /// Every ceremony's turn holder: `(ceremony, seq)`.
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub(crate) async fn holders(&self) -> Result<Vec<(RoundId, u64)>, DbError> {
        sqlx::query("SELECT id, turn_holder FROM ceremonies WHERE turn_holder IS NOT NULL")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                let id = row
                    .try_get::<String, _>("id")?
                    .parse()
                    .map_err(|_| DbError::Corrupt("a ceremony id".into()))?;
                Ok((id, from_db(row.try_get("turn_holder")?)?))
            })
            .collect()
    }

    /// The ceremony `id` as stored, with no change.
    ///
    /// # Errors
    /// [`DbError::Unauthorized`] for no such ceremony; [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub(crate) async fn ceremony(&self, id: &RoundId) -> Result<Ceremony, DbError> {
        let row = sqlx::query("SELECT * FROM ceremonies WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?
            .ok_or(DbError::Unauthorized)?;
        ceremony_from(&row)
    }

    /// Whether a poll at `now` would move the turn on (a lapse, or a free turn and a queue).
    pub(crate) async fn turn_would_move(&self, row: &Ceremony, now: u64) -> Result<bool, DbError> {
        if row.phase != Phase::Open {
            return Ok(false);
        }
        match row.turn {
            Some(turn) => Ok(turn.lapsed(now)),
            None => Ok(sqlx::query(
                "SELECT 1 FROM participants WHERE ceremony_id = $1 AND status = 'queued' LIMIT 1",
            )
            .bind(row.id.to_string())
            .fetch_optional(&self.pool)
            .await?
            .is_some()),
        }
    }

    /// How many participants are ahead of a queued participant with `ticket` (the holder
    /// included).
    pub(crate) async fn ahead_of(&self, row: &Ceremony, ticket: u64) -> Result<u64, DbError> {
        let n: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM participants WHERE ceremony_id = $1 AND status = 'queued' AND ticket < $2",
        )
        .bind(row.id.to_string())
        .bind(to_db(ticket)?)
        .fetch_one(&self.pool)
        .await?
        .try_get("n")?;
        Ok(from_db(n)? + u64::from(row.turn.is_some()))
    }

    /// The queue's names in order (the holder first).
    pub(crate) async fn queue(&self, id: &RoundId) -> Result<Vec<String>, DbError> {
        sqlx::query(
            "SELECT name FROM participants WHERE ceremony_id = $1 AND status IN ('holding', 'queued') \
             ORDER BY CASE status WHEN 'holding' THEN 0 ELSE 1 END, ticket",
        )
        .bind(id.to_string())
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| Ok(row.try_get::<String, _>("name")?))
        .collect()
    }

    /// Every accepted contribution of ceremony `id`, in chain order.
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub(crate) async fn contributions(&self, id: &RoundId) -> Result<Vec<Contribution>, DbError> {
        sqlx::query("SELECT * FROM contributions WHERE ceremony_id = $1 ORDER BY idx")
            .bind(id.to_string())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok(Contribution {
                    index: from_db(row.try_get("idx")?)?,
                    participant: row.try_get("participant")?,
                    file: FileRef {
                        digest: digest_from(&row.try_get::<String, _>("digest")?)?,
                        len: from_db(row.try_get("len")?)?,
                    },
                    hash: row.try_get("hash")?,
                    verify_ms: from_db(row.try_get("verify_ms")?)?,
                    accepted_at: from_db(row.try_get("accepted_at")?)?,
                })
            })
            .collect()
    }

    /// What a restarted server must finish: uploads that were being verified, seals that were
    /// being computed.
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub(crate) async fn unfinished(&self) -> Result<Vec<Unfinished>, DbError> {
        let rows = sqlx::query(
            "SELECT id, phase, turn_holder FROM ceremonies WHERE turn_verifying = 1 OR phase = 'sealing'",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let id = row
                    .try_get::<String, _>("id")?
                    .parse()
                    .map_err(|_| DbError::Corrupt("a ceremony id".into()))?;
                if row.try_get::<String, _>("phase")? == "sealing" {
                    return Ok(Unfinished::Seal { id });
                }
                let seq: Option<i64> = row.try_get("turn_holder")?;
                let seq =
                    seq.ok_or_else(|| DbError::Corrupt("a verifying turn, no holder".into()))?;
                Ok(Unfinished::Verify {
                    id,
                    seq: from_db(seq)?,
                })
            })
            .collect()
    }
}

async fn insert_participant(
    tx: &mut Transaction<'static, Any>,
    id: &RoundId,
    seq: u64,
    name: &str,
) -> Result<Token, DbError> {
    let token = Token::generate().map_err(|e| DbError::Random(e.to_string()))?;
    sqlx::query(
        "INSERT INTO participants (ceremony_id, seq, name, token_hash, status) VALUES ($1, $2, $3, $4, 'invited')",
    )
    .bind(id.to_string())
    .bind(to_db(seq)?)
    .bind(name)
    .bind(hex::encode(token.hash().0))
    .execute(&mut **tx)
    .await?;
    Ok(token)
}
