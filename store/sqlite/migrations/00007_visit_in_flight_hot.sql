-- The same index as the PostgreSQL migration of this number: expiry and
-- forgetting find their visits through (visit_type, scheduled_at), since a
-- visit is never sent before it is scheduled. (SQLite has no HOT updates to
-- gain; the two engines keep the same indexes and queries.)

-- +goose Up
DROP INDEX visit_in_flight_state;
CREATE INDEX visit_in_flight_scheduled ON visit_in_flight (visit_type, scheduled_at);

-- +goose Down
DROP INDEX visit_in_flight_scheduled;
CREATE INDEX visit_in_flight_state ON visit_in_flight (visit_type, state, sent_at);
