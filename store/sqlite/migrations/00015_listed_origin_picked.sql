-- PostgreSQL's migration of this number adds listed_origin_picked, where a
-- grab sets its picks aside until they move to listed_origin_pending;
-- SQLite keeps its marks aside already (listed_origin_mark, 00009): this
-- version changes nothing here and keeps the two engines' version numbers
-- equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
