-- When the broker confirmed the message of a task run, as the PostgreSQL
-- migration of the same number explains: NULL while a run the runner
-- recorded before publishing waits for its confirm.

-- +goose Up
ALTER TABLE task_run ADD COLUMN confirmed INTEGER;
UPDATE task_run SET confirmed = coalesce(started, scheduled) WHERE status IN ('scheduled', 'started');
CREATE INDEX task_run_unconfirmed ON task_run (task) WHERE confirmed IS NULL AND status = 'scheduled';

-- +goose Down
DROP INDEX task_run_unconfirmed;
ALTER TABLE task_run DROP COLUMN confirmed;
