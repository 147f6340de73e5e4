-- The foreign key from listed_origin to lister checked every inserted row
-- in a trigger of its own: a query of the lister per row, ~10 µs each, a
-- sixth of a recording's statement on the 10M set (docs/store.md, "Listed
-- origins"), and again for every row that comes back from the pending
-- table.
--
-- The store checks the listers of a batch once instead (checkListers) and
-- holds them with FOR KEY SHARE until its transaction ends, which is the
-- lock the foreign key took per row. What the foreign key refused on the
-- lister's side, the trigger below refuses: deleting a lister, or changing
-- its id, while rows (listed or pending) name it. A delete that waits for a
-- recording's lock runs the trigger after that recording has committed, and
-- sees its rows.

-- +goose Up
ALTER TABLE listed_origin DROP CONSTRAINT listed_origin_lister_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION lister_kept_while_listed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF EXISTS (SELECT FROM listed_origin) OR EXISTS (SELECT FROM listed_origin_pending) THEN
            RAISE foreign_key_violation USING MESSAGE = 'listers are listed by listed origins: truncate them first';
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT FROM listed_origin WHERE lister_id = OLD.id)
        OR EXISTS (SELECT FROM listed_origin_pending WHERE lister_id = OLD.id) THEN
        RAISE foreign_key_violation USING
            MESSAGE = format('lister %s still has listed origins', OLD.id);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER lister_kept_while_listed BEFORE DELETE OR UPDATE OF id ON lister
    FOR EACH ROW EXECUTE FUNCTION lister_kept_while_listed();
CREATE TRIGGER lister_kept_while_listed_truncate BEFORE TRUNCATE ON lister
    FOR EACH STATEMENT EXECUTE FUNCTION lister_kept_while_listed();

-- +goose Down
DROP TRIGGER lister_kept_while_listed_truncate ON lister;
DROP TRIGGER lister_kept_while_listed ON lister;
DROP FUNCTION lister_kept_while_listed();
ALTER TABLE listed_origin ADD CONSTRAINT listed_origin_lister_id_fkey
    FOREIGN KEY (lister_id) REFERENCES lister (id);
