-- Migration 00032 of PostgreSQL moves a listed origin's visit stats onto
-- its listed rows, so that a result writes one row where it wrote two.
-- SQLite keeps them in visit_stats with their copy on the listed rows
-- (docs/store.md, "Where an origin's stats live"); this version only keeps
-- the two engines' numbers the same.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
