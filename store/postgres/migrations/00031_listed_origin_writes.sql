-- A count of the statements that add or change listed rows, which a grab
-- reads to tell whether it may resume the walk of the previous grab of the
-- same parameters (docs/store.md, "Grabs back to back"): a walk stopped
-- after a row, and the next grab starts after it as long as nothing was
-- written since that could put an eligible row ahead of it.
--
-- A sequence, so that writers never wait for each other on it. Every
-- statement that inserts or updates at least one listed row takes a
-- number when it ends (a trigger, so that no writer can forget); deletes
-- take none: a row gone is no row ahead. A writer holds its visit types'
-- grab locks in shared mode from before its first write to its commit,
-- and a grab reads the sequence holding its lock exclusively: a number
-- taken before a grab read it is a write that grab could see.

-- +goose Up
CREATE SEQUENCE listed_origin_writes;

-- +goose StatementBegin
CREATE FUNCTION listed_origin_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT FROM changed) THEN
        PERFORM nextval('listed_origin_writes');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER listed_origin_inserted AFTER INSERT ON listed_origin
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION listed_origin_written();
CREATE TRIGGER listed_origin_updated AFTER UPDATE ON listed_origin
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION listed_origin_written();

-- +goose Down
DROP TRIGGER listed_origin_updated ON listed_origin;
DROP TRIGGER listed_origin_inserted ON listed_origin;
DROP FUNCTION listed_origin_written();
DROP SEQUENCE listed_origin_writes;
