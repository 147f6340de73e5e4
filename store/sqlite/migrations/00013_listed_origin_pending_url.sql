-- PostgreSQL's migration of this number changes the indexes of
-- listed_origin_pending, a table SQLite does not have (it marks in place,
-- see 00006): this version changes nothing here and keeps the two
-- engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
