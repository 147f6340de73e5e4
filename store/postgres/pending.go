package postgres

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revisit-sched/revisit"
)

// listedColumns are every column of listed_origin, and of
// listed_origin_pending, in table order.
var listedColumns = listedColumnsWith("last_scheduled")

// listedColumnsWith returns listedColumns with lastScheduled, an
// expression, in place of the last_scheduled column: moves between the two
// tables copy whole rows but set the mark.
func listedColumnsWith(lastScheduled string) string {
	return "id, lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, " +
		"last_update, is_fork, forked_from_url, last_successful, last_visit, last_visit_status, " +
		lastScheduled + ", next_visit_queue_position, shared"
}

// grabLockKey is the advisory lock key of a visit type's grabs.
const grabLockKey = "hashtextextended('revisit.grab:' || $1, 0)"

// recordLockKey is the advisory lock key that recordings which insert rows
// of a visit type take in turn (shareOrigins).
const recordLockKey = "hashtextextended('revisit.record:' || $1, 0)"

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

// The picks that grabs set aside in listed_origin_picked (markScheduled)
// move to listed_origin_pending with the marks of their grabs:
//   - flushPicks moves all of them, first thing in every statement that
//     looks pending origins up (withIndexLookups), waiting for the moves
//     in progress: such a statement must find every pending origin there;
//   - flushDuePicks moves those of a visit type that a grab's cooldowns
//     may make eligible again, before its requeue step;
//   - the background flusher moves what it can soon after each grab,
//     skipping the picks that someone else is moving.
//
// Each locks its picks in id order, so that two of them never wait for
// each other.
var (
	flushAll = moveToPending(`
		DELETE FROM listed_origin_picked
		WHERE id IN (SELECT id FROM listed_origin_picked ORDER BY id FOR UPDATE)
		RETURNING tid, url, visit_type, false AS shared, scheduled_at AS scheduled`)
	flushDue = moveToPending(`
		DELETE FROM listed_origin_picked
		WHERE id IN (SELECT id FROM listed_origin_picked
			WHERE visit_type = $1 AND ($2::timestamptz IS NULL OR scheduled_at < $2) ORDER BY id FOR UPDATE)
		RETURNING tid, url, visit_type, false AS shared, scheduled_at AS scheduled`)
	flushUnlocked = moveToPending(`
		DELETE FROM listed_origin_picked
		WHERE id IN (SELECT id FROM listed_origin_picked ORDER BY id FOR UPDATE SKIP LOCKED)
		RETURNING tid, url, visit_type, false AS shared, scheduled_at AS scheduled`)
)

// flushPicks moves every pick set aside to listed_origin_pending. When
// there is none, as between grabs, it costs one probe of the picks.
func flushPicks(ctx context.Context, tx pgx.Tx) error {
	var some bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT FROM listed_origin_picked)").Scan(&some); err != nil || !some {
		return err
	}
	_, err := tx.Exec(ctx, flushAll)
	return err
}

// flushDuePicks moves to listed_origin_pending the picks of visitType set
// aside before the time the cooldowns c at now would let a grab return
// them again (all of them with both time cooldowns off), so that the
// requeue step sees them. A pick set aside is never visited after its
// grab (setAside), so that time decides.
func flushDuePicks(ctx context.Context, tx pgx.Tx, visitType string, now time.Time, c revisit.Cooldowns) error {
	var before *time.Time
	for _, d := range []time.Duration{c.Absolute, c.Scheduled} {
		if t := now.Add(-d); d > 0 && (before == nil || t.Before(*before)) {
			before = &t
		}
	}
	_, err := tx.Exec(ctx, flushDue, visitType, before)
	return err
}

// flusher moves the picks that grabs set aside to listed_origin_pending in
// the background, soon after the grabs return, so that the statements
// that would otherwise move them first (flushPicks) seldom have to.
type flusher struct {
	pool   *pgxpool.Pool
	wakeup chan struct{}
	stop   context.CancelFunc
	done   chan struct{}
}

func startFlusher(pool *pgxpool.Pool) *flusher {
	ctx, stop := context.WithCancel(context.Background())
	f := &flusher{pool: pool, wakeup: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go f.run(ctx)
	return f
}

// wake asks for a flush, without waiting.
func (f *flusher) wake() {
	select {
	case f.wakeup <- struct{}{}:
	default:
	}
}

// run flushes after each wake until stopped. A failed flush leaves the
// picks where they are: the next flush, or the next statement that needs
// them moved, moves them.
func (f *flusher) run(ctx context.Context) {
	defer close(f.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wakeup:
		}
		err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
			// A flush lost in a crash leaves the picks aside, as before it.
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, flushUnlocked)
			return err
		})
		if err != nil && ctx.Err() == nil {
			slog.Warn("postgres: moving the picks set aside to the pending table", "err", err)
		}
	}
}

// close stops the flusher; a flush in progress is rolled back.
func (f *flusher) close() {
	f.stop()
	<-f.done
}
