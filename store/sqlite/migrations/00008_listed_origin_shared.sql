-- PostgreSQL's migration of this number flags the listed rows of origins
-- that several listers list, so that a grab can move its picks by row
-- address. SQLite's grabs do not move rows and need no flag: this version
-- changes nothing here and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
