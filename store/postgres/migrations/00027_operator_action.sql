-- The operator's actions (OperatorActionRecord): each change an operator
-- made from the console or the CLI, who made it, to what, and what came
-- of it (answer, a small JSON object). Listed newest first by id;
-- recording one deletes those done more than 90 days before it, through
-- the index on at.

-- +goose Up
CREATE TABLE operator_action (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL,
    done_by text NOT NULL,
    action  text NOT NULL,
    target  text NOT NULL,
    answer  jsonb NOT NULL
);
CREATE INDEX operator_action_at ON operator_action (at);

-- +goose Down
DROP TABLE operator_action;
