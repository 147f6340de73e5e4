-- The visit types an operator paused from the console (VisitTypePauseSet):
-- the orchestrator's loop of a visit type listed here runs no round, in
-- any process, until the row is deleted (VisitTypePauseClear). One row a
-- paused visit type, with who paused it and when.

-- +goose Up
CREATE TABLE visit_type_pause (
    visit_type text COLLATE "C" PRIMARY KEY,
    paused_by  text NOT NULL,
    paused_at  timestamptz NOT NULL
);

-- +goose Down
DROP TABLE visit_type_pause;
