package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// A grab resolves its parameters (GrabNextVisits), takes the visit type's
// grab lock and moves back the pending origins its cooldowns make eligible
// (prepareGrab, lockAndRequeue), runs the candidate query (grabQuery) and
// marks the picks scheduled (markScheduled). The picks it sets aside then
// move to the pending table apart from it (aside.go).

// GrabNextVisits selects the top eligible origins of a policy and marks them
// scheduled, in one transaction that holds the visit type's grab lock. The
// picks are set aside (markScheduled), and move to the pending table in the
// background once the grab has returned.
//
// A grab first tries to do all that in two round trips (grabAtOnce); when
// its candidate query cannot mark every pick itself, it grabs again in a
// transaction that marks them as markScheduled does, and so do the next
// grabs of the visit type until one finds picks that all may wait set
// aside (picksAside.slow).
func (s *Store) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	p, cooldowns, err := p.Resolve(s.opts.Clock)
	if err != nil {
		return nil, err
	}
	var (
		picked []candidate
		done   bool
	)
	if !p.DryRun {
		s.aside.grabbing.Add(1)
		defer s.aside.grabbing.Add(-1)
	}
	if !p.DryRun && !s.aside.slow(p.VisitType) {
		err = retryAborted(func() error {
			picked, done, err = s.grabAtOnce(ctx, p, cooldowns)
			return err
		})
	}
	if err == nil && !done {
		// A mark lost in a database crash only offers its origins again,
		// which the orchestrator tolerates anyway: skip the commit's fsync.
		var plan grabPlan
		err = s.inTxWith(ctx, asyncCommit, func(tx pgx.Tx) error {
			picked, plan, err = s.grab(ctx, tx, p, cooldowns, recordAside)
			return err
		})
		if err == nil && !p.DryRun {
			s.aside.noteSlowGrab(p.VisitType, !allSetAside(picked, p.Now))
			s.recordWalk(p, plan, picked)
		}
	}
	if err != nil {
		return nil, translate(wrap(err, "grab %d %s visits (%s)", p.Count, p.VisitType, p.Policy))
	}
	if !p.DryRun && len(picked) > 0 {
		s.aside.wake()
	}
	origins := make([]revisit.ListedOrigin, len(picked))
	for i, c := range picked {
		origins[i] = c.Origin
	}
	return origins, nil
}

// grab takes the visit type's grab lock, selects the top p.Count eligible
// origins of p (resolved) and, unless p.DryRun, marks them scheduled,
// setting aside those that may wait unless mode is moveAll
// (markScheduled). With recordAside, the candidate query records them
// (setAsideInQuery), unless the rows it read hold one origin twice. Once
// the transaction commits, the caller records where the grab's walk
// stopped (recordWalk).
func (s *Store) grab(ctx context.Context, tx querier, p revisit.GrabParams, cooldowns revisit.Cooldowns, mode markMode) ([]candidate, grabPlan, error) {
	plan, err := s.prepareGrab(ctx, tx, nil, p, cooldowns)
	if err != nil {
		return nil, plan, err
	}
	q := plan.q
	inQuery := mode == recordAside && !p.DryRun
	fetches, firstRows := 0, 0
	picked, err := grabsql.Pick(p.Count, p.EveryListedRow, func(limit int) ([]candidate, error) {
		sql, args := q.SQL, append(slices.Clip(q.Args), limit)
		if inQuery && fetches == 0 {
			sql, args = setAsideInQuery(sql, len(args)+1, false, 0), append(args, p.Now)
		}
		rows, _ := tx.Query(ctx, sql, args...)
		cs, err := pgx.AppendRows(make([]candidate, 0, limit), rows, scanCandidate)
		if fetches++; fetches == 1 {
			firstRows = len(cs)
		}
		return cs, err
	})
	if err != nil || p.DryRun || len(picked) == 0 {
		return picked, plan, err
	}
	if mode != moveAll {
		// Not for VisitsDispatch: its throughput counts there, not the
		// next grab's latency, and a warm-up reads the head again.
		s.aside.noteWarmup(p, plan.head)
	}
	// The query set its picks aside if it was the only one, every row it
	// read was picked and no origin came twice.
	if inQuery && fetches == 1 && len(picked) == firstRows && distinctOrigins(picked) {
		mode = recordedAside
	}
	return picked, plan, markScheduled(ctx, tx, p, p.Now, picked, mode)
}

// GrabsResumed counts the grabs that resumed the walk of the grab before
// them (store.GrabWalker).
func (s *Store) GrabsResumed() int64 { return s.walks.Resumed() }

// recordWalk records where the walk of a committed grab of p, planned as
// plan, stopped (grabsql.Record).
func (s *Store) recordWalk(p revisit.GrabParams, plan grabPlan, picked []candidate) {
	grabsql.Record(&s.walks, dialect, p, plan.params, picked, plan.writes)
}

// grabAtOnce grabs as grab does, in two round trips: the first begins the
// transaction and takes the lock (lockAndRequeue), the second runs the
// candidate query, which marks every pick itself or none
// (setAsideInQuery), and commits. It returns done false when the query
// could not mark them: two rows held one origin, or one could not wait
// set aside (setAside). The commit then kept only the requeue step's
// moves, and the caller grabs again with grab.
func (s *Store) grabAtOnce(ctx context.Context, p revisit.GrabParams, cooldowns revisit.Cooldowns) (picked []candidate, done bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		// A step that failed left the transaction open: roll it back, so
		// that the connection goes back to the pool (released in a
		// transaction, it would be closed, and the pool would open another).
		if err != nil {
			_, _ = conn.Exec(ctx, "ROLLBACK")
		}
		conn.Release()
	}()
	plan, err := s.prepareGrab(ctx, conn, beginAsync, p, cooldowns)
	if err != nil {
		return nil, false, err
	}
	q := plan.q
	args := append(slices.Clip(q.Args), p.Count, p.Now)
	now, raise := len(args), 0
	if p.Policy == revisit.OriginsWithoutLastUpdate {
		args = append(args, p.VisitType)
		raise = len(args)
	}
	var b pgx.Batch
	b.Queue(setAsideInQuery(q.SQL, now, true, raise), args...).Query(func(rows pgx.Rows) error {
		picked, err = pgx.AppendRows(make([]candidate, 0, p.Count), rows, scanCandidate)
		return err
	})
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() != "COMMIT" {
			return fmt.Errorf("transaction not committed (%s)", tag)
		}
		return nil
	})
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, false, err
	}
	done = allSetAside(picked, p.Now) && distinctOrigins(picked)
	if done {
		s.aside.noteWarmup(p, plan.head)
		s.recordWalk(p, plan, picked)
	}
	return picked, done, nil
}

// grabPlan is the candidate query of a grab.
type grabPlan struct {
	// q is the candidate query, rendered from params: from the head of the
	// policy's order, or resuming the walk of the previous grab of the same
	// parameters (grabsql.Walks); head is the one from the head, which
	// the warm-up runs (picksAside.warmUp).
	q, head grabsql.Query
	params  grabsql.Params
	// writes is the count of writes to listed_origin the grab read under
	// its lock (migration 00031).
	writes int64
}

// prepareGrab sends, in one round trip, the statements first (those that
// begin the transaction, for grabAtOnce), the lookup of the lister that
// p (resolved, under cooldowns c) filters by, if any, and the grab lock
// with the requeue step (lockAndRequeue), then renders the candidate
// query. Unless p is a dry run, that query resumes the walk of the
// previous grab of the same parameters (grabsql.Walks) when, under the
// lock, no write came since and no cooldown ended meanwhile (the probe of
// grabsql.Dialect.Flips, in the same round trip).
func (s *Store) prepareGrab(ctx context.Context, tx querier, first []string, p revisit.GrabParams, c revisit.Cooldowns) (grabPlan, error) {
	gp := grabsql.Params{VisitType: p.VisitType, Policy: p.Policy, Now: p.Now, Disabled: p.Disabled,
		Cooldowns: c, Sample: p.Sample}
	var b pgx.Batch
	queueAll(&b, first)
	if p.ListerID != nil || p.ListerName != "" {
		b.Queue(`SELECT id, last_listing_finished_at FROM lister
			WHERE CASE WHEN $1::uuid IS NOT NULL THEN id = $1 ELSE name = $2 AND instance_name = $3 END`,
			p.ListerID, p.ListerName, p.ListerInstanceName).QueryRow(func(row pgx.Row) error {
			var id uuid.UUID
			err := row.Scan(&id, &gp.ListingFinishedAt)
			if err == pgx.ErrNoRows {
				return revisit.Errorf(revisit.CodeNotFound, "lister %s not found", listerLabel(p))
			}
			gp.ListerID = id
			return err
		})
	}
	walk, resume := s.walks.Find(p, gp)
	flipped := false
	probe := func(b *pgx.Batch) {
		if !resume {
			return
		}
		if q, ok := dialect.Flips(gp, walk.At); ok {
			b.Queue(q.SQL, q.Args...).QueryRow(func(row pgx.Row) error { return row.Scan(&flipped) })
		}
	}
	setAside, writes, err := lockAndRequeue(ctx, tx, &b, p.VisitType, p.Now, c, probe)
	if err != nil {
		return grabPlan{}, err
	}
	plan := grabPlan{params: gp, writes: writes}
	if plan.head, err = grabQuery(gp, setAside); err != nil {
		return grabPlan{}, err
	}
	plan.q = plan.head
	if resume && !flipped && walk.Writes == writes && walk.Holds(gp) {
		plan.params.After = s.walks.Resume(walk)
		plan.q, err = grabQuery(plan.params, setAside)
	}
	return plan, err
}

func listerLabel(p revisit.GrabParams) string {
	if p.ListerID != nil {
		return p.ListerID.String()
	}
	return p.ListerName + "/" + p.ListerInstanceName
}

// requeueChunk bounds the pending rows one requeue statement moves back
// (a variable so that tests can make several chunks of a few rows).
var requeueChunk = 10000

// lockAndRequeue takes the grab lock of a visit type, then moves back to
// listed_origin its pending origins that the scheduled and absolute
// cooldowns c at now would let a grab return, with their grab's mark, so
// that the candidate query, which reads listed_origin only, stays exact. With the default cooldowns it finds nothing: results
// and lost visits bring origins back long before.
//
// It also moves the picks set aside that may be due to the pending table
// (takeDue), so that the requeue step sees them, and finds the due origins
// a chunk at a time, with index scans only in the pending indexes' order
// (withIndexScans). It tells whether picks of the visit type remain set
// aside: under the grab lock, no new one can be, so a candidate query that
// finds none need not leave them out; and the count of writes to
// listed_origin once its moves are done (readWrites). tail queues more
// statements at the end of the first round trip.
//
// The statements queued in b before (prepareGrab's), the lock, the
// settings, the picks due, whether any remain and a first requeue
// statement go in one round trip: between grabs nothing is due, and that
// is all. When picks were due, they move and the requeue step
// runs again to see them; so it does while each statement moves a full
// chunk.
func lockAndRequeue(ctx context.Context, tx querier, b *pgx.Batch, visitType string, now time.Time, c revisit.Cooldowns,
	tail func(*pgx.Batch)) (setAside bool, writes int64, err error) {
	sql, args := requeueStatement(visitType, now, c)
	var (
		due   picks
		moved int
	)
	b.Queue("SELECT pg_advisory_xact_lock("+grabLockKey+")", visitType)
	queueAll(b, indexScansOnly)
	b.Queue(takeDue, visitType, dueBefore(now, c)).Query(func(rows pgx.Rows) error { return collectPicks(rows, &due) })
	b.Queue(anySetAside, visitType).QueryRow(func(row pgx.Row) error { return row.Scan(&setAside) })
	b.Queue(sql, args...).Exec(func(tag pgconn.CommandTag) error { moved = int(tag.RowsAffected()); return nil })
	queueAll(b, defaultScans)
	b.Queue(readWrites).QueryRow(func(row pgx.Row) error { return row.Scan(&writes) })
	tail(b)
	if err := tx.SendBatch(ctx, b).Close(); err != nil || (len(due.ids) == 0 && moved < requeueChunk) {
		return setAside, writes, err
	}
	err = withIndexScans(ctx, tx, func() error {
		if len(due.ids) > 0 {
			if err := due.move(ctx, tx); err != nil {
				return err
			}
		}
		_, err := inChunks(requeueChunk, func() (int, error) {
			tag, err := tx.Exec(ctx, sql, args...)
			return int(tag.RowsAffected()), err
		})
		return err
	})
	if err == nil {
		err = tx.QueryRow(ctx, readWrites).Scan(&writes)
	}
	return setAside, writes, err
}

// readWrites reads the count of statements that have added or changed
// listed rows (migration 00031).
const readWrites = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM listed_origin_writes"

// requeueStatement renders the statement of the requeue step of visit
// type visitType at now under cooldowns c, which moves at most
// requeueChunk pending origins back.
func requeueStatement(visitType string, now time.Time, c revisit.Cooldowns) (string, []any) {
	args := []any{visitType, requeueChunk}
	due := "visit_type = $1"
	if c.Absolute > 0 {
		args = append(args, now.Add(-c.Absolute))
		due += fmt.Sprintf(" AND last_scheduled < $%d", len(args))
	}
	// Eligible under the scheduled cooldown: marked before now - Scheduled,
	// or visited since the mark (a clock set back).
	branches := []string{"SELECT ctid FROM listed_origin_pending WHERE " + due}
	if c.Scheduled > 0 {
		args = append(args, now.Add(-c.Scheduled))
		branches[0] += fmt.Sprintf(" AND last_scheduled < $%d", len(args))
		branches = append(branches, "SELECT ctid FROM listed_origin_pending WHERE "+due+" AND last_scheduled < last_visit LIMIT $2")
	}
	branches[0] += " ORDER BY last_scheduled LIMIT $2"
	return `
		WITH due AS ((` + strings.Join(branches, ") UNION (") + `)
		), back AS (
			DELETE FROM listed_origin_pending WHERE ctid = ANY(ARRAY(SELECT ctid FROM due)) RETURNING *
		)
		INSERT INTO listed_origin (` + listedColumns + `) OVERRIDING SYSTEM VALUE SELECT ` + listedColumns + ` FROM back`, args
}

// dialect renders grab queries for PostgreSQL. The failed and not-found
// cooldowns compare the expressions that end the policy indexes that
// gather origins in those cooldowns at the head of their order, so that a
// scan skips them in the index, without reading their rows (migration
// 00016).
var dialect = grabsql.Dialect{
	Placeholder:    func(n int) string { return fmt.Sprintf("$%d", n) },
	IsDistinctFrom: "IS DISTINCT FROM",
	NullsFirst:     func(col string) string { return col + " NULLS FIRST" },
	NullsLast:      func(col string) string { return col + " NULLS LAST" },
	Lag:            "(last_update - last_successful)",
	LagValue: func(d time.Duration) any {
		return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
	},
	Random:     "random()",
	Time:       func(t time.Time) any { return t },
	RowColumns: "ctid, shared, last_visit",
	StatusCooldown: func(status, bound string) string {
		return "(CASE last_visit_status WHEN '" + status + "' THEN last_visit ELSE '-infinity' END) < " + bound
	},
}

// dialectAside renders the grab queries of a visit type whose picks are
// set aside: they leave those picks out, one probe of
// listed_origin_picked's primary key per candidate row. OFFSET 0 keeps it
// that probe: as an anti-join, planned with statistics taken while the
// table was empty, it read all the picks once and compared each candidate
// with every one of them (2 s a grab with 7000 picks aside).
// A grab whose visit type has none set aside, as between grabs once they
// have moved, uses dialect, without the probes (~1 ms of a git grab's
// candidate query, docs/performance.md).
var dialectAside = func() grabsql.Dialect {
	d := dialect
	d.Exclude = "NOT EXISTS (SELECT FROM listed_origin_picked k WHERE k.id = listed_origin.id OFFSET 0)"
	return d
}()

// grabQuery renders the candidate query of gp, leaving out the picks set
// aside if setAside (some of the visit type's are) or if it filters by
// lister.
func grabQuery(gp grabsql.Params, setAside bool) (grabsql.Query, error) {
	// A grab filtered by lister leaves them out in any case: without the
	// probes' per-row cost, the planner prefers the visit type's index,
	// filtered by lister, to the lister's own index, priced ~20 times
	// dearer from its first column's correlation, and reads all the other
	// listers' rows at the head of the order (18.6 ms instead of 5.5 for
	// git first_visits_after_listing on the 10M set).
	if setAside || gp.ListerID != nil {
		return dialectAside.Build(gp)
	}
	return dialect.Build(gp)
}

// setAsideInQuery renders a candidate query (sql) that also records in
// listed_origin_picked the rows it returns that may wait there (setAside),
// grabbed at the time bound to placeholder now, unless two of the rows
// hold one origin (two listers' rows of a shared origin): the grab then
// keeps one of them only and sets its picks aside itself. Recording them
// here spares a grab a round trip and the picks sent back as arrays. A
// materialized CTE's rows come out in the order they went in: the policy's.
//
// With all, the query marks all its rows or none: it records them only if
// every one may wait (grabAtOnce); and with raise, the placeholder of the
// grab's visit type, it then raises the visit type's queue position to
// the largest of theirs (0 when none has one), as markScheduled does for
// an origins_without_last_update grab.
func setAsideInQuery(sql string, now int, all bool, raise int) string {
	at := fmt.Sprintf("$%d::timestamptz", now)
	mayWait := "NOT shared AND (last_visit IS NULL OR last_visit <= " + at + ")"
	marked := "NOT EXISTS (SELECT FROM c GROUP BY url HAVING count(*) > 1)"
	if all {
		marked += " AND NOT EXISTS (SELECT FROM c WHERE NOT (" + mayWait + "))"
	}
	position := ""
	if raise > 0 {
		position = fmt.Sprintf(`, raised AS (
		INSERT INTO queue_position AS qp (visit_type, position)
		SELECT $%d, coalesce(max(next_visit_queue_position), 0) FROM c
		HAVING count(*) > 0 AND %s
		ON CONFLICT (visit_type) DO UPDATE SET position = GREATEST(qp.position, EXCLUDED.position))`, raise, marked)
	}
	return `WITH c AS MATERIALIZED (` + sql + `), aside AS (
		INSERT INTO listed_origin_picked (id, tid, url, visit_type, scheduled_at)
		SELECT id, ctid, url, visit_type, ` + at + ` FROM c
		WHERE ` + mayWait + ` AND ` + marked + `)` + position + `
	SELECT * FROM c`
}

// candidate is a row of the candidate query with its address, by which a
// grab moves it, and whether other listers list its origin too.
type candidate struct {
	grabsql.Candidate
	ctid   pgtype.TID
	shared bool
	// lastVisit is the row's last_visit: a pick visited after its grab's
	// now is not set aside (setAside).
	lastVisit *time.Time
}

// scanCandidate scans a row of grabsql.Columns and dialect.RowColumns.
func scanCandidate(row pgx.CollectableRow) (candidate, error) {
	var c candidate
	dests := append(originDests(&c.Origin), &c.QueuePosition, &c.LastScheduled, &c.LastSuccessful, &c.ID,
		&c.ctid, &c.shared, &c.lastVisit)
	err := row.Scan(dests...)
	normalizeOrigin(&c.Origin)
	c.LastScheduled, c.LastSuccessful = utcPtr(c.LastScheduled), utcPtr(c.LastSuccessful)
	return c, err
}

// allSetAside tells whether every pick grabbed at now may wait set aside.
func allSetAside(picked []candidate, now time.Time) bool {
	return !slices.ContainsFunc(picked, func(c candidate) bool { return !setAside(c, now) })
}

// distinctOrigins tells whether no two candidates hold one origin.
func distinctOrigins(cs []candidate) bool {
	seen := make(map[string]struct{}, len(cs))
	for _, c := range cs {
		if _, dup := seen[c.Origin.URL]; dup {
			return false
		}
		seen[c.Origin.URL] = struct{}{}
	}
	return true
}

// markMode says what a grab does with the picks that may wait set aside in
// listed_origin_picked (setAside).
type markMode int

const (
	// moveAll: none waits, every pick moves to the pending table at once.
	moveAll markMode = iota
	// recordAside: they wait, recorded by the grab.
	recordAside
	// recordedAside: they wait, and the candidate query has recorded them
	// (setAsideInQuery).
	recordedAside
)

// markScheduled marks the picked origins scheduled at now, either by
// moving their listed rows (of every lister) to listed_origin_pending with
// last_scheduled = max(existing, now), or, unless mode is moveAll, by
// setting the picks of origins that one lister lists aside in
// listed_origin_picked, to move after the grab (flushPicks), which
// recordedAside says is done; shared origins move at once. For
// origins_without_last_update it also raises the queue position.
//
// A picked row is found by the address the candidate query read, under the
// grab lock that keeps recording and results out; the origin's other rows
// are looked up by URL only when it is shared, or when its row has moved
// (a concurrent disable: it takes no grab lock).
func markScheduled(ctx context.Context, tx querier, p revisit.GrabParams, now time.Time, picked []candidate, mode markMode) error {
	var move, keep picks
	for _, c := range picked {
		pk := pick{id: c.ID, tid: c.ctid, url: c.Origin.URL, visitType: p.VisitType, shared: c.shared, scheduled: now}
		switch {
		case mode == moveAll || !setAside(c, now):
			move.add(pk)
		case mode == recordAside:
			keep.add(pk)
		}
	}
	// Each picked row is fetched by its address, one TID probe per pick in
	// a join with the arrays; the URL check proves the address still holds
	// the picked origin. No array is compared element by element
	// (ctid = ANY($1), url = ANY($2)): planned for each grab's values, as
	// every statement here is, such a comparison is estimated element by
	// element, ~0.5–1 ms more planning a grab (docs/performance.md).
	// The writes go in one round trip.
	var b pgx.Batch
	if len(move.tids) > 0 {
		move.queueMove(&b)
	}
	if len(keep.tids) > 0 {
		b.Queue(setPicksAside, keep.ids, keep.tids, keep.urls, p.VisitType, now)
	}
	if pos, ok := grabsql.QueuePositionOf(picked); ok && p.Policy == revisit.OriginsWithoutLastUpdate {
		b.Queue(`INSERT INTO queue_position AS qp (visit_type, position) VALUES ($1, $2)
			ON CONFLICT (visit_type) DO UPDATE SET position = GREATEST(qp.position, EXCLUDED.position)`, p.VisitType, pos)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, &b).Close()
}

// setAside tells whether a pick grabbed at now may wait in
// listed_origin_picked: not if its origin is shared (its other rows would
// stay eligible) nor if it was visited after now (a clock set back: the
// scheduled cooldown lets it be grabbed again at once, and flushDuePicks
// only looks at the time of the grab).
func setAside(c candidate, now time.Time) bool {
	return !c.shared && (c.lastVisit == nil || !c.lastVisit.After(now))
}

// movePicksFrom renders the statement that moves the picks that the
// statement picked returns (tid, url, visit_type, shared, scheduled: a
// picked row's address, URL and visit type, whether its origin is shared,
// the time of its grab) to listed_origin_pending, the time of their grab
// their new mark unless a later one is there, and returns how many picks
// it took. Each pick's row moves by its address, and the other listers'
// rows of the origins that are shared, or whose picked row has moved, by
// URL (OFFSET 0 keeps that lookup a probe per origin, and the visit type
// out of it: see TestMovePlan).
func movePicksFrom(picked string) string {
	return `
	WITH picked AS (` + picked + `
	), by_row AS (
		DELETE FROM listed_origin l USING picked p
		WHERE l.ctid = p.tid AND l.visit_type = p.visit_type AND l.url = p.url RETURNING l.*, p.scheduled
	), by_url AS (
		DELETE FROM listed_origin l USING (
			SELECT o.ctid, p.scheduled FROM picked p CROSS JOIN LATERAL (
				SELECT ctid, visit_type FROM listed_origin WHERE url = p.url OFFSET 0) o
			WHERE o.visit_type = p.visit_type AND (p.shared OR NOT EXISTS (SELECT FROM by_row r WHERE r.url = p.url))
				AND NOT EXISTS (SELECT FROM picked q WHERE q.tid = o.ctid)) o
		WHERE l.ctid = o.ctid
		RETURNING l.*, o.scheduled
	), moved AS (
		INSERT INTO listed_origin_pending (` + pendingColumns + `)
		SELECT ` + pendingValues("GREATEST(last_scheduled, scheduled)") + ` FROM by_row
		UNION ALL
		SELECT ` + pendingValues("GREATEST(last_scheduled, scheduled)") + ` FROM by_url
	)
	SELECT count(*) FROM picked`
}

// movePicks moves the picks of $1 (addresses), $2 (URLs), $3 (visit
// types), $4 (whether shared) and $5 (times of their grab), as
// movePicksFrom. The picks come as arrays, whose length the planner
// knows: read from a table by a query whose size the planner estimated
// from the table's pages, dead rows included, the planner hashed all of
// listed_origin to find them (2 s a move).
var movePicks = movePicksFrom(`SELECT * FROM unnest($1::tid[], $2::text[], $3::text[], $4::bool[], $5::timestamptz[])
		AS p(tid, url, visit_type, shared, scheduled)`)

// setPicksAside records the picks of $1 (ids), $2 (addresses) and $3 (URLs)
// of visit type $4, grabbed at $5, in listed_origin_picked.
const setPicksAside = `INSERT INTO listed_origin_picked (id, tid, url, visit_type, scheduled_at)
	SELECT id, tid, url, $4, $5 FROM unnest($1::int8[], $2::tid[], $3::text[]) AS p(id, tid, url)`

// pick is a picked row, as movePicks and setPicksAside take it.
type pick struct {
	id        int64
	tid       pgtype.TID
	url       string
	visitType string
	shared    bool
	scheduled time.Time
}

// picks are picks by column, as the statements bind them.
type picks struct {
	ids        []int64
	tids       []pgtype.TID
	urls       []string
	visitTypes []string
	shared     []bool
	scheduled  []time.Time
}

func (ps *picks) add(p pick) {
	ps.ids, ps.tids, ps.urls = append(ps.ids, p.id), append(ps.tids, p.tid), append(ps.urls, p.url)
	ps.visitTypes, ps.shared = append(ps.visitTypes, p.visitType), append(ps.shared, p.shared)
	ps.scheduled = append(ps.scheduled, p.scheduled)
}

// queueMove queues movePicks of ps in b.
func (ps *picks) queueMove(b *pgx.Batch) {
	b.Queue(movePicks, ps.tids, ps.urls, ps.visitTypes, ps.shared, ps.scheduled)
}

// move moves ps to listed_origin_pending (movePicks).
func (ps *picks) move(ctx context.Context, tx querier) error {
	var b pgx.Batch
	ps.queueMove(&b)
	return tx.SendBatch(ctx, &b).Close()
}
