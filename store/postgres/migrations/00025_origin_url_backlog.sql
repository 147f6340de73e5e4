-- The URLs that recordings list for the first time wait here until they
-- are indexed for search (IndexOriginURLs moves them to origin_url).
--
-- Indexing a URL for substring search writes about fifty trigram entries
-- in origin_url's GIN index; done by each recording, in its batches, it
-- took a third of recording's throughput on the 10M set. A recording now
-- appends its new URLs to this table, which has no index (a heap append
-- on pages that every batch shares), and the move indexes them in large
-- sorted batches, at about a third of the cost a URL. A search first
-- moves what waits here, up to a bound (docs/store.md, "Searching origins
-- by URL"); `revisit serve` keeps it short in the background.
--
-- The trigram index's pending list is merged at the end of each move
-- (gin_clean_pending_list), in one pass: its limit is raised so that a
-- move's inserts do not merge it piecemeal on the way.
--
-- The table is new and starts empty: nothing is copied.

-- +goose Up
CREATE TABLE origin_url_backlog (url text COLLATE "C" NOT NULL);
ALTER INDEX origin_url_trigram SET (gin_pending_list_limit = 131072);

-- +goose Down
INSERT INTO origin_url SELECT DISTINCT url FROM origin_url_backlog ORDER BY url ON CONFLICT DO NOTHING;
ALTER INDEX origin_url_trigram RESET (gin_pending_list_limit);
DROP TABLE origin_url_backlog;
