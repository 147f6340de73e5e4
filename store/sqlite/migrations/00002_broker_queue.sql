-- The queues of the embedded broker, table for table and index for index
-- the one of store/postgres/migrations/00002_broker_queue.sql (which
-- explains them). Times are INTEGER microseconds since the Unix epoch (UTC),
-- JSON is TEXT, booleans INTEGER 0/1.

-- +goose Up
CREATE TABLE queue_message (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    queue            TEXT NOT NULL,
    task             TEXT NOT NULL,
    headers          TEXT NOT NULL,
    body             TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'leased', 'done')),
    attempt          INTEGER NOT NULL DEFAULT 0,
    enqueued_at      INTEGER NOT NULL,
    worker           TEXT,
    lease_expires_at INTEGER,
    result           TEXT,
    completed_at     INTEGER,
    result_acked     INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX queue_message_ready ON queue_message (queue, seq) WHERE state = 'ready';
CREATE INDEX queue_message_leased ON queue_message (queue, lease_expires_at) WHERE state = 'leased';
CREATE INDEX queue_message_results ON queue_message (completed_at, id) WHERE state = 'done' AND result_acked = 0;
CREATE INDEX queue_message_done ON queue_message (completed_at, id) WHERE state = 'done';

-- +goose Down
DROP TABLE queue_message;
