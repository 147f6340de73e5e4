-- The queues of the embedded broker that exist, as in
-- store/postgres/migrations/00018_queue.sql.

-- +goose Up
CREATE TABLE queue (
    name       TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

INSERT INTO queue (name, created_at)
SELECT queue, min(enqueued_at) FROM queue_message GROUP BY queue;

-- +goose Down
DROP TABLE queue;
