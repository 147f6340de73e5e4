-- With a million visits in flight, listed_origin_pending holds a million
-- rows, and each grab inserts its picks into the table's indexes. Its
-- primary key, (url, visit_type, lister_id), puts every pick on a random
-- leaf of a B-tree of long text keys (114 MB at a million rows) and checks
-- uniqueness on the way: a third of the move (docs/store.md, "Pending
-- origins").
--
-- Every lookup of pending origins is by URL equality (results, released
-- and lost visits, recording), which a hash index serves with one bucket
-- probe and a 4-byte hash an entry. Uniqueness needs no index here: a row
-- comes to this table only by leaving listed_origin, whose primary key is
-- the same triple, in the statement that deletes it there.
--
-- No other index of the table may lead with visit_type: with statistics,
-- the planner combined the hash probe of each looked-up URL with a bitmap
-- of every pending row of the visit type (a BitmapAnd reading the whole
-- grab-time index per lookup). The grab-time index leads with the time of
-- the grab instead; the requeue step, its only user, ranges over it and
-- checks the visit type inside the index. The partial index of origins
-- visited after their mark is keyed the same way.

-- +goose Up
ALTER TABLE listed_origin_pending DROP CONSTRAINT listed_origin_pending_pkey;
CREATE INDEX listed_origin_pending_url ON listed_origin_pending USING hash (url);
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (last_scheduled, visit_type)
    WITH (deduplicate_items = off);
DROP INDEX listed_origin_pending_visited;
CREATE INDEX listed_origin_pending_visited ON listed_origin_pending (last_scheduled, visit_type)
    WHERE last_scheduled < last_visit;

-- +goose Down
DROP INDEX listed_origin_pending_visited;
CREATE INDEX listed_origin_pending_visited ON listed_origin_pending (visit_type)
    WHERE last_scheduled < last_visit;
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled)
    WITH (deduplicate_items = off);
DROP INDEX listed_origin_pending_url;
ALTER TABLE listed_origin_pending ADD PRIMARY KEY (url, visit_type, lister_id);
