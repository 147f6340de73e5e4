-- Searching origins by URL (OriginsSearch, GET /api/v1/origins/search):
-- the URLs that start with a prefix, or that contain a substring, in byte
-- order, a page at a time.
--
-- listed_origin has no index to serve it: its hash index on url (00014)
-- answers equality only. And an index there would be paid on the hot
-- paths: every result, grab and listing that moves an origin in a policy's
-- order writes a new version of its rows, with an entry in every index of
-- the table (a trigram index: one per three-character run of the URL).
-- origin_url holds every URL ever listed, once, written only when a
-- recording inserts a listed row (origins.go); no other path writes it,
-- and listed origins are never deleted. Its primary key, a B-tree in byte
-- order ("C"), serves prefixes and the order of pages; its trigram index
-- (pg_trgm) serves substrings of three characters and more.
--
-- pg_trgm ships with PostgreSQL (Debian's postgresql package includes it)
-- and is a trusted extension: a user with the CREATE privilege on the
-- database may create it; otherwise a superuser runs CREATE EXTENSION
-- pg_trgm first. Where the database has it already, in another schema,
-- that schema must be on revisit's search_path.
--
-- The table is new: building it blocks no writer, and the copy only reads
-- the listed origins (docs/store.md, "Searching origins by URL", has what
-- it costs at 10M origins). Stop the processes of the previous version
-- before migrating, as docs/deploy says: a URL that one of them lists for
-- the first time after the copy would be missing from origin_url.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE origin_url (url text COLLATE "C" NOT NULL);
INSERT INTO origin_url SELECT DISTINCT url FROM listed_origin_all ORDER BY url;
ALTER TABLE origin_url ADD PRIMARY KEY (url);
CREATE INDEX origin_url_trigram ON origin_url USING gin (url gin_trgm_ops);

-- +goose Down
DROP TABLE origin_url;
