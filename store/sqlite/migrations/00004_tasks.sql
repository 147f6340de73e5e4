-- Generic tasks (semantics.md §8), table for table and index for index the
-- PostgreSQL migration of the same number. Arguments are the canonical JSON
-- text revisit.TaskArguments.JSON writes, so that equal arguments are equal
-- texts.

-- +goose Up
ALTER TABLE task_type ADD COLUMN run_timeout INTEGER;

CREATE TABLE task (
    id               INTEGER PRIMARY KEY,
    type             TEXT NOT NULL REFERENCES task_type (type),
    arguments        TEXT NOT NULL,
    next_run         INTEGER NOT NULL,
    current_interval INTEGER,
    status           TEXT NOT NULL CHECK (status IN
        ('next_run_not_scheduled', 'next_run_scheduled', 'completed', 'disabled')),
    policy           TEXT NOT NULL CHECK (policy IN ('oneshot', 'recurring')),
    retries_left     INTEGER NOT NULL DEFAULT 0 CHECK (retries_left >= 0),
    priority         TEXT CHECK (priority IN ('high', 'normal', 'low'))
);

CREATE INDEX task_ready ON task (type, next_run, id)
    WHERE status = 'next_run_not_scheduled' AND priority IS NULL;
CREATE INDEX task_ready_priority ON task
    (type, (CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END), next_run, id)
    WHERE status = 'next_run_not_scheduled' AND priority IS NOT NULL;
CREATE INDEX task_active_arguments ON task (type, arguments)
    WHERE status IN ('next_run_not_scheduled', 'next_run_scheduled');
CREATE INDEX task_finished_oneshot ON task (id)
    WHERE policy = 'oneshot' AND status IN ('completed', 'disabled');

CREATE TABLE task_run (
    id         INTEGER PRIMARY KEY,
    task       INTEGER NOT NULL REFERENCES task (id),
    backend_id TEXT NOT NULL UNIQUE,
    scheduled  INTEGER,
    started    INTEGER,
    ended      INTEGER,
    metadata   TEXT NOT NULL DEFAULT '{}',
    status     TEXT NOT NULL CHECK (status IN
        ('scheduled', 'started', 'eventful', 'uneventful', 'failed', 'permfailed', 'lost'))
);

CREATE INDEX task_run_task ON task_run (task, id);
CREATE INDEX task_run_in_flight ON task_run ((coalesce(started, scheduled)))
    WHERE status IN ('scheduled', 'started');
CREATE INDEX task_run_ended ON task_run (ended) WHERE ended IS NOT NULL;

-- +goose Down
DROP TABLE task_run;
DROP TABLE task;
ALTER TABLE task_type DROP COLUMN run_timeout;
