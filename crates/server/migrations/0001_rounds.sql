-- One schema for SQLite and PostgreSQL: TEXT and BIGINT only, hex for hashes and digests.
CREATE TABLE rounds (
    id TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    mode TEXT NOT NULL,
    max_rows BIGINT NOT NULL,
    max_bytes BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    starter_hash TEXT NOT NULL,
    joiner_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE messages (
    round_id TEXT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    digest TEXT NOT NULL,
    len BIGINT NOT NULL,
    elements BIGINT,
    PRIMARY KEY (round_id, kind)
);

CREATE INDEX rounds_by_expiry ON rounds (expires_at);
