-- PostgreSQL's migration of this number moves the origins a grab marks to
-- a table of their own, because a DELETE there writes no index entry and
-- so costs less than rewriting the row into its eight indexes. SQLite
-- rewrites only the indexes whose columns an UPDATE changes (two, for
-- last_scheduled) and removes a deleted row from every index at once, so
-- marking in place is its cheaper way: this version changes nothing here
-- and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
