-- The schema of revisit on PostgreSQL. docs/store.md explains the design:
-- Text keys use the "C" collation: byte order, as on SQLite, and cheaper.
-- listed_origin carries a copy of the visit stats that the policies read, so
-- that every policy of grab_next_visits is one index-ordered scan.

-- +goose Up
CREATE TABLE task_type (
    type             text PRIMARY KEY,
    description      text NOT NULL DEFAULT '',
    backend_name     text NOT NULL,
    default_interval interval,
    min_interval     interval,
    max_interval     interval,
    backoff_factor   double precision,
    max_queue_length bigint,
    num_retries      bigint,
    retry_delay      interval
);

CREATE TABLE lister (
    id                       uuid PRIMARY KEY,
    name                     text NOT NULL,
    instance_name            text NOT NULL DEFAULT '',
    created                  timestamptz NOT NULL,
    updated                  timestamptz NOT NULL,
    current_state            jsonb NOT NULL DEFAULT '{}',
    last_listing_finished_at timestamptz,
    UNIQUE (name, instance_name)
);

CREATE TABLE visit_stats (
    url                       text COLLATE "C" NOT NULL,
    visit_type                text COLLATE "C" NOT NULL,
    last_successful           timestamptz,
    last_visit                timestamptz,
    last_visit_status         text CHECK (last_visit_status IN ('successful', 'failed', 'not_found')),
    last_scheduled            timestamptz,
    last_snapshot             bytea,
    next_visit_queue_position bigint,
    next_position_offset      integer NOT NULL DEFAULT 4,
    successive_visits         integer NOT NULL DEFAULT 1,
    PRIMARY KEY (url, visit_type)
) WITH (fillfactor = 90); -- room for HOT updates: only the key is indexed

CREATE TABLE listed_origin (
    -- id orders ties inside a policy's order (insertion order) and keeps the
    -- policy indexes narrow.
    id                     bigint GENERATED ALWAYS AS IDENTITY,
    lister_id              uuid NOT NULL REFERENCES lister (id),
    url                    text COLLATE "C" NOT NULL,
    visit_type             text COLLATE "C" NOT NULL,
    extra_loader_arguments jsonb NOT NULL DEFAULT '{}',
    enabled                boolean NOT NULL DEFAULT true,
    first_seen             timestamptz NOT NULL,
    last_seen              timestamptz NOT NULL,
    last_update            timestamptz,
    is_fork                boolean,
    forked_from_url        text,
    -- Copy of visit_stats(url, visit_type), kept equal by the store in the
    -- transaction that writes either side.
    last_successful           timestamptz,
    last_visit                timestamptz,
    last_visit_status         text,
    last_scheduled            timestamptz,
    next_visit_queue_position bigint,
    PRIMARY KEY (lister_id, url, visit_type)
) WITH (fillfactor = 90);

CREATE INDEX listed_origin_origin ON listed_origin (url, visit_type);

-- One index per policy, each in the policy's exact order, ending with id.
CREATE INDEX listed_origin_oldest_scheduled ON listed_origin
    (visit_type, enabled, last_scheduled NULLS FIRST, id);
CREATE INDEX listed_origin_never_visited ON listed_origin
    (visit_type, enabled, last_update, id)
    WHERE last_successful IS NULL AND last_update IS NOT NULL;
CREATE INDEX listed_origin_lag ON listed_origin
    (visit_type, enabled, (last_update - last_successful) DESC, id)
    WHERE last_update > last_successful;
CREATE INDEX listed_origin_without_last_update ON listed_origin
    (visit_type, enabled, next_visit_queue_position NULLS FIRST, first_seen, id)
    WHERE last_update IS NULL;
CREATE INDEX listed_origin_stop_after_success ON listed_origin
    (visit_type, enabled, last_update NULLS LAST, first_seen, id)
    WHERE last_visit_status IS DISTINCT FROM 'successful';
-- first_visits_after_listing, and any policy filtered by lister.
CREATE INDEX listed_origin_lister_scheduled ON listed_origin
    (lister_id, visit_type, enabled, last_scheduled NULLS FIRST, id);

CREATE TABLE queue_position (
    visit_type text PRIMARY KEY,
    position   bigint NOT NULL
);

CREATE TABLE scheduler_metrics (
    lister_id                    uuid NOT NULL REFERENCES lister (id),
    visit_type                   text NOT NULL,
    last_update                  timestamptz NOT NULL,
    origins_known                bigint NOT NULL,
    origins_enabled              bigint NOT NULL,
    origins_never_visited        bigint NOT NULL,
    origins_with_pending_changes bigint NOT NULL,
    PRIMARY KEY (lister_id, visit_type)
);

-- +goose Down
DROP TABLE scheduler_metrics;
DROP TABLE queue_position;
DROP TABLE listed_origin;
DROP TABLE visit_stats;
DROP TABLE lister;
DROP TABLE task_type;
