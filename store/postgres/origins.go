package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

// ListedOriginsRecord upserts a batch of listed origins in one statement.
func (s *Store) ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	return s.recordCounted(ctx, origins, false)
}

// ListedOriginsImport is ListedOriginsRecord keeping each origin's
// first_seen and last_seen (store.Store).
func (s *Store) ListedOriginsImport(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	return s.recordCounted(ctx, origins, true)
}

// recordCounted records origins, with their own first_seen and last_seen
// when keepSeen, and counts what it did.
func (s *Store) recordCounted(ctx context.Context, origins []revisit.ListedOrigin, keepSeen bool) (revisit.RecordResult, error) {
	var res revisit.RecordResult
	err := s.recordOrigins(ctx, origins, keepSeen, func(tx pgx.Tx, args []any) (added newRows, err error) {
		err = tx.QueryRow(ctx, recordCounting, args...).Scan(&res.Inserted, &res.Updated, &added.urls, &added.types,
			&added.shared)
		return added, err
	})
	return res, err
}

// ListedOriginsRecordReturning is ListedOriginsRecord whose statement also
// returns the rows it wrote.
func (s *Store) ListedOriginsRecordReturning(ctx context.Context, origins []revisit.ListedOrigin) ([]revisit.ListedOrigin, error) {
	var stored []revisit.ListedOrigin
	err := s.recordOrigins(ctx, origins, false, func(tx pgx.Tx, args []any) (added newRows, err error) {
		rows, _ := tx.Query(ctx, recordReturning, args...)
		written, err := pgx.CollectRows(rows, scanWritten)
		stored = make([]revisit.ListedOrigin, len(written))
		for i, w := range written {
			stored[i] = w.origin
			if w.inserted {
				added.add(w.origin.URL, w.origin.VisitType, w.shared)
			}
		}
		return added, err
	})
	if err != nil {
		return nil, err
	}
	return batch.InInputOrder(origins, stored), nil
}

// newRows are the rows a recording inserted, by column: their URLs, visit
// types, and whether another lister lists their origin in the batch.
type newRows struct {
	urls, types []string
	shared      []bool
}

func (n *newRows) add(url, visitType string, shared bool) {
	n.urls, n.types, n.shared = append(n.urls, url), append(n.types, visitType), append(n.shared, shared)
}

// recordOrigins validates a batch and upserts it in one transaction (with
// each origin's first_seen and last_seen when keepSeen, else now): it
// checks and holds the batch's listers (naming a bad one by its index in
// input), takes the grab locks of its visit types in shared mode, runs the
// recording statement through write (with its arguments), gives the rows
// it inserted their origins' stats and flags them shared where other
// listers list their origins too (settleNewOrigins), and wakes up the
// subscribers of the visit types once committed.
func (s *Store) recordOrigins(ctx context.Context, input []revisit.ListedOrigin, keepSeen bool,
	write func(tx pgx.Tx, args []any) (added newRows, err error)) error {
	origins, err := batch.ListedOrigins(input)
	if err != nil || len(origins) == 0 {
		return err
	}
	n := len(origins)
	var (
		listers  = make([]uuid.UUID, n)
		urls     = make([]string, n)
		types    = make([]string, n)
		extras   = make([]string, n)
		enabled  = make([]bool, n)
		updates  = make([]pgtype.Timestamptz, n)
		forks    = make([]pgtype.Bool, n)
		forkURLs = make([]pgtype.Text, n)
	)
	for i, o := range origins {
		listers[i], urls[i], types[i], enabled[i] = o.ListerID, o.URL, o.VisitType, o.Enabled
		extra, err := json.Marshal(o.ExtraLoaderArguments)
		if err != nil {
			return revisit.Invalidf(fmt.Sprintf("origins[%d].extra_loader_arguments", i), "%v", err)
		}
		extras[i] = string(extra)
		if o.LastUpdate != nil {
			updates[i] = pgtype.Timestamptz{Time: revisit.Microsecond(*o.LastUpdate), Valid: true}
		}
		if o.IsFork != nil {
			forks[i] = pgtype.Bool{Bool: *o.IsFork, Valid: true}
		}
		if o.ForkedFromURL != nil {
			forkURLs[i] = pgtype.Text{String: *o.ForkedFromURL, Valid: true}
		}
	}
	var firstSeen, lastSeen []pgtype.Timestamptz // nil: NULL, now
	if keepSeen {
		firstSeen, lastSeen = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		for i, o := range origins {
			firstSeen[i] = pgtype.Timestamptz{Time: o.FirstSeen, Valid: !o.FirstSeen.IsZero()}
			lastSeen[i] = pgtype.Timestamptz{Time: o.LastSeen, Valid: !o.LastSeen.IsZero()}
		}
	}
	args := []any{listers, urls, types, extras, enabled, updates, forks, forkURLs, s.now(), firstSeen, lastSeen}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var added newRows
		if err := checkListers(ctx, tx, input); err != nil {
			return err
		}
		if err := shareGrabLocks(ctx, tx, types); err != nil {
			return err
		}
		// Statistics before the statement (withIndexLookups: a restored
		// store has rows but none) and after it (a fresh store's first
		// batch).
		err := s.withIndexLookups(ctx, tx, func() error {
			var err error
			added, err = write(tx, args)
			return err
		})
		if err != nil {
			return err
		}
		if err := s.ensureStatistics(ctx, tx); err != nil {
			return err
		}
		return settleNewOrigins(ctx, tx, added)
	})
	return translate(wrap(s.notified(err, wake.OfOrigins(origins)), "record %d listed origins", n))
}

// recordStatement returns the statement that upserts a batch ($1–$8 its
// columns as arrays, $9 the time of the recording, $10 and $11 the
// first_seen and last_seen to keep, null for $9), whose data-modifying
// CTEs return the listed columns of the rows they write (names among
// grabsql.OriginColumns, lister_id, url and visit_type at least), and which
// ends with tail, a query of them: pend, the pending rows it updated, and
// up, the rows of listed_origin it inserted (inserted) or updated, and
// whether they are shared.
//
// Pending rows are updated where they sit. A new row takes the stats of
// its origin from visit_stats (settleNewOrigins deletes them there), or
// the last_scheduled of the grab of an origin pending under another
// lister, and its other listed rows' stats afterwards (settleNewOrigins).
// The URL of a new
// row goes to origin_url_backlog, to be indexed for searches
// (IndexOriginURLs), unless the search is off (urlsearch.go). The rows of origins
// that several listers list are flagged shared (markScheduled): here those
// listed twice in the batch, in settleNewOrigins those that other listers
// listed before.
func recordStatement(returned, tail string) string {
	return `
	WITH b AS (
		SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bool[],
			$6::timestamptz[], $7::bool[], $8::text[], $10::timestamptz[], $11::timestamptz[])
			AS b(lister_id, url, visit_type, extra, enabled, last_update, is_fork, forked_from_url, first_seen, last_seen)
	), multi AS (
		-- Origins that several listers list in this batch; those
		-- that other listers listed before are found by settleNewOrigins.
		SELECT url, visit_type FROM b GROUP BY url, visit_type HAVING count(*) > 1
	), pend AS (
		UPDATE listed_origin_pending p SET extra_loader_arguments = b.extra::jsonb, enabled = b.enabled,
			last_seen = COALESCE(b.last_seen, $9), last_update = b.last_update, is_fork = b.is_fork, forked_from_url = b.forked_from_url,
			shared = p.shared OR (p.url, p.visit_type) IN (SELECT * FROM multi)
		FROM b WHERE p.lister_id = b.lister_id AND p.url = b.url AND p.visit_type = b.visit_type
		RETURNING ` + qualified("p", returned) + `
	), up AS (
		INSERT INTO listed_origin AS lo (` + grabsql.OriginColumns + `,
			last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position, shared,
			last_snapshot, next_position_offset, successive_visits, recent)
		SELECT b.lister_id, b.url, b.visit_type, b.extra::jsonb, b.enabled, COALESCE(b.first_seen, $9), COALESCE(b.last_seen, $9),
			b.last_update, b.is_fork, b.forked_from_url,
			vs.last_successful, vs.last_visit, vs.last_visit_status,
			GREATEST(vs.last_scheduled, (` + pendingMark("b") + `)),
			vs.next_visit_queue_position, (b.url, b.visit_type) IN (SELECT * FROM multi),
			` + qualified("vs", "last_snapshot, next_position_offset, successive_visits, recent") + `
		FROM b LEFT JOIN visit_stats vs ON vs.url = b.url AND vs.visit_type = b.visit_type
		WHERE NOT EXISTS (SELECT FROM pend
			WHERE pend.lister_id = b.lister_id AND pend.url = b.url AND pend.visit_type = b.visit_type)
		ON CONFLICT (lister_id, url, visit_type) DO UPDATE SET
			extra_loader_arguments = EXCLUDED.extra_loader_arguments, enabled = EXCLUDED.enabled,
			last_seen = EXCLUDED.last_seen, last_update = EXCLUDED.last_update,
			is_fork = EXCLUDED.is_fork, forked_from_url = EXCLUDED.forked_from_url,
			shared = lo.shared OR EXCLUDED.shared
		RETURNING xmax = 0 AS inserted, lo.shared, ` + qualified("lo", returned) + `
	), others AS (
		UPDATE listed_origin o SET shared = true FROM multi m
		WHERE o.url = m.url AND o.visit_type = m.visit_type AND NOT o.shared AND NOT EXISTS (SELECT FROM b
			WHERE b.lister_id = o.lister_id AND b.url = o.url AND b.visit_type = o.visit_type)
	), others_pending AS (
		UPDATE listed_origin_pending o SET shared = true FROM multi m
		WHERE o.url = m.url AND o.visit_type = m.visit_type AND NOT o.shared AND NOT EXISTS (SELECT FROM b
			WHERE b.lister_id = o.lister_id AND b.url = o.url AND b.visit_type = o.visit_type)
	), searched AS (
		-- The URLs of the rows inserted, to be indexed for the search
		-- (migration 00025, IndexOriginURLs), unless it is off
		-- (migration 00030).
		INSERT INTO origin_url_backlog (url) SELECT DISTINCT url FROM up
		WHERE inserted AND (SELECT state <> 'off' FROM origin_url_search)
	)
	` + tail
}

// recordCounting is the recording statement that returns how many rows it
// inserted and updated, and the rows inserted (their URLs, visit types and
// whether another lister lists their origin in the batch).
var recordCounting = recordStatement("lister_id, url, visit_type", `
	SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) + (SELECT count(*) FROM pend),
		COALESCE(array_agg(url) FILTER (WHERE inserted), '{}'),
		COALESCE(array_agg(visit_type) FILTER (WHERE inserted), '{}'),
		COALESCE(array_agg(shared) FILTER (WHERE inserted), '{}')
	FROM up`)

// recordReturning is the recording statement that returns every row it
// wrote: inserted and shared (as in up; false for pending rows), then
// grabsql.OriginColumns.
var recordReturning = recordStatement(grabsql.OriginColumns, `
	SELECT inserted, shared, `+grabsql.OriginColumns+` FROM up
	UNION ALL
	SELECT false, false, `+grabsql.OriginColumns+` FROM pend`)

// writtenRow is a row the recording statement wrote, as recordReturning
// returns it.
type writtenRow struct {
	origin           revisit.ListedOrigin
	inserted, shared bool
}

func scanWritten(row pgx.CollectableRow) (writtenRow, error) {
	var w writtenRow
	err := row.Scan(append([]any{&w.inserted, &w.shared}, originDests(&w.origin)...)...)
	normalizeOrigin(&w.origin)
	return w, err
}

// qualified prefixes each of the comma-separated columns with alias.
func qualified(alias, columns string) string {
	return alias + "." + strings.ReplaceAll(columns, ", ", ", "+alias+".")
}

// settleNewOrigins gives the rows that a recording in tx has just
// inserted the stats of their origins, from visit_stats (an origin that no
// lister listed until now, whose row moves) or from the origin's other
// listed rows; and flags shared every listed row (pending or not) of the
// new origins that another lister lists too.
//
// The recording statement cannot see the rows that a concurrent recording
// has inserted and not committed yet, nor the stats that a concurrent
// result has written in visit_stats: two listers that list one new origin
// at the same moment would each insert an unshared row, and a grab would
// move one row and offer the origin again through the other; a result
// would stay in visit_stats, out of the listed rows' sight. So the
// recordings that inserted rows take their visit types' record locks, in
// turn, before looking, as results that write visit_stats do
// (VisitStatsWrite): the second to look sees the first's committed rows
// (a lock is released after its transaction's commit is visible).
func settleNewOrigins(ctx context.Context, tx pgx.Tx, added newRows) error {
	if len(added.urls) == 0 {
		return nil
	}
	if err := lockVisitTypes(ctx, tx, recordLockKey, added.types); err != nil {
		return err
	}
	var unsharedURLs, unsharedTypes []string
	for i, shared := range added.shared {
		if !shared {
			unsharedURLs, unsharedTypes = append(unsharedURLs, added.urls[i]), append(unsharedTypes, added.types[i])
		}
	}
	return withIndexScans(ctx, tx, func() error {
		var b pgx.Batch
		b.Queue(takeOriginStats, added.urls, added.types)
		if len(unsharedURLs) > 0 {
			b.Queue(shareListedRows, unsharedURLs, unsharedTypes)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
}

// takeOriginStats deletes the visit_stats rows of the origins ($1 their
// URLs, $2 their visit types), and writes the stats of each origin on
// those of its listed rows that lack them or hold others than its
// visit_stats row (written since the recording copied it): the
// visit_stats row's, or else those of its other listed rows. The mark is
// the later of the row's and the stats'.
var takeOriginStats = `
	WITH n AS (
		SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS n(url, visit_type)
	), moved AS (
		DELETE FROM visit_stats vs USING n WHERE vs.url = n.url AND vs.visit_type = n.visit_type
		RETURNING true AS moved, vs.url, vs.visit_type, ` + qualified("vs", storedStats) + `
	), src AS (
		SELECT DISTINCT ON (url, visit_type) * FROM (
			SELECT * FROM moved
			UNION ALL
			SELECT false, n.url, n.visit_type, o.* FROM n CROSS JOIN LATERAL (
				SELECT ` + storedStats + ` FROM listed_origin
				WHERE url = n.url AND visit_type = n.visit_type AND ` + hasStats + `
				UNION ALL
				SELECT ` + storedStats + ` FROM listed_origin_pending WHERE url = n.url AND visit_type = n.visit_type
				OFFSET 0) o
		) s ORDER BY url, visit_type, moved DESC, last_scheduled DESC NULLS LAST
	)
	UPDATE listed_origin lo SET last_successful = s.last_successful, last_visit = s.last_visit,
		last_visit_status = s.last_visit_status, last_scheduled = GREATEST(lo.last_scheduled, s.last_scheduled),
		last_snapshot = s.last_snapshot, next_visit_queue_position = s.next_visit_queue_position,
		next_position_offset = s.next_position_offset, successive_visits = s.successive_visits, recent = s.recent
	FROM src s
	WHERE lo.url = s.url AND lo.visit_type = s.visit_type AND (lo.next_position_offset IS NULL
		OR s.moved AND (` + qualified("lo", storedStats) + `) IS DISTINCT FROM (` + qualified("s", storedStats) + `))`

// shareListedRows flags shared every row of the origins ($1 their URLs, $2
// their visit types) that more than one lister lists.
const shareListedRows = `
	WITH multi AS (
		SELECT n.url, n.visit_type FROM unnest($1::text[], $2::text[]) AS n(url, visit_type)
		WHERE (SELECT count(*) FROM listed_origin_all o WHERE o.url = n.url AND o.visit_type = n.visit_type) > 1
	), listed AS (
		UPDATE listed_origin o SET shared = true FROM multi m
		WHERE o.url = m.url AND o.visit_type = m.visit_type AND NOT o.shared
	)
	UPDATE listed_origin_pending o SET shared = true FROM multi m
	WHERE o.url = m.url AND o.visit_type = m.visit_type AND NOT o.shared`

// checkListers fails with an invalid-input error naming the first origin
// whose lister does not exist. It holds the listers it finds until tx ends
// (FOR KEY SHARE, the lock a foreign key would take per row): a delete of
// one of them waits, then finds the rows tx recorded (migration 00017).
func checkListers(ctx context.Context, tx pgx.Tx, origins []revisit.ListedOrigin) error {
	ids := batch.ListerIDs(origins)
	rows, _ := tx.Query(ctx, "SELECT id FROM lister WHERE id = ANY($1) FOR KEY SHARE", ids)
	known, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return err
	}
	return batch.CheckListersKnown(origins, known)
}

// ListedOriginsGet returns one keyset page of listed origins.
func (s *Store) ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error) {
	limit, err := batch.PageLimit(f.Limit)
	if err != nil {
		return revisit.ListedOriginPage{}, err
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if f.ListerID != nil {
		where = append(where, "lister_id = "+arg(*f.ListerID))
	}
	if len(f.URLs) > 0 {
		where = append(where, "url = ANY("+arg(f.URLs)+")")
	}
	if f.VisitType != "" {
		where = append(where, "visit_type = "+arg(f.VisitType))
	}
	switch f.Enabled {
	case revisit.OnlyEnabled:
		where = append(where, "enabled")
	case revisit.OnlyDisabled:
		where = append(where, "NOT enabled")
	}
	afterKey, afterListerURL, err := batch.PageStart(f)
	if err != nil {
		return revisit.ListedOriginPage{}, err
	}
	if afterKey != nil {
		where = append(where, fmt.Sprintf("(lister_id, url, visit_type) > (%s, %s, %s)",
			arg(afterKey.ListerID), arg(afterKey.URL), arg(afterKey.VisitType)))
	}
	if afterListerURL != nil {
		where = append(where, fmt.Sprintf("(lister_id, url) > (%s, %s)", arg(afterListerURL.ListerID), arg(afterListerURL.URL)))
	}
	sql := "SELECT " + grabsql.OriginColumns + " FROM listed_origin_all"
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY lister_id, url, visit_type LIMIT " + arg(limit+1)
	rows, _ := s.pool.Query(ctx, sql, args...)
	origins, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.ListedOrigin, error) {
		var o revisit.ListedOrigin
		return o, scanOrigin(row, &o)
	})
	if err != nil {
		return revisit.ListedOriginPage{}, translate(wrap(err, "get listed origins"))
	}
	return batch.Page(origins, limit), nil
}

// scanOrigin scans the grabsql.OriginColumns of a row.
func scanOrigin(row pgx.Row, o *revisit.ListedOrigin) error {
	err := row.Scan(originDests(o)...)
	normalizeOrigin(o)
	return err
}

// originDests returns the scan destinations of grabsql.OriginColumns.
func originDests(o *revisit.ListedOrigin) []any {
	return []any{uuidDest{&o.ListerID}, &o.URL, &o.VisitType, objectDest{&o.ExtraLoaderArguments}, &o.Enabled,
		&o.FirstSeen, &o.LastSeen, &o.LastUpdate, &o.IsFork, &o.ForkedFromURL}
}

// normalizeOrigin puts scanned times in UTC.
func normalizeOrigin(o *revisit.ListedOrigin) {
	o.FirstSeen, o.LastSeen, o.LastUpdate = o.FirstSeen.UTC(), o.LastSeen.UTC(), utcPtr(o.LastUpdate)
}

// ListerVisitTypes returns the visit types of a lister's origins.
func (s *Store) ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error) {
	// A loose index scan: one probe of the primary key per visit type.
	rows, _ := s.pool.Query(ctx, `
		WITH RECURSIVE vt(visit_type) AS (
			SELECT min(visit_type) FROM listed_origin_all WHERE lister_id = $1
			UNION ALL
			SELECT (SELECT min(visit_type) FROM listed_origin_all WHERE lister_id = $1 AND visit_type > vt.visit_type)
			FROM vt WHERE vt.visit_type IS NOT NULL
		)
		SELECT visit_type FROM vt WHERE visit_type IS NOT NULL`, listerID)
	vts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return vts, translate(wrap(err, "visit types of lister %s", listerID))
}

// ListerVisitOutcomes counts the enabled listed origins of a lister by the
// last visit status of their stats, which every listed row carries a copy
// of (docs/store.md): one scan of the lister's rows, without a join.
func (s *Store) ListerVisitOutcomes(ctx context.Context, listerID uuid.UUID) (revisit.VisitOutcomes, error) {
	var o revisit.VisitOutcomes
	err := s.pool.QueryRow(ctx, "SELECT "+grabsql.OutcomeCounts+" FROM listed_origin_all WHERE lister_id = $1 AND enabled", listerID).Scan(
		&o.Enabled, &o.Successful, &o.Failed, &o.NotFound, &o.NeverVisited)
	return o, translate(wrap(err, "visit outcomes of lister %s", listerID))
}
