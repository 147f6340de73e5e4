package postgres

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
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
//   - the background flusher moves them soon after each grab, waiting
//     for the moves in progress too, then warms the next grabs up
//     (flusher.warmUp).
//
// Each takes its picks out of the table (takePicks), locked in id order so
// that no two of them wait for each other in turn (a deadlock), then moves
// them (movePicks).

// takePicks renders the statement that deletes and returns the picks set
// aside that cond selects, locked in id order; a pick that another mover
// has locked is waited for, and skipped if that mover moved it. The picks
// are found through the primary key (withIndexScans): the table churns a
// grab's worth of rows at every grab, and its estimated size counts the
// dead ones until a vacuum.
func takePicks(cond string) string {
	return `DELETE FROM listed_origin_picked WHERE id = ANY(ARRAY(
		SELECT id FROM listed_origin_picked WHERE ` + cond + ` ORDER BY id FOR UPDATE))
		RETURNING id, tid, url, visit_type, scheduled_at`
}

var (
	takeAll = takePicks("true")
	takeDue = takePicks("visit_type = $1 AND ($2::timestamptz IS NULL OR scheduled_at < $2)")
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
// that would otherwise move them first (flushPicks) seldom have to; then
// it warms the next grabs up (warmUp).
type flusher struct {
	pool   *pgxpool.Pool
	wakeup chan struct{}
	stop   context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// warmups holds the candidate query of the last grab of each visit
	// type, policy and lister since the last warm-up (noteGrab).
	warmups map[string]warmup
	// grabbing counts this process's grabs in progress (GrabNextVisits),
	// to which a warm-up gives way.
	grabbing atomic.Int32
}

// warmup is a grab's candidate query and its arguments, the limit last.
type warmup struct {
	sql  string
	args []any
}

// noteGrab records the candidate query of a grab that took picks, under
// key, for the next warm-up; the caller then wakes the flusher.
func (f *flusher) noteGrab(key string, w warmup) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.warmups == nil {
		f.warmups = make(map[string]warmup)
	}
	f.warmups[key] = w
}

// warmUp runs again, read-only, the candidate query of each grab noted
// since the last warm-up, once the picks set aside before it have moved
// and the moves have committed. A grab's picks leave the policy indexes
// dead entries at the head of its order, which the next grab would visit
// in the heap one by one, find dead and flag (~1,000 heap visits, 1.5–2.5
// ms on the 10M set): this query visits and flags them instead, off every
// caller's path, and the next grab steps over them in the index.
//
// A grab that has started meanwhile would read the same entries at the
// same time, and the two would share the cores: the warm-up then leaves
// its queries not yet run to the grabs (a grab back-to-back with the
// previous one). It returns how many candidate queries it ran.
func (f *flusher) warmUp(ctx context.Context) (int, error) {
	f.mu.Lock()
	ws := f.warmups
	f.warmups = nil
	f.mu.Unlock()
	if len(ws) == 0 || f.grabbing.Load() > 0 {
		return 0, nil
	}
	// Index scans only: where the planner would read a small table whole,
	// no grab meets dead index entries either.
	ran := 0
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			for _, w := range ws {
				if f.grabbing.Load() > 0 {
					return nil
				}
				if _, err := tx.Exec(ctx, "SELECT count(*) FROM ("+w.sql+") AS w", w.args...); err != nil {
					return err
				}
				ran++
			}
			return nil
		})
	})
	return ran, err
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

// run flushes, then warms up, after each wake until stopped. A failed
// flush leaves the picks where they are: the next flush, or the next
// statement that needs them moved, moves them. The flush waits for the
// picks that another statement is moving, so that when it commits, every
// pick set aside before the wake has moved, and the warm-up finds their
// rows dead.
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
		n, _, err := f.flush(ctx)
		moved += n
		if err == nil && moved >= vacuumPicksEvery {
			moved = 0
			_, err = f.pool.Exec(ctx, "VACUUM (ANALYZE) listed_origin_picked")
		}
		if err != nil && ctx.Err() == nil {
			slog.Warn("postgres: moving the picks set aside to the pending table, or warming the next grabs up", "err", err)
		}
	}
}

// flush moves every pick set aside to the pending table, then warms up
// (warmUp), and returns how many picks it moved and how many candidate
// queries the warm-up ran.
func (f *flusher) flush(ctx context.Context) (moved, warmed int, err error) {
	// The move commits synchronously, though it is off every caller's
	// path: the next grab, or the warm-up, can flag the index entries of
	// the rows it deleted as dead, and step over them at almost no cost,
	// only once the commit is flushed (docs/performance.md, session 20).
	err = pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			var err error
			moved, err = movePicksAside(ctx, tx, takeAll)
			return err
		})
	})
	if err != nil {
		return 0, 0, err
	}
	warmed, err = f.warmUp(ctx)
	return moved, warmed, err
}

// close stops the flusher; a flush in progress is rolled back, and the
// picks it was moving stay aside for the next mover.
func (f *flusher) close() {
	f.stop()
	<-f.done
}
