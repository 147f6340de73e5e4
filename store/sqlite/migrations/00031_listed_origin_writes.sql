-- PostgreSQL's migration of this number adds the count of writes to
-- listed rows that a grab reads to tell whether it may resume the walk of
-- the previous one (docs/store.md, "Grabs back to back"). SQLite's store
-- counts its own write transactions, under its single writer, and reads
-- SQLite's count of other connections' commits: this version changes
-- nothing here and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
