-- In-flight visits and leases, as store/postgres/migrations/00003_visits.sql
-- (times are INTEGER microseconds, uuids TEXT).

-- +goose Up
CREATE TABLE visit_in_flight (
    id             TEXT PRIMARY KEY,
    url            TEXT NOT NULL,
    visit_type     TEXT NOT NULL,
    lister_id      TEXT NOT NULL,
    policy         TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'lost')),
    scheduled_at   INTEGER NOT NULL,
    sent_at        INTEGER,
    prev_scheduled INTEGER,
    owner          TEXT NOT NULL
) WITHOUT ROWID;

CREATE INDEX visit_in_flight_state ON visit_in_flight (visit_type, state, sent_at);

CREATE TABLE lease (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE lease;
DROP TABLE visit_in_flight;
