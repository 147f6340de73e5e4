-- The same column and indexes as the PostgreSQL migration of this number:
-- lost visits have an index of their own, so that expiry, at every round,
-- no longer reads every lost visit kept within the lost retention.

-- +goose Up
ALTER TABLE visit_in_flight ADD COLUMN lost_at INTEGER;
UPDATE visit_in_flight SET lost_at = sent_at WHERE state = 'lost';
CREATE INDEX visit_in_flight_open ON visit_in_flight (visit_type, scheduled_at) WHERE lost_at IS NULL;
CREATE INDEX visit_in_flight_lost ON visit_in_flight (visit_type, scheduled_at) WHERE lost_at IS NOT NULL;
DROP INDEX visit_in_flight_scheduled;

-- +goose Down
CREATE INDEX visit_in_flight_scheduled ON visit_in_flight (visit_type, scheduled_at);
DROP INDEX visit_in_flight_lost;
DROP INDEX visit_in_flight_open;
ALTER TABLE visit_in_flight DROP COLUMN lost_at;
