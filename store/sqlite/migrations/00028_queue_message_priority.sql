-- The priority of a queued message, as in
-- store/postgres/migrations/00028_queue_message_priority.sql.

-- +goose Up
ALTER TABLE queue_message ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 255);
DROP INDEX queue_message_ready;
CREATE INDEX queue_message_ready ON queue_message (queue, priority DESC, seq) WHERE state = 'ready';

-- +goose Down
DROP INDEX queue_message_ready;
CREATE INDEX queue_message_ready ON queue_message (queue, seq) WHERE state = 'ready';
ALTER TABLE queue_message DROP COLUMN priority;
