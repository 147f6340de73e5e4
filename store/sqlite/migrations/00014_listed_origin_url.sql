-- PostgreSQL's migration of this number replaces the B-tree of
-- listed_origin on (url, visit_type) with a hash index on url; SQLite has
-- no hash indexes, and its B-tree stays: this version changes nothing here
-- and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
