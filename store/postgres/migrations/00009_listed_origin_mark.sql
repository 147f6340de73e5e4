-- SQLite's migration of this number sets a grab's marks aside in a table
-- of their own instead of writing them onto the scattered rows it picked.
-- PostgreSQL already moves its picks to listed_origin_pending (00006):
-- this version changes nothing here and keeps the two engines' version
-- numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
