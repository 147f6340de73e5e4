-- A lister's first visits (Software Heritage's get_or_create_lister and
-- update_lister carry them): the prefix of the queues its origins' first
-- visits go to, and when every origin of its last listing had been
-- scheduled. Both are null for the listers that predate them.

-- +goose Up
ALTER TABLE lister ADD COLUMN first_visits_queue_prefix text,
    ADD COLUMN first_visits_scheduled_at timestamptz;

-- +goose Down
ALTER TABLE lister DROP COLUMN first_visits_scheduled_at,
    DROP COLUMN first_visits_queue_prefix;
