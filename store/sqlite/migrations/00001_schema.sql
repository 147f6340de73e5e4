-- The schema of revisit on SQLite, table for table and index for index the
-- one of store/postgres/migrations (docs/store.md explains the design).
--
-- Storage types: times are INTEGER microseconds since the Unix epoch (UTC),
-- durations INTEGER microseconds, uuids TEXT in canonical form, JSON TEXT,
-- bytes BLOB, booleans INTEGER 0/1.
--
-- SQLite sorts nulls first in ascending order, so "NULLS FIRST" is the
-- column itself and "NULLS LAST" is the pair ((col IS NULL), col); queries
-- (store/internal/grabsql with this store's dialect) use the same
-- expressions so that each policy's order comes out of its index.

-- +goose Up
CREATE TABLE task_type (
    type             TEXT PRIMARY KEY,
    description      TEXT NOT NULL DEFAULT '',
    backend_name     TEXT NOT NULL,
    default_interval INTEGER,
    min_interval     INTEGER,
    max_interval     INTEGER,
    backoff_factor   REAL,
    max_queue_length INTEGER,
    num_retries      INTEGER,
    retry_delay      INTEGER
);

CREATE TABLE lister (
    id                       TEXT PRIMARY KEY,
    name                     TEXT NOT NULL,
    instance_name            TEXT NOT NULL DEFAULT '',
    created                  INTEGER NOT NULL,
    updated                  INTEGER NOT NULL,
    current_state            TEXT NOT NULL DEFAULT '{}',
    last_listing_finished_at INTEGER,
    UNIQUE (name, instance_name)
);

CREATE TABLE visit_stats (
    url                       TEXT NOT NULL,
    visit_type                TEXT NOT NULL,
    last_successful           INTEGER,
    last_visit                INTEGER,
    last_visit_status         TEXT CHECK (last_visit_status IN ('successful', 'failed', 'not_found')),
    last_scheduled            INTEGER,
    last_snapshot             BLOB,
    next_visit_queue_position INTEGER,
    next_position_offset      INTEGER NOT NULL DEFAULT 4,
    successive_visits         INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (url, visit_type)
) WITHOUT ROWID;

CREATE TABLE listed_origin (
    -- id (the rowid) orders ties inside a policy's order (insertion order)
    -- and keeps the policy indexes narrow.
    id                     INTEGER PRIMARY KEY,
    lister_id              TEXT NOT NULL REFERENCES lister (id),
    url                    TEXT NOT NULL,
    visit_type             TEXT NOT NULL,
    extra_loader_arguments TEXT NOT NULL DEFAULT '{}',
    enabled                INTEGER NOT NULL DEFAULT 1,
    first_seen             INTEGER NOT NULL,
    last_seen              INTEGER NOT NULL,
    last_update            INTEGER,
    is_fork                INTEGER,
    forked_from_url        TEXT,
    -- Copy of visit_stats(url, visit_type), kept equal by the store in the
    -- transaction that writes either side.
    last_successful           INTEGER,
    last_visit                INTEGER,
    last_visit_status         TEXT,
    last_scheduled            INTEGER,
    next_visit_queue_position INTEGER,
    UNIQUE (lister_id, url, visit_type)
);

CREATE INDEX listed_origin_origin ON listed_origin (url, visit_type);

-- One index per policy, each in the policy's exact order, ending with id.
CREATE INDEX listed_origin_oldest_scheduled ON listed_origin
    (visit_type, enabled, last_scheduled, id);
CREATE INDEX listed_origin_never_visited ON listed_origin
    (visit_type, enabled, last_update, id)
    WHERE last_successful IS NULL AND last_update IS NOT NULL;
CREATE INDEX listed_origin_lag ON listed_origin
    (visit_type, enabled, (last_update - last_successful) DESC, id)
    WHERE last_update > last_successful;
CREATE INDEX listed_origin_without_last_update ON listed_origin
    (visit_type, enabled, next_visit_queue_position, first_seen, id)
    WHERE last_update IS NULL;
CREATE INDEX listed_origin_stop_after_success ON listed_origin
    (visit_type, enabled, (last_update IS NULL), last_update, first_seen, id)
    WHERE last_visit_status IS NOT 'successful';
-- first_visits_after_listing, and any policy filtered by lister.
CREATE INDEX listed_origin_lister_scheduled ON listed_origin
    (lister_id, visit_type, enabled, last_scheduled, id);

CREATE TABLE queue_position (
    visit_type TEXT PRIMARY KEY,
    position   INTEGER NOT NULL
);

CREATE TABLE scheduler_metrics (
    lister_id                    TEXT NOT NULL REFERENCES lister (id),
    visit_type                   TEXT NOT NULL,
    last_update                  INTEGER NOT NULL,
    origins_known                INTEGER NOT NULL,
    origins_enabled              INTEGER NOT NULL,
    origins_never_visited        INTEGER NOT NULL,
    origins_with_pending_changes INTEGER NOT NULL,
    PRIMARY KEY (lister_id, visit_type)
);

-- +goose Down
DROP TABLE scheduler_metrics;
DROP TABLE queue_position;
DROP TABLE listed_origin;
DROP TABLE visit_stats;
DROP TABLE lister;
DROP TABLE task_type;
