package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// listedColumns are every column of listed_origin, and of
// listed_origin_pending, in table order: the listing, then the origin's
// visit stats (migration 00032).
var listedColumns = listedColumnsWith("last_scheduled", "next_position_offset")

// listedColumnsWith returns listedColumns with lastScheduled and offset,
// expressions, in place of the last_scheduled and next_position_offset
// columns: moves between the two tables copy whole rows but set the mark.
func listedColumnsWith(lastScheduled, offset string) string {
	return "id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, " +
		"last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status, " +
		lastScheduled + ", next_visit_queue_position, shared, last_snapshot, " + offset + ", " +
		"successive_visits, recent"
}

// pendingColumns are listedColumns, then the column that only
// listed_origin_pending has: stats_scheduled, the last_scheduled of the
// origin's stats before the grab that marked the row.
var pendingColumns = listedColumns + ", stats_scheduled"

// pendingValues renders the values of pendingColumns for a listed row that
// moves to listed_origin_pending marked at mark (an expression of its
// columns). A marked origin has stats, as a grab's upsert of its stats
// gives it upstream: its next_position_offset is set (hasStats).
func pendingValues(mark string) string {
	return listedColumnsWith(mark, fmt.Sprintf("COALESCE(next_position_offset, %d)", revisit.DefaultNextPositionOffset)) +
		", last_scheduled"
}

// grabLockKey is the advisory lock key of a visit type's grabs.
const grabLockKey = "hashtextextended('revisit.grab:' || $1, 0)"

// recordLockKey is the advisory lock key that recordings which insert rows
// of a visit type take in turn (settleNewOrigins), and so do results that
// write visit_stats (VisitStatsWrite).
const recordLockKey = "hashtextextended('revisit.record:' || $1, 0)"

// shareGrabLocks takes the grab locks of visitTypes in shared mode, in a
// fixed order: writers that move pending origins back, or that must see
// where a grab left them (recording, results, released visits), wait for
// the grabs in progress and keep new ones out until they commit, but not
// each other.
func shareGrabLocks(ctx context.Context, tx pgx.Tx, visitTypes []string) error {
	return eachVisitType(visitTypes, func(vt string) error {
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared("+grabLockKey+")", vt)
		return err
	})
}

// lockVisitTypes takes the advisory locks of key (a lock key expression of
// $1) for visitTypes exclusively, in a fixed order.
func lockVisitTypes(ctx context.Context, tx pgx.Tx, key string, visitTypes []string) error {
	return eachVisitType(visitTypes, func(vt string) error {
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+key+")", vt)
		return err
	})
}

// eachVisitType calls fn for each distinct visit type of visitTypes, in
// sorted order (the order in which locks are taken, so that no two
// transactions wait for each other), and stops at its first error.
func eachVisitType(visitTypes []string, fn func(string) error) error {
	types := slices.Clone(visitTypes)
	slices.Sort(types)
	for _, vt := range slices.Compact(types) {
		if err := fn(vt); err != nil {
			return err
		}
	}
	return nil
}

// pendingMark renders a query of the last_scheduled of the origin
// (alias.url, alias.visit_type) while it is pending: no row otherwise. The
// GROUP BY keeps the planner on the key: without it, max() may be rewritten
// into a backward scan of listed_origin_pending_scheduled filtered by URL,
// which walks every pending origin of the visit type.
func pendingMark(alias string) string {
	return "SELECT max(p.last_scheduled) FROM listed_origin_pending p WHERE p.url = " + alias +
		".url AND p.visit_type = " + alias + ".visit_type GROUP BY p.url"
}
