-- Every visit in flight has its rows in listed_origin_pending, so that
-- table holds as many rows as there are visits queued and running (a
-- million in the orchestrator benchmark), and each grab inserts its picks
-- into its indexes. listed_origin_pending_scheduled gets the same key
-- (visit type, time of the grab) for every pick of a grab, and B-tree
-- deduplication merged them into posting lists, rewritten as the picks
-- arrived: on a million pending rows, a third of the move's time
-- (docs/store.md, "Pending origins"). Without deduplication each entry
-- goes to the right end of the index, in the order the rows were written.

-- +goose Up
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled)
    WITH (deduplicate_items = off);

-- +goose Down
DROP INDEX listed_origin_pending_scheduled;
CREATE INDEX listed_origin_pending_scheduled ON listed_origin_pending (visit_type, last_scheduled);
