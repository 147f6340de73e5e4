-- The queues of the embedded broker that exist: publishing into a queue
-- creates it, deleting the queue removes it. A worker leasing from a queue
-- that is neither here nor a task type's is told that it does not exist,
-- rather than waiting on it forever.

-- +goose Up
CREATE TABLE queue (
    name       text PRIMARY KEY,
    created_at timestamptz NOT NULL
);

INSERT INTO queue (name, created_at)
SELECT queue, min(enqueued_at) FROM queue_message GROUP BY queue;

-- +goose Down
DROP TABLE queue;
