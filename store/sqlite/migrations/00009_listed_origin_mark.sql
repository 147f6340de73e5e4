-- A grab no longer writes its marks onto the picked origins' rows. Those
-- rows are scattered, and each UPDATE rewrote a listed_origin row, its two
-- last_scheduled index entries and a visit_stats row on pages of their own:
-- some 4000 pages, 16 MB of WAL, for 1000 picks (docs/store.md, "Pending
-- marks (SQLite)"). The mark now goes to listed_origin_mark, a small table
-- of the origins waiting for a visit's result, which candidate queries
-- leave out. A result folds the mark into the stats it writes anyway; a
-- released or lost visit drops it; a grab whose cooldowns would let a
-- marked origin through folds it first, so every grab stays exact.

-- +goose Up
CREATE TABLE listed_origin_mark (
    -- the marked listed row's id: candidate queries leave out the rows whose
    -- id is here, a lookup SQLite does straight in this table's b-tree.
    -- A grab marks every listed row of a picked origin (all listers); an
    -- origin's marks are found through listed_origin's (url, visit_type)
    -- index, so this table needs no index of its own on them.
    id             INTEGER PRIMARY KEY,
    url            TEXT NOT NULL,
    visit_type     TEXT NOT NULL,
    last_scheduled INTEGER NOT NULL,
    -- the origin's last_visit when marked (a result removes the mark, so it
    -- stays current): the scheduled cooldown lets a marked origin through
    -- once it is visited after its mark, as when a clock is set back.
    last_visit     INTEGER
);

-- Marks whose cooldowns end first (the grab's fold step).
CREATE INDEX listed_origin_mark_scheduled ON listed_origin_mark (visit_type, last_scheduled);
CREATE INDEX listed_origin_mark_visited ON listed_origin_mark (visit_type)
    WHERE last_scheduled < last_visit;

-- +goose Down
INSERT INTO visit_stats (url, visit_type, last_scheduled)
    SELECT url, visit_type, max(last_scheduled) FROM listed_origin_mark GROUP BY url, visit_type
    ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled =
        max(COALESCE(visit_stats.last_scheduled, excluded.last_scheduled), excluded.last_scheduled);
UPDATE listed_origin SET last_scheduled = max(COALESCE(listed_origin.last_scheduled, m.last_scheduled), m.last_scheduled)
    FROM listed_origin_mark m WHERE listed_origin.id = m.id;
DROP TABLE listed_origin_mark;
