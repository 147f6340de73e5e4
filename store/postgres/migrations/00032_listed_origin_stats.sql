-- The visit stats of a listed origin live on its listed rows only
-- (docs/store.md, "Where an origin's stats live"): a result writes one row
-- an origin (one a lister, for the few that several listers list) where it
-- wrote its visit_stats row and then its copy onto the listed rows.
-- visit_stats keeps the stats of the origins that no lister lists.
--
-- The listed rows gain the stats columns they did not copy. A row has
-- stats when its next_position_offset is set: a result wrote them, or a
-- grab marked it. Rows are never deleted from the two
-- tables together, so an origin once listed keeps its stats there.
--
-- The UPDATE rewrites every listed row that has stats and each of its
-- index entries: on the 10M bench set, minutes, with listed_origin locked.

-- +goose Up
ALTER TABLE listed_origin
    ADD COLUMN last_snapshot bytea,
    ADD COLUMN next_position_offset integer,
    ADD COLUMN successive_visits integer,
    ADD COLUMN recent bytea;
-- A pending row also keeps the last_scheduled of the origin's stats from
-- before its grab's mark, which an operator's visit gives back when
-- released or lost.
ALTER TABLE listed_origin_pending
    ADD COLUMN last_snapshot bytea,
    ADD COLUMN next_position_offset integer,
    ADD COLUMN successive_visits integer,
    ADD COLUMN recent bytea,
    ADD COLUMN stats_scheduled timestamptz;

-- A pending row keeps the mark of its grab, later than the stats' own. A
-- marked origin has stats (its next_position_offset is set).
UPDATE listed_origin lo SET last_successful = vs.last_successful, last_visit = vs.last_visit,
    last_visit_status = vs.last_visit_status, last_scheduled = vs.last_scheduled,
    last_snapshot = vs.last_snapshot, next_visit_queue_position = vs.next_visit_queue_position,
    next_position_offset = vs.next_position_offset, successive_visits = vs.successive_visits, recent = vs.recent
FROM visit_stats vs WHERE vs.url = lo.url AND vs.visit_type = lo.visit_type;
UPDATE listed_origin_pending p SET last_successful = vs.last_successful, last_visit = vs.last_visit,
    last_visit_status = vs.last_visit_status, last_scheduled = GREATEST(p.last_scheduled, vs.last_scheduled),
    last_snapshot = vs.last_snapshot, next_visit_queue_position = vs.next_visit_queue_position,
    next_position_offset = vs.next_position_offset, successive_visits = vs.successive_visits, recent = vs.recent,
    stats_scheduled = vs.last_scheduled
FROM visit_stats vs WHERE vs.url = p.url AND vs.visit_type = p.visit_type;
UPDATE listed_origin_pending SET next_position_offset = 4 WHERE next_position_offset IS NULL;
DELETE FROM visit_stats vs WHERE EXISTS (SELECT FROM listed_origin lo WHERE lo.url = vs.url AND lo.visit_type = vs.visit_type)
    OR EXISTS (SELECT FROM listed_origin_pending p WHERE p.url = vs.url AND p.visit_type = vs.visit_type);

-- +goose Down
-- Every origin with stats gets its visit_stats row back, from its listed
-- rows: a pending origin's with the last_scheduled from before its grab,
-- whose mark stays on its pending rows.
INSERT INTO visit_stats (url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled,
    last_snapshot, next_visit_queue_position, next_position_offset, successive_visits, recent)
SELECT DISTINCT ON (url, visit_type) url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled,
    last_snapshot, next_visit_queue_position, next_position_offset, COALESCE(successive_visits, 1), recent
FROM (SELECT url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, last_snapshot,
        next_visit_queue_position, next_position_offset, successive_visits, recent FROM listed_origin
    UNION ALL
    SELECT url, visit_type, last_successful, last_visit, last_visit_status, stats_scheduled, last_snapshot,
        next_visit_queue_position, next_position_offset, successive_visits, recent FROM listed_origin_pending) lo
WHERE next_position_offset IS NOT NULL
ORDER BY url, visit_type, last_scheduled NULLS FIRST;
ALTER TABLE listed_origin_pending DROP COLUMN stats_scheduled, DROP COLUMN recent, DROP COLUMN successive_visits,
    DROP COLUMN next_position_offset, DROP COLUMN last_snapshot;
ALTER TABLE listed_origin DROP COLUMN recent, DROP COLUMN successive_visits,
    DROP COLUMN next_position_offset, DROP COLUMN last_snapshot;
