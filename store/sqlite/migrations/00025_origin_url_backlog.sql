-- PostgreSQL's migration of this number lets recordings append the URLs
-- they list for the first time to a backlog, indexed for search in large
-- batches afterwards, since its trigram index made every recording pay
-- for substring search. SQLite's search walks its B-tree on
-- (url, visit_type), which recording writes anyway: this version changes
-- nothing here and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
