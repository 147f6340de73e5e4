-- A grab marks every listed row of each picked origin. It found them by
-- looking up each pick's URL in the (url, visit_type) index: 1000 probes of
-- a large index per grab, most of the mark's time, when an origin has one
-- row in most data sets. shared flags the rows of origins that several
-- listers list, as on PostgreSQL since version 8: a grab marks the other
-- picks straight from the rows its candidate query read. Recording keeps
-- it: a row is shared once another lister lists its origin (it stays so).

-- +goose Up
ALTER TABLE listed_origin ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
UPDATE listed_origin SET shared = 1 WHERE (url, visit_type) IN
    (SELECT url, visit_type FROM listed_origin GROUP BY url, visit_type HAVING count(*) > 1);

-- +goose Down
ALTER TABLE listed_origin DROP COLUMN shared;
