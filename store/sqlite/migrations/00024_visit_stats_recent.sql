-- The same column as store/postgres/migrations/00024: an origin's last
-- results, in its visit stats row (a BLOB, NULL when there is none).
-- Existing rows start with an empty history.

-- +goose Up
ALTER TABLE visit_stats ADD COLUMN recent BLOB;

-- +goose Down
ALTER TABLE visit_stats DROP COLUMN recent;
