-- An origin's last results, kept in its visit stats row (revisit.VisitStats
-- .Recent; store/internal/recent encodes them): 9 bytes a result, newest
-- first, at most 5, NULL when there is none. The statement that writes a
-- result's stats rewrites the row anyway; in the row, the history costs no
-- other page, and the update stays HOT (no index covers the column).
--
-- A nullable column without a default is added without rewriting the
-- table. Existing rows start with an empty history: their next results
-- fill it.

-- +goose Up
ALTER TABLE visit_stats ADD COLUMN recent bytea;

-- +goose Down
ALTER TABLE visit_stats DROP COLUMN recent;
