-- The same columns as store/postgres/migrations/00019: the backend of a
-- lease holder's presence connection. The embedded store serves one
-- process, whose leases a restart takes over by the holder's PID
-- (internal/kit/holder); the columns stay empty here.

-- +goose Up
ALTER TABLE lease ADD COLUMN holder_pid INTEGER;
ALTER TABLE lease ADD COLUMN holder_since INTEGER;

-- +goose Down
ALTER TABLE lease DROP COLUMN holder_pid;
ALTER TABLE lease DROP COLUMN holder_since;
