-- Grab marks, as store/postgres/migrations/00006_grab_mark.sql (times are
-- INTEGER microseconds).

-- +goose Up
CREATE TABLE grab_mark (
    visit_type   TEXT NOT NULL,
    url          TEXT NOT NULL,
    scheduled_at INTEGER NOT NULL,
    PRIMARY KEY (visit_type, url)
) WITHOUT ROWID;

CREATE INDEX grab_mark_scheduled ON grab_mark (visit_type, scheduled_at);

-- +goose Down
DROP TABLE grab_mark;
