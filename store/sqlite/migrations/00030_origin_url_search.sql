-- PostgreSQL's migration of this number adds the switch of its search of
-- origins by URL, whose own tables and index an archive may drop (`revisit
-- db search off`). SQLite's search walks listed_origin's B-tree on
-- (url, visit_type), which the listed origins need anyway: there is
-- nothing to turn off, and this version changes nothing here but keeps the
-- two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
