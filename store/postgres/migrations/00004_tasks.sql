-- Generic tasks (semantics.md §8): tasks of a task type, oneshot or
-- recurring, and their runs. store/postgres/tasks.go holds the queries.

-- +goose Up
ALTER TABLE task_type ADD COLUMN run_timeout interval;

CREATE TABLE task (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type             text NOT NULL REFERENCES task_type (type),
    arguments        jsonb NOT NULL,
    next_run         timestamptz NOT NULL,
    current_interval interval,
    status           text NOT NULL CHECK (status IN
        ('next_run_not_scheduled', 'next_run_scheduled', 'completed', 'disabled')),
    policy           text NOT NULL CHECK (policy IN ('oneshot', 'recurring')),
    retries_left     bigint NOT NULL DEFAULT 0 CHECK (retries_left >= 0),
    priority         text CHECK (priority IN ('high', 'normal', 'low'))
);

-- Ready tasks, in the order peek and grab take them.
CREATE INDEX task_ready ON task (type, next_run, id)
    WHERE status = 'next_run_not_scheduled' AND priority IS NULL;
CREATE INDEX task_ready_priority ON task
    (type, (CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END), next_run, id)
    WHERE status = 'next_run_not_scheduled' AND priority IS NOT NULL;
-- De-duplication of created tasks against the active ones.
CREATE INDEX task_active_arguments ON task (type, md5(arguments::text))
    WHERE status IN ('next_run_not_scheduled', 'next_run_scheduled');
-- Retention of finished oneshot tasks.
CREATE INDEX task_finished_oneshot ON task (id)
    WHERE policy = 'oneshot' AND status IN ('completed', 'disabled');

CREATE TABLE task_run (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task       bigint NOT NULL REFERENCES task (id),
    backend_id text NOT NULL UNIQUE,
    scheduled  timestamptz,
    started    timestamptz,
    ended      timestamptz,
    metadata   jsonb NOT NULL DEFAULT '{}',
    status     text NOT NULL CHECK (status IN
        ('scheduled', 'started', 'eventful', 'uneventful', 'failed', 'permfailed', 'lost'))
);

CREATE INDEX task_run_task ON task_run (task, id);
-- Runs in flight, by their last news, for wedged-run recovery.
CREATE INDEX task_run_in_flight ON task_run ((coalesce(started, scheduled)))
    WHERE status IN ('scheduled', 'started');
-- Retention of finished runs.
CREATE INDEX task_run_ended ON task_run (ended) WHERE ended IS NOT NULL;

-- +goose Down
DROP TABLE task_run;
DROP TABLE task;
ALTER TABLE task_type DROP COLUMN run_timeout;
