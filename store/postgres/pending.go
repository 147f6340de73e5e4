package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
)

// listedColumns are every column of listed_origin, and of
// listed_origin_pending, in table order.
const listedColumns = "id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, " +
	"last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status, last_scheduled, " +
	"next_visit_queue_position"

// grabLockKey is the advisory lock key of a visit type's grabs.
const grabLockKey = "hashtextextended('revisit.grab:' || $1, 0)"

// lockGrabs takes the visit type's grab lock: a grab moves origins between
// listed_origin and listed_origin_pending, so it runs alone.
func lockGrabs(ctx context.Context, tx pgx.Tx, visitType string) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+grabLockKey+")", visitType)
	return err
}

// shareGrabLocks takes the grab locks of visitTypes in shared mode, in a
// fixed order: writers that move pending origins back, or that must see
// where a grab left them (recording, results, released visits), wait for
// the grabs in progress and keep new ones out until they commit, but not
// each other.
func shareGrabLocks(ctx context.Context, tx pgx.Tx, visitTypes []string) error {
	types := slices.Clone(visitTypes)
	slices.Sort(types)
	types = slices.Compact(types)
	for _, vt := range types {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared("+grabLockKey+")", vt); err != nil {
			return err
		}
	}
	return nil
}
