-- The queues of the embedded broker (broker/embedded, wire.md §4): one row
-- per task message, from enqueue until its result is consumed and trimmed.
--
-- state: ready (leasable), leased (to worker until lease_expires_at; an
-- expired lease is leasable again), done (result stored). seq orders the
-- messages as they were enqueued, batch order included. Each lease
-- increments attempt. result_acked is set once the event stream consumed
-- the result. Partial indexes make each access an index scan: leasing
-- (oldest ready messages, expired leases), depth, the unconsumed results
-- in completion order, and trimming consumed ones.

-- +goose Up
CREATE TABLE queue_message (
    id               text COLLATE "C" PRIMARY KEY,
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    queue            text COLLATE "C" NOT NULL,
    task             text NOT NULL,
    headers          jsonb NOT NULL,
    body             text NOT NULL,
    state            text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'leased', 'done')),
    attempt          integer NOT NULL DEFAULT 0,
    enqueued_at      timestamptz NOT NULL,
    worker           text,
    lease_expires_at timestamptz,
    result           jsonb,
    completed_at     timestamptz,
    result_acked     boolean NOT NULL DEFAULT false
);

CREATE INDEX queue_message_ready ON queue_message (queue, seq) WHERE state = 'ready';
CREATE INDEX queue_message_leased ON queue_message (queue, lease_expires_at) WHERE state = 'leased';
CREATE INDEX queue_message_results ON queue_message (completed_at, id) WHERE state = 'done' AND NOT result_acked;
CREATE INDEX queue_message_done ON queue_message (completed_at, id) WHERE state = 'done';

-- +goose Down
DROP TABLE queue_message;
