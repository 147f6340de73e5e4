-- SQLite's migration of this number flags the listed rows of origins that
-- several listers list, as PostgreSQL's version 8 did here: this version
-- changes nothing here and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
