package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

// upsertOrigin records one listed origin: a new row copies the stats of its
// (url, visit_type) from visit_stats; an existing one keeps first_seen and
// its stats copy, and gets the batch's fields that no index holds. It
// returns the row id, so that the caller can tell an insert (an id above
// every id before the batch) from an update, then the row's enabled and
// last_update, which the caller sets apart when the batch changes them
// (setEnabled, setLastUpdate): SQLite moves a row's entries in every index
// that holds a column an UPDATE sets, changed or not, every policy index
// holds both, and listers mostly list unchanged origins again.
const upsertOrigin = upsertOriginRow + " RETURNING id, enabled, last_update"

// upsertOriginReturning is upsertOrigin that returns the row as stored
// instead: its id, then grabsql.OriginColumns (enabled and last_update
// among them).
const upsertOriginReturning = upsertOriginRow + " RETURNING id, " + grabsql.OriginColumns

// upsertOriginRow is the upsert of upsertOrigin, without what it returns.
const upsertOriginRow = `INSERT INTO listed_origin (lister_id, url, visit_type, extra_loader_arguments, enabled,
	first_seen, last_seen, last_update, is_fork, forked_from_url,
	last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?10, ?7, ?8, ?9,
	s.last_successful, s.last_visit, s.last_visit_status, s.last_scheduled, s.next_visit_queue_position
FROM (SELECT 1) LEFT JOIN visit_stats AS s ON s.url = ?2 AND s.visit_type = ?3
WHERE true
ON CONFLICT (lister_id, url, visit_type) DO UPDATE SET
	extra_loader_arguments = excluded.extra_loader_arguments,
	last_seen = excluded.last_seen,
	is_fork = excluded.is_fork,
	forked_from_url = excluded.forked_from_url`

// setEnabled and setLastUpdate set the enabled flag or the last update (?2)
// of the listed row ?1.
const (
	setEnabled    = `UPDATE listed_origin SET enabled = ?2 WHERE id = ?1`
	setLastUpdate = `UPDATE listed_origin SET last_update = ?2 WHERE id = ?1`
)

// shareMark gives a new listed row (?1 its id, ?2 url, ?3 visit type) the
// mark of its origin, when another lister's row of it is pending, so that
// the origin is not offered twice.
const shareMark = `INSERT INTO listed_origin_mark (id, url, visit_type, last_scheduled, last_visit)
SELECT ?1, m.url, m.visit_type, m.last_scheduled, m.last_visit
FROM listed_origin AS lo JOIN listed_origin_mark AS m ON m.id = lo.id
WHERE lo.url = ?2 AND lo.visit_type = ?3 ORDER BY m.last_scheduled DESC LIMIT 1`

// shareRows flags shared the rows of a newly listed row's origin (?1 its
// id, ?2 url, ?3 visit type) when another lister lists it too, so that a
// grab marks them all (migrations/00011).
const shareRows = `UPDATE listed_origin SET shared = 1
WHERE url = ?2 AND visit_type = ?3 AND NOT shared
	AND EXISTS (SELECT 1 FROM listed_origin WHERE url = ?2 AND visit_type = ?3 AND id <> ?1)`

// ListedOriginsRecord upserts a batch on (lister_id, url, visit_type), in one
// transaction: inside the batch the last duplicate wins; a new row gets
// first_seen = last_seen = now and the stats of its origin, an existing one
// keeps first_seen and gets last_seen = now and the batch's other fields.
// Nothing is written if any origin is invalid or names an unknown lister.
func (s *Store) ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	res, _, err := s.recordOrigins(ctx, origins, false, false)
	return res, err
}

// ListedOriginsImport is ListedOriginsRecord keeping each origin's
// first_seen and last_seen (store.Store).
func (s *Store) ListedOriginsImport(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	res, _, err := s.recordOrigins(ctx, origins, false, true)
	return res, err
}

// ListedOriginsRecordReturning is ListedOriginsRecord whose upserts also
// return the rows they wrote.
func (s *Store) ListedOriginsRecordReturning(ctx context.Context, origins []revisit.ListedOrigin) ([]revisit.ListedOrigin, error) {
	_, stored, err := s.recordOrigins(ctx, origins, true, false)
	if err != nil {
		return nil, err
	}
	return batch.InInputOrder(origins, stored), nil
}

// recordOrigins validates a batch and upserts it (with each origin's
// first_seen and last_seen when keepSeen, else now), and with returning
// reads back the rows it wrote, in the order of the validated batch. A bad
// origin or unknown lister is named by its index in input.
func (s *Store) recordOrigins(ctx context.Context, input []revisit.ListedOrigin, returning, keepSeen bool) (
	res revisit.RecordResult, stored []revisit.ListedOrigin, err error) {
	origins, err := batch.ListedOrigins(input)
	if err != nil || len(origins) == 0 {
		return res, nil, err
	}
	extras := make([]string, len(origins))
	for i, o := range origins {
		b, err := json.Marshal(o.ExtraLoaderArguments)
		if err != nil {
			return res, nil, revisit.Invalidf(fmt.Sprintf("origins[%d].extra_loader_arguments", i), "not representable as JSON: %v", err)
		}
		extras[i] = string(b)
	}
	upsert := upsertOrigin
	if returning {
		upsert = upsertOriginReturning
	}
	err = s.write(ctx, "record listed origins", func(tx *sql.Tx) error {
		s.wroteListed()
		res, stored = revisit.RecordResult{}, nil
		if err := checkListers(ctx, tx, input); err != nil {
			return err
		}
		var maxID int64
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM listed_origin").Scan(&maxID); err != nil {
			return err
		}
		var stmts [5]*sql.Stmt
		for i, q := range []string{upsert, shareMark, shareRows, setEnabled, setLastUpdate} {
			if stmts[i], err = s.stmt(ctx, tx, q); err != nil {
				return err
			}
		}
		st, share, flag, setEn, setUpdate := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]
		now := micro(s.now())
		var or originRow
		for i, o := range origins {
			var (
				id         int64
				enabled    bool
				lastUpdate sql.NullInt64
				written    revisit.ListedOrigin
			)
			dests := []any{&id, &enabled, &lastUpdate}
			if returning {
				dests = append(dests[:1], or.dests(&written)...)
			}
			update := nullMicro(o.LastUpdate)
			firstSeen, lastSeen := now, now
			if keepSeen && !o.FirstSeen.IsZero() {
				firstSeen = micro(o.FirstSeen)
			}
			if keepSeen && !o.LastSeen.IsZero() {
				lastSeen = micro(o.LastSeen)
			}
			if err := st.QueryRowContext(ctx, o.ListerID, o.URL, o.VisitType, extras[i], o.Enabled, firstSeen,
				update, boolPtr(o.IsFork), strPtr(o.ForkedFromURL), lastSeen).Scan(dests...); err != nil {
				return originError(o, err)
			}
			if returning {
				or.finish(&written)
				enabled, lastUpdate = written.Enabled, nullMicro(written.LastUpdate)
			}
			if enabled != o.Enabled {
				if _, err := setEn.ExecContext(ctx, id, o.Enabled); err != nil {
					return originError(o, err)
				}
			}
			if lastUpdate != update {
				if _, err := setUpdate.ExecContext(ctx, id, update); err != nil {
					return originError(o, err)
				}
			}
			if returning {
				written.Enabled, written.LastUpdate = o.Enabled, nil
				if update.Valid {
					t := fromMicro(update.Int64)
					written.LastUpdate = &t
				}
				stored = append(stored, written)
			}
			if id > maxID {
				res.Inserted++
				if _, err := share.ExecContext(ctx, id, o.URL, o.VisitType); err != nil {
					return originError(o, err)
				}
				if _, err := flag.ExecContext(ctx, id, o.URL, o.VisitType); err != nil {
					return originError(o, err)
				}
			} else {
				res.Updated++
			}
		}
		return nil
	})
	if err := s.notified(err, wake.OfOrigins(origins)); err != nil {
		return revisit.RecordResult{}, nil, err
	}
	return res, stored, nil
}

// originError is err, met while recording o.
func originError(o revisit.ListedOrigin, err error) error {
	return fmt.Errorf("origin %s (%s): %w", o.URL, o.VisitType, err)
}

// checkListers returns an invalid-input error naming the first origin whose
// lister does not exist.
func checkListers(ctx context.Context, tx *sql.Tx, origins []revisit.ListedOrigin) error {
	known, err := scanListers(tx.QueryContext(ctx, "SELECT "+listerColumns+
		" FROM lister WHERE id IN (SELECT value FROM json_each(?))", jsonArray(batch.ListerIDs(origins))))
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(known))
	for i, l := range known {
		ids[i] = l.ID
	}
	return batch.CheckListersKnown(origins, ids)
}

// ListedOriginsGet returns one page in (lister_id, url, visit_type) order.
// It reads one row more than the page to know whether another page follows.
func (s *Store) ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error) {
	var page revisit.ListedOriginPage
	limit, err := batch.PageLimit(f.Limit)
	if err != nil {
		return page, err
	}
	var (
		where []string
		args  []any
	)
	// cond adds a condition, numbering its placeholders after the previous.
	cond := func(sql string, vs ...any) {
		parts := strings.Split(sql, "?")
		var b strings.Builder
		for i, v := range vs {
			args = append(args, v)
			fmt.Fprintf(&b, "%s?%d", parts[i], len(args))
		}
		b.WriteString(parts[len(vs)])
		where = append(where, b.String())
	}
	if f.ListerID != nil {
		cond("lister_id = ?", *f.ListerID)
	}
	if len(f.URLs) > 0 {
		cond("url IN (SELECT value FROM json_each(?))", jsonArray(f.URLs))
	}
	if f.VisitType != "" {
		cond("visit_type = ?", f.VisitType)
	}
	switch f.Enabled {
	case revisit.OnlyEnabled:
		cond("enabled = ?", true)
	case revisit.OnlyDisabled:
		cond("enabled = ?", false)
	case revisit.AnyEnabled:
	default:
		return page, revisit.Invalidf("enabled", "unknown enabled filter %d", f.Enabled)
	}
	afterKey, afterListerURL, err := batch.PageStart(f)
	if err != nil {
		return page, err
	}
	if afterKey != nil {
		cond("(lister_id, url, visit_type) > (?, ?, ?)", afterKey.ListerID, afterKey.URL, afterKey.VisitType)
	}
	if afterListerURL != nil {
		cond("(lister_id, url) > (?, ?)", afterListerURL.ListerID, afterListerURL.URL)
	}
	q := "SELECT " + grabsql.OriginColumns + " FROM listed_origin"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit+1)
	q += fmt.Sprintf(" ORDER BY lister_id, url, visit_type LIMIT ?%d", len(args))
	origins, err := query(ctx, s, scanOrigins, q, args...)
	if err != nil {
		return page, translate("get listed origins", err)
	}
	return batch.Page(origins, limit), nil
}

// ListerVisitTypes returns the visit types of a lister's origins, sorted.
func (s *Store) ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error) {
	vts, err := query(ctx, s, scanStrings,
		"SELECT DISTINCT visit_type FROM listed_origin WHERE lister_id = ? ORDER BY visit_type", listerID)
	return vts, translate("get lister visit types", err)
}

// ListerVisitOutcomes counts the enabled listed origins of a lister by the
// last visit status of their stats, which every listed row carries a copy
// of (docs/store.md): one scan of the lister's rows, without a join.
func (s *Store) ListerVisitOutcomes(ctx context.Context, listerID uuid.UUID) (revisit.VisitOutcomes, error) {
	var o revisit.VisitOutcomes
	err := s.queryRow(ctx, "SELECT "+grabsql.OutcomeCounts+" FROM listed_origin WHERE lister_id = ? AND enabled", []any{listerID},
		&o.Enabled, &o.Successful, &o.Failed, &o.NotFound, &o.NeverVisited)
	return o, translate("visit outcomes of lister "+listerID.String(), err)
}

// scanStrings reads the rows of a query returning one text column.
func scanStrings(rows *sql.Rows, err error) ([]string, error) {
	return collect(rows, err, []string{}, func(rows *sql.Rows) (v string, err error) {
		err = rows.Scan(&v)
		return v, err
	})
}

// candidate is a row of the candidate query (or of a listing) with what a
// grab's mark needs of the listed row.
type candidate struct {
	grabsql.Candidate
	shared bool
	// lastVisit is the row's last_visit in microseconds, nil if none.
	lastVisit *int64
}

// rowColumns are the columns after grabsql.Columns that scanCandidates reads
// into a candidate's own fields.
const rowColumns = "shared, last_visit"

// scanCandidates reads the rows of a query returning grabsql.Columns then
// rowColumns.
func scanCandidates(rows *sql.Rows, err error) ([]candidate, error) {
	var or originRow
	return collect(rows, err, nil, func(rows *sql.Rows) (c candidate, err error) {
		err = rows.Scan(append(or.dests(&c.Origin), int64PtrCol{&c.QueuePosition}, timePtrCol{&c.LastScheduled},
			timePtrCol{&c.LastSuccessful}, &c.ID, &c.shared, int64PtrCol{&c.lastVisit})...)
		or.finish(&c.Origin)
		return c, err
	})
}

// scanOrigins reads the rows of a query returning grabsql.OriginColumns.
func scanOrigins(rows *sql.Rows, err error) ([]revisit.ListedOrigin, error) {
	var or originRow
	return collect(rows, err, nil, func(rows *sql.Rows) (o revisit.ListedOrigin, err error) {
		err = rows.Scan(or.dests(&o)...)
		or.finish(&o)
		return o, err
	})
}

// originRow scans the grabsql.OriginColumns of rows into ListedOrigins,
// through the nullable columns it holds between dests and finish.
type originRow struct {
	isFork sql.NullBool
	forked sql.NullString
}

// dests returns the scan destinations of grabsql.OriginColumns for o.
func (r *originRow) dests(o *revisit.ListedOrigin) []any {
	return []any{&o.ListerID, &o.URL, &o.VisitType, objectCol{&o.ExtraLoaderArguments},
		&o.Enabled, timeCol{&o.FirstSeen}, timeCol{&o.LastSeen}, timePtrCol{&o.LastUpdate},
		&r.isFork, &r.forked}
}

// finish sets o's nullable fields from the row just scanned, to values of
// o's own.
func (r *originRow) finish(o *revisit.ListedOrigin) {
	o.IsFork, o.ForkedFromURL = nil, nil
	if r.isFork.Valid {
		isFork := r.isFork.Bool
		o.IsFork = &isFork
	}
	if r.forked.Valid {
		forked := r.forked.String
		o.ForkedFromURL = &forked
	}
}
