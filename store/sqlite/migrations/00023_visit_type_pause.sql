-- The paused visit types, as store/postgres/migrations/00023 (paused_at in
-- INTEGER microseconds, as every time here).

-- +goose Up
CREATE TABLE visit_type_pause (
    visit_type TEXT PRIMARY KEY,
    paused_by  TEXT NOT NULL,
    paused_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE visit_type_pause;
