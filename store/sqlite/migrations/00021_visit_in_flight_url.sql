-- The index of PostgreSQL's migration of this number, which finds the
-- visits in flight of an origin for a result that does not name its visit
-- (VisitsCloseByOrigin). SQLite has no hash indexes: a B-tree of the
-- origin's key, as listed_origin keeps (00014).

-- +goose Up
CREATE INDEX visit_in_flight_url ON visit_in_flight (url, visit_type);

-- +goose Down
DROP INDEX visit_in_flight_url;
