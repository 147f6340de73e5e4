-- The priority of a queued message (the AMQP priority property of a Celery
-- message, 0 to 255; a visit sent by an operator has 9): a lease takes the
-- ready messages of higher priority first, then in enqueue order, so that
-- "visit now" does not wait behind the whole queue. The ready index orders
-- the ready messages that way, so that a lease still reads the first rows
-- of an index.

-- +goose Up
ALTER TABLE queue_message ADD COLUMN priority smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 255);
DROP INDEX queue_message_ready;
CREATE INDEX queue_message_ready ON queue_message (queue, priority DESC, seq) WHERE state = 'ready';

-- +goose Down
DROP INDEX queue_message_ready;
CREATE INDEX queue_message_ready ON queue_message (queue, seq) WHERE state = 'ready';
ALTER TABLE queue_message DROP COLUMN priority;
