package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// dialect renders grab queries for PostgreSQL.
var dialect = grabsql.Dialect{
	Placeholder:    func(n int) string { return fmt.Sprintf("$%d", n) },
	IsDistinctFrom: "IS DISTINCT FROM",
	NullsFirst:     func(col string) string { return col + " NULLS FIRST" },
	NullsLast:      func(col string) string { return col + " NULLS LAST" },
	Lag:            "(last_update - last_successful)",
	Random:         "random()",
	Time:           func(t time.Time) any { return t },
	RowColumns:     "ctid, shared",
}

// candidate is a row of the candidate query with its address, by which a
// grab moves it, and whether other listers list its origin too.
type candidate struct {
	grabsql.Candidate
	ctid   pgtype.TID
	shared bool
}

// GrabNextVisits selects the top eligible origins of a policy and marks them
// scheduled, in one transaction that holds the visit type's grab lock.
func (s *Store) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	p, cooldowns, err := p.Resolve(s.opts.Now)
	if err != nil {
		return nil, err
	}
	var picked []candidate
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// A mark lost in a database crash only offers its origins again,
		// which the orchestrator tolerates anyway: skip the commit's fsync.
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		picked, err = s.grab(ctx, tx, p, cooldowns)
		return err
	})
	if err != nil {
		return nil, translate(wrap(err, "grab %d %s visits (%s)", p.Count, p.VisitType, p.Policy))
	}
	origins := make([]revisit.ListedOrigin, len(picked))
	for i, c := range picked {
		origins[i] = c.Origin
	}
	return origins, nil
}

// grab takes the visit type's grab lock, selects the top p.Count eligible
// origins of p (resolved) and, unless p.DryRun, marks them scheduled.
func (s *Store) grab(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, cooldowns revisit.Cooldowns) ([]candidate, error) {
	if err := lockGrabs(ctx, tx, p.VisitType); err != nil {
		return nil, err
	}
	if err := requeue(ctx, tx, p.VisitType, p.Now, cooldowns); err != nil {
		return nil, err
	}
	q, err := s.grabQuery(ctx, tx, p, p.Now, cooldowns)
	if err != nil {
		return nil, err
	}
	picked, err := grabsql.Pick(p.Count, func(limit int) ([]candidate, error) {
		rows, _ := tx.Query(ctx, q.SQL, append(q.Args, limit)...)
		return pgx.AppendRows(make([]candidate, 0, limit), rows, scanCandidate)
	})
	if err != nil || p.DryRun || len(picked) == 0 {
		return picked, err
	}
	return picked, markScheduled(ctx, tx, p, p.Now, picked)
}

// grabQuery resolves the lister filter and renders the candidate query.
func (s *Store) grabQuery(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, now time.Time, c revisit.Cooldowns) (grabsql.Query, error) {
	gp := grabsql.Params{VisitType: p.VisitType, Policy: p.Policy, Now: now, Disabled: p.Disabled,
		Cooldowns: c, Sample: p.Sample}
	if p.ListerID != nil || p.ListerName != "" {
		var (
			id       uuid.UUID
			finished *time.Time
		)
		err := tx.QueryRow(ctx, `SELECT id, last_listing_finished_at FROM lister
			WHERE CASE WHEN $1::uuid IS NOT NULL THEN id = $1 ELSE name = $2 AND instance_name = $3 END`,
			p.ListerID, p.ListerName, p.ListerInstanceName).Scan(&id, &finished)
		if err == pgx.ErrNoRows {
			return grabsql.Query{}, revisit.Errorf(revisit.CodeNotFound, "lister %s not found", listerLabel(p))
		}
		if err != nil {
			return grabsql.Query{}, err
		}
		gp.ListerID, gp.ListingFinishedAt = id, finished
	}
	return dialect.Build(gp)
}

func listerLabel(p revisit.GrabParams) string {
	if p.ListerID != nil {
		return p.ListerID.String()
	}
	return p.ListerName + "/" + p.ListerInstanceName
}

// moveToPending moves the picked rows ($1 their addresses, $2 their URLs,
// $3 whether shared) of visit type $4 to listed_origin_pending, marked
// scheduled at $5: each picked row by its address, and the other listers'
// rows of the origins that are shared, or whose picked row has moved, by
// URL (OFFSET 0 keeps that lookup a probe per origin, and the visit type
// out of it: see TestMovePlan).
var moveToPending = `
	WITH picked AS (
		SELECT * FROM unnest($1::tid[], $2::text[], $3::bool[]) AS p(tid, url, shared)
	), by_row AS (
		DELETE FROM listed_origin l USING picked p
		WHERE l.ctid = p.tid AND l.visit_type = $4 AND l.url = p.url RETURNING l.*
	), by_url AS (
		DELETE FROM listed_origin l USING (
			SELECT o.ctid FROM picked p CROSS JOIN LATERAL (
				SELECT ctid, visit_type FROM listed_origin WHERE url = p.url OFFSET 0) o
			WHERE o.visit_type = $4 AND (p.shared OR NOT EXISTS (SELECT FROM by_row r WHERE r.url = p.url))
				AND NOT EXISTS (SELECT FROM picked q WHERE q.tid = o.ctid)) o
		WHERE l.ctid = o.ctid
		RETURNING l.*
	)
	INSERT INTO listed_origin_pending (` + listedColumns + `)
	SELECT ` + listedColumnsWith("GREATEST(last_scheduled, $5)") + ` FROM by_row
	UNION ALL
	SELECT ` + listedColumnsWith("GREATEST(last_scheduled, $5)") + ` FROM by_url`

// markScheduled moves the picked origins' listed rows (of every lister) to
// listed_origin_pending with last_scheduled = max(existing, now), and for
// origins_without_last_update raises the queue position (a second statement).
// visit_stats keeps its last_scheduled until the origin comes back
// (docs/store.md, "Pending origins").
//
// A picked row is found by the address the candidate query read, under the
// grab lock that keeps recording and results out; the origin's other rows
// are looked up by URL only when it is shared, or when its row has moved
// (a concurrent disable: it takes no grab lock).
func markScheduled(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, now time.Time, picked []candidate) error {
	var (
		tids   = make([]pgtype.TID, len(picked))
		urls   = make([]string, len(picked))
		shared = make([]bool, len(picked))
	)
	for i, c := range picked {
		tids[i], urls[i], shared[i] = c.ctid, c.Origin.URL, c.shared
	}
	// Each picked row is fetched by its address, one TID probe per pick in
	// a join with the arrays; the URL check proves the address still holds
	// the picked origin. No array is compared element by element
	// (ctid = ANY($1), url = ANY($2)): planned for each grab's values, as
	// every statement here is, such a comparison is estimated element by
	// element, ~0.5–1 ms more planning a grab (docs/performance.md,
	// session 12). The move and the queue position go in one round trip.
	var b pgx.Batch
	b.Queue(moveToPending, tids, urls, shared, p.VisitType, now)
	if pos, ok := grabsql.MaxQueuePosition(picked); ok && p.Policy == revisit.OriginsWithoutLastUpdate {
		b.Queue(`INSERT INTO queue_position AS qp (visit_type, position) VALUES ($1, $2)
			ON CONFLICT (visit_type) DO UPDATE SET position = GREATEST(qp.position, EXCLUDED.position)`, p.VisitType, pos)
	}
	return tx.SendBatch(ctx, &b).Close()
}

// requeueChunk bounds the pending rows one requeue statement moves back
// (a variable so that tests can make several chunks of a few rows).
var requeueChunk = 10000

// requeue moves back to listed_origin the pending origins of a visit type
// that the scheduled and absolute cooldowns c at now would let a grab
// return, folding their last_scheduled into visit_stats, so that the
// candidate query, which reads listed_origin only, stays exact. With the
// default cooldowns it finds nothing: results and lost visits bring
// origins back long before.
//
// It finds them a chunk at a time, with index scans only in the pending
// indexes' order (withIndexScans).
func requeue(ctx context.Context, tx pgx.Tx, visitType string, now time.Time, c revisit.Cooldowns) error {
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
	sql := `
		WITH due AS ((` + strings.Join(branches, ") UNION (") + `)
		), back AS (
			DELETE FROM listed_origin_pending WHERE ctid = ANY(ARRAY(SELECT ctid FROM due)) RETURNING *
		), folded AS (
			INSERT INTO visit_stats AS vs (url, visit_type, last_scheduled)
			SELECT url, visit_type, max(last_scheduled) FROM back GROUP BY url, visit_type
			ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled = GREATEST(vs.last_scheduled, EXCLUDED.last_scheduled)
		)
		INSERT INTO listed_origin (` + listedColumns + `) OVERRIDING SYSTEM VALUE SELECT ` + listedColumns + ` FROM back`
	return withIndexScans(ctx, tx, func() error {
		_, err := inChunks(requeueChunk, func() (int, error) {
			tag, err := tx.Exec(ctx, sql, args...)
			return int(tag.RowsAffected()), err
		})
		return err
	})
}

// scanCandidate scans a row of grabsql.Columns and dialect.RowColumns.
func scanCandidate(row pgx.CollectableRow) (candidate, error) {
	var c candidate
	dests := append(originDests(&c.Origin), &c.QueuePosition, &c.LastScheduled, &c.ctid, &c.shared)
	err := row.Scan(dests...)
	normalizeOrigin(&c.Origin)
	c.LastScheduled = utcPtr(c.LastScheduled)
	return c, err
}
