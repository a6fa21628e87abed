//! The relay's database rules on both databases it supports: SQLite in a temporary file and a
//! real PostgreSQL, a throwaway cluster made here with Debian's `initdb` and `pg_ctl`, listening
//! only on a Unix socket in a temporary folder, and stopped after. A missing PostgreSQL fails
//! the test (`scripts/setup --test` installs it), it never skips.
// Test code throughout (clippy's unwrap rule allows it in cfg(test) items only).
#![cfg(test)]

use lockstep_psi::{Mode, SetupFormat};
use lockstep_server::{
    Db, DbError, Digest, Kind, Posted, Role, RoundError, RoundId, RoundSpec, RoundState, Token,
};

fn spec(expires_at: u64) -> RoundSpec {
    RoundSpec {
        format: SetupFormat::Gcs,
        mode: Mode::SizeOnly,
        max_rows: 1_000,
        max_bytes: 1 << 20,
        expires_at,
    }
}

fn posted(byte: u8, elements: Option<u64>) -> Posted {
    Posted {
        digest: Digest([byte; 32]),
        len: 100,
        elements,
    }
}

async fn each_token_opens_its_round_as_its_party_and_nothing_else(db: &Db) {
    let one = db.create_round(&spec(1_000), 10).await.unwrap();
    let two = db.create_round(&spec(2_000), 10).await.unwrap();
    assert_ne!(one.id, two.id);
    let (got, role) = db.authenticate(&one.id, &one.starter).await.unwrap();
    assert_eq!((got, role), (spec(1_000), Role::Starter));
    let (_, role) = db.authenticate(&one.id, &one.joiner).await.unwrap();
    assert_eq!(role, Role::Joiner);
    let stranger = Token::generate().unwrap();
    let unknown = RoundId::generate().unwrap();
    for (id, token) in [
        (&one.id, &two.starter),
        (&two.id, &one.joiner),
        (&one.id, &stranger),
        (&unknown, &one.starter),
    ] {
        assert!(matches!(
            db.authenticate(id, token).await,
            Err(DbError::Unauthorized)
        ));
    }
}

async fn a_message_is_recorded_once_and_a_retry_recognised(db: &Db, url: &str) {
    let round = db.create_round(&spec(1_000), 10).await.unwrap();
    assert!(
        db.record(&round.id, Kind::Request, &posted(1, Some(3)))
            .await
            .unwrap()
    );
    assert!(
        !db.record(&round.id, Kind::Request, &posted(1, Some(3)))
            .await
            .unwrap()
    );
    let other = db
        .record(&round.id, Kind::Request, &posted(2, Some(3)))
        .await;
    assert!(matches!(
        other,
        Err(DbError::Round(RoundError::AlreadyPosted(Kind::Request)))
    ));
    // Kept across a new connection, which runs no migration twice.
    let again = Db::connect(url).await.unwrap();
    let state = again.state(&round.id).await.unwrap();
    assert_eq!(state.request, Some(posted(1, Some(3))));
    assert_eq!((state.setup, state.response), (None, None));
}

async fn expired_rounds_go_with_the_digests_only_they_named(db: &Db) {
    // Rounds of the other scenarios expire at 1,000 and later.
    let old = db.create_round(&spec(100), 10).await.unwrap();
    let live = db.create_round(&spec(5_000), 10).await.unwrap();
    db.record(&old.id, Kind::Setup, &posted(7, None))
        .await
        .unwrap();
    db.record(&old.id, Kind::Request, &posted(8, Some(3)))
        .await
        .unwrap();
    db.record(&live.id, Kind::Setup, &posted(8, None))
        .await
        .unwrap();
    assert_eq!(db.sweep_expired(100).await.unwrap(), [Digest([7; 32])]);
    assert!(matches!(
        db.authenticate(&old.id, &old.starter).await,
        Err(DbError::Unauthorized)
    ));
    assert_eq!(db.state(&old.id).await.unwrap(), RoundState::default());
    assert!(db.state(&live.id).await.unwrap().setup.is_some());
    assert!(db.sweep_expired(100).await.unwrap().is_empty());
}

async fn a_closed_round_goes_with_the_digests_only_it_named(db: &Db) {
    let one = db.create_round(&spec(9_000), 10).await.unwrap();
    let two = db.create_round(&spec(9_000), 10).await.unwrap();
    db.record(&one.id, Kind::Setup, &posted(20, None))
        .await
        .unwrap();
    db.record(&one.id, Kind::Request, &posted(21, Some(3)))
        .await
        .unwrap();
    db.record(&two.id, Kind::Setup, &posted(21, None))
        .await
        .unwrap();
    assert_eq!(db.remove_round(&one.id).await.unwrap(), [Digest([20; 32])]);
    assert!(matches!(
        db.authenticate(&one.id, &one.joiner).await,
        Err(DbError::Unauthorized)
    ));
    assert!(
        db.named_digests()
            .await
            .unwrap()
            .contains(&Digest([21; 32]))
    );
    assert_eq!(db.remove_round(&two.id).await.unwrap(), [Digest([21; 32])]);
    assert!(db.remove_round(&two.id).await.unwrap().is_empty());
    assert!(
        !db.named_digests()
            .await
            .unwrap()
            .contains(&Digest([21; 32]))
    );
}

async fn counts_past_a_database_integer_are_refused(db: &Db) {
    let mut huge = spec(1_000);
    huge.max_rows = u64::MAX;
    assert!(matches!(
        db.create_round(&huge, 10).await,
        Err(DbError::OutOfRange(u64::MAX))
    ));
}

async fn every_scenario(url: &str) {
    let db = Db::connect(url).await.unwrap();
    each_token_opens_its_round_as_its_party_and_nothing_else(&db).await;
    a_message_is_recorded_once_and_a_retry_recognised(&db, url).await;
    expired_rounds_go_with_the_digests_only_they_named(&db).await;
    a_closed_round_goes_with_the_digests_only_it_named(&db).await;
    counts_past_a_database_integer_are_refused(&db).await;
}

#[tokio::test]
async fn on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    every_scenario(&format!("sqlite:{}", dir.path().join("relay.db").display())).await;
}

#[tokio::test]
async fn on_postgresql() {
    let cluster = Cluster::start();
    every_scenario(&cluster.url()).await;
}

#[tokio::test]
async fn an_unreachable_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "postgres:///relay?host={}&user=nobody",
        dir.path().display()
    );
    let error = Db::connect(&url).await.unwrap_err();
    assert!(matches!(error, DbError::Sqlx(_)), "{error}");
    assert!(
        error.to_string().starts_with("the database failed: "),
        "{error}"
    );
}

#[path = "support/postgres.rs"]
mod postgres;
use postgres::Cluster;
