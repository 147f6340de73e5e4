-- Origins waiting for the result of a visit leave listed_origin for
-- listed_origin_pending (docs/store.md, "Pending origins"). A grab moves
-- its picks there: a DELETE only stamps each row as dead, so it writes no
-- entry in listed_origin's eight indexes, and later grabs no longer step
-- over the visits in flight at the head of every policy's order. A result
-- (or a released or lost visit) moves the rows back with their new stats;
-- a grab whose cooldowns would make a pending origin eligible moves it back
-- first, so every grab stays exact.
--
-- While an origin is pending, its last_scheduled lives on its pending rows
-- (visit_stats keeps the value from before the grab until the origin comes
-- back). listed_origin_all is every listed origin, wherever it sits.

-- +goose Up
-- The same columns in the same order (moves copy whole rows), without
-- listed_origin's identity: a row keeps its id wherever it sits.
CREATE TABLE listed_origin_pending (LIKE listed_origin INCLUDING DEFAULTS);
-- The key in this order also finds an origin's rows of every lister.
ALTER TABLE listed_origin_pending ADD PRIMARY KEY (url, visit_type, lister_id);

-- Pending origins whose cooldowns end first (the grab's requeue step).
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled);
-- Pending origins visited after their mark (a clock set back): eligible at
-- once under the scheduled cooldown, so the requeue step finds them here.
CREATE INDEX listed_origin_pending_visited ON listed_origin_pending (visit_type)
    WHERE last_scheduled < last_visit;

CREATE VIEW listed_origin_all AS
    SELECT id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen,
        last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status,
        last_scheduled, next_visit_queue_position
    FROM listed_origin
    UNION ALL
    SELECT id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen,
        last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status,
        last_scheduled, next_visit_queue_position
    FROM listed_origin_pending;

-- +goose Down
-- Pending origins go back, their marks folded into visit_stats.
INSERT INTO visit_stats AS vs (url, visit_type, last_scheduled)
    SELECT url, visit_type, max(last_scheduled) FROM listed_origin_pending GROUP BY url, visit_type
    ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled = GREATEST(vs.last_scheduled, EXCLUDED.last_scheduled);
INSERT INTO listed_origin OVERRIDING SYSTEM VALUE SELECT * FROM listed_origin_pending;
DROP VIEW listed_origin_all;
DROP TABLE listed_origin_pending;
