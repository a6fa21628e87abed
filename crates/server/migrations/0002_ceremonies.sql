-- Ceremonies: one row each, its turn and head in the row, changed only under its version (every
-- transition reads the row, decides, and updates it where the version is still the one read).
CREATE TABLE ceremonies (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    power BIGINT NOT NULL,
    turn_secs BIGINT NOT NULL,
    open_slots BIGINT NOT NULL,
    phase TEXT NOT NULL,
    version BIGINT NOT NULL,
    next_ticket BIGINT NOT NULL,
    head_index BIGINT NOT NULL,
    head_digest TEXT,
    head_len BIGINT,
    initial_digest TEXT,
    initial_len BIGINT,
    r1cs_digest TEXT,
    r1cs_len BIGINT,
    phase1_digest TEXT,
    phase1_len BIGINT,
    turn_holder BIGINT,
    turn_deadline BIGINT,
    turn_verifying BIGINT NOT NULL,
    beacon TEXT,
    iterations BIGINT,
    sealed_digest TEXT,
    sealed_len BIGINT,
    sealed_vk_digest TEXT,
    sealed_vk_len BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE participants (
    ceremony_id TEXT NOT NULL REFERENCES ceremonies (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    ticket BIGINT,
    reason TEXT,
    PRIMARY KEY (ceremony_id, seq),
    UNIQUE (ceremony_id, name),
    UNIQUE (ceremony_id, token_hash)
);

CREATE TABLE contributions (
    ceremony_id TEXT NOT NULL REFERENCES ceremonies (id) ON DELETE CASCADE,
    idx BIGINT NOT NULL,
    participant TEXT NOT NULL,
    digest TEXT NOT NULL,
    len BIGINT NOT NULL,
    hash TEXT NOT NULL,
    verify_ms BIGINT NOT NULL,
    accepted_at BIGINT NOT NULL,
    PRIMARY KEY (ceremony_id, idx)
);
