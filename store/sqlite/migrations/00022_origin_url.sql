-- PostgreSQL's migration of this number adds origin_url, the URLs that an
-- origin search reads, because its listed_origin has only a hash index on
-- url. SQLite's listed_origin keeps its B-tree on (url, visit_type), in
-- byte order, which serves the search's prefixes, its substrings (a walk
-- of the index) and its pages: this version changes nothing here and keeps
-- the two engines' version numbers equal.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
