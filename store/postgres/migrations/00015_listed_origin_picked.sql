-- A grab that answers a caller (GrabNextVisits) no longer moves its picks
-- to listed_origin_pending before it returns: moving 1000 rows was about
-- half of a grab's time on the 10M set (7–9 ms of ~15). It records each
-- pick here instead, a narrow row the candidate queries anti-join by id,
-- and the rows move to the pending table after
-- the grab has returned: in the background, or first thing in the next
-- statement that looks pending origins up (docs/store.md, "Picks set
-- aside").
--
-- Only the picks of origins that one lister lists are set aside: an
-- origin's other rows would otherwise stay eligible under other ids.

-- +goose Up
CREATE TABLE listed_origin_picked (
    -- listed_origin.id of the picked row, which the candidate queries probe.
    id           bigint PRIMARY KEY,
    -- The row's address when picked, by which it moves (checked by URL and
    -- visit type, and looked up by URL if it has moved since).
    tid          tid NOT NULL,
    url          text COLLATE "C" NOT NULL,
    visit_type   text COLLATE "C" NOT NULL,
    scheduled_at timestamptz NOT NULL
);

-- +goose Down
-- The picks go where a grab of the earlier schema would have put them.
WITH k AS (
    DELETE FROM listed_origin_picked RETURNING id, scheduled_at
), moved AS (
    DELETE FROM listed_origin l USING k WHERE l.id = k.id
    RETURNING l.*, k.scheduled_at
)
INSERT INTO listed_origin_pending (id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen,
    last_seen, last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status,
    last_scheduled, next_visit_queue_position, shared)
SELECT id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen,
    last_seen, last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status,
    GREATEST(last_scheduled, scheduled_at), next_visit_queue_position, shared
FROM moved;
DROP TABLE listed_origin_picked;
