-- PostgreSQL's migration of this number drops the foreign key from
-- listed_origin to lister, whose per-row checks cost a sixth of a
-- recording there, and guards the lister's side with a trigger instead.
-- SQLite's foreign key checks are cheap and run in the single writer:
-- this version changes nothing here and keeps the two engines' version
-- numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
