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
//   - a grab moves those of its visit type that its cooldowns may make
//     eligible again, and its requeue step then sees them
//     (lockAndRequeue);
//   - the background flusher moves what it can soon after each grab,
//     skipping the picks that someone else is moving.
//
// Each takes its picks out of the table (takePicks), locked in id order so
// that two of them never wait for each other, then moves them (movePicks).

// takePicks renders the statement that deletes and returns the picks set
// aside that cond selects, locked in id order, skipping the locked ones if
// skipLocked. The picks are found through the primary key (withIndexScans):
// the table churns a grab's worth of rows at every grab, and its estimated
// size counts the dead ones until a vacuum.
func takePicks(cond string, skipLocked bool) string {
	lock := "FOR UPDATE"
	if skipLocked {
		lock += " SKIP LOCKED"
	}
	return `DELETE FROM listed_origin_picked WHERE id = ANY(ARRAY(
		SELECT id FROM listed_origin_picked WHERE ` + cond + ` ORDER BY id ` + lock + `))
		RETURNING id, tid, url, visit_type, scheduled_at`
}

var (
	takeAll      = takePicks("true", false)
	takeDue      = takePicks("visit_type = $1 AND ($2::timestamptz IS NULL OR scheduled_at < $2)", false)
	takeUnlocked = takePicks("true", true)
)

// anySetAside tells whether picks of visit type $1 are set aside. ORDER BY
// id keeps it on the table's key: without it, no index serves the query,
// and the table was read whole, dead rows included (1.2 ms a grab between
// two vacuums, session 22).
const anySetAside = `SELECT count(*) > 0 FROM (
	SELECT FROM listed_origin_picked WHERE visit_type = $1 ORDER BY id LIMIT 1) p`

// flushPicks moves every pick set aside to listed_origin_pending; tx runs
// with index scans only (withIndexScans). When there is none, as between
// grabs, it costs one probe of the picks' key, and no move.
func flushPicks(ctx context.Context, tx pgx.Tx) error {
	_, err := movePicksAside(ctx, tx, takeAll)
	return err
}

// dueBefore returns the time before which the picks set aside at a grab
// may be eligible again for a grab at now under cooldowns c: the earlier
// of the two time cooldowns' bounds, nil (all of them) with both off. A
// pick set aside is never visited after its grab (setAside), so that time
// decides (takeDue).
func dueBefore(now time.Time, c revisit.Cooldowns) *time.Time {
	var before *time.Time
	for _, d := range []time.Duration{c.Absolute, c.Scheduled} {
		if t := now.Add(-d); d > 0 && (before == nil || t.Before(*before)) {
			before = &t
		}
	}
	return before
}

// movePicksAside takes the picks that take (a takePicks statement of args)
// selects out of listed_origin_picked and moves them to
// listed_origin_pending, and returns how many it moved.
func movePicksAside(ctx context.Context, tx pgx.Tx, take string, args ...any) (int, error) {
	rows, _ := tx.Query(ctx, take, args...)
	var ps picks
	if err := collectPicks(rows, &ps); err != nil || len(ps.ids) == 0 {
		return 0, err
	}
	return len(ps.ids), ps.move(ctx, tx)
}

// collectPicks adds the picks of rows, of a takePicks statement, to ps.
func collectPicks(rows pgx.Rows, ps *picks) error {
	var p pick
	_, err := pgx.ForEachRow(rows, []any{&p.id, &p.tid, &p.url, &p.visitType, &p.scheduled}, func() error {
		ps.add(p)
		return nil
	})
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

// vacuumPicksEvery is how many picks the flusher moves between two
// vacuums of listed_origin_picked (a variable so that tests can lower it).
var vacuumPicksEvery = 100000

// run flushes after each wake until stopped. A failed flush leaves the
// picks where they are: the next flush, or the next statement that needs
// them moved, moves them.
//
// It also vacuums listed_origin_picked every vacuumPicksEvery picks moved,
// as autovacuum would if it is on and round in time: each grab leaves a
// grab's worth of dead rows there, and the candidate queries probe the
// table's primary key for every row they read.
func (f *flusher) run(ctx context.Context) {
	defer close(f.done)
	moved := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wakeup:
		}
		// The move commits synchronously, though it is off every caller's
		// path: the next grab can flag the index entries of the rows it
		// deleted as dead, and step over them at almost no cost, only
		// once the commit is flushed (docs/performance.md, session 20).
		var n int
		err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
			return withIndexScans(ctx, tx, func() error {
				var err error
				n, err = movePicksAside(ctx, tx, takeUnlocked)
				return err
			})
		})
		if err == nil {
			moved += n
		}
		if err == nil && moved >= vacuumPicksEvery {
			moved = 0
			_, err = f.pool.Exec(ctx, "VACUUM (ANALYZE) listed_origin_picked")
		}
		if err != nil && ctx.Err() == nil {
			slog.Warn("postgres: moving the picks set aside to the pending table", "err", err)
		}
	}
}

// close stops the flusher; a flush in progress is rolled back, and the
// picks it was moving stay aside for the next mover.
func (f *flusher) close() {
	f.stop()
	<-f.done
}
