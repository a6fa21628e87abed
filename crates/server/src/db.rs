//! A relay's metadata: rounds, their token hashes and the messages each holds.

use std::borrow::Cow;

use lockstep_psi::Mode;
use sqlx::AnyPool;
use sqlx::Row;
use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::{
    Digest, Kind, Posted, Role, RoundError, RoundId, RoundSpec, RoundState, Token, TokenHash,
};

/// The schema, in order; each file runs once, in a transaction, on SQLite and PostgreSQL alike.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "rounds", include_str!("../migrations/0001_rounds.sql")),
    (
        2,
        "ceremonies",
        include_str!("../migrations/0002_ceremonies.sql"),
    ),
];

/// Why the database refused or failed. [`DbError::Unauthorized`] is one answer for an unknown
/// round and a wrong token, so a token tells nothing of other rounds.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// No round with this id holds this token.
    #[error("no round with this id holds this token")]
    Unauthorized,
    /// The round's rules refused.
    #[error(transparent)]
    Round(#[from] RoundError),
    /// The database failed or is unreachable (its words; never a token, which only travels
    /// as a hash here).
    #[error("the database failed: {0}")]
    Sqlx(#[from] sqlx::Error),
    /// The schema could not be brought up to date.
    #[error("the database's schema could not be migrated: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored value this server could not have written (another program's edit).
    #[error("the database holds a value this server never writes: {0}")]
    Corrupt(String),
    /// The operating system's generator failed.
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
    /// A ceremony's rules refused.
    #[error(transparent)]
    Ceremony(#[from] crate::ceremony::CeremonyError),
    /// A ceremony's row changed under every try (many requests at once); try again.
    #[error("the ceremony changed under {0} tries; try again")]
    Busy(u32),
    /// A count or time past what both databases hold (a signed 64-bit integer).
    #[error("{0} is past the largest count or time a round holds (2^63 - 1)")]
    OutOfRange(u64),
}

/// A new round's id and its two party tokens: the only time the tokens exist outside their
/// parties (the database keeps their hashes).
#[derive(Debug)]
pub struct Invitation {
    /// The round.
    pub id: RoundId,
    /// The starter's token.
    pub starter: Token,
    /// The joiner's token.
    pub joiner: Token,
}

/// A relay's database: SQLite (`sqlite:PATH`, created if missing, in WAL mode) or PostgreSQL
/// (`postgres://...`), through one set of queries. Every change is one statement or one
/// transaction, so a killed server leaves a round as it was before the change or after it.
#[derive(Clone, Debug)]
pub struct Db {
    pub(crate) pool: AnyPool,
}

#[derive(Debug)]
struct Embedded;

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> futures_core::future::BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>>
    {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, name, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(name),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

impl Db {
    /// Connects to `url` and brings its schema up to date.
    ///
    /// # Errors
    /// [`DbError::Sqlx`] for a URL of another kind or an unreachable database;
    /// [`DbError::Migrate`].
    pub async fn connect(url: &str) -> Result<Self, DbError> {
        sqlx::any::install_default_drivers();
        let sqlite = url.starts_with("sqlite:");
        let url = if sqlite && !url.contains('?') {
            Cow::Owned(format!("{url}?mode=rwc"))
        } else {
            Cow::Borrowed(url)
        };
        let pool = AnyPoolOptions::new()
            // SQLite takes one writer at a time, and a deferred transaction that starts reading
            // cannot wait for another writer (SQLITE_BUSY at once, whatever busy_timeout says):
            // one connection serializes the relay's short statements instead (measured:
            // `lockstep-bench serve`). PostgreSQL takes them side by side.
            .max_connections(if sqlite { 1 } else { 16 })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if sqlite {
                        sqlx::query("PRAGMA foreign_keys = ON")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA busy_timeout = 5000")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await?;
        if sqlite {
            // WAL is the file's own setting: set once, kept by every later connection.
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        Migrator::new(Embedded).await?.run(&pool).await?;
        Ok(Self { pool })
    }

    /// Creates a round: a new id and two new tokens, of which only the hashes are stored.
    ///
    /// # Errors
    /// [`DbError::Random`], [`DbError::Sqlx`].
    pub async fn create_round(&self, spec: &RoundSpec, now: u64) -> Result<Invitation, DbError> {
        let id = RoundId::generate().map_err(DbError::Random)?;
        let token = || Token::generate().map_err(|e| DbError::Random(e.to_string()));
        let (starter, joiner) = (token()?, token()?);
        sqlx::query(
            "INSERT INTO rounds (id, format, mode, max_rows, max_bytes, expires_at, starter_hash, joiner_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(id.to_string())
        .bind(crate::round::format_name(spec.format))
        .bind(spec.mode.to_string())
        .bind(to_db(spec.max_rows)?)
        .bind(to_db(spec.max_bytes)?)
        .bind(to_db(spec.expires_at)?)
        .bind(hex::encode(starter.hash().0))
        .bind(hex::encode(joiner.hash().0))
        .bind(to_db(now)?)
        .execute(&self.pool)
        .await?;
        Ok(Invitation {
            id,
            starter,
            joiner,
        })
    }

    /// The round `id` as the holder of `token` may act on it: its spec and the token's role.
    /// Both stored hashes are compared, in constant time, whichever matches.
    ///
    /// # Errors
    /// [`DbError::Unauthorized`] for an unknown round or a token of neither party;
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub async fn authenticate(
        &self,
        id: &RoundId,
        token: &Token,
    ) -> Result<(RoundSpec, Role), DbError> {
        let row = sqlx::query(
            "SELECT format, mode, max_rows, max_bytes, expires_at, starter_hash, joiner_hash FROM rounds WHERE id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Err(DbError::Unauthorized);
        };
        let matches = |column: &str| -> Result<bool, DbError> {
            Ok(hash_from(&row.try_get::<String, _>(column)?)?.matches(token))
        };
        let (starter, joiner) = (matches("starter_hash")?, matches("joiner_hash")?);
        let role = match (starter, joiner) {
            (true, false) => Role::Starter,
            (false, true) => Role::Joiner,
            (false, false) => return Err(DbError::Unauthorized),
            (true, true) => return Err(DbError::Corrupt("both parties hold one token".into())),
        };
        let format = row.try_get::<String, _>("format")?;
        let mode = row.try_get::<String, _>("mode")?;
        let spec = RoundSpec {
            format: format.parse().map_err(DbError::Corrupt)?,
            mode: match mode.as_str() {
                "reveal-intersection" => Mode::Reveal,
                "size-only" => Mode::SizeOnly,
                other => return Err(DbError::Corrupt(format!("mode {other:?}"))),
            },
            max_rows: from_db(row.try_get("max_rows")?)?,
            max_bytes: from_db(row.try_get("max_bytes")?)?,
            expires_at: from_db(row.try_get("expires_at")?)?,
        };
        Ok((spec, role))
    }

    /// The messages round `id` holds.
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub async fn state(&self, id: &RoundId) -> Result<RoundState, DbError> {
        let rows =
            sqlx::query("SELECT kind, digest, len, elements FROM messages WHERE round_id = $1")
                .bind(id.to_string())
                .fetch_all(&self.pool)
                .await?;
        let mut state = RoundState::default();
        for row in rows {
            let kind = kind_from(&row.try_get::<String, _>("kind")?)?;
            let digest = row
                .try_get::<String, _>("digest")?
                .parse()
                .map_err(|_| DbError::Corrupt("a message's digest".into()))?;
            let elements: Option<i64> = row.try_get("elements")?;
            state.record(
                kind,
                Posted {
                    digest,
                    len: from_db(row.try_get("len")?)?,
                    elements: elements.map(from_db).transpose()?,
                },
            );
        }
        Ok(state)
    }

    /// Records a checked message whose body the store already holds: `Ok(true)` if new,
    /// `Ok(false)` if the round held these bytes already (a retry). Two posts racing are
    /// settled by the table's key: one is recorded, the other is a retry or refused.
    ///
    /// # Errors
    /// [`RoundError::AlreadyPosted`] for other bytes; [`DbError::Sqlx`].
    pub async fn record(&self, id: &RoundId, kind: Kind, posted: &Posted) -> Result<bool, DbError> {
        let inserted = sqlx::query(
            "INSERT INTO messages (round_id, kind, digest, len, elements) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (round_id, kind) DO NOTHING",
        )
        .bind(id.to_string())
        .bind(kind.to_string())
        .bind(posted.digest.to_string())
        .bind(to_db(posted.len)?)
        .bind(posted.elements.map(to_db).transpose()?)
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(true);
        }
        Ok(self.state(id).await?.accept(kind, posted.digest)?)
    }

    /// Deletes every round expired at `now` and returns the digests its messages named, for
    /// the store to remove (a digest another live round also names is not returned).
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub async fn sweep_expired(&self, now: u64) -> Result<Vec<Digest>, DbError> {
        let now = to_db(now)?;
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(
            "SELECT DISTINCT m.digest FROM messages m JOIN rounds r ON r.id = m.round_id WHERE r.expires_at <= $1 \
             AND NOT EXISTS (SELECT 1 FROM messages o JOIN rounds q ON q.id = o.round_id \
             WHERE o.digest = m.digest AND q.expires_at > $1)",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM messages WHERE round_id IN (SELECT id FROM rounds WHERE expires_at <= $1)",
        )
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM rounds WHERE expires_at <= $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        digests_of(&rows)
    }
}

impl Db {
    /// Removes round `id` and its messages now (a party closed it) and returns the digests
    /// only it named, for the store to remove. One transaction, touching this round's rows
    /// only, so rounds closed at once do not wait on each other.
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub async fn remove_round(&self, id: &RoundId) -> Result<Vec<Digest>, DbError> {
        let id = id.to_string();
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(
            "SELECT DISTINCT m.digest FROM messages m WHERE m.round_id = $1 \
             AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.digest = m.digest AND o.round_id <> $1)",
        )
        .bind(&id)
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM messages WHERE round_id = $1")
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM rounds WHERE id = $1")
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        digests_of(&rows)
    }

    /// Every digest a round or a ceremony still names: what the store must keep (the rest is what
    /// a server killed between storing a body and recording it, or a refused upload, left).
    ///
    /// # Errors
    /// [`DbError::Sqlx`], [`DbError::Corrupt`].
    pub async fn named_digests(&self) -> Result<std::collections::BTreeSet<Digest>, DbError> {
        sqlx::query(crate::ceremony::NAMED_DIGESTS)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                row.try_get::<String, _>("digest")?
                    .parse()
                    .map_err(|_| DbError::Corrupt("a message's digest".into()))
            })
            .collect()
    }

    /// Whether the database answers.
    ///
    /// # Errors
    /// [`DbError::Sqlx`].
    pub async fn ping(&self) -> Result<(), DbError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

pub(crate) fn digests_of(rows: &[sqlx::any::AnyRow]) -> Result<Vec<Digest>, DbError> {
    rows.iter()
        .map(|row| {
            row.try_get::<String, _>("digest")?
                .parse()
                .map_err(|_| DbError::Corrupt("a message's digest".into()))
        })
        .collect()
}

fn kind_from(text: &str) -> Result<Kind, DbError> {
    text.parse()
        .map_err(|_| DbError::Corrupt(format!("message kind {text:?}")))
}

pub(crate) fn hash_from(text: &str) -> Result<TokenHash, DbError> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text, &mut bytes).map_err(|_| DbError::Corrupt("a token hash".into()))?;
    Ok(TokenHash(bytes))
}

/// Both databases' integers are signed 64-bit: a count or time past that is refused, not wrapped.
pub(crate) fn to_db(value: u64) -> Result<i64, DbError> {
    i64::try_from(value).map_err(|_| DbError::OutOfRange(value))
}

pub(crate) fn from_db(value: i64) -> Result<u64, DbError> {
    u64::try_from(value).map_err(|_| DbError::Corrupt(format!("a negative count or time, {value}")))
}

#[cfg(test)]
mod tests {
    use lockstep_psi::SetupFormat;

    use super::*;

    /// SQLite's own facts; what both databases share is in `tests/databases.rs`.
    #[tokio::test]
    async fn sqlite_runs_in_wal_mode_and_keeps_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("relay.db").display());
        let db = Db::connect(&url).await.unwrap();
        let spec = RoundSpec {
            format: SetupFormat::Raw,
            mode: Mode::Reveal,
            max_rows: 10,
            max_bytes: 1_000,
            expires_at: 1_000,
        };
        let round = db.create_round(&spec, 10).await.unwrap();
        let mode: String = sqlx::query("PRAGMA journal_mode")
            .fetch_one(&db.pool)
            .await
            .unwrap()
            .get(0);
        assert_eq!(mode, "wal");
        // Only hashes are stored: no token's text in any of the database's files.
        db.pool.close().await;
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for token in [&round.starter, &round.joiner] {
                assert!(!text.contains(&token.reveal()));
            }
            assert!(
                text.contains(&hex::encode(round.starter.hash().0))
                    || !text.contains("CREATE TABLE rounds")
            );
        }
    }
}
