-- Expiry walked every lost visit still within the lost retention, at every
-- round: they sat in (visit_type, scheduled_at) beside the visits in
-- flight, and it read each one to see its state. With a million lost
-- visits kept (a worker outage), each round's expiry took ~200 ms and
-- expired nothing. Lost visits now have an index of their own, and the
-- visits in flight another.
--
-- The indexes key on lost_at, set once when a visit is declared lost, and
-- not on state: marking a visit sent changes state and sent_at, which no
-- index reads, so that it stays an in-place (HOT) update (00007).

-- +goose Up
ALTER TABLE visit_in_flight ADD COLUMN lost_at timestamptz;
UPDATE visit_in_flight SET lost_at = sent_at WHERE state = 'lost';
CREATE INDEX visit_in_flight_open ON visit_in_flight (visit_type, scheduled_at) WHERE lost_at IS NULL;
CREATE INDEX visit_in_flight_lost ON visit_in_flight (visit_type, scheduled_at) WHERE lost_at IS NOT NULL;
DROP INDEX visit_in_flight_scheduled;

-- +goose Down
CREATE INDEX visit_in_flight_scheduled ON visit_in_flight (visit_type, scheduled_at);
DROP INDEX visit_in_flight_lost;
DROP INDEX visit_in_flight_open;
ALTER TABLE visit_in_flight DROP COLUMN lost_at;
