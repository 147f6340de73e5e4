-- In-flight visits (semantics.md §6) and leases (one orchestrator per visit
-- type). docs/orchestrator.md explains how they make a round crash-safe.

-- +goose Up
CREATE TABLE visit_in_flight (
    id             uuid PRIMARY KEY,           -- the message id
    url            text COLLATE "C" NOT NULL,
    visit_type     text COLLATE "C" NOT NULL,
    lister_id      uuid NOT NULL,
    policy         text NOT NULL,
    state          text NOT NULL CHECK (state IN ('pending', 'sent', 'lost')),
    scheduled_at   timestamptz NOT NULL,
    sent_at        timestamptz,
    -- The origin's last_scheduled before this visit marked it, restored
    -- when the visit is released or lost.
    prev_scheduled timestamptz,
    owner          text NOT NULL
);

-- Recovery (pending), expiry (sent, oldest first) and counts per visit type.
CREATE INDEX visit_in_flight_state ON visit_in_flight (visit_type, state, sent_at);

CREATE TABLE lease (
    name       text PRIMARY KEY,
    owner      text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE lease;
DROP TABLE visit_in_flight;
