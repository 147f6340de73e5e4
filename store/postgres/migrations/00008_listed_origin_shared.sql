-- A grab now moves its picks to listed_origin_pending by their row address
-- (ctid), which its candidate query has just read, instead of looking up
-- every row of each picked origin in the (url, visit_type) index: on the
-- 10M set those 1000 probes of a large index were most of a grab's time
-- (1000 rows deleted by address take ~2 ms, by URL ~13 ms at 1M and more as
-- the index outgrows the cache).
--
-- An origin that several listers list has one row per lister, and a grab
-- must move them all. shared marks those rows, so that a grab looks up the
-- other rows of these origins only. Recording keeps it: a row is shared
-- once another lister lists its origin (it stays so).

-- +goose Up
ALTER TABLE listed_origin ADD COLUMN shared boolean NOT NULL DEFAULT false;
ALTER TABLE listed_origin_pending ADD COLUMN shared boolean NOT NULL DEFAULT false;
CREATE TEMP TABLE shared_origin ON COMMIT DROP AS
    SELECT url, visit_type FROM listed_origin_all GROUP BY url, visit_type HAVING count(*) > 1;
UPDATE listed_origin SET shared = true WHERE (url, visit_type) IN (SELECT url, visit_type FROM shared_origin);
UPDATE listed_origin_pending SET shared = true WHERE (url, visit_type) IN (SELECT url, visit_type FROM shared_origin);

-- +goose Down
ALTER TABLE listed_origin_pending DROP COLUMN shared;
ALTER TABLE listed_origin DROP COLUMN shared;
