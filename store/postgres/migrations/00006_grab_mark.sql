-- Grab marks: a grab records last_scheduled here, in a small table, instead
-- of rewriting the origin's visit_stats and listed_origin rows (whose
-- indexes make that the cost of a grab). The effective last_scheduled of an
-- origin is the later of the folded value and its mark. A mark is folded
-- into visit_stats and listed_origin by the visit's result, which rewrites
-- those rows anyway, or by the orchestrator's sweep of old marks
-- (docs/store.md).

-- +goose Up
CREATE TABLE grab_mark (
    visit_type   text COLLATE "C" NOT NULL,
    url          text COLLATE "C" NOT NULL,
    scheduled_at timestamptz NOT NULL,
    PRIMARY KEY (visit_type, url)
);

-- The marks that a policy ordered by last_scheduled merges, and the sweep.
CREATE INDEX grab_mark_scheduled ON grab_mark (visit_type, scheduled_at);

-- +goose Down
DROP TABLE grab_mark;
