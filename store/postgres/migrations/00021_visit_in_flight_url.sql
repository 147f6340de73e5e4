-- A result that does not name its visit (a visit status that did not come
-- in a worker's event) closes the visits in flight of its origin
-- (VisitsCloseByOrigin), looked up by URL equality. The visits had no
-- index on their origin: each batch of results would have read every
-- visit in flight. A hash index, as for the listed and pending origins
-- (00013, 00014): a 4-byte hash an entry where a B-tree of (url,
-- visit_type) stores the long text keys, and one bucket page touched by
-- each visit a dispatch inserts. url never changes after the insert, so
-- marking a visit sent or lost stays an in-place (HOT) update (00007).

-- +goose Up
CREATE INDEX visit_in_flight_url ON visit_in_flight USING hash (url);

-- +goose Down
DROP INDEX visit_in_flight_url;
