-- Every visit in flight has its rows in listed_origin_pending, so that
-- table holds as many rows as there are visits queued and running (a
-- million in the orchestrator benchmark), and each grab inserts its picks
-- into both of its indexes. On a million pending rows, the two cost most
-- of the move (docs/performance.md, "Session 13"):
--
-- - the primary key (url, visit_type, lister_id) puts each pick on a random
--   leaf of a B-tree of long text keys, checking uniqueness on the way.
--   Lookups of pending origins are all by URL equality (results, released
--   and lost visits, recording), which a hash index serves with a probe of
--   one bucket and a 4-byte hash per entry. No two rows of one origin and
--   lister can be pending at once without a primary key either: a row
--   comes here only by leaving listed_origin, whose primary key is that
--   triple.
-- - listed_origin_pending_scheduled gets the same key (visit type, time
--   of the grab) for every pick of a grab; B-tree deduplication merged
--   them into posting lists, rewritten at each insert. Without it each
--   entry goes to the right end of the index, in the order the rows were
--   written.

-- +goose Up
ALTER TABLE listed_origin_pending DROP CONSTRAINT listed_origin_pending_pkey;
CREATE INDEX listed_origin_pending_url ON listed_origin_pending USING hash (url);
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled)
    WITH (deduplicate_items = off);

-- +goose Down
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled);
DROP INDEX listed_origin_pending_url;
ALTER TABLE listed_origin_pending ADD PRIMARY KEY (url, visit_type, lister_id);
