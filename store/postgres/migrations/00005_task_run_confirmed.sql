-- When the broker confirmed the message of a task run (store/tasks.go,
-- TaskRunsConfirm). The runner records its runs unconfirmed (confirmed
-- NULL) before publishing and confirms them once the broker has; after a
-- crash, TaskRunsRecoverUnconfirmed removes the unconfirmed runs that have
-- not started and makes their tasks due again, so that nothing waits for
-- the run timeout. A started run counts as confirmed (its start sets
-- confirmed).
--
-- Adding a nullable column rewrites nothing; only the runs in flight are
-- updated, through the task_run_in_flight index, so that recovery leaves
-- them alone: they were confirmed or ended by the runner that recorded
-- them. Ended runs of earlier versions keep NULL (not known).

-- +goose Up
ALTER TABLE task_run ADD COLUMN confirmed timestamptz;
UPDATE task_run SET confirmed = coalesce(started, scheduled) WHERE status IN ('scheduled', 'started');
-- Runs waiting for their confirm, for recovery.
CREATE INDEX task_run_unconfirmed ON task_run (task) WHERE confirmed IS NULL AND status = 'scheduled';

-- +goose Down
DROP INDEX task_run_unconfirmed;
ALTER TABLE task_run DROP COLUMN confirmed;
