-- Every write that moves an origin in a policy's order (a result, a listing
-- that changes last_update, an origin coming back from
-- listed_origin_pending) writes a new row version of listed_origin with an
-- entry in each of its indexes, among them listed_origin_origin, a B-tree
-- of (url, visit_type): long text keys, a random leaf for every entry, and
-- 1 GB on the 10M set. A hash index stores a 4-byte hash an entry (256 MB
-- there), and an insert touches one bucket page: the copy of 1000 results
-- onto listed_origin took ~20 % less time with it (docs/store.md, "One
-- index per policy").
--
-- Its users look origins up by URL equality: results and released visits
-- (the copy of their stats), recording (the other listers' rows of an
-- origin), a grab's move (the other rows of a shared origin), the listing
-- filtered by URLs. The statements that write run with bitmap scans off
-- (withIndexScans), and the grab's lookup names the URL only, so that no
-- plan ANDs a URL probe with a policy index's scan of a whole visit type
-- (see 00013).

-- +goose Up
DROP INDEX listed_origin_origin;
CREATE INDEX listed_origin_url ON listed_origin USING hash (url);

-- +goose Down
DROP INDEX listed_origin_url;
CREATE INDEX listed_origin_origin ON listed_origin (url, visit_type);
