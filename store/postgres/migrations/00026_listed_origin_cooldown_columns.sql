-- SQLite's migration of this number ends four policy indexes with the
-- columns the cooldowns compare, so that its grabs skip the origins in a
-- cooldown inside the index. PostgreSQL's indexes hold the failed and
-- not-found cooldowns' keys since 00016: this version changes nothing here
-- and keeps the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
