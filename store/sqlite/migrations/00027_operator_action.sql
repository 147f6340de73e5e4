-- The operator's actions, as store/postgres/migrations/00027 (at in
-- INTEGER microseconds, as every time here; answer the JSON text).
-- AUTOINCREMENT: an id is never used again, so that ids keep the order
-- the actions were recorded in.

-- +goose Up
CREATE TABLE operator_action (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,
    done_by TEXT NOT NULL,
    action  TEXT NOT NULL,
    target  TEXT NOT NULL,
    answer  TEXT NOT NULL
);
CREATE INDEX operator_action_at ON operator_action (at);

-- +goose Down
DROP TABLE operator_action;
