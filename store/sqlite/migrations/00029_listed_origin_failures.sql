-- The console's failures view (revisit.ViewFailures): the origins of a
-- visit type whose last visit failed or found nothing, newest first, a
-- page at a time. This partial index holds only those rows, in that
-- order, so that a page reads its rows and no others whatever the number
-- of origins (docs/store.md, "Browsing origins"). A result that changes a
-- row's last visit rewrites its entries in the policy indexes already;
-- only the failing rows have one here.

-- +goose Up
CREATE INDEX listed_origin_failures ON listed_origin (visit_type, last_visit, id)
    WHERE last_visit_status IN ('failed', 'not_found');

-- +goose Down
DROP INDEX listed_origin_failures;
