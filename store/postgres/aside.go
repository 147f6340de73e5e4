package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// The picks that grabs set aside in listed_origin_picked (markScheduled)
// move to listed_origin_pending with the marks of their grabs:
//   - flushPicks moves all of them, first thing in every statement that
//     looks pending origins up (withIndexLookups), waiting for the moves
//     in progress: such a statement must find every pending origin there;
//   - a grab moves those of its visit type that its cooldowns may make
//     eligible again, and its requeue step then sees them
//     (lockAndRequeue);
//   - the background flusher (picksAside) moves them soon after each grab,
//     waiting for the moves in progress too, then warms the next grabs up
//     (picksAside.warmUp).
//
// Each takes its picks out of the table (takePicks), locked in id order so
// that no two of them wait for each other in turn (a deadlock), and moves
// them (movePicksFrom): flushPicks and the flusher in one statement, a
// grab once it has read them.

// takePicks renders the statement that deletes the picks set aside that
// cond selects, locked in id order, and returns their columns returning;
// a pick that another mover has locked is waited for, and skipped if that
// mover moved it. The picks are found through the primary key
// (withIndexScans): the table churns a grab's worth of rows at every
// grab, and its estimated size counts the dead ones until a vacuum. The
// planner estimates the picks the statement returns from the array it
// compares ids with, whose length it does not know (a few rows), not
// from the table: so movePicksFrom takes them from it.
func takePicks(cond, returning string) string {
	return `DELETE FROM listed_origin_picked WHERE id = ANY(ARRAY(
		SELECT id FROM listed_origin_picked WHERE ` + cond + ` ORDER BY id FOR UPDATE))
		RETURNING ` + returning
}

var (
	// flushAll moves every pick set aside, in one statement: the picks
	// never leave the database.
	flushAll = movePicksFrom(takePicks("true", "tid, url, visit_type, false AS shared, scheduled_at AS scheduled"))
	// takeDue takes the picks of visit type $1 grabbed before $2 (all of
	// them when null), for the grab to move (lockAndRequeue).
	takeDue = takePicks("visit_type = $1 AND ($2::timestamptz IS NULL OR scheduled_at < $2)",
		"id, tid, url, visit_type, scheduled_at")
)

// anySetAside tells whether picks of visit type $1 are set aside. ORDER BY
// id keeps it on the table's key: without it, no index serves the query,
// and the table was read whole, dead rows included (1.2 ms a grab between
// two vacuums).
const anySetAside = `SELECT count(*) > 0 FROM (
	SELECT FROM listed_origin_picked WHERE visit_type = $1 ORDER BY id LIMIT 1) p`

// flushPicks moves every pick set aside to listed_origin_pending; tx runs
// with index scans only (withIndexScans). When there is none, as between
// grabs, it costs one probe of the picks' key, and no move.
func flushPicks(ctx context.Context, tx pgx.Tx) error {
	_, err := moveAllAside(ctx, tx)
	return err
}

// moveAllAside moves every pick set aside to listed_origin_pending and
// returns how many it moved.
func moveAllAside(ctx context.Context, tx pgx.Tx) (moved int, err error) {
	err = tx.QueryRow(ctx, flushAll).Scan(&moved)
	return moved, err
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

// collectPicks adds the picks of rows, of a takePicks statement, to ps.
func collectPicks(rows pgx.Rows, ps *picks) error {
	var p pick
	_, err := pgx.ForEachRow(rows, []any{&p.id, &p.tid, &p.url, &p.visitType, &p.scheduled}, func() error {
		ps.add(p)
		return nil
	})
	return err
}

// picksAside is what a store keeps beside its grabs for the picks they set
// aside: a background flusher that moves them to listed_origin_pending soon
// after the grabs return, so that the statements that would otherwise move
// them first (flushPicks) seldom have to, then warms the next grabs up
// (warmUp); and the visit types whose grabs mark their picks without
// trying grabAtOnce first (slow).
type picksAside struct {
	pool   *pgxpool.Pool
	wakeup chan struct{}
	stop   context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// warmups holds the candidate query of the last grab of each visit
	// type, policy and lister since the last warm-up (noteWarmup).
	warmups map[string]warmup
	// grabbing counts this process's grabs in progress (GrabNextVisits),
	// to which a warm-up gives way.
	grabbing atomic.Int32
	// slowGrabs holds the visit types whose grabs skip grabAtOnce
	// (noteSlowGrab).
	slowGrabs sync.Map
}

// warmup is a grab's candidate query and its arguments, the limit last.
type warmup struct {
	sql  string
	args []any
}

// startPicksAside starts the background flusher of the picks set aside in
// pool's database.
func startPicksAside(pool *pgxpool.Pool) *picksAside {
	ctx, stop := context.WithCancel(context.Background())
	a := &picksAside{pool: pool, wakeup: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go a.run(ctx)
	return a
}

// slow tells whether the grabs of visitType skip grabAtOnce (noteSlowGrab).
func (a *picksAside) slow(visitType string) bool {
	_, slow := a.slowGrabs.Load(visitType)
	return slow
}

// noteSlowGrab records whether the grabs of visitType mark their picks
// with grab from now on (slow), as when the last one had picks that could
// not wait set aside, shared origins' most often: grabAtOnce would have
// run its candidate query for nothing.
func (a *picksAside) noteSlowGrab(visitType string, slow bool) {
	if slow {
		a.slowGrabs.Store(visitType, true)
	} else {
		a.slowGrabs.Delete(visitType)
	}
}

// noteWarmup records the candidate query q of p, a grab that took picks,
// for the warm-up after their move (warmUp); the caller then wakes the
// flusher. A sampled grab reads other rows each time: none to warm up.
func (a *picksAside) noteWarmup(p revisit.GrabParams, q grabsql.Query) {
	if p.Sample != 0 {
		return
	}
	lister := ""
	if p.ListerID != nil || p.ListerName != "" {
		lister = listerLabel(p)
	}
	key := fmt.Sprintf("%s %s %s %t", p.VisitType, p.Policy, lister, p.Disabled)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.warmups == nil {
		a.warmups = make(map[string]warmup)
	}
	a.warmups[key] = warmup{sql: q.SQL, args: append(slices.Clip(q.Args), p.Count)}
}

// wake asks for a move, without waiting.
func (a *picksAside) wake() {
	select {
	case a.wakeup <- struct{}{}:
	default:
	}
}

// vacuumPicksEvery is how many picks the background flusher moves between
// two vacuums of listed_origin_picked (a variable so that tests can lower
// it).
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
func (a *picksAside) run(ctx context.Context) {
	defer close(a.done)
	moved := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wakeup:
		}
		n, _, err := a.flush(ctx)
		moved += n
		if err == nil && moved >= vacuumPicksEvery {
			moved = 0
			_, err = a.pool.Exec(ctx, "VACUUM (ANALYZE) listed_origin_picked")
		}
		if err != nil && ctx.Err() == nil {
			slog.Warn("postgres: moving the picks set aside to the pending table, or warming the next grabs up", "err", err)
		}
	}
}

// flush moves every pick set aside to the pending table, then warms up
// (warmUp), and returns how many picks it moved and how many candidate
// queries the warm-up ran.
func (a *picksAside) flush(ctx context.Context) (moved, warmed int, err error) {
	// The move commits synchronously, though it is off every caller's
	// path: the next grab, or the warm-up, can flag the index entries of
	// the rows it deleted as dead, and step over them at almost no cost,
	// only once the commit is flushed (docs/performance.md).
	err = pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			var err error
			moved, err = moveAllAside(ctx, tx)
			return err
		})
	})
	if err != nil {
		return 0, 0, err
	}
	warmed, err = a.warmUp(ctx)
	return moved, warmed, err
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
func (a *picksAside) warmUp(ctx context.Context) (int, error) {
	a.mu.Lock()
	ws := a.warmups
	a.warmups = nil
	a.mu.Unlock()
	if len(ws) == 0 || a.grabbing.Load() > 0 {
		return 0, nil
	}
	// Index scans only: where the planner would read a small table whole,
	// no grab meets dead index entries either.
	ran := 0
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			for _, w := range ws {
				if a.grabbing.Load() > 0 {
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

// close stops the background flusher; a flush in progress is rolled back,
// and the picks it was moving stay aside for the next mover.
func (a *picksAside) close() {
	a.stop()
	<-a.done
}
