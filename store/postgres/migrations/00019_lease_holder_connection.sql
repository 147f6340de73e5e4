-- The connection of a lease's holder: the pid and start time of the
-- backend of a connection the holding store keeps open (presence.go). A
-- holder whose backend is gone (its process died, on whatever host) frees
-- its leases at once instead of when they expire.

-- +goose Up
ALTER TABLE lease ADD COLUMN holder_pid integer, ADD COLUMN holder_since timestamptz;

-- +goose Down
ALTER TABLE lease DROP COLUMN holder_pid, DROP COLUMN holder_since;
