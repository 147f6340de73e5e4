-- Whether the search of origins by URL is on (docs/store.md, "Turning the
-- search off"). Its tables (origin_url, its key, its trigram index, and
-- origin_url_backlog, migrations 00022 and 00025) took a quarter of the
-- database at 2M origins, and every recording of a new URL appends it to
-- the backlog, indexed later: an archive that does not search its
-- origins by URL may turn the search off (`revisit db search off`), which
-- drops the index and empties the tables, and on again, which rebuilds
-- them.
--
-- The state is kept here, in one row, so that every process using the
-- store agrees on it: recordings read it in their own statement and append
-- to the backlog unless the search is off; searches and the moves of the
-- backlog run only when it is on.
--
--   on        the search is served, its index complete;
--   building  being turned on: recordings append to the backlog while
--             `revisit db search on` copies the listed URLs and builds the
--             index; searches are refused until it is done;
--   off       nothing is indexed, searches are refused.
--
-- Existing stores keep their search: the state starts on.

-- +goose Up
CREATE TABLE origin_url_search (
    id    boolean PRIMARY KEY DEFAULT true CHECK (id),
    state text NOT NULL CHECK (state IN ('on', 'building', 'off'))
);
INSERT INTO origin_url_search (state) VALUES ('on');

-- +goose Down
-- The previous schema has no switch: a search that is not on is built
-- again, as `revisit db search on` would.
-- +goose StatementBegin
DO $$
BEGIN
    IF (SELECT state FROM origin_url_search) <> 'on' THEN
        INSERT INTO origin_url SELECT DISTINCT url FROM listed_origin_all ORDER BY url ON CONFLICT DO NOTHING;
        CREATE INDEX IF NOT EXISTS origin_url_trigram ON origin_url USING gin (url gin_trgm_ops)
            WITH (gin_pending_list_limit = 131072);
    END IF;
END $$;
-- +goose StatementEnd
DROP TABLE origin_url_search;
