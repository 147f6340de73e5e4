-- The head of a policy's order gathers origins in the failed and not-found
-- cooldowns: an origin whose last visit failed or found nothing keeps its
-- place in never_visited_oldest_update_first, already_visited_order_by_lag,
-- origins_without_last_update and stop_after_success, and results keep
-- adding more. A grab read each of those rows to find it ineligible:
-- 900–7,200 rows a git grab on the 10M set, more than half of the
-- candidate query's time (docs/store.md, "Cooldowns checked in the
-- index").
--
-- Those four indexes now end with the last visit's time when it failed, or
-- when it found nothing, and '-infinity' otherwise. The grab compares them
-- with the cooldowns' bounds (the PostgreSQL dialect's StatusCooldown), a
-- condition the index scan checks on each entry, so the rows in cooldown
-- are skipped in the index. The columns come after id: the order is the
-- same.

-- +goose Up
DROP INDEX listed_origin_never_visited;
CREATE INDEX listed_origin_never_visited ON listed_origin
    (visit_type, enabled, last_update, id,
     (CASE last_visit_status WHEN 'failed' THEN last_visit ELSE '-infinity' END),
     (CASE last_visit_status WHEN 'not_found' THEN last_visit ELSE '-infinity' END))
    WHERE last_successful IS NULL AND last_update IS NOT NULL;
DROP INDEX listed_origin_lag;
CREATE INDEX listed_origin_lag ON listed_origin
    (visit_type, enabled, (last_update - last_successful) DESC, id,
     (CASE last_visit_status WHEN 'failed' THEN last_visit ELSE '-infinity' END),
     (CASE last_visit_status WHEN 'not_found' THEN last_visit ELSE '-infinity' END))
    WHERE last_update > last_successful;
DROP INDEX listed_origin_without_last_update;
CREATE INDEX listed_origin_without_last_update ON listed_origin
    (visit_type, enabled, next_visit_queue_position NULLS FIRST, first_seen, id,
     (CASE last_visit_status WHEN 'failed' THEN last_visit ELSE '-infinity' END),
     (CASE last_visit_status WHEN 'not_found' THEN last_visit ELSE '-infinity' END))
    WHERE last_update IS NULL;
DROP INDEX listed_origin_stop_after_success;
CREATE INDEX listed_origin_stop_after_success ON listed_origin
    (visit_type, enabled, last_update NULLS LAST, first_seen, id,
     (CASE last_visit_status WHEN 'failed' THEN last_visit ELSE '-infinity' END),
     (CASE last_visit_status WHEN 'not_found' THEN last_visit ELSE '-infinity' END))
    WHERE last_visit_status IS DISTINCT FROM 'successful';

-- +goose Down
DROP INDEX listed_origin_never_visited;
CREATE INDEX listed_origin_never_visited ON listed_origin
    (visit_type, enabled, last_update, id)
    WHERE last_successful IS NULL AND last_update IS NOT NULL;
DROP INDEX listed_origin_lag;
CREATE INDEX listed_origin_lag ON listed_origin
    (visit_type, enabled, (last_update - last_successful) DESC, id)
    WHERE last_update > last_successful;
DROP INDEX listed_origin_without_last_update;
CREATE INDEX listed_origin_without_last_update ON listed_origin
    (visit_type, enabled, next_visit_queue_position NULLS FIRST, first_seen, id)
    WHERE last_update IS NULL;
DROP INDEX listed_origin_stop_after_success;
CREATE INDEX listed_origin_stop_after_success ON listed_origin
    (visit_type, enabled, last_update NULLS LAST, first_seen, id)
    WHERE last_visit_status IS DISTINCT FROM 'successful';
