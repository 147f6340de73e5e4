-- The same columns as store/postgres/migrations/00020: the prefix of the
-- queues of a lister's first visits, and when every origin of its last
-- listing had been scheduled (INTEGER microseconds, as every time here).

-- +goose Up
ALTER TABLE lister ADD COLUMN first_visits_queue_prefix TEXT;
ALTER TABLE lister ADD COLUMN first_visits_scheduled_at INTEGER;

-- +goose Down
ALTER TABLE lister DROP COLUMN first_visits_scheduled_at;
ALTER TABLE lister DROP COLUMN first_visits_queue_prefix;
